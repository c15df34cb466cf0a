#!/usr/bin/python3
"""Export one PyTorch training step as an autopar JSON graph (docs/graph-format.md).

For Debian's python3-torch 1.13 (run with /usr/bin/python3). make_fx traces
forward, loss and torch.autograd.grad on fake tensors into one joint aten
graph, as AOT autograd would: its placeholders are the parameters (named after
the module's parameter names), the example inputs, and the loss tangent; its
outputs are the loss and one gradient per parameter. A few aten forms that
autopar's op table spells differently are rewritten here (see _rewrite_node);
everything else is written as traced, so an op autopar lacks shows up as the
importer's one "unsupported ops" error.

with_values=True also writes DIR/index.json plus one raw little-endian .bin
file per tensor: parameter values, the example batch, and PyTorch's own loss
and gradients (docs/pytorch.md, "Values").

API:   export(model, example_inputs, loss_fn, path, with_values=False, ...)
CLI:   python3 python/autopar_export.py --model mlp --out mlp.json --with-values DIR
"""
import argparse
import json
import operator
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental import proxy_tensor
from torch.nn.utils.stateless import functional_call

_DTYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16",
           torch.float64: "f64", torch.int64: "i64", torch.int32: "i32", torch.bool: "bool",
           torch.complex64: "c64"}
# Keyword arguments that only say where/how a tensor lives: not part of autopar's schema.
_LAYOUT_ARGS = {"memory_format", "layout", "device", "pin_memory", "non_blocking"}
# Ops that are identities for a dense contiguous value, or whose result no one uses.
_DROPPED = {"aten.detach.default", "aten.is_same_size.default", "aten.lift_fresh_copy.default"}
# aten.X.Tensor with a Python number as `other` is aten.X.Scalar in autopar.
# In-place ops of torchvision's CNNs (ReLU(inplace=True), residual `out += x`)
# traced as their out-of-place forms: the joint graph reads each mutated value
# only through the in-place node's result, never the old value.
_OUT_OF_PLACE = {"aten.relu_.default": "aten.relu.default",
                 "aten.hardtanh_.default": "aten.hardtanh.default",
                 "aten.add_.Tensor": "aten.add.Tensor"}
_SCALAR_FORMS = {"aten.div.Tensor": "aten.div.Scalar", "aten.mul.Tensor": "aten.mul.Scalar",
                 "aten.add.Tensor": "aten.add.Scalar"}


def _meta(t):
    if t.dtype not in _DTYPES:
        raise ValueError(f"dtype {t.dtype} has no autopar dtype (known: {list(_DTYPES.values())})")
    return {"shape": [int(d) for d in t.shape], "dtype": _DTYPES[t.dtype]}


def _value(v):
    if isinstance(v, torch.dtype):
        return _DTYPES[v]
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v]
    return v


class _ScopeTracker:
    """Module forward hooks keep a stack of module paths; every fx node created
    while a module runs records the innermost path as its scope."""

    def __init__(self, model):
        self.stack = []
        self.handles = []
        for name, module in model.named_modules():
            if name:
                self.handles.append(module.register_forward_pre_hook(self._enter(name)))
                self.handles.append(module.register_forward_hook(self._leave()))

    def _enter(self, name):
        def hook(module, args):
            self.stack.append(name)
        return hook

    def _leave(self):
        def hook(module, args, out):
            self.stack.pop()
        return hook

    def __enter__(self):
        tracker = self
        self.original = proxy_tensor.PythonKeyTracer.create_node

        def create_node(tracer, *args, **kwargs):
            node = tracker.original(tracer, *args, **kwargs)
            if tracker.stack:
                node.meta["autopar_scope"] = tracker.stack[-1]
            return node
        proxy_tensor.PythonKeyTracer.create_node = create_node
        return self

    def __exit__(self, *exc):
        proxy_tensor.PythonKeyTracer.create_node = self.original
        for h in self.handles:
            h.remove()


