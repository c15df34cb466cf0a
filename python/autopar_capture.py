"""What a traced training step reads besides its arguments (torch 1.13).

make_fx traces on fake tensors, so every real tensor the model or the loss
reads must come in as a traced input. This module finds them and swaps them
for the traced values while the step is traced, restoring everything after:

- parameters and buffers, by identity, wherever a module holds them: its
  _parameters/_buffers entries (tied weights are one object under two names)
  and plain list/tuple attributes (nn.LSTM's _flat_weights);
- captured tensors, lifted as constants: plain tensor attributes of modules
  (and tensors in plain list/tuple attributes), the tensors of a loss that is
  an nn.Module, and the loss function's closure variables, default arguments,
  functools.partial arguments and the globals its code names (also the globals
  of the model's own forward methods).

describe_tensor() says where a tensor that could not be lifted lives, for the
exporter's error message.
"""
import contextlib
import functools
import inspect
import types

import torch
import torch.nn as nn

# Library code does not capture user tensors; scanning it only costs time.
_LIBRARY_PREFIXES = ("torch", "torchvision", "functorch")
_MAX_DEPTH = 4


class Capture:
    """One captured tensor and the places that hold it."""

    def __init__(self, tensor, target, where):
        self.tensor = tensor
        self.target = target     # a dotted name for the placeholder
        self.where = where       # for messages: "closure variable 'y' of loss"
        self.binders = []        # callables(new) -> undo callable


@contextlib.contextmanager
def swapped(roots, replacements):
    """Replaces every tensor whose id is in `replacements` wherever a module of
    `roots` holds it (parameters, buffers, plain attributes, list/tuple
    attributes), and restores the originals on exit."""
    undo = []
    try:
        for root in roots:
            for _, m in root.named_modules(remove_duplicate=False):
                _swap_module(m, replacements, undo)
        yield
    finally:
        for store, key, old in reversed(undo):
            store[key] = old


def _swap_module(m, replacements, undo):
    for store in (m._parameters, m._buffers, m.__dict__):
        for key, v in list(store.items()):
            new = _replaced(v, replacements)
            if new is not v:
                undo.append((store, key, v))
                store[key] = new


def _replaced(v, replacements):
    if isinstance(v, torch.Tensor):
        return replacements.get(id(v), v)
    if type(v) in (list, tuple) and any(isinstance(x, torch.Tensor) and id(x) in replacements
                                        for x in v):
        return type(v)(replacements.get(id(x), x) if isinstance(x, torch.Tensor) else x
                       for x in v)
    return v


@contextlib.contextmanager
def bound(captures, values):
    """Points every function-level location of each capture at values[i]."""
    undo = []
    try:
        for capture, value in zip(captures, values):
            for bind in capture.binders:
                undo.append(bind(value))
        yield
    finally:
        for u in reversed(undo):
            u()


def find_captures(model, loss_fn):
    """Tensors the step reads outside its arguments, and the modules besides
    the model that hold some (a loss that is an nn.Module, or one the loss
    function refers to). A capture may be a parameter, buffer or input too (a
    loss closing over its target): the tracer binds it to that argument.
    Returns (list of Capture in a stable order, list of root modules)."""
    finder = _Finder(model)
    finder.module(model, "", is_model=True)
    finder.value(loss_fn, "loss_fn", "the loss", None, 0)
    for m in model.modules():
        forward = getattr(type(m), "forward", None)
        if not _is_library(forward):
            finder.function(forward, 1)
    return list(finder.found.values()), finder.roots


class _Finder:
    def __init__(self, model):
        self.found = {}          # id(tensor) -> Capture
        self.seen = set()        # ids of functions and modules already scanned
        self.roots = [model]
        self.model_modules = {id(m) for m in model.modules()}

    def add(self, tensor, target, where):
        if id(tensor) not in self.found:
            self.found[id(tensor)] = Capture(tensor, target, where)
        return self.found[id(tensor)]

    def module(self, root, prefix, is_model):
        """Plain tensor attributes (and tensors in list/tuple attributes) of
        every module; for a module outside the model also its parameters and
        buffers, which the step does not train."""
        for path, m in root.named_modules(remove_duplicate=False):
            stores = [m.__dict__] + ([] if is_model else [m._parameters, m._buffers])
            for store in stores:
                for key, v in list(store.items()):
                    for name, t in _tensor_items(key, v):
                        target = prefix + (f"{path}.{name}" if path else name)
                        self.add(t, target, f"attribute {target} of "
                                 f"{'the model' if is_model else prefix[:-1]} ({type(m).__name__})")

    def value(self, v, target, where, binder, depth):
        """A value a function holds: a tensor (captured where `binder` rebinds
        it), a module outside the model (a new root), or a function to scan."""
        if isinstance(v, torch.Tensor):
            capture = self.add(v, target, where)
            if binder:
                capture.binders.append(binder)
        elif isinstance(v, nn.Module):
            if id(v) not in self.model_modules and id(v) not in self.seen:
                self.seen.add(id(v))
                self.roots.append(v)
                self.module(v, target + ".", is_model=False)
                self.function(getattr(type(v), "forward", None), depth + 1)
        elif callable(v) and not isinstance(v, type):
            self.function(v, depth)

    def function(self, fn, depth):
        """Closure cells, defaults, functools.partial arguments and named
        globals of fn, following functions they hold up to _MAX_DEPTH."""
        if fn is None or depth > _MAX_DEPTH or id(fn) in self.seen:
            return
        self.seen.add(id(fn))
        if isinstance(fn, functools.partial):
            self.partial(fn)
            return self.value(fn.func, "loss_fn", "the loss", None, depth + 1)
        if inspect.ismethod(fn):
            fn = fn.__func__
        if not isinstance(fn, types.FunctionType) or (depth > 0 and _is_library(fn)):
            return
        name, code = fn.__qualname__, fn.__code__
        for var, cell in zip(code.co_freevars, fn.__closure__ or ()):
            if _cell_full(cell):
                self.value(cell.cell_contents, f"{name}.{var}",
                           f"closure variable {var!r} of {name}", _cell_binder(cell), depth + 1)
        self.defaults(fn)
        for var in _global_names(code):
            if var in fn.__globals__:
                self.value(fn.__globals__[var], var, f"global {var!r} of module {fn.__module__}",
                           _dict_binder(fn.__globals__, var), depth + 1)

    def partial(self, p):
        name = getattr(p.func, "__qualname__", "partial")
        for i, v in enumerate(p.args):
            if isinstance(v, torch.Tensor):
                self.value(v, f"{name}.args.{i}", f"argument {i} of functools.partial({name})",
                           _partial_binder(p, i, None), 0)
        for k, v in p.keywords.items():
            if isinstance(v, torch.Tensor):
                self.value(v, f"{name}.{k}", f"keyword {k!r} of functools.partial({name})",
                           _partial_binder(p, None, k), 0)

    def defaults(self, fn):
        code, name = fn.__code__, fn.__qualname__
        defaults = fn.__defaults__ or ()
        names = code.co_varnames[code.co_argcount - len(defaults):code.co_argcount]
        for i, (var, v) in enumerate(zip(names, defaults)):
            if isinstance(v, torch.Tensor):
                self.value(v, f"{name}.{var}", f"default of argument {var!r} of {name}",
                           _defaults_binder(fn, i), 0)
        for var, v in (fn.__kwdefaults__ or {}).items():
            if isinstance(v, torch.Tensor):
                self.value(v, f"{name}.{var}", f"default of argument {var!r} of {name}",
                           _kwdefaults_binder(fn, var), 0)


