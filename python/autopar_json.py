"""A traced step (autopar_trace.Traced) as an autopar.graph JSON object
(docs/graph-format.md, docs/pytorch.md "JSON the exporter writes").

Each call_function node is written with its aten schema: tensor arguments
become `inputs` (in schema order; `arg_inputs` says how many each argument
takes when that is not exactly one), the rest `attrs`. A few forms are
rewritten into ops autopar's table has: split/split_with_sizes/unsafe_split +
getitem -> one slice per used piece, unbind + getitem -> select; view/expand
sizes are the traced ones (no -1).
"""
import base64
import json
import operator
import re

import torch

from autopar_functional import node_val

aten = torch.ops.aten

DTYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16",
          torch.float64: "f64", torch.int64: "i64", torch.int32: "i32", torch.bool: "bool",
          torch.complex64: "c64"}
# Arguments that only say where/how a tensor lives: not part of autopar's schema.
_LAYOUT_ARGS = {"memory_format", "layout", "device", "pin_memory", "non_blocking", "generator"}
_TENSOR_TYPES = {"Tensor", "Optional[Tensor]", "List[Tensor]", "List[Optional[Tensor]]"}
# Ops that return pieces of their input, rewritten per used getitem.
_SPLITS = {aten.split.Tensor, aten.split_with_sizes.default, aten.unsafe_split.Tensor,
           aten.unsafe_split_with_sizes.default}
_SIZED = {"aten.view.default", "aten.expand.default", "aten._unsafe_view.default"}


def meta(t):
    if t.dtype not in DTYPES:
        raise ValueError(f"dtype {t.dtype} has no autopar dtype (known: {list(DTYPES.values())})")
    return {"shape": [int(d) for d in t.shape], "dtype": DTYPES[t.dtype]}


def tensor_bytes(t):
    """Raw little-endian, row-major (C order) bytes; bool one byte 0/1."""
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    a = t.numpy()
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def graph_json(traced, input_names, graph_name):
    """The autopar.graph object of a Traced."""
    w = _Writer(traced.gm, input_names)
    for node in traced.gm.graph.nodes:
        if node.op == "placeholder":
            w.placeholder(node)
        elif node.op == "call_function":
            w.op(node)
    outputs = [{"node": w.names[traced.loss], "kind": "loss"}]
    outputs += [{"node": w.names[g], "kind": "grad", "param": w.names[p]}
                for p, g in traced.grads]
    outputs += [{"node": w.names[v], "kind": "buffer", "buffer": w.names[b]}
                for b, v in traced.buffer_updates]
    return {"format": "autopar.graph", "version": 1, "name": graph_name,
            "nodes": w.nodes, "outputs": outputs}


def write_json_lines(obj, path):
    """One node or output per line, like autopar's own writer."""
    with open(path, "w") as f:
        f.write('{\n  "format": "autopar.graph",\n  "version": 1,\n')
        f.write(f'  "name": {json.dumps(obj["name"])},\n  "nodes": [\n')
        f.write(",\n".join("    " + json.dumps(n, separators=(",", ":")) for n in obj["nodes"]))
        f.write('\n  ],\n  "outputs": [\n')
        f.write(",\n".join("    " + json.dumps(o, separators=(",", ":")) for o in obj["outputs"]))
        f.write("\n  ]\n}\n")


