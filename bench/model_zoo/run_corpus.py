#!/usr/bin/python3
"""Exports every corpus model and checks the graphs against PyTorch.

For each model and size: export with the model's default dropout (graph
only: nodes, seconds), and, with --check, export again at dropout 0 with
values and run python/autopar_graph_check.py's comparison (max abs error).
Prints one line per model, then the ops over the corpus: how many models use
each op and how often it occurs, most frequent first.

  /usr/bin/python3 bench/model_zoo/run_corpus.py OUTDIR [--sizes tiny full]
      [--check] [--models NAME ...] [--ops-json FILE]
"""
import argparse
import collections
import json
import os
import sys
import time
import traceback

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
sys.path.insert(0, here)
import autopar_export  # noqa: E402
import autopar_graph_check  # noqa: E402
import corpus  # noqa: E402


def export_one(name, size, out, dropout, values):
    ex = corpus.build(name, size, dropout=dropout)
    suffix = "" if dropout is None else ".dropout0"
    path = os.path.join(out, f"{name}.{size}{suffix}.json")
    values_dir = os.path.join(out, f"{name}.{size}.values") if values else None
    start = time.time()
    obj = autopar_export.export(ex.model, ex.inputs, ex.loss_fn, path, with_values=values,
                                values_dir=values_dir, model_inputs=ex.model_inputs, name=name)
    return obj, path, values_dir, time.time() - start


def run(name, size, out, check, ops):
    line = f"{size:4s} {name:20s}"
    try:
        obj, _, _, seconds = export_one(name, size, out, None, False)
        line += f" {len(obj['nodes']):6d} nodes {seconds:6.1f} s"
        for op in {n["op"] for n in obj["nodes"]}:
            ops[op][0].add(name)
        for n in obj["nodes"]:
            ops[n["op"]][1] += 1
        if check:
            _, path, values_dir, seconds = export_one(name, size, out, 0.0, True)
            rows, _, ok = autopar_graph_check.check(path, values_dir)
            worst = max(r[1] for r in rows)
            line += f" | dropout 0: export {seconds:6.1f} s, check max err {worst:.2e} " + \
                ("OK" if ok else "MISMATCH " + ", ".join(r[0] for r in rows if not r[3])[:200])
        return line, True
    except Exception as e:
        traceback.print_exc()
        return line + f" FAILED: {type(e).__name__}: {str(e)[:300]}", False


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--sizes", nargs="+", default=["tiny"], choices=corpus.SIZES)
    p.add_argument("--models", nargs="+", default=list(corpus.MODELS))
    p.add_argument("--check", action="store_true")
    p.add_argument("--ops-json", help="also write the op counts here")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for size in args.sizes:
        ops = collections.defaultdict(lambda: [set(), 0])
        for name in args.models:
            line, ok = run(name, size, args.out, args.check, ops)
            failed += not ok
            print(line, flush=True)
        rows = sorted(ops.items(), key=lambda kv: (-len(kv[1][0]), -kv[1][1], kv[0]))
        print(f"ops over the {size} corpus ({len(rows)} ops): models using it, occurrences")
        for op, (models, count) in rows:
            print(f"  {len(models):3d} {count:7d} {op}")
        if args.ops_json:
            with open(args.ops_json.replace(".json", f".{size}.json"), "w") as f:
                json.dump([{"op": op, "models": sorted(m), "count": c} for op, (m, c) in rows],
                          f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
