"""Finishes a functionalized joint graph (autopar_trace) for export.

After functionalize, the only writes left are
- trailing aten.copy_(buffer placeholder, value): the step's buffer updates
  (num_batches_tracked += 1, any buffer a model writes): they become graph
  outputs;
- training-mode aten.native_batch_norm, which in torch 1.13 updates its running
  statistics inside the op (the schema hides it): explicit nodes compute the
  new running mean and variance from the op's saved statistics, as outputs too;
- dropout's aten.bernoulli_.float into a fresh tensor: the functional
  aten.bernoulli.p.
Anything else in-place is an error naming the node. Tensor constants
(get_attr) become constant placeholders; identities (detach,
lift_fresh_copy) are dropped; a Python number that make_fx left in a Tensor
argument (x / 2.83 is aten.div.Tensor(x, 2.83)) selects the overload that takes
a Scalar there (aten.div.Scalar), or else becomes a 0-dim constant.
"""
import collections
import operator

import torch

aten = torch.ops.aten
Traced = collections.namedtuple("Traced", "gm loss grads buffer_updates")


class ExportError(Exception):
    """The model's step cannot be exported; the message says why and what to do."""


_IDENTITIES = (aten.detach.default, aten.lift_fresh_copy.default)


def finish(gm, placeholders, trainable):
    """A Traced of the functionalized gm; placeholders: one dict per fx
    placeholder (kind, target, value); trainable: indices of the params that
    get gradients."""
    graph = gm.graph
    phs = [n for n in graph.nodes if n.op == "placeholder"]
    for node, info in zip(phs, placeholders):
        node.meta["autopar"] = info
    _lift_tensor_constants(gm)
    _drop_identities(graph)
    updates = _buffer_copies(graph)
    _batch_norm_running_stats(graph, updates)
    _numbers_in_tensor_arguments(gm)
    _functional_bernoulli(graph)
    _check_no_writes(graph)
    out = next(n for n in graph.nodes if n.op == "output")
    loss, *grads = out.args[0]
    grads = [(phs[i], g) for i, g in zip(trainable, grads)]
    buffer_updates = [(b, updates[b]) for b in phs if b in updates]
    out.args = ([loss] + [g for _, g in grads] + [v for _, v in buffer_updates],)
    graph.eliminate_dead_code()
    graph.lint()
    gm.recompile()
    return Traced(gm, loss, grads, buffer_updates)


def kind(node):
    """The placeholder kind of an fx node (param, buffer, constant, input,
    tangent), or None for other nodes."""
    return node.meta.get("autopar", {}).get("kind") if node.op == "placeholder" else None


def node_val(node):
    """A node's (fake) value. Tuple-returning ops carry no meta["val"] in
    torch 1.13: they are run on their inputs' fake values."""
    val = node.meta.get("val")
    if val is not None or node.op == "placeholder":
        return val
    if node.target is operator.getitem:
        node.meta["val"] = node_val(node.args[0])[node.args[1]]
        return node.meta["val"]

    def arg(a):
        return node_val(a) if isinstance(a, torch.fx.Node) else a
    args = torch.fx.node.map_aggregate(node.args, arg)
    kwargs = torch.fx.node.map_aggregate(node.kwargs, arg)
    node.meta["val"] = node.target(*args, **kwargs)
    return node.meta["val"]


def _lift_tensor_constants(gm):
    """get_attr tensors (torch.tensor(...) in forward) -> constant placeholders."""
    for node in list(gm.graph.nodes):
        if node.op == "get_attr":
            value = getattr(gm, node.target)
            node.replace_all_uses_with(_constant(gm.graph, node.target, value, node.target))
            gm.graph.erase_node(node)


def _constant(graph, name, value, target=None):
    """A new constant placeholder after the last placeholder (target: its
    name in the JSON; default the fx name)."""
    last = [n for n in graph.nodes if n.op == "placeholder"][-1]
    with graph.inserting_after(last):
        ph = graph.placeholder(name)
    ph.meta["val"] = value
    ph.meta["autopar"] = {"kind": "constant", "target": target or ph.name, "value": value}
    return ph


def _numbers_in_tensor_arguments(gm):
    """aten.X.Tensor(x, 2.0) -> the overload of X taking a Scalar there, or
    the number as a 0-dim constant (with the default dtype of its kind)."""
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        schema = node.target._schema
        values = _bound_arguments(node, schema)
        numbers = [a.name for a in schema.arguments
                   if str(a.type) == "Tensor" and _is_number(values.get(a.name))]
        if not numbers:
            continue
        overload = _scalar_overload(node.target, schema, values)
        if overload is not None:
            node.target = overload
            continue
        for i, a in enumerate(schema.arguments):
            if a.name in numbers:
                value = torch.tensor(values[a.name])
                _set_argument(node, i, a.name, _constant(gm.graph, "_number_constant", value))


def _bound_arguments(node, schema):
    values = {a.name: v for a, v in zip(schema.arguments, node.args)}
    values.update(node.kwargs)
    return values


def _set_argument(node, index, name, value):
    if index < len(node.args):
        node.update_arg(index, value)
    else:
        node.update_kwarg(name, value)


def _is_number(v):
    return isinstance(v, (int, float, bool))


