"""``@mesh(...)``: the decorator path.  The function is rewritten on first use (cached)."""

from __future__ import annotations

import functools
import inspect
import linecache
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

from meshify._bound import BoundMethod
from meshify.annotate._types import MeshSpec, Rules
from meshify.errors import AnnotationError, MeshifyError, SourceSpan

__all__ = ["mesh", "MeshFunction"]


def mesh(*, rules: object = None, dims: dict[str, int] | None = None, reduce_dtype: str | None = None,
         regather: bool = True, example: Mapping[str, object] | None = None,
         **axes: int) -> Callable[[Callable], MeshFunction]:
    """Declares a device mesh and layout rules for a function with ``Tensor`` hints.

    Args:
        rules: dim name -> mesh axis (or tuple of axes, or None), as a dict or
            Mesh-TensorFlow's string form ``"d_ff:model;heads:model"``.  A dim named
            like a mesh axis goes to that axis unless a rule says otherwise.
        dims: optional dim sizes, used by ``meshify explain``.
        reduce_dtype: ``"bfloat16"`` (or ``"float16"``): float16/bfloat16 partial sums are
            all-reduced in that dtype, half the bytes of the default (float32, as ``jnp.sum``
            accumulates on one device) at a low-precision sum's accuracy.
        regather: a loop body JAX runs (``jax.lax.scan``'s, ``fori_loop``'s) that gathers weights as
            FSDP's (split over an axis that also splits the activations) runs under
            ``mr.regathering``: the backward pass gathers each iteration's weights again rather
            than keeping every iteration's gathered weights until their gradients (ZeRO-3; on by
            default).  ``False`` keeps them: one all_gather fewer per weight and iteration.
        example: values for static parameters that have no default (``{"cfg": Config(layers=2)}``),
            used by ``meshify explain``, ``verify`` and ``plan`` (loop counts, branches); a call
            passes its own values as always.
        **axes: mesh axis names and sizes, in order, e.g. ``batch=2, model=4``.

    Returns:
        A decorator turning ``fn`` into a :class:`MeshFunction`: call it with global
        arrays and get global (sharded) arrays back.
    """
    if not isinstance(regather, bool):
        raise AnnotationError(f"@mesh(regather={regather!r}) is not True or False", span=_caller_span(),
                              fix="write regather=False to keep the gathered weights for the backward pass")
    try:
        spec = MeshSpec(tuple(axes), tuple(axes.values()))
        parsed = Rules.parse(spec, rules)
    except MeshifyError as e:
        raise e.with_span(_caller_span()) from None

    example_fix = 'write example={"cfg": Config(layers=2)}: static parameter names to values'
    if example is not None and not (isinstance(example, Mapping) and all(isinstance(k, str) for k in example)):
        raise AnnotationError(f"@mesh(example={example!r}) is not a dict from parameter names to values",
                              span=_caller_span(), fix=example_fix)

    def decorate(fn: Callable) -> MeshFunction:
        if isinstance(fn, staticmethod | classmethod | property):
            kind = type(fn).__name__
            raise AnnotationError(f"@{kind} below @mesh(...)", span=_caller_span(),
                                  fix=f"put @{kind} above @mesh(...): @mesh must decorate the def itself")
        jitted = _jitted(fn)
        if not jitted and (not callable(fn) or not hasattr(fn, "__code__")):
            raise AnnotationError(f"@mesh(...) decorates a function, not {fn!r}", span=_caller_span(),
                                  fix="put @mesh(...) directly above a def")
        inner = fn.__wrapped__ if jitted else fn
        unknown = [k for k in example or {} if k not in inspect.signature(inner).parameters]
        if unknown:
            raise AnnotationError(f"@mesh(example=...) names {unknown[0]!r}, which is not a parameter of "
                                  f"{inner.__name__}()", span=_caller_span(), fix=example_fix)
        if jitted:  # @mesh above @jax.jit: rewrite the def; the bound program is jitted anyway
            return MeshFunction(inner, spec, parsed, dict(dims or {}), reference=fn, example=example)
        return MeshFunction(fn, spec, parsed, dict(dims or {}), example=example)

    return decorate


