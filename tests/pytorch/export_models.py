"""Exports the test models in one Python process: startup of torch dominates,
so one process for all.

  export_models.py OUTDIR [MODEL...]
      the CLI's small configs (CONFIGS; default: all of them), with values
      except for the graph-only ones.
  export_models.py OUTDIR --size tiny|full [--dropout0] [--no-values] [--f64] [MODEL...]
      corpus models (bench/model_zoo/corpus.py; default: all of them), with
      values unless --no-values; --dropout0 builds them with every dropout
      off (needed to compare with PyTorch); --f64 in float64.
Each model writes OUTDIR/NAME.json (and OUTDIR/NAME.values)."""
import argparse
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
sys.path.insert(0, os.path.join(here, "..", "..", "bench", "model_zoo"))
import autopar_export  # noqa: E402

CONFIGS = {
    "mlp": ["--dim", "16", "--hidden", "32", "--layers", "2", "--classes", "8", "--batch", "8"],
    "transformer_lm": ["--vocab", "32", "--dim", "16", "--heads", "2", "--layers", "2",
                       "--hidden", "32", "--seq", "8", "--batch", "4"],
    "vit_b_16": ["--image", "16", "--patch", "8", "--dim", "16", "--heads", "2", "--layers", "1",
                 "--hidden", "32", "--classes", "8", "--batch", "4"],
    # torchvision's own widths (11.2M / 2.2M parameters), small images: graphs only.
    "resnet18": ["--image", "32", "--classes", "8", "--batch", "8"],
    "mobilenet_v2": ["--image", "32", "--classes", "8", "--batch", "8"],
}
GRAPH_ONLY = {"resnet18", "mobilenet_v2"}  # no values: nothing compares their numerics


def export_cli_models(out, names):
    for name in names or CONFIGS:
        values = [] if name in GRAPH_ONLY else ["--with-values",
                                                os.path.join(out, name + ".values")]
        autopar_export.main(["--model", name, "--out", os.path.join(out, name + ".json")] +
                            values + CONFIGS[name])


def export_corpus_models(out, names, size, dropout0, values, dtype=None):
    import corpus
    for name in names or corpus.MODELS:
        ex = corpus.build(name, size, dropout=0.0 if dropout0 else None, dtype=dtype)
        path = os.path.join(out, name + ".json")
        obj = autopar_export.export(ex.model, ex.inputs, ex.loss_fn, path, with_values=values,
                                    values_dir=os.path.join(out, name + ".values"),
                                    model_inputs=ex.model_inputs, name=name)
        print(f"wrote {path}: {len(obj['nodes'])} nodes")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("models", nargs="*")
    p.add_argument("--size", choices=["tiny", "full"], help="export corpus models at this size")
    p.add_argument("--dropout0", action="store_true", help="corpus models without dropout")
    p.add_argument("--no-values", action="store_true", help="corpus models: graphs only")
    p.add_argument("--f64", action="store_true", help="corpus models in float64")
    args = p.parse_intermixed_args()
    os.makedirs(args.out, exist_ok=True)
    if args.size:
        import torch
        export_corpus_models(args.out, args.models, args.size, args.dropout0, not args.no_values,
                             torch.float64 if args.f64 else None)
    else:
        export_cli_models(args.out, args.models)


if __name__ == "__main__":
    main()