class _Writer:
    def __init__(self, gm, input_names):
        self.input_names = input_names
        self.nodes = []
        self.names = {}   # fx node -> autopar node name
        self.taken = {n.name for n in gm.graph.nodes if n.op != "placeholder"}

    def placeholder(self, node):
        info = node.meta["autopar"]
        kind = info["kind"]
        target = self.input_names[info["index"]] if kind == "input" else info.get("target")
        name = re.sub(r"\W", "_", target or "tangent")
        while name in self.taken:
            name += "_"   # an fx op node or another placeholder already has this name
        self.taken.add(name)
        self.names[node] = name
        entry = {"name": name, "op": "placeholder", "kind": kind}
        if target:
            entry["target"] = target
        if "value" in info and kind in ("buffer", "constant"):
            entry["value"] = base64.b64encode(tensor_bytes(info["value"])).decode("ascii")
        entry["outputs"] = [meta(node.meta["val"])]
        self.nodes.append(entry)

    def op(self, node):
        if node.target in _SPLITS or node.target is aten.unbind.int:
            return   # written as one slice/select per getitem
        if node.target is operator.getitem:
            return self._getitem(node)
        op = str(node.target)
        inputs, arg_inputs, attrs = _arguments(node, self.names)
        if op in _SIZED:   # no -1: the sizes as traced
            attrs["size"] = [int(d) for d in node_val(node).shape]
        if op == "aten.gelu.default" and attrs.get("approximate") == "none":
            del attrs["approximate"]
        if op == "aten.native_layer_norm_backward.default" and attrs["output_mask"] == [1, 1, 1]:
            del attrs["output_mask"]   # autopar's form; another mask (no affine) stays written
        self._emit(node, op, inputs, attrs, arg_inputs)

    def _getitem(self, node):
        source, i = node.args
        if source.target in _SPLITS:
            x, dim = source.args[0], _argument(source, 2, "dim", 0)
            start, end = _piece(source, x, dim, i)
            attrs = {"dim": dim, "start": start, "end": end, "step": 1}
            return self._emit(node, "aten.slice.Tensor", [self.names[x]], attrs)
        if source.target is aten.unbind.int:
            attrs = {"dim": _argument(source, 1, "dim", 0), "index": i}
            return self._emit(node, "aten.select.int", [self.names[source.args[0]]], attrs)
        if node_val(node) is None:
            return   # an output an output_mask turned off; nothing reads it
        self._emit(node, "getitem", [self.names[source]], {"index": i})

    def _emit(self, node, op, inputs, attrs, arg_inputs=None):
        val = node_val(node)
        if isinstance(val, (list, tuple)):
            # An output an output_mask turns off (None) is f32[0]-like: keeps positions.
            dtype = next(meta(v)["dtype"] for v in val if v is not None)
            outs = [meta(v) if v is not None else {"shape": [0], "dtype": dtype} for v in val]
        else:
            outs = [meta(val)]
        entry = {"name": node.name, "op": op}
        scope = node.meta.get("autopar_scope")
        if scope is None and node.target is operator.getitem:
            scope = node.args[0].meta.get("autopar_scope")
        if scope:
            entry["scope"] = scope
        entry["inputs"] = inputs
        if arg_inputs is not None:
            entry["arg_inputs"] = arg_inputs
        if attrs:
            entry["attrs"] = attrs
        entry["outputs"] = outs
        self.names[node] = node.name
        self.nodes.append(entry)


def _argument(node, index, name, default):
    if index < len(node.args):
        return node.args[index]
    return node.kwargs.get(name, default)


def _piece(split, x, dim, i):
    """[start, end) of piece i of a split (equal chunks or given sizes)."""
    n = node_val(x).shape[dim]
    sizes = split.args[1]
    if isinstance(sizes, int):
        return i * sizes, min((i + 1) * sizes, n)
    return sum(sizes[:i]), sum(sizes[:i + 1])


def _arguments(node, names):
    """(inputs, arg_inputs or None, attrs) of a call_function node by its schema."""
    inputs, counts, attrs = [], [], {}
    for i, arg in enumerate(node.target._schema.arguments):
        given = i < len(node.args) or arg.name in node.kwargs
        v = _argument(node, i, arg.name, None)
        type_ = str(arg.type)
        if type_ in _TENSOR_TYPES:
            counts.append(_take_tensors(v, type_, names, inputs, node))
        elif given and v is not None and arg.name not in _LAYOUT_ARGS:
            attrs[arg.name] = _attr(v, type_, node, arg.name)
    plain = all(c == 1 for c in counts)
    return inputs, None if plain else counts, attrs


def _take_tensors(v, type_, names, inputs, node):
    """Appends the nodes an argument holds to inputs; its arg_inputs entry."""
    if type_ == "List[Optional[Tensor]]":
        inputs.extend(names[x] for x in v if x is not None)
        return [0 if x is None else 1 for x in v]
    if type_ == "List[Tensor]":
        inputs.extend(names[x] for x in v)
        return len(v)
    if v is None:
        return 0
    if not isinstance(v, torch.fx.Node):
        raise ValueError(f"node {node.name} ({node.target}): a tensor argument holds {v!r}")
    inputs.append(names[v])
    return 1


def _attr(v, type_, node, name):
    """A non-tensor argument as JSON: dtypes by name, bool lists as 0/1, float
    lists as floats, inf/nan as strings."""
    if isinstance(v, torch.dtype):
        if v not in DTYPES:
            raise ValueError(f"node {node.name} ({node.target}): {name}={v} has no autopar dtype")
        return DTYPES[v]
    if isinstance(v, (list, tuple)):
        if "float" in type_:
            return [_number(float(x)) for x in v]
        return [int(x) for x in v]
    if type_ in ("float", "Optional[float]"):
        v = float(v)
    if isinstance(v, (bool, int, float, str)):
        return _number(v) if isinstance(v, float) else v
    raise ValueError(f"node {node.name} ({node.target}): argument {name} ({type_}) = {v!r} "
                     "has no JSON form")


def _number(v):
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v