def _jitted(fn: object) -> bool:
    """``jax.jit(f)`` (or ``functools.partial(jax.jit, ...)(f)``) of a plain def."""
    inner = getattr(fn, "__wrapped__", None)
    return inner is not None and hasattr(inner, "__code__") and hasattr(fn, "lower") and hasattr(fn, "trace")


def _helper_defaults(namespace: dict[str, Any], before: dict[str, Any], filename: str) -> None:
    """Each helper version the generated source defined (``mlp__v1``, or a helper kept under its own name) takes
    the default values of the helper it was rewritten from, as Python evaluated them when that helper's ``def``
    ran: the generated ``def`` runs later, where ``w=W`` or ``c=C`` would read a module array or constant
    rebound since."""
    for name, value in namespace.items():
        local = inspect.unwrap(value) if callable(value) else None
        code = getattr(local, "__code__", None)
        if code is None or code.co_filename != filename or not (local.__defaults__ or local.__kwdefaults__):
            continue
        version = re.fullmatch(r"(.+)__v\d+", name)  # (helper__v2: the version_name of helper)
        original = before.get(version.group(1) if version else name)
        original = inspect.unwrap(original) if callable(original) else None
        if getattr(original, "__code__", None) is None or original is local:
            continue
        try:
            same = list(inspect.signature(local).parameters) == list(inspect.signature(original).parameters)
        except (TypeError, ValueError):
            continue
        if same:
            local.__defaults__, local.__kwdefaults__ = original.__defaults__, original.__kwdefaults__


def _caller_span(depth: int = 2) -> SourceSpan:
    """Where the user wrote ``@mesh(...)``: the frame that called :func:`mesh` (``depth`` frames up)."""
    frame = sys._getframe(depth)
    path, line = frame.f_code.co_filename, frame.f_lineno
    text = linecache.getline(path, line)
    col = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
    return SourceSpan(path, line, col, text, max(1, len(text.strip())))


