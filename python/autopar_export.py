#!/usr/bin/python3
"""Export one PyTorch training step as an autopar JSON graph (docs/graph-format.md).

For Debian's python3-torch 1.13 (run with /usr/bin/python3). The step is
forward, loss and torch.autograd.grad, traced on fake tensors and
functionalized into one joint aten graph as AOT autograd does
(autopar_trace): its placeholders are the parameters, buffers and captured
constants (with their values), the example inputs and the loss tangent; its
outputs are the loss, one gradient per trainable parameter and the buffers'
values after the step. Ops are written as traced (autopar_json), apart from a
few bookkeeping forms autopar spells differently.

with_values=True also writes DIR/index.json plus one raw little-endian .bin
file per tensor: parameter values, the example batch, and PyTorch's own loss,
gradients and updated buffers (docs/pytorch.md, "Values").

API:   export(model, example_inputs, loss_fn, path, with_values=False, ...)
CLI:   python3 python/autopar_export.py --model mlp --out mlp.json --with-values DIR
       python3 python/autopar_export.py --model torchvision:resnet50 --batch 256 --image 224 \
           --classes 1000 --out resnet50.json
"""
import argparse
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autopar_json  # noqa: E402
import autopar_trace  # noqa: E402

ExportError = autopar_trace.ExportError
REFERENCE_SEED = 0


def export(model, example_inputs, loss_fn, path, with_values=False, values_dir=None,
           model_inputs=1, input_names=None, name=None):
    """Write model's training step to `path` (autopar JSON graph).

    model(*example_inputs[:model_inputs]) is the forward, in training mode;
    loss_fn(output, *example_inputs[model_inputs:]) the scalar loss (the
    output is passed as the model returns it: tensor, tuple, dict, ...).
    Input placeholders are named input_names (default x, then y, y1, ...).
    with_values also writes parameter values, the batch and PyTorch's loss,
    gradients and updated buffers to values_dir (default: path without .json,
    plus ".values"). Returns the JSON object; raises ExportError when the step
    cannot be exported."""
    example_inputs = tuple(example_inputs)
    if input_names is None:
        input_names = ["x"] + ["y" if i == 0 else f"y{i}"
                               for i in range(len(example_inputs) - 1)]
    traced = autopar_trace.trace_step(model, example_inputs, loss_fn, model_inputs)
    obj = autopar_json.graph_json(traced, input_names, name or type(model).__name__.lower())
    autopar_json.write_json_lines(obj, path)
    if with_values:
        values_dir = values_dir or os.path.splitext(path)[0] + ".values"
        write_values(values_dir, reference_values(model, example_inputs, loss_fn,
                                                  model_inputs, input_names))
    return obj


def reference_values(model, example_inputs, loss_fn, model_inputs, input_names):
    """[(role, name, tensor)]: parameters, inputs, and PyTorch's loss, gradients
    and buffers after one training-mode step (seeded with REFERENCE_SEED; only
    deterministic without dropout). The model is left as it was: its training
    flags and buffer values are restored afterwards."""
    params = list(model.named_parameters())
    trainable = [(n, p) for n, p in params if p.requires_grad]
    buffers = list(model.named_buffers())
    saved = [b.detach().clone() for _, b in buffers]
    modes = [(m, m.training) for m in model.modules()]
    model.train()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(REFERENCE_SEED)
            loss = loss_fn(model(*example_inputs[:model_inputs]), *example_inputs[model_inputs:])
        grads = torch.autograd.grad(loss, [p for _, p in trainable], allow_unused=True)
        after = [b.detach().clone() for _, b in buffers]
    finally:
        with torch.no_grad():
            for (_, b), old in zip(buffers, saved):
                b.copy_(old)
        for m, mode in modes:
            m.training = mode
    tensors = [("param", n, p) for n, p in params]
    tensors += [("input", n, t) for n, t in zip(input_names, example_inputs)]
    tensors.append(("loss", "loss", loss))
    tensors += [("grad", n, torch.zeros_like(p) if g is None else g)
                for (n, p), g in zip(trainable, grads)]
    tensors += [("buffer", n, b) for (n, _), b in zip(buffers, after)]
    return tensors


