#!/usr/bin/python3
"""Runs an exported autopar graph in PyTorch with real tensors and compares
its loss, gradients and buffer updates with the values PyTorch computed.

Each node runs through torch.ops.aten.<name>.<overload>: its schema binds the
node's `inputs` (by `arg_inputs` when present, else one per tensor argument)
and `attrs` back to arguments, as autopar's generic kernel does. Placeholders
come from the values dir (params, inputs), their embedded `value` (buffers,
constants) or ones (the tangent). Results are made contiguous, as autopar's
tensors are (a clone's memory_format is not written). Every op gets its own
copies of its inputs:
torch 1.13's training-mode native_batch_norm writes its running statistics
into them although its schema does not say so.

Tolerance per tensor: max|a - b| <= 1e-5 + 1e-3 * max|ref| (as autopar's
--check-against-torch). Only meaningful for graphs without random ops
(export at dropout probability 0).

  /usr/bin/python3 python/autopar_graph_check.py GRAPH.json VALUES_DIR
prints one line per failing tensor and a summary; exit 0 when all match.
"""
import base64
import json
import os
import sys

import torch

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
          "f64": torch.float64, "i64": torch.int64, "i32": torch.int32, "bool": torch.bool,
          "c64": torch.complex64}
_TENSOR_TYPES = {"Tensor", "Optional[Tensor]", "List[Tensor]", "List[Optional[Tensor]]"}
_SPECIAL_FLOATS = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}
ABS_TOL, REL_TOL = 1e-5, 1e-3


def tensor_from_bytes(data, meta):
    dtype = DTYPES[meta["dtype"]]
    if dtype == torch.bfloat16:
        t = torch.frombuffer(bytearray(data), dtype=torch.int16).view(torch.bfloat16)
    elif len(data) == 0:
        t = torch.empty(0, dtype=dtype)
    else:
        t = torch.frombuffer(bytearray(data), dtype=dtype)
    return t.reshape(meta["shape"]).clone()


def load_values(directory):
    """{(role, name): tensor} of a values dir (docs/pytorch.md, "Values")."""
    with open(os.path.join(directory, "index.json")) as f:
        index = json.load(f)
    values = {}
    for entry in index["tensors"]:
        with open(os.path.join(directory, entry["file"]), "rb") as f:
            values[(entry["role"], entry["name"])] = tensor_from_bytes(f.read(), entry)
    return values


def run_graph(graph, values):
    """{node name: value} after running every node of the graph."""
    env = {}
    for node in graph["nodes"]:
        try:
            env[node["name"]] = _run_node(node, env, values)
        except Exception as e:
            raise RuntimeError(f"node {node['name']} ({node['op']}): {type(e).__name__}: {e}") \
                from e
    return env


def _run_node(node, env, values):
    if node["op"] == "placeholder":
        return _placeholder(node, values)
    inputs = [env[n] for n in node.get("inputs", [])]
    if node["op"] == "getitem":
        return inputs[0][node["attrs"]["index"]]
    _, packet, overload = node["op"].split(".")
    op = getattr(getattr(torch.ops.aten, packet), overload)
    args, kwargs = bind(op._schema, inputs, node.get("arg_inputs"), node.get("attrs", {}))
    return _contiguous(op(*args, **kwargs))


def _contiguous(v):
    """autopar tensors are contiguous (graph-format.md): so is every result here."""
    if isinstance(v, torch.Tensor):
        return v.contiguous()
    if isinstance(v, (list, tuple)):
        return type(v)(_contiguous(x) for x in v)
    return v


def _placeholder(node, values):
    kind, meta = node["kind"], node["outputs"][0]
    if kind in ("param", "input"):
        return values[(kind, node["target"])]
    if kind == "tangent":
        return torch.ones(meta["shape"], dtype=DTYPES[meta["dtype"]])
    return tensor_from_bytes(base64.b64decode(node["value"]), meta)