class MeshFunction:
    """A ``@mesh`` function: JAX-traceable, rewritten on first call.

    Attributes:
        reference: the untouched single-device function.
        mesh_spec: the mesh's axis names and sizes.
        rules: the layout rules.
        example: ``@mesh(example=...)``'s values of static parameters.
    """

    def __init__(self, fn: Callable, mesh_spec: MeshSpec, rules: Rules, dims: dict[str, int],
                 reference: Callable | None = None, example: Mapping[str, object] | None = None) -> None:
        #: The def meshify rewrites (under ``@mesh`` above ``@jax.jit``: the def jax.jit wraps).
        self.function = fn
        self.reference = fn if reference is None else reference
        self.mesh_spec = mesh_spec
        self.rules = rules
        self.dims = dims
        #: ``@mesh(example=...)``: values of static parameters for explain, verify and plan.
        self.example = dict(example or {})
        self._generated = None
        self._sharded = None
        #: Programs rewritten for module constants rebound from outside (``mod.AXIS = 0``), by their values.
        self._rebound: dict[tuple, Any] = {}
        #: Programs by what the closure's variables held when each was rewritten (see _closure_key).
        self._closures: dict[tuple, Any] = {}
        self._closure: tuple | None = None
        functools.update_wrapper(self, fn)

    def _build(self):
        try:
            return self._build_once()
        except MeshifyError as e:  # keep meshify's own frames out of the user's traceback
            raise e.with_traceback(None) from None

    def _build_once(self):
        from meshify.rewrite._driver import rebound_constants

        # A closure's variable rebound since (``nonlocal mode; mode = "mean"``, a new array): the function is
        # rewritten for what it holds now (a branch, a shape may follow from it; the program reads it too).
        closure = self._closure_key()
        if self._sharded is None or closure != self._closure:
            if closure not in self._closures:
                self._closures[closure] = self._compile({})
            self._generated, self._sharded = self._closures[closure]
            self._closure = closure
        # A module constant the rewrite took (an axis, a shape, a branch may follow from it) rebound from
        # outside since: the function is rewritten for the values it holds now, as it would be traced.
        overrides = rebound_constants(self.function, self._generated.plan.global_values, self._generated.plan.aliases)
        if not overrides:
            return self._sharded
        key = (closure, tuple(sorted((name, type(value).__name__, repr(value)) for name, value in overrides.items())))
        if key not in self._rebound:
            self._rebound[key] = self._compile(overrides)[1]
        return self._rebound[key]

    def _closure_key(self) -> tuple:
        """What the function's closure variables hold: a Python literal by its value, anything else by identity."""
        from meshify._literals import is_literal

        fn = self.function
        out = []
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not yet bound
                out.append((name, "unbound"))
                continue
            out.append((name, ("literal", type(value).__name__, repr(value)) if is_literal(value) else id(value)))
        return tuple(out)

    def _compile(self, overrides: dict[str, object]):
        """The function rewritten (module constants read as ``overrides`` says) and bound."""
        import jax

        import meshify.runtime as runtime
        from meshify.rewrite import rewrite_function

        fn = self.function
        generated = rewrite_function(fn, self.mesh_spec, self.rules, self.dims, overrides)
        namespace = dict(fn.__globals__)
        code = fn.__code__
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            namespace[name] = cell.cell_contents
        namespace.setdefault("jax", jax)
        namespace[generated.mr] = runtime
        filename = f"<meshify: {generated.filename}:{fn.__name__}>"
        # Its lines readable (tracebacks; a call-time error maps its statement back to the user's line).
        linecache.cache[filename] = (len(generated.source), None, generated.source.splitlines(True), filename)
        before = dict(namespace)
        exec(compile(generated.source, filename, "exec"), namespace)
        sharded = namespace[fn.__name__]
        sharded.origin = fn  # call-time errors point at the user's file
        sharded.defaults_from(fn)  # (as the user's def evaluated them, not as they read now)
        _helper_defaults(namespace, before, filename)
        return generated, sharded

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            program = self._build()
            return program(*args, **kwargs)
        except MeshifyError as e:  # keep meshify's own frames out of the user's traceback
            raise e.with_traceback(None) from None

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """On a class, ``obj.method`` passes ``obj`` as the first (static) argument."""
        return self if instance is None else BoundMethod(self, instance)

    @property
    def sharded(self):
        """The bound :class:`meshify.runtime.Sharded` program."""
        return self._build()

    @property
    def source(self) -> str:
        """The generated per-device function, as it would appear in a converted file."""
        self._build()
        return self._generated.source

    @property
    def plan(self):
        self._build()
        return self._generated.plan

    def place(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """The arguments placed on the mesh in their shardings (see ``Sharded.place``)."""
        return self._build().place(*args, **kwargs)

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """``jax.jit(...).lower`` of the sharded program, for inspecting HLO."""
        return self._build().lower(*args, **kwargs)

    def explain(self) -> str:
        """Each planned collective with its kind, axes and the source line it serves."""
        plan = self.plan
        lines = [f"{self.__name__} on mesh {self.mesh_spec}:"]
        for name, layout in plan.in_layouts.items():
            lines.append(f"  in  {name}: {layout.describe()}")
        def leaves(layouts, path):  # a tuple or dict of results, nested: each result's layout by its path
            if isinstance(layouts, dict):
                return [leaf for k, v in layouts.items() for leaf in leaves(v, f"{path}[{k!r}]")]
            if isinstance(layouts, tuple):
                return [leaf for i, v in enumerate(layouts) for leaf in leaves(v, f"{path}[{i}]")]
            return [(path, layouts)]

        def outs(layouts, when=""):
            for i, (path, layout) in enumerate(leaves(layouts, "")):
                lines.append(f"  out{when} {path.lstrip('[').rstrip(']') if path.count('[') == 1 else path or i}: "
                             f"{layout.describe()}")

        from meshify.rewrite._interp import OutByStatics

        if isinstance(plan.out_layouts, OutByStatics):  # results chosen by static parameters
            for tests, layouts in plan.out_layouts.cases:
                outs(layouts, f" (when {' and '.join(tests)})")
            outs(plan.out_layouts.otherwise, " (otherwise)")
        else:
            outs(plan.out_layouts)
        if not plan.records:
            lines.append("  no collectives")
        for record in plan.records:
            lines.append(f"  line {record.line}: {record.reason}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<meshify.MeshFunction {self.__name__} on {self.mesh_spec}>"

