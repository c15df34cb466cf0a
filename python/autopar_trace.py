"""Traces one training step of a PyTorch model into a functional joint aten
graph (torch 1.13), the way functorch's aot_autograd does:

1. make_fx(step, tracing_mode="fake"), where step runs the model with every
   parameter, buffer and captured tensor swapped for the traced inputs
   (autopar_capture), the loss, and torch.autograd.grad of the loss;
2. that graph replayed by an fx.Interpreter under functorch.functionalize and
   traced again, with a few bookkeeping decompositions: in-place ops become
   out-of-place ones, and a buffer the step writes shows up as a trailing
   copy_ into its placeholder;
3. autopar_functional turns the buffer writes (and batch norm's hidden
   running-statistics update) into graph outputs and checks that nothing
   in-place is left.

Every fx placeholder of the result carries meta["autopar"] = {"kind",
"target", "value"}; meta["autopar_scope"] is the module path a node was
created in.
"""
import contextlib
import functools
import sys

import torch
import torch._C._functorch as functorch_c
import torch._decomp
import torch.utils._pytree as pytree
from functorch import functionalize
from torch._subclasses import fake_tensor
from torch.fx.experimental import proxy_tensor

import autopar_capture
import autopar_functional
import autopar_meta  # noqa: F401  (registers meta kernels fake tracing needs)

aten = torch.ops.aten

# Bookkeeping ops whose decompositions are ops autopar already has; every op
# whose sharding or cost matters is kept whole (docs/pytorch.md).
DECOMPOSITIONS = torch._decomp.get_decompositions([
    aten._reshape_alias, aten.new_empty, aten.new_empty_strided, aten.new_full,
    aten.new_ones, aten.new_zeros, aten.rsub,
])

ExportError = autopar_functional.ExportError


def trace_step(model, example_inputs, loss_fn, model_inputs=1):
    """The functional joint graph of one training step (a Traced: the fx
    GraphModule and its loss node, [(param placeholder, grad node)] and
    [(buffer placeholder, node holding its value after the step)])."""
    was_training = [(m, m.training) for m in model.modules()]
    model.train()
    try:
        slots = _Slots(model, example_inputs, loss_fn)
        with _kernels_kept_whole():
            replay = _trace_autograd(model, loss_fn, model_inputs, slots)
            gm = _functionalize(replay, slots.values)
    finally:
        for m, mode in was_training:
            m.training = mode
    return autopar_functional.finish(gm, slots.placeholders, slots.trainable)


class _Slots:
    """The traced step's flat inputs, in placeholder order: parameters,
    buffers, captured constants, example inputs, the loss tangent."""

    def __init__(self, model, example_inputs, loss_fn):
        params = list(model.named_parameters())
        buffers = list(model.named_buffers())
        self.trainable = [i for i, (_, p) in enumerate(params) if p.requires_grad]
        self.param_names = [n for n, _ in params]
        index = {id(t): i for i, (_, t) in enumerate(params + buffers)}
        captures, self.roots = autopar_capture.find_captures(model, loss_fn)
        self.constants = [c for c in captures if id(c.tensor) not in index and
                          not any(c.tensor is x for x in example_inputs)]
        if self.constants:
            print(f"autopar_export: note: {len(self.constants)} captured tensor(s) lifted as "
                  "constants (their values are part of the graph): " +
                  ", ".join(f"{c.target} ({c.where})" for c in self.constants), file=sys.stderr)
        self.placeholders = [{"kind": "param", "target": n, "value": p} for n, p in params]
        self.placeholders += [{"kind": "buffer", "target": n, "value": b} for n, b in buffers]
        self.placeholders += [{"kind": "constant", "target": c.target, "value": c.tensor}
                              for c in self.constants]
        self.placeholders += [{"kind": "input", "index": i} for i in range(len(example_inputs))]
        self.placeholders.append({"kind": "tangent"})
        originals = [t for _, t in params + buffers] + [c.tensor for c in self.constants]
        originals += list(example_inputs)
        self.id_to_slot = {}
        for i, t in enumerate(originals):
            self.id_to_slot.setdefault(id(t), i)
        self.captures = [c for c in captures if c.binders]
        self.num_model_state = len(params) + len(buffers) + len(self.constants)
        self.values = [t.detach() for t in originals] + [torch.ones(())]
        for i in self.trainable:
            self.values[i].requires_grad_(True)

    def swaps(self, flat):
        """id(original tensor) -> its traced value, for autopar_capture.swapped."""
        return {tid: flat[i] for tid, i in self.id_to_slot.items()}

    def capture_values(self, flat):
        return [flat[self.id_to_slot[id(c.tensor)]] for c in self.captures]