def bind(schema, inputs, arg_inputs, attrs):
    """(positional args, keyword args) of an aten call from a node's inputs,
    arg_inputs and attrs. A missing required bool list (an output_mask the
    exporter leaves out) is all True."""
    inputs = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    counts = iter(arg_inputs) if arg_inputs is not None else None
    values = {}
    for arg in schema.arguments:
        type_ = str(arg.type)
        if type_ in _TENSOR_TYPES:
            count = next(counts) if counts is not None else (1 if inputs else 0)
            values[arg.name] = _take(inputs, type_, count)
        elif arg.name in attrs:
            values[arg.name] = _attr(attrs[arg.name], type_)
        elif not arg.has_default_value() and type_.startswith("List[bool]"):
            values[arg.name] = [True] * (getattr(arg, "N", None) or 3)
    args = [values[a.name] if a.name in values else a.default_value if a.has_default_value()
            else None for a in schema.arguments if not a.kwarg_only]
    kwargs = {a.name: values[a.name] for a in schema.arguments
              if a.kwarg_only and a.name in values}
    return args, kwargs


def _take(inputs, type_, count):
    if type_ == "List[Optional[Tensor]]":
        return [inputs.pop(0) if c else None for c in count]
    if type_ == "List[Tensor]":
        return [inputs.pop(0) for _ in range(count)]
    return inputs.pop(0) if count else None


def _attr(v, type_):
    if isinstance(v, str) and v in DTYPES and type_ in ("int", "Optional[int]"):
        return DTYPES[v]
    if isinstance(v, str) and v in _SPECIAL_FLOATS and type_ != "str":
        return _SPECIAL_FLOATS[v]
    if isinstance(v, list):
        if "bool" in type_:
            return [bool(x) for x in v]
        if "float" in type_:
            return [_SPECIAL_FLOATS.get(x, x) for x in v]
    return v


def compare(graph, env, values):
    """[(what, max abs error, tolerance, ok)] for the loss, every gradient and
    every buffer update."""
    targets = {n["name"]: n.get("target") for n in graph["nodes"] if n["op"] == "placeholder"}
    rows = []
    for out in graph["outputs"]:
        if out["kind"] == "loss":
            key = ("loss", "loss")
        elif out["kind"] == "grad":
            key = ("grad", targets[out["param"]])
        else:
            key = ("buffer", targets[out["buffer"]])
        got, ref = env[out["node"]].double(), values[key].double()
        if got.shape != ref.shape:
            rows.append((f"{key[0]} {key[1]}", float("inf"), 0.0, False))
            continue
        err = (got - ref).abs().max().item() if ref.numel() else 0.0
        tol = ABS_TOL + REL_TOL * (ref.abs().max().item() if ref.numel() else 0.0)
        rows.append((f"{key[0]} {key[1]}", err, tol, err <= tol))
    return rows


def check(graph_path, values_dir):
    """(rows, summary line, ok) of one graph against its values dir."""
    with open(graph_path) as f:
        graph = json.load(f)
    values = load_values(values_dir)
    with torch.no_grad():
        env = run_graph(graph, values)
    rows = compare(graph, env, values)
    bad = [r for r in rows if not r[3]]
    worst = max((r[1] for r in rows), default=0.0)
    kinds = [o["kind"] for o in graph["outputs"]]
    summary = (f"graph check {graph.get('name', '')}: {len(rows)} tensors (loss, "
               f"{kinds.count('grad')} gradients, {kinds.count('buffer')} buffers), "
               f"max abs error {worst:.3g}: " + ("OK" if not bad else f"{len(bad)} MISMATCH"))
    return rows, summary, not bad


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    rows, summary, ok = check(argv[0], argv[1])
    for what, err, tol, good in rows:
        if not good:
            print(f"MISMATCH {what}: max abs error {err:.3g} > tolerance {tol:.3g}")
    print(summary)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