def _drop_running_stats(model):
    """Batch norm in training mode normalises with the batch's statistics; its
    running statistics only matter for eval, and updating them is an in-place
    write to buffers that fake tracing cannot export. One training step's loss
    and gradients are the same without them."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.track_running_stats = False
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None


def trace_joint(model, example_inputs, loss_fn, model_inputs=1):
    """The joint forward+loss+backward fx graph. The model gets
    example_inputs[:model_inputs]; loss_fn(output, *example_inputs[model_inputs:])."""
    _drop_running_stats(model)
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    params = dict(model.named_parameters())

    def step(plist, inputs, tangent):
        out = functional_call(model, dict(zip(names, plist)), tuple(inputs[:model_inputs]))
        loss = loss_fn(out, *inputs[model_inputs:])
        return loss, torch.autograd.grad(loss, plist, grad_outputs=tangent)

    plist = [params[n].detach().requires_grad_(True) for n in names]
    with _ScopeTracker(model):
        gm = proxy_tensor.make_fx(step, tracing_mode="fake")(
            plist, list(example_inputs), torch.ones(()))
    return gm, names


def _node_val(node):
    val = node.meta.get("val")
    if val is not None:
        return val
    if node.target is operator.getitem:
        node.meta["val"] = _node_val(node.args[0])[node.args[1]]
        return node.meta["val"]
    # Tuple-returning ops carry no "val" in torch 1.13: run them on fake inputs.
    def arg(a):
        return _node_val(a) if isinstance(a, torch.fx.Node) else a
    args = torch.fx.node.map_aggregate(node.args, arg)
    kwargs = torch.fx.node.map_aggregate(node.kwargs, arg)
    node.meta["val"] = node.target(*args, **kwargs)
    return node.meta["val"]


class _Writer:
    def __init__(self, gm, names, num_inputs, input_names):
        self.gm = gm
        self.position = {n: i for i, n in enumerate(gm.graph.nodes)}
        self.nodes = []
        self.rename = {}   # fx node -> autopar node name (or the node it aliases)
        self.splits = {}   # split node -> (input name, dim, chunk size)
        self.param_names = names
        self.num_inputs = num_inputs
        self.input_names = input_names
        self.param_nodes = []  # autopar names of the param placeholders, in order

    def ref(self, n):
        return self.rename[n]

    def placeholder(self, node, index):
        np_ = len(self.param_names)
        if index < np_:
            kind, target = "param", self.param_names[index]
            self.param_nodes.append(None)
        elif index < np_ + self.num_inputs:
            kind, target = "input", self.input_names[index - np_]
        else:
            kind, target = "tangent", None
        name = (target or "tangent").replace(".", "_")
        taken = {n.name for n in self.gm.graph.nodes if n.op != "placeholder"}
        while name in taken or name in self.rename.values():
            name += "_"   # an fx op node already has this name
        self.rename[node] = name
        if kind == "param":
            self.param_nodes[-1] = name
        entry = {"name": name, "op": "placeholder", "kind": kind}
        if target:
            entry["target"] = target
        entry["outputs"] = [_meta(node.meta["val"])]
        self.nodes.append(entry)

    def op(self, node):
        op = str(node.target)
        if op in _DROPPED:
            if node.args and isinstance(node.args[0], torch.fx.Node) and node.users:
                self.rename[node] = self.ref(node.args[0])
            return
        if op == "aten.empty.memory_format" and not node.users:
            return  # batch norm's unused reserve buffer in the backward
        if op == "aten.split.Tensor":
            self.splits[node] = node
            return
        if node.target is operator.getitem and node.args[0] in self.splits:
            return self._split_slice(node)
        if node.target is operator.getitem and _node_val(node) is None:
            return  # an output an output_mask turned off; nothing reads it
        schema = None if node.target is operator.getitem else node.target._schema
        inputs, attrs = [], {}
        if schema is None:
            inputs.append(self.ref(node.args[0]))
            attrs["index"] = node.args[1]
            op = "getitem"
        else:
            op, inputs, attrs = self._arguments(node, op, schema)
        self._emit(node, op, inputs, attrs)

    def _arguments(self, node, op, schema):
        inputs, attrs = [], {}
        for i, arg in enumerate(schema.arguments):
            given = i < len(node.args)
            v = node.args[i] if given else node.kwargs.get(arg.name)
            if isinstance(v, torch.fx.Node):
                inputs.append(self.ref(v))
            elif isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.fx.Node) for x in v):
                inputs.extend(self.ref(x) for x in v)
            elif v is None or arg.name in _LAYOUT_ARGS:
                continue
            elif given or arg.name in node.kwargs:
                attrs[arg.name] = _value(v)
        if op in _OUT_OF_PLACE:
            self._check_no_later_reader(node)
            op = _OUT_OF_PLACE[op]
        if op == "aten._reshape_alias.default":   # a view with strides: autopar is contiguous
            op, attrs = "aten.view.default", {"size": attrs["size"]}
        if op in ("aten.expand.default", "aten.view.default", "aten._unsafe_view.default"):
            attrs["size"] = [int(d) for d in _node_val(node).shape]   # no -1: sizes as traced
        if op in _SCALAR_FORMS and len(inputs) == 1:
            op = _SCALAR_FORMS[op]
        if op == "aten.gelu.default" and attrs.get("approximate") == "none":
            del attrs["approximate"]
        if op == "aten.native_layer_norm_backward.default":
            if attrs.get("output_mask") not in ([1, 1, 1], [True, True, True]):
                raise ValueError(f"{node.name}: native_layer_norm_backward with output_mask "
                                 f"{attrs.get('output_mask')}: autopar needs all three gradients")
            del attrs["output_mask"]
        return op, inputs, attrs

    def _check_no_later_reader(self, node):
        """An in-place op may be exported out of place only when nothing reads
        the value it overwrote afterwards (that reader would see the new value)."""
        mutated = node.args[0]
        later = [u.name for u in mutated.users
                 if u is not node and self.position[u] > self.position[node]]
        if later:
            raise ValueError(f"{node.name} ({node.target}) overwrites {mutated.name}, which "
                             f"{', '.join(later)} read(s) later: cannot export it out of place")

    def _split_slice(self, getitem):
        """split(x, size, dim)[i] is slice(x, dim, i*size, min((i+1)*size, n))."""
        split = getitem.args[0]
        x, size = split.args[0], split.args[1]
        dim = split.args[2] if len(split.args) > 2 else split.kwargs.get("dim", 0)
        n = _node_val(x).shape[dim]
        i = getitem.args[1]
        attrs = {"dim": dim, "start": i * size, "end": min((i + 1) * size, n), "step": 1}
        self._emit(getitem, "aten.slice.Tensor", [self.ref(x)], attrs)

    def _emit(self, node, op, inputs, attrs):
        val = _node_val(node)
        if isinstance(val, (list, tuple)):
            # An output an output_mask turns off (None) is f32[0]-like: keeps positions.
            dtype = next(_meta(v)["dtype"] for v in val if v is not None)
            outs = [_meta(v) if v is not None else {"shape": [0], "dtype": dtype} for v in val]
        else:
            outs = [_meta(val)]
        entry = {"name": node.name, "op": op}
        scope = node.meta.get("autopar_scope")
        if scope is None and node.target is operator.getitem:
            scope = node.args[0].meta.get("autopar_scope")
        if scope:
            entry["scope"] = scope
        entry["inputs"] = inputs
        if attrs:
            entry["attrs"] = attrs
        entry["outputs"] = outs
        self.rename[node] = node.name
        self.nodes.append(entry)


def graph_json(gm, names, num_inputs, input_names, graph_name):
    """The autopar.graph JSON object of a traced joint graph."""
    w = _Writer(gm, names, num_inputs, input_names)
    index = 0
    outputs = []
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            w.placeholder(node, index)
            index += 1
        elif node.op == "call_function":
            w.op(node)
        elif node.op == "output":
            loss, *grads = node.args[0]
            outputs.append({"node": w.ref(loss), "kind": "loss"})
            for param, g in zip(w.param_nodes, grads):
                outputs.append({"node": w.ref(g), "kind": "grad", "param": param})
        else:
            raise ValueError(f"unexpected fx node {node.op} {node.name}: export traces with make_fx, "
                             "which should only give placeholders and call_function nodes")
    return {"format": "autopar.graph", "version": 1, "name": graph_name,
            "nodes": w.nodes, "outputs": outputs}


def _write_json_lines(obj, path):
    """One node or output per line, like autopar's own writer."""
    with open(path, "w") as f:
        f.write('{\n  "format": "autopar.graph",\n  "version": 1,\n')
        f.write(f'  "name": {json.dumps(obj["name"])},\n  "nodes": [\n')
        f.write(",\n".join("    " + json.dumps(n, separators=(",", ":")) for n in obj["nodes"]))
        f.write('\n  ],\n  "outputs": [\n')
        f.write(",\n".join("    " + json.dumps(o, separators=(",", ":")) for o in obj["outputs"]))
        f.write("\n  ]\n}\n")


