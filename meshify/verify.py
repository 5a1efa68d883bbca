"""``verify``: run the sharded program against ``.reference`` on random inputs.

Unlike ``convert`` and ``explain``, verify imports and runs the user's file: it needs
the reference function.  It runs the reference on one device and the sharded program
(the decorator's, or a committed generated file's) on the mesh's number of simulated
devices, compares results, and compares the collectives in the compiled HLO with the
ones ``explain`` predicted from the annotations.

Inputs: a random array for each array parameter (integers where they index; keys
where hinted ``Key[...]`` or used as keys, as raw uint32 key data under a ``UInt32[...]``
hint), bound by name; static parameters take the values given with ``--static NAME=VALUE``,
else the function's ``@mesh(..., example={...})`` values, else their defaults; explain's
prediction follows the same values (an ``if`` on a static takes the branch the value picks).  Results agree when the largest
difference, relative to the reference's largest magnitude, is at most ``rtol`` and
every NaN and infinity sits where the reference has the same one.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from meshify.errors import MeshifyError

__all__ = ["VerifyReport", "parse_statics", "verify_file"]

#: jaxtyping hints that make a parameter a (typed) key whatever its use: ``Key[Array, ""]``.
_KEY_HINTS = frozenset({"jaxtyping.Key"})
#: jaxtyping hints under which a parameter used as a key is raw key data (``jax.random.PRNGKey``'s uint32[2]).
_RAW_KEY_HINTS = frozenset({"jaxtyping.UInt32", "jaxtyping.UInt"})


@dataclass(slots=True)
class VerifyReport:
    name: str
    max_abs_error: float
    max_rel_error: float
    results_agree: bool
    predicted: dict[str, tuple[int, int]]
    found: dict[str, tuple[int, int]]
    notes: list[str] = field(default_factory=list)

    @property
    def prediction_matches(self) -> bool:
        """Bytes per collective kind agree (XLA may combine several collectives into one)."""
        kinds = set(self.predicted) | set(self.found)
        return all(self.predicted.get(k, (0, 0))[1] == self.found.get(k, (0, 0))[1] for k in kinds)

    @property
    def ok(self) -> bool:
        return self.results_agree and self.prediction_matches


# -- static parameters ----------------------------------------------------------------------------


def parse_statics(items: list[str]) -> dict[str, object]:
    """``["train=True", "n=3"]`` (``--static`` values) -> ``{"train": True, "n": 3}``; values are Python literals."""
    statics: dict[str, object] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not name.isidentifier():
            raise MeshifyError(f"--static {item} is not NAME=VALUE", code="MSH073",
                               fix="write --static train=True (one --static per parameter)")
        try:
            statics[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            if _is_call(text):  # --static "cfg=Config(heads=4)": built in the module, once it is imported
                statics[name] = ModuleCall(text)
                continue
            raise MeshifyError(f"--static {item}: {text!r} is not a Python literal", code="MSH073",
                               fix=f"write a literal, e.g. --static {name}=True, --static {name}=3, a string "
                                   f"quoted for the shell: --static \"{name}='gelu'\", or a call of the "
                                   f"module's class: --static \"{name}=Config(heads=4)\"") from None
    return statics


@dataclass(frozen=True, slots=True)
class ModuleCall:
    """A ``--static`` value that is a call (``Config(heads=4)``), evaluated in the verified module's
    namespace once it is imported; explain's prediction reads it too where it is a ``NamedTuple`` of the
    module with literal fields (else as a static of unknown value)."""

    text: str

    def value(self, module, name: str) -> object:
        try:
            return eval(self.text, vars(module))  # noqa: S307 - the user's own module, which verify imports anyway
        except Exception as e:  # noqa: BLE001 - any error of the user's expression is bad input
            raise MeshifyError(f"--static {name}={self.text}: {type(e).__name__}: {e}", code="MSH073",
                               fix=f"call a class or function the module defines or imports, e.g. --static "
                                   f"\"{name}=Config(heads=4)\"") from None


def _is_call(text: str) -> bool:
    """``Config(heads=4)``, ``mod.Config()``: a call of a name or a dotted name, with any arguments."""
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    func = tree.func if isinstance(tree, ast.Call) else None
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name)


def _check_static_names(statics: Mapping[str, object], params: dict[str, list[str]], arrays: set[str]) -> None:
    """Each ``--static`` name is a static parameter of a verified function (``params``: function -> its statics)."""
    known = {name for names in params.values() for name in names}
    for name, value in statics.items():
        if name in known:
            continue
        option = f"--static {name}={value!r}"
        if name in arrays:
            raise MeshifyError(f"{option}: {name!r} is an array parameter; verify draws it at random", code="MSH073",
                               fix="pass --static only for parameters without a Tensor hint")
        listing = "; ".join(f"{fn}(): {', '.join(names) or 'none'}" for fn, names in params.items())
        raise MeshifyError(f"{option}: no verified function has a static parameter {name!r}", code="MSH073",
                           fix=f"choose a static parameter ({listing})")


def _mesh_callable(module, name: str, statics: Mapping[str, object], path: Path, missing_ok: bool = False):
    """The ``@mesh`` function ``name`` of ``module``; a method of one of its classes bound to an instance: the
    one ``--static "self=Model(...)"`` builds (the method's first parameter's name), else ``Model()``."""
    found = getattr(module, name, None)
    if found is not None:
        return found
    for cls in [c for c in vars(module).values() if isinstance(c, type) and c.__module__ == module.__name__]:
        member = cls.__dict__.get(name)
        if member is None:
            continue
        if isinstance(member, staticmethod | classmethod):
            return getattr(cls, name)
        receiver = next(iter(inspect.signature(getattr(member, "reference", member)).parameters), "self")
        given = statics.get(receiver)
        if given is not None:
            instance = given.value(module, receiver) if isinstance(given, ModuleCall) else given
        else:
            try:
                instance = cls()
            except Exception as e:  # noqa: BLE001 - any error of the user's constructor is bad input here
                raise MeshifyError(f"{path}: {name} is a method of {cls.__name__}, and {cls.__name__}() fails: "
                                   f"{type(e).__name__}: {e}", code="MSH073",
                                   fix=f"give verify an instance: --static \"{receiver}={cls.__name__}(...)\"") from None
        return getattr(instance, name)
    if missing_ok:
        return None
    raise MeshifyError(f"{path} defines no {name!r} verify can call", code="MSH073",  # pragma: no cover
                       fix="put @mesh on a module-level function or a method of a module-level class")


def _check_statics(reference, prediction, statics: Mapping[str, object]) -> None:
    """Static parameters (no Tensor hint) need a default or a ``--static`` value: verify invents arrays only."""
    from meshify.runtime._source import call_site_span

    params = inspect.signature(reference).parameters
    missing = [name for name, p in params.items() if name not in prediction.structure
               and name not in statics and p.default is inspect.Parameter.empty]
    if missing:
        raise MeshifyError(f"{prediction.name}() has static parameters without defaults ({', '.join(missing)}); "
                           "verify makes random arrays for Tensor-hinted parameters only", code="MSH072",
                           span=call_site_span(reference, missing[0]),
                           fix="pass a value for each: " + " ".join(f"--static {n}=VALUE" for n in missing)
                               + " (a Python literal), give it a default, or give the function an example: "
                               + f"@mesh(..., example={{{', '.join(f'{n!r}: VALUE' for n in missing)}}})")


# -- prediction -----------------------------------------------------------------------------------


def _own_params(fn) -> list:
    p = fn.params
    return [*p.posonly_params, *p.params, *p.kwonly_params]


def _static_rewriter(values: Mapping[str, object]):
    """explain's rewriter, with ``values`` in place of the literal defaults of the function's own
    static parameters (a helper's parameters keep theirs)."""
    import libcst as cst

    from meshify.rewrite._interp import FunctionRewriter
    from meshify.rewrite._values import Static

    class StaticRewriter(FunctionRewriter):
        def default_of(self, param):
            if param.name.value in values and any(param is own for own in _own_params(self.fn)):
                value = values[param.name.value]
                if isinstance(value, ModuleCall):  # Config(layers=4) of a NamedTuple the module defines: read
                    config = self.ctx.config_value(cst.parse_expression(value.text))
                    return Static() if config is None else Static.of(config)
                return Static.of(value)
            return super().default_of(param)

    return StaticRewriter


def _predict(source: bytes, path: Path, sizes: dict[str, int], func: str | None,
             statics: Mapping[str, object]) -> list[tuple[object, dict[str, set[str]]]]:
    """Each function's explain report (following ``statics``) and its parameters' hints' qualified names."""
    from meshify.explain import _report, explain_source
    from meshify.rewrite._context import parse_context
    from meshify.rewrite._driver import mesh_functions
    from meshify.rewrite._hints import read_mesh_decorator, read_mesh_dims

    reports = explain_source(source, str(path), sizes, func)  # checks func and sizes, says what is wrong
    ctx = parse_context(source, str(path))
    found = [(fn, d) for fn, d in mesh_functions(ctx) if func is None or fn.name.value == func]
    params = {r.name: [p.name.value for p in _own_params(fn) if p.name.value not in r.structure]
              for r, (fn, _) in zip(reports, found, strict=True)}
    _check_static_names(statics, params, {name for r in reports for name in r.structure})
    out = []
    for report, (fn, decorator) in zip(reports, found, strict=True):
        own = {n: v for n, v in statics.items() if n in params[report.name]}
        if own:  # walk again with the given values, so that an `if` on one takes its branch
            mesh, rules = read_mesh_decorator(ctx, decorator)
            dims = read_mesh_dims(ctx, decorator)
            plan = _static_rewriter(own)(ctx, fn, mesh, rules, sizes=dims, assume_defaults=True).run()
            report = _report(ctx, fn, plan, {**dims, **sizes}, 4)
        out.append((report, {p.name.value: _hint_names(ctx, p) for p in _own_params(fn)}))
    return out


def _hint_names(ctx, param) -> set[str]:
    """The qualified names of a parameter's hint: ``Key[Array, ""]`` -> ``{"jaxtyping.Key"}``."""
    import libcst as cst

    hint = param.annotation.annotation if param.annotation is not None else None
    if isinstance(hint, cst.Subscript):
        hint = hint.value
    return ctx.qualified_names(hint) if isinstance(hint, cst.Name | cst.Attribute) else set()


# -- inputs ---------------------------------------------------------------------------------------


def _key_form(arg, hints: dict[str, set[str]]) -> str | None:
    """How ``arg`` is drawn as a key: ``"typed"`` (``jax.random.key``), ``"raw"`` (uint32 key data, as
    ``jax.random.PRNGKey`` returns) or None (not a key).  A ``Key[...]`` hint makes a key; a parameter
    used as one (explain's ``key``) is raw under a ``UInt32[...]`` hint, typed otherwise."""
    names = hints.get(arg.name, set())
    if names & _KEY_HINTS:
        return "typed"
    if arg.key:
        return "raw" if names & _RAW_KEY_HINTS else "typed"
    return None


def _draw_key(form: str, shape: tuple[int, ...], seed: int, name: str):
    import math

    import jax

    key = jax.random.key(seed)
    if form == "typed":
        return jax.random.split(key, math.prod(shape)).reshape(shape) if shape else key
    width = jax.random.key_data(key).shape[-1]
    if shape[-1:] != (width,):
        raise MeshifyError(f"{name} is used as a raw key (uint32 key data), whose last dim has {width} elements, "
                           f"but its hint gives shape {list(shape)}", code="MSH071",
                           fix=f"size its last dim {width} with --dims, or hint it Key[Array, \"\"] for a typed key")
    keys = jax.random.split(key, math.prod(shape[:-1])).reshape(shape[:-1]) if shape[:-1] else key
    return jax.random.key_data(keys)


def _draw(prediction, hints: dict[str, set[str]], seed: int, sizes: Mapping[str, int]) -> dict:
    """A random value for each array leaf: a key, booleans (masks), integers (indices) or normal floats.  A leaf of a
    sequence's items (``params.blocks.*.w``) is drawn once per item (``params.blocks.0.w``, ...)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    low = min(min(a.global_shape, default=2) for a in prediction.args) if prediction.args else 2
    leaves = {}
    for i, a in enumerate(prediction.args):
        form = _key_form(a, hints)
        for j, name in enumerate(_item_paths(a.name, sizes)):
            if form is not None:
                leaves[name] = _draw_key(form, a.global_shape, seed + i + 7919 * j, a.name)
            elif a.boolean:
                leaves[name] = rng.random(a.global_shape) < 0.7
            elif a.integer:
                leaves[name] = rng.integers(0, max(1, low), a.global_shape).astype(np.int32)
            else:
                leaves[name] = rng.standard_normal(a.global_shape).astype(np.float32)
    return leaves


#: How many items verify gives a sequence (``blocks: tuple[Block, ...]``) whose length ``--dims`` does not name.
SEQUENCE_LENGTH = 2


def _sequence_length(path: str, sizes: Mapping[str, int]) -> int:
    """The items drawn for the sequence at ``path``: ``--dims blocks=N`` (the field's name, which is also
    the name of the dim its stacked items get), else :data:`SEQUENCE_LENGTH`."""
    return sizes.get(path.rsplit(".", 1)[-1], SEQUENCE_LENGTH)


def _item_paths(name: str, sizes: Mapping[str, int]) -> list[str]:
    """``params.blocks.*.w`` -> ``params.blocks.0.w``, ``params.blocks.1.w``, ... (each ``*`` expanded)."""
    head, star, tail = name.partition(".*")
    if not star:
        return [name]
    return [p for i in range(_sequence_length(head, sizes)) for p in _item_paths(f"{head}.{i}{tail}", sizes)]


def _build(module, path: str, struct, leaves: dict, sizes: Mapping[str, int]):
    """The argument at ``path``: a leaf array, the pytree class built from its fields, or a sequence's items."""
    if struct is None:
        return leaves[path]
    if struct.kind == "sequence":
        (_, item), = struct.fields
        items = [_build(module, f"{path}.{i}", item if not isinstance(item, tuple) else None, leaves, sizes)
                 for i in range(_sequence_length(path, sizes))]
        return items if struct.cls == "list" else tuple(items)
    fields = {name: _build(module, f"{path}.{name}", hint if not isinstance(hint, tuple) else None, leaves, sizes)
              for name, hint in struct.fields}
    if struct.kind == "tuple":
        return tuple(fields.values())
    return fields if struct.kind == "dict" else getattr(module, struct.cls)(**fields)


def _call_args(reference, values: dict[str, object]) -> tuple[list, dict[str, object]]:
    """``values`` by name as (positional, keyword) arguments: positional-only parameters in order
    (a static one missing from ``values`` at its default), every other one by keyword."""
    args, kwargs = [], {}
    for name, p in inspect.signature(reference).parameters.items():
        if p.kind is inspect.Parameter.POSITIONAL_ONLY:
            args.append(values[name] if name in values else p.default)
        elif name in values:
            kwargs[name] = values[name]
    return args, kwargs


# -- running and comparing ------------------------------------------------------------------------


def _simulate(devices: int) -> None:
    """Asks for ``devices`` simulated CPU devices if JAX has not started yet."""
    if "jax" in sys.modules:
        return
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={devices}".strip()


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise MeshifyError(f"cannot import {path}", code="MSH070",
                           fix="check that the file exists and is a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except MeshifyError:
        raise
    except Exception as e:  # verify runs the user's module: its failure is theirs to see, without our frames
        raise MeshifyError(f"importing {path} raised {type(e).__name__}: {e}", code="MSH070",
                           fix="verify imports and runs the file: install what it imports, or run meshify "
                               "from the directory its imports expect") from None
    return module


def _run(fn, args: list, kwargs: dict, what: str):
    try:
        return fn(*args, **kwargs)
    except MeshifyError:
        raise
    except Exception as e:  # the user's code failed on random inputs: say so, without our frames
        named = [("", a) for a in args] + [(f"{name}=", a) for name, a in kwargs.items()]
        shapes = ", ".join(f"{name}{a.dtype}{list(a.shape)}" for name, a in named if hasattr(a, "shape"))
        raise MeshifyError(f"running {what} on random inputs ({shapes}) raised {type(e).__name__}: {e}",
                           code="MSH071", fix="check --dims; integer inputs are those used as indices or "
                           "hinted Int[...]") from None


def _as_numbers(x):
    import jax
    import numpy as np

    dtype = getattr(x, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x, np.float64)


def _low_precision_eps(x) -> float:
    """The machine epsilon of a float16/bfloat16 result (its rounding step near 1), else 0."""
    import jax.numpy as jnp

    dtype = getattr(x, "dtype", None)
    if dtype is not None and dtype in (jnp.float16, jnp.bfloat16):
        return float(jnp.finfo(dtype).eps)
    return 0.0


def _compare(got: list, want: list, rtol: float = 1e-4) -> tuple[float, float, list[str], bool]:
    """Max abs and rel errors over the places where both results are finite; both inf (and a note)
    when the structures or shapes differ, or a NaN or inf is not where the reference has the same; and
    whether they agree: each result within ``rtol`` of the reference's largest magnitude, a float16 or
    bfloat16 one within its own epsilon where that is larger (two programs that add in another order
    round some sums to the neighbouring bfloat16 number, 2**-8 apart relative to 1)."""
    import numpy as np

    if len(got) != len(want):
        return (float("inf"), float("inf"),
                [f"the sharded program returns {len(got)} arrays, the reference {len(want)}"], False)
    abs_err, rel_err, notes, agree = 0.0, 0.0, [], True
    for i, (g, w) in enumerate(zip(got, want)):
        tol, dtype = max(rtol, _low_precision_eps(w)), getattr(w, "dtype", "")
        g, w = _as_numbers(g), _as_numbers(w)
        if g.shape != w.shape:
            notes.append(f"result {i}: shape {list(g.shape)}, the reference's {list(w.shape)}")
            abs_err = rel_err = float("inf")
            agree = False
            continue
        misplaced = (np.isnan(g) != np.isnan(w)) | ((np.isinf(g) | np.isinf(w)) & (g != w))
        if misplaced.any():
            at = tuple(int(j) for j in np.argwhere(misplaced)[0])
            notes.append(f"result {i}: {int(misplaced.sum())} NaN/inf value(s) not where the reference has them, "
                         f"first at {list(at)}: {g[at]} (reference {w[at]})")
            abs_err = rel_err = float("inf")
            agree = False
            continue
        finite = np.isfinite(g) & np.isfinite(w)
        g, w = g[finite], w[finite]
        diff = float(np.abs(g - w).max(initial=0.0))
        scale = float(np.abs(w).max(initial=0.0)) if w.size else 1.0
        abs_err = max(abs_err, diff)
        rel_err = max(rel_err, diff / max(1e-30, scale))
        if diff / max(1e-30, scale) > tol:
            agree = False
        elif tol > rtol and diff > rtol * scale:
            notes.append(f"result {i} is {dtype}: it agrees within {dtype}'s epsilon ({tol:.3g}), not within "
                         f"rtol {rtol:g}")
    return abs_err, rel_err, notes, agree


def verify_file(path: Path, func: str | None, sizes: dict[str, int], generated: Path | None = None,
                seed: int = 0, rtol: float = 1e-4, statics: Mapping[str, object] | None = None) -> list[VerifyReport]:
    """Verifies each ``@mesh`` function of ``path`` (or ``func``); see the module docstring.

    ``statics`` gives static parameters values (``--static``): by name, in place of their defaults.
    """
    statics = dict(statics or {})
    predictions = _predict(path.read_bytes(), path, sizes, func, statics)
    _simulate(max(r.devices for r, _ in predictions))
    import jax

    from meshify.runtime.hlo import collectives, summarize

    source = _import(path, f"_meshify_verify_src_{abs(hash(str(path)))}")
    programs = _import(generated, f"_meshify_verify_gen_{abs(hash(str(generated)))}") if generated else source
    reports = []
    for prediction, hints in predictions:
        target = _mesh_callable(source, prediction.name, statics, path)
        reference = target.reference
        program = _mesh_callable(programs, prediction.name, statics, path, missing_ok=True)
        if program is None:
            raise MeshifyError(f"{generated} defines no {prediction.name!r}", code="MSH070",
                               fix=f"regenerate it: meshify convert {path} -o {generated}")
        params = inspect.signature(reference).parameters
        own = {n: v.value(source, n) if isinstance(v, ModuleCall) else v
               for n, v in statics.items() if n in params and n not in prediction.structure}
        # @mesh(example=...)'s values (which explain's prediction read from the source) where --static gives none
        own = {**getattr(getattr(target, "__func__", target), "example", {}), **own}
        _check_statics(reference, prediction, own)
        # JAX arrays, as the program's callers pass: NumPy ones would run the reference's own ops in NumPy
        # (x.astype(jnp.bfloat16) @ w: a NumPy bfloat16 product is float32, JAX's is bfloat16)
        leaves = {name: leaf if isinstance(leaf, jax.Array) else jax.numpy.asarray(leaf)
                  for name, leaf in _draw(prediction, hints, seed, sizes).items()}
        arrays = {name: _build(source, name, struct, leaves, sizes) for name, struct in prediction.structure.items()}
        args, kwargs = _call_args(reference, {**own, **arrays})
        want = jax.tree.leaves(_run(reference, args, kwargs, f"{prediction.name}.reference"))
        try:
            got = jax.tree.leaves(program(*args, **kwargs))
            hlo = program.lower(*args, **kwargs).compile().as_text()
        except Exception as e:  # a broken sharded program is a failed verification, not bad input
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            reports.append(VerifyReport(prediction.name, float("inf"), float("inf"), False, prediction.predicted(),
                                        {}, [f"the sharded program failed: {type(e).__name__}: {first}"]))
            continue
        abs_err, rel_err, notes, agree = _compare(got, want, rtol)
        found = summarize(collectives(hlo))
        reports.append(VerifyReport(prediction.name, abs_err, rel_err, agree, prediction.predicted(),
                                    {k: tuple(v) for k, v in found.items()}, notes))
    return reports