def _scalar_overload(op, schema, values):
    """The overload of op's packet whose arguments have the same names, a
    Scalar where values holds a number and a Tensor where it holds a node."""
    packet = op.overloadpacket
    for name in packet.overloads():
        candidate = getattr(packet, name, None)
        if candidate is None or candidate is op or "out" in name:
            continue
        args = candidate._schema.arguments
        if [a.name for a in args] != [a.name for a in schema.arguments]:
            continue
        if all(_fits(str(c.type), str(o.type), values.get(o.name))
               for c, o in zip(args, schema.arguments)):
            return candidate
    return None


def _fits(candidate_type, original_type, value):
    if _is_number(value) and original_type == "Tensor":
        return candidate_type == "number"
    return candidate_type == original_type


def _drop_identities(graph):
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target in _IDENTITIES:
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)


def _buffer_copies(graph):
    """{buffer placeholder: its new value} from the trailing copy_ nodes."""
    updates = {}
    for node in list(graph.nodes):
        if node.target is not aten.copy_.default:
            continue
        dst, src = node.args[0], node.args[1]
        if kind(dst) != "buffer":
            what = f"{kind(dst)} placeholder" if kind(dst) else f"the result of {dst.target}"
            raise ExportError(f"node {node.name} ({node.target}) writes into {dst.name} ({what}): "
                              "a training step may write only into buffers")
        if dst in updates:
            raise ExportError(f"node {node.name}: buffer {dst.meta['autopar']['target']} "
                              "is written twice")
        updates[dst] = src
        graph.erase_node(node)
    return updates


def _batch_norm_running_stats(graph, updates):
    """Training-mode native_batch_norm updates running_mean/var in place
    (invisible in its 1.13 schema). Appends explicit nodes, before the output:
      mean' = (1 - m) * mean + m * save_mean
      var'  = (1 - m) * var + m * n/(n-1) * (save_invstd^-2 - eps),  n = numel / C
    (the op's saved statistics are the batch mean and 1/sqrt(biased var + eps))."""
    out = next(n for n in graph.nodes if n.op == "output")
    for node in list(graph.nodes):
        if node.target is not aten.native_batch_norm.default:
            continue
        x, _, _, mean, var, training, momentum, eps = node.args
        if not training or mean is None:
            continue
        for buf in (mean, var):
            if kind(buf) != "buffer":
                raise ExportError(f"node {node.name} (training-mode batch norm) updates running "
                                  f"statistics {buf.name}, which is not a buffer placeholder")
        n = node_val(x).numel() // node_val(x).shape[1]
        with graph.inserting_before(out):
            emit = _Emitter(graph, node.meta.get("autopar_scope"))
            save_mean, save_invstd = emit.getitem(node, 1), emit.getitem(node, 2)
            batch_var = emit(aten.add.Tensor, emit(aten.pow.Tensor_Scalar, save_invstd, -2), -eps)
            for buf, stat, scale in ((mean, save_mean, momentum),
                                     (var, batch_var, momentum * n / max(n - 1, 1))):
                old = updates.get(buf, buf)
                updates[buf] = emit(aten.add.Tensor, emit(aten.mul.Tensor, old, 1 - momentum),
                                    emit(aten.mul.Tensor, stat, scale))


class _Emitter:
    """Creates call_function nodes with their fake value and a scope."""

    def __init__(self, graph, scope):
        self.graph = graph
        self.scope = scope

    def getitem(self, node, index):
        """The existing getitem of output `index` of node, or a new one."""
        for user in node.users:
            if user.target is operator.getitem and user.args[1] == index:
                return user
        return self(operator.getitem, node, index)

    def __call__(self, target, *args):
        node = self.graph.call_function(target, args)
        if self.scope:
            node.meta["autopar_scope"] = self.scope
        node_val(node)
        return node


def _functional_bernoulli(graph):
    """bernoulli_.float(t, p) on a fresh tensor t that nothing else reads
    (dropout's empty_like mask) is bernoulli.p(t, p)."""
    for node in graph.nodes:
        if node.target is not aten.bernoulli_.float:
            continue
        t = node.args[0]
        fresh = t.op == "call_function" and isinstance(t.target, torch._ops.OpOverload) and \
            t.target._schema.returns[0].alias_info is None
        if fresh and len(t.users) == 1:
            # bernoulli_.float's p defaults to 0.5; bernoulli.p's has no default.
            p = node.args[1] if len(node.args) > 1 else node.kwargs.get("p", 0.5)
            node.target = aten.bernoulli.p
            node.args = (_shape_source(t), p)
            node.kwargs = {}


def _shape_source(t):
    """bernoulli.p reads only its input's shape and dtype: skip the chain of
    empty_like nodes that made the mask's buffer (they would be ops of their
    own, replicated) and draw on the tensor they copy the layout of."""
    while t.op == "call_function" and t.target is aten.empty_like.default and \
            not t.kwargs.get("dtype") and isinstance(t.args[0], torch.fx.Node):
        t = t.args[0]
    return t


def _check_no_writes(graph):
    for node in graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) and \
                node.target._schema.is_mutable:
            written = node.args[0].name if node.args else "?"
            raise ExportError(f"node {node.name} ({node.target}) writes into its input "
                              f"{written} in place, which functionalization left in the "
                              "graph; autopar needs a functional step")