def _trace_autograd(model, loss_fn, model_inputs, slots):
    """Phase 1: the step with autograd, traced on fake tensors."""
    unused = []
    n = slots.num_model_state

    def step(*flat):
        inputs, tangent = flat[n:-1], flat[-1]
        with autopar_capture.swapped(slots.roots, slots.swaps(flat)), \
                autopar_capture.bound(slots.captures, slots.capture_values(flat)):
            out = model(*inputs[:model_inputs])
            loss = loss_fn(out, *inputs[model_inputs:])
        params = [flat[i] for i in slots.trainable]
        grads = torch.autograd.grad(loss, params, grad_outputs=tangent, allow_unused=True)
        unused[:] = [slots.param_names[i] for i, g in zip(slots.trainable, grads) if g is None]
        return [loss] + [torch.zeros_like(p) if g is None else g for p, g in zip(params, grads)]

    with _ScopeStamp.tracking(model), _non_fake_reporter(model, loss_fn):
        gm = proxy_tensor.make_fx(step, tracing_mode="fake")(*slots.values)
    if unused:
        print(f"autopar_export: warning: the loss does not depend on {len(unused)} "
              f"parameter(s); their gradients are zeros: {', '.join(unused)}", file=sys.stderr)
    return gm


def _functionalize(replay, values):
    """Phase 2: replay the phase-1 graph under functionalize, traced again."""
    def run(*flat):
        return _ScopedInterpreter(replay).run(*flat)
    values = [v.detach() for v in values]
    with _ScopeStamp.replaying():
        gm = proxy_tensor.make_fx(functionalize(run), decomposition_table=DECOMPOSITIONS,
                                  tracing_mode="fake")(*values)
    return gm


@functools.lru_cache(maxsize=None)
def _has_own_kernel(op):
    """Ops with their own CPU kernel that also have a CompositeImplicitAutograd
    one (silu_backward, mish_backward, native_channel_shuffle): make_fx and
    functionalize (1.13) would decompose them; they stay whole."""
    return isinstance(op, torch._ops.OpOverload) and not op._schema.is_mutable and \
        torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CPU") and \
        torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd")


@contextlib.contextmanager
def _kernels_kept_whole():
    """make_fx's proxy mode decomposes every op with a CompositeImplicitAutograd
    kernel; not those with their own kernel."""
    original = torch._ops.OpOverload.decompose

    def decompose(op, *args, **kwargs):
        if _has_own_kernel(op):
            return NotImplemented
        return original(op, *args, **kwargs)
    torch._ops.OpOverload.decompose = decompose
    try:
        yield
    finally:
        torch._ops.OpOverload.decompose = original


def _below_functionalization(op, args, kwargs):
    """Calls a functional op on the values inside functionalize's wrappers,
    with functorch off (functionalization would decompose it), and wraps the
    results back."""
    level = next(functorch_c.maybe_get_level(t) for t in pytree.tree_flatten((args, kwargs))[0]
                 if isinstance(t, torch.Tensor) and torch._is_functional_tensor(t))

    def unwrap(t):
        if isinstance(t, torch.Tensor) and torch._is_functional_tensor(t):
            torch._sync(t)
            return functorch_c._unwrap_functional_tensor(t, True)
        return t
    args, kwargs = pytree.tree_map(unwrap, (args, kwargs))
    guard = torch._C._DisableFuncTorch()
    try:
        out = op(*args, **kwargs)
    finally:
        del guard
    return pytree.tree_map(lambda t: functorch_c._wrap_functional_tensor(t, level)
                           if isinstance(t, torch.Tensor) else t, out)