def write_values(directory, tensors):
    """DIR/index.json + DIR/<n>.bin: raw little-endian, row-major (C order) data.
    tensors: list of (role, name, tensor); role is param, input, loss or grad."""
    os.makedirs(directory, exist_ok=True)
    index = []
    for i, (role, name, t) in enumerate(tensors):
        t = t.detach().contiguous().cpu()
        file = f"{i}_{role}_{name.replace('.', '_')}.bin"
        data = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes() if t.dtype != torch.bfloat16 \
            else t.view(torch.int16).numpy().astype("<i2").tobytes()
        with open(os.path.join(directory, file), "wb") as f:
            f.write(data)
        index.append({"role": role, "name": name, "file": file, **_meta(t)})
    with open(os.path.join(directory, "index.json"), "w") as f:
        json.dump({"format": "autopar.values", "version": 1, "tensors": index}, f, indent=1)
        f.write("\n")


def export(model, example_inputs, loss_fn, path, with_values=False, values_dir=None,
           model_inputs=1, input_names=None, name=None):
    """Write model's training step to `path` (autopar JSON graph).

    model(*example_inputs[:model_inputs]) is the forward; loss_fn(output,
    *example_inputs[model_inputs:]) the scalar loss. Input placeholders are named
    input_names (default x, then y, y1, ...). with_values also writes parameter
    values, the batch and PyTorch's loss and gradients to values_dir (default:
    path without .json, plus ".values")."""
    example_inputs = tuple(example_inputs)
    if input_names is None:
        input_names = ["x"] + ["y" if i == 0 else f"y{i}"
                               for i in range(len(example_inputs) - 1)]
    gm, names = trace_joint(model, example_inputs, loss_fn, model_inputs)
    obj = graph_json(gm, names, len(example_inputs), input_names,
                     name or type(model).__name__.lower())
    _write_json_lines(obj, path)
    if with_values:
        values_dir = values_dir or os.path.splitext(path)[0] + ".values"
        params = dict(model.named_parameters())
        loss = loss_fn(model(*example_inputs[:model_inputs]), *example_inputs[model_inputs:])
        grads = torch.autograd.grad(loss, [params[n] for n in names])
        tensors = [("param", n, params[n]) for n in names]
        tensors += [("input", n, t) for n, t in zip(input_names, example_inputs)]
        tensors.append(("loss", "loss", loss))
        tensors += [("grad", n, g) for n, g in zip(names, grads)]
        write_values(values_dir, tensors)
    return obj


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
    else:
        raise SystemExit(f"unknown --model {args.model}")
    x = torch.randn(b, 3, args.image, args.image)
    y = torch.randint(0, args.classes, (b,))
    return model, (x, y), F.cross_entropy


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True,
                   choices=["mlp", "transformer_lm", "resnet18", "mobilenet_v2", "vit_b_16"])
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
    print(f"wrote {args.out}: {len(obj['nodes'])} nodes, {len(obj['outputs']) - 1} gradients")


if __name__ == "__main__":
    sys.exit(main())