def write_values(directory, tensors):
    """DIR/index.json + DIR/<n>.bin: raw little-endian, row-major (C order) data.
    tensors: list of (role, name, tensor); role is param, input, loss, grad or buffer."""
    os.makedirs(directory, exist_ok=True)
    index = []
    for i, (role, name, t) in enumerate(tensors):
        file = f"{i}_{role}_{name.replace('.', '_')}.bin"
        with open(os.path.join(directory, file), "wb") as f:
            f.write(autopar_json.tensor_bytes(t))
        index.append({"role": role, "name": name, "file": file, **autopar_json.meta(t)})
    with open(os.path.join(directory, "index.json"), "w") as f:
        json.dump({"format": "autopar.values", "version": 1, "tensors": index}, f, indent=1)
        f.write("\n")


class TransformerLM(nn.Module):
    """A small language model from nn.TransformerEncoderLayer (post-norm, GELU, no dropout)."""

    def __init__(self, vocab=64, dim=32, heads=2, layers=2, ffn=64, seq=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(seq, dim) * 0.02)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, heads, ffn, dropout=0.0, activation="gelu",
                                       batch_first=True) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.embed(tokens) + self.pos
        for layer in self.layers:
            h = layer(h)
        return self.head(self.norm(h))


def _lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


BUILT_IN = ("mlp", "transformer_lm", "resnet18", "mobilenet_v2", "vit_b_16")
TORCHVISION = "torchvision:"


def torchvision_model(torchvision, name, classes):
    """torchvision.models.NAME(num_classes=classes), or SystemExit naming the classifiers."""
    builders = torchvision.models.list_models(module=torchvision.models)
    if name not in builders:
        raise SystemExit(f"unknown torchvision classification model '{name}': "
                         f"one of {', '.join(builders)}")
    return getattr(torchvision.models, name)(num_classes=classes)


def build(args):
    """(model, example_inputs, loss_fn) of a CLI model name and its options."""
    torch.manual_seed(args.seed)
    b = args.batch
    if args.model == "mlp":
        dims = [args.dim] + [args.hidden] * args.layers + [args.classes]
        mods = []
        for i in range(len(dims) - 1):
            mods += [nn.Linear(dims[i], dims[i + 1]), nn.ReLU()]
        model = nn.Sequential(*mods[:-1])
        x, y = torch.randn(b, args.dim), torch.randint(0, args.classes, (b,))
        return model, (x, y), F.cross_entropy
    if args.model == "transformer_lm":
        model = TransformerLM(args.vocab, args.dim, args.heads, args.layers, args.hidden, args.seq)
        x = torch.randint(0, args.vocab, (b, args.seq))
        y = torch.randint(0, args.vocab, (b, args.seq))
        return model, (x, y), _lm_loss
    import torchvision
    if args.model == "vit_b_16":
        model = torchvision.models.VisionTransformer(
            image_size=args.image, patch_size=args.patch, num_layers=args.layers,
            num_heads=args.heads, hidden_dim=args.dim, mlp_dim=args.hidden,
            num_classes=args.classes)
    elif args.model in ("resnet18", "mobilenet_v2"):
        extra = {"dropout": 0.0} if args.model == "mobilenet_v2" else {}  # no random ops
        model = getattr(torchvision.models, args.model)(num_classes=args.classes, **extra)
    elif args.model.startswith(TORCHVISION):
        model = torchvision_model(torchvision, args.model[len(TORCHVISION):], args.classes)
    else:
        raise SystemExit(f"unknown --model {args.model}: one of {', '.join(BUILT_IN)} "
                         f"or {TORCHVISION}NAME (any torchvision.models builder)")
    x = torch.randn(b, 3, args.image, args.image)
    y = torch.randint(0, args.classes, (b,))
    return model, (x, y), F.cross_entropy


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True,
                   help=f"one of {', '.join(BUILT_IN)}, or {TORCHVISION}NAME for any "
                        "torchvision.models builder (num_classes=--classes, --image square "
                        "inputs, cross-entropy loss)")
    p.add_argument("--out", required=True, help="the JSON graph to write")
    p.add_argument("--with-values", metavar="DIR", help="also write values and PyTorch's grads")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--dim", type=int, default=32, help="input/hidden width")
    p.add_argument("--hidden", type=int, default=64, help="MLP hidden / FFN / ViT mlp_dim")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--image", type=int, default=32)
    p.add_argument("--patch", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    model, inputs, loss_fn = build(args)
    obj = export(model, inputs, loss_fn, args.out, with_values=args.with_values is not None,
                 values_dir=args.with_values, name=args.model)
    kinds = [o["kind"] for o in obj["outputs"]]
    print(f"wrote {args.out}: {len(obj['nodes'])} nodes, {kinds.count('grad')} gradients, "
          f"{kinds.count('buffer')} buffer updates")


if __name__ == "__main__":
    sys.exit(main())