class _ScopeStamp:
    """Stamps meta["autopar_scope"] on every fx node as make_fx creates it:
    the innermost running module's path while tracing the model (forward
    hooks keep the stack), or the scope of the phase-1 node being replayed."""
    current = None   # callable () -> scope or None

    @classmethod
    @contextlib.contextmanager
    def tracking(cls, model):
        stack, handles = [], []

        def enter(name):
            def hook(module, args):
                stack.append(name)
            return hook

        def leave(module, args, out):
            stack.pop()
        for name, module in model.named_modules():
            if name:
                handles.append(module.register_forward_pre_hook(enter(name)))
                handles.append(module.register_forward_hook(leave))
        try:
            with cls._stamping(lambda: stack[-1] if stack else None):
                yield
        finally:
            for h in handles:
                h.remove()

    @classmethod
    def replaying(cls):
        return cls._stamping(lambda: _ScopedInterpreter.scope)

    @classmethod
    @contextlib.contextmanager
    def _stamping(cls, current):
        original = proxy_tensor.PythonKeyTracer.create_node

        def create_node(tracer, *args, **kwargs):
            node = original(tracer, *args, **kwargs)
            scope = current()
            if scope:
                node.meta["autopar_scope"] = scope
            return node
        proxy_tensor.PythonKeyTracer.create_node = create_node
        try:
            yield
        finally:
            proxy_tensor.PythonKeyTracer.create_node = original


class _ScopedInterpreter(torch.fx.Interpreter):
    scope = None   # the scope of the node being replayed

    def call_function(self, target, args, kwargs):
        if _has_own_kernel(target):
            return _below_functionalization(target, args, kwargs)
        return super().call_function(target, args, kwargs)

    def run_node(self, n):
        _ScopedInterpreter.scope = n.meta.get("autopar_scope")
        try:
            return super().run_node(n)
        finally:
            _ScopedInterpreter.scope = None


@contextlib.contextmanager
def _non_fake_reporter(model, loss_fn):
    """Turns fake tracing's "non-Fake Tensor inputs" failure into an error
    that names the real tensor the step read and says how to fix it."""
    original = fake_tensor.FakeTensorMode.check_for_non_fake
    real = []

    def check(mode, flat_arg_tensors):
        real[:] = [t for t in flat_arg_tensors if isinstance(t, torch.Tensor)
                   and not isinstance(t, fake_tensor.FakeTensor)]
        return bool(real)
    fake_tensor.FakeTensorMode.check_for_non_fake = check
    try:
        yield
    except Exception as e:
        if not real or "non-Fake" not in str(e):
            raise
        raise ExportError(_non_fake_message(real[0], model, loss_fn)) from e
    finally:
        fake_tensor.FakeTensorMode.check_for_non_fake = original


def _non_fake_message(t, model, loss_fn):
    where = autopar_capture.describe_tensor(t, model, loss_fn)
    what = f"a {str(t.dtype).replace('torch.', '')}{list(t.shape)} tensor"
    found = f"held in {where}" if where else "that none of the model's attributes or the " \
        "loss's closure, defaults or globals hold"
    return (f"the step reads {what} {found}, which the exporter cannot pass in as a traced "
            "input (it lifts parameters, buffers, plain tensor attributes of modules, and "
            "tensors in the loss function's closure, defaults, functools.partial arguments and "
            "globals). Fix: pass it in example_inputs and take it as an argument of the loss "
            "(or the model), or register it as a buffer (module.register_buffer(name, tensor)).")