def _tensor_items(key, v):
    if isinstance(v, torch.Tensor):
        return [(key, v)]
    if type(v) in (list, tuple):
        return [(f"{key}.{i}", x) for i, x in enumerate(v) if isinstance(x, torch.Tensor)]
    return []


def _is_library(fn):
    module = getattr(fn, "__module__", None) or ""
    return fn is None or module.split(".")[0] in _LIBRARY_PREFIXES


def _global_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return sorted(names)


def _cell_binder(cell):
    def bind(new):
        old = cell.cell_contents
        cell.cell_contents = new

        def undo():
            cell.cell_contents = old
        return undo
    return bind


def _dict_binder(d, key):
    def bind(new):
        old = d[key]
        d[key] = new
        return lambda: d.__setitem__(key, old)
    return bind


def _defaults_binder(fn, i):
    def bind(new):
        old = fn.__defaults__
        fn.__defaults__ = old[:i] + (new,) + old[i + 1:]

        def undo():
            fn.__defaults__ = old
        return undo
    return bind


def _kwdefaults_binder(fn, key):
    def bind(new):
        old = fn.__kwdefaults__
        fn.__kwdefaults__ = {**old, key: new}

        def undo():
            fn.__kwdefaults__ = old
        return undo
    return bind


def _partial_binder(p, index, key):
    """functools.partial is immutable except through __setstate__."""
    def bind(new):
        old = p.__reduce__()[2]          # (func, args, keywords, __dict__)
        func, args, keywords, state = old
        if index is not None:
            args = args[:index] + (new,) + args[index + 1:]
        else:
            keywords = {**keywords, key: new}
        p.__setstate__((func, args, keywords, state))
        return lambda: p.__setstate__(old)
    return bind


def describe_tensor(t, model, loss_fn):
    """Where `t` sits among the objects the model and the loss reach
    (module attributes, containers, closures, globals), or None."""
    roots = [(f"model attribute {path or type(model).__name__}", m)
             for path, m in model.named_modules()]
    roots.append(("loss_fn", loss_fn))
    for label, obj in roots:
        path = _search(t, obj, label, set(), 0)
        if path:
            return path
    return None


def _search(t, obj, path, seen, depth):
    if obj is t:
        return path
    if depth > _MAX_DEPTH or id(obj) in seen or isinstance(obj, (str, bytes, int, float)):
        return None
    seen.add(id(obj))
    for name, child in _children(obj):
        found = _search(t, child, f"{path}{name}", seen, depth + 1)
        if found:
            return found
    return None


def _children(obj):
    if isinstance(obj, dict):
        return [(f"[{k!r}]", v) for k, v in obj.items()]
    if isinstance(obj, (list, tuple, set)):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    if isinstance(obj, functools.partial):
        return [(f".args[{i}]", v) for i, v in enumerate(obj.args)] + \
            [(f".keywords[{k!r}]", v) for k, v in obj.keywords.items()]
    if isinstance(obj, types.FunctionType):
        if _is_library(obj):
            return []
        cells = [(f" (closure variable {var!r})", c.cell_contents)
                 for var, c in zip(obj.__code__.co_freevars, obj.__closure__ or ())
                 if _cell_full(c)]
        return cells + [(f" (global {var!r})", obj.__globals__[var])
                        for var in _global_names(obj.__code__) if var in obj.__globals__]
    if isinstance(obj, (types.ModuleType, type, torch.Tensor)) or not hasattr(obj, "__dict__"):
        return []
    return [(f".{k}", v) for k, v in vars(obj).items()
            if not (isinstance(obj, nn.Module) and k in ("_modules", "_parameters", "_buffers"))]


def _cell_full(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False
