"""Random annotated programs for differential fuzzing, as source text.

A program is a module with one ``@mesh`` function ``f`` of 2 to 10 statements drawn from every
op family meshify supports (einsum, matmul, broadcasting elementwise ops, unary functions,
reductions with ``axis``/``keepdims``, the softmax family, transposes, reshapes and renames
named by annotated assignments, lookups), over a pool of named dims whose sizes the mesh
divides, with random layout rules on a random mesh.  Generation tracks each value's dims and
a rough magnitude, so every program is valid JAX and most are within what meshify accepts; a
few are built to be rejected (a return hint with permuted dims), which ``Program.provoked``
says.  Now and then a run of statements moves into a module-level ``helper`` that ``f`` calls,
so helper specialisation (layouts and pending partial sums crossing the call) is fuzzed too;
loops (``jax.lax.scan`` over a stacked parameter, ``jax.lax.fori_loop``, ``for`` over a range)
carry a value through a few steps.

Beyond that one function, each drawn as an option (so that shrinking turns it off):

- several ``@mesh`` functions per module: ``g`` on its own mesh, rules and dim sizes, which
  ``f`` may call (a ``@mesh`` function calling a ``@mesh`` function), sharing a module-level
  helper with ``f``; ``f2``, a copy of ``f`` on another mesh or other rules (so that ``f``'s
  helpers are specialised for two layouts); every one of them is checked;
- the optional parameters of the ops, drawn from each JAX function's real signature and
  passed positionally or by keyword (``where=``, ``initial=``, ``dtype=``, ``keepdims``,
  ``b=``, ``return_sign=``, ``mode=``, ``fill_value=``, ``precision=``, ...), and ``astype``;
- lists and tuples of arrays passed to functions (``sum([a, b])``, ``jnp.hstack``,
  ``jnp.vstack``, ``jnp.stack`` then a reduction, a helper taking a tuple);
- module-level arrays and scalar constants, an array default argument, a closure over an
  array (``f`` made by a factory) and a method reading ``self.w`` that changes between two
  calls; each used named (``w: Tensor[...] = W``) or, now and then, unnamed;
- helpers under ``jax.jit``, ``jax.checkpoint``, ``functools.partial(jax.jit,
  static_argnums=...)``, ``jax.custom_vjp``/``custom_jvp`` (with a different backward);
- literal-shape constructors (``jnp.ones((4, 8))``, ``jnp.arange(8)``, ``jax.random.normal(key,
  (8,))``, ``jnp.full(x.shape, s)``, ``jnp.full_like(x, partial_sum)``);
- lookup ids that are negative or out of range (``emb[ids]``, ``jnp.take``,
  ``take_along_axis``, ``jax.nn.one_hot``), whatever the mode;
- float16 and bfloat16 inputs (compared with tolerances for that dtype);
- spellings drawn last (a quarter of modules): the jax functions a program calls spelled through
  module-level aliases (``tanh = jnp.tanh``, an alias of an alias, ``functools.partial(jnp.einsum,
  precision="highest")`` or of a keyword at its default, a ``def`` rebound by the alias), above the defs
  or at the module's end, in helpers, nested defs, lambdas and values passed to helpers or
  ``jax.tree.map``; now and then a helper parameter named as an elementwise alias; and ``f`` made by
  ``f = mesh(...)(f)`` (``Program.called``: ``convert`` must refuse it, the decorator path runs it);
- images (about one module in seven): the main function starts from an image whose height and width
  the rules split, and draws convolutions, pooling, padding, slices, roll, flip, resizing, repeats,
  concatenations and group / batch norm statistics over them (:mod:`tests.fuzz.images`).

Options meshify may legitimately refuse are recorded as *triggers* (a reason and the source
fragments that carry it): a rejection pointing at a line holding a trigger's fragment counts
as provoked; any other rejection is reported as unprovoked.

Every random decision goes through a :class:`Chooser` (``integer(lo, hi)``), so a program
is a pure function of its choice sequence: hypothesis drives it in the tests (and shrinks
it), a seeded ``random.Random`` drives it in ``run.py`` (and ``shrink.py`` shrinks the
recorded sequence).  Choice ``lo`` is always the simplest option, so shrinking towards it
simplifies the program.
"""

from __future__ import annotations

import ast
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

__all__ = ["MESHES", "Arg", "Chooser", "Entry", "Program", "RandomChooser", "generate"]

T = TypeVar("T")

#: Mesh name -> (axis name, size), in order.  Every mesh has 8 devices.
MESHES: dict[str, tuple[tuple[str, int], ...]] = {
    "8": (("model", 8),),
    "1x8": (("data", 1), ("model", 8)),
    "2x4": (("data", 2), ("model", 4)),
    "4x2": (("data", 4), ("model", 2)),
    "8x1": (("data", 8), ("model", 1)),
    "2x2x2": (("data", 2), ("model", 2), ("pipe", 2)),
}

#: The named dims programs draw from (then fresh names for reshapes and renames).
DIM_POOL = ("batch", "seq", "d_model", "d_ff", "heads", "d_head", "vocab", "kv", "chan", "expert")

HEADER = """\
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh
"""

MAX_RANK = 4
MAX_ELEMENTS = 4096
#: float16/bfloat16 programs stay smaller, so that no sum overflows float16.
LOW_MAX_ELEMENTS = 1024
#: Values are kept at about this magnitude or below (rms), so float32 round-off stays small.
MAX_SCALE = 8.0
FLOATS = ("float", "steps", "cancel")
#: What meshify's errors say about a value whose dims it cannot name (a trigger's fragments when the
#: option may leave one: the error then points where the value is used, not where it was made).
UNNAMED = ("einsum_", "opaque", "Opaque", "placeholder", "cannot infer the dims", "whose dims meshify cannot infer",
           "of dims meshify cannot infer")


class Chooser(Protocol):
    """The source of every random decision: an int in ``[lo, hi]``, ``lo`` being the simplest."""

    def integer(self, lo: int, hi: int) -> int: ...


class RandomChooser:
    """A seeded chooser that records its choices, or replays a recorded prefix (then picks ``lo``).

    ``choices`` holds each draw as its offset from ``lo``, the form :mod:`shrink` edits.
    """

    def __init__(self, seed: int | None = None, prefix: Sequence[int] | None = None) -> None:
        self._rng = random.Random(seed) if prefix is None else None
        self._prefix = list(prefix or ())
        self.choices: list[int] = []

    def integer(self, lo: int, hi: int) -> int:
        i = len(self.choices)
        if self._rng is not None:
            offset = self._rng.randint(0, hi - lo)
        else:
            offset = min(self._prefix[i], hi - lo) if i < len(self._prefix) else 0
        self.choices.append(offset)
        return lo + offset


@dataclass(frozen=True)
class Arg:
    """One parameter: ``float`` normals with a standard deviation, ``steps`` (floats taking a few
    values, multiples of ``std / 2``, so that ties are common), integer ``ids`` in ``[low, high)``
    (``low`` < 0 or ``high`` past the table's size for negative and out-of-range ids), or a
    ``key`` (``jax.random.key``), or (low-precision programs) ``cancel``: large values of one sign
    in the first half of dim ``axis`` and of the other in the second, plus normal noise, so that a sum
    over ``axis`` cancels to a small total while each device's partial sum of a split ``axis`` is
    large (overflowing float16, or losing the noise to bfloat16's rounding).  Float arguments have
    ``dtype``."""

    name: str
    dims: tuple[str, ...]
    kind: str = "float"
    high: int = 0
    std: float = 1.0
    low: int = 0
    dtype: str = "float32"
    axis: int = 0

    @property
    def differentiable(self) -> bool:
        return self.kind in FLOATS

    def to_json(self) -> dict:
        d = {"name": self.name, "dims": list(self.dims), "kind": self.kind, "high": self.high, "std": self.std}
        if self.low:
            d["low"] = self.low
        if self.dtype != "float32":
            d["dtype"] = self.dtype
        if self.kind == "cancel":
            d["axis"] = self.axis
        return d

    @classmethod
    def from_json(cls, d: dict) -> Arg:
        return cls(d["name"], tuple(d["dims"]), d["kind"], d["high"], d["std"], d.get("low", 0),
                   d.get("dtype", "float32"), d.get("axis", 0))


@dataclass(frozen=True)
class Entry:
    """One ``@mesh`` function of the module to check against its ``.reference``.

    ``name`` is the module attribute: the function, or (``method`` set) a class whose
    ``__init__(self, w)`` stores ``w`` as ``self.w`` (and 1.0 as ``self.scale``); a method is called
    once with ``attr``'s first draw as ``self.w``, then ``self.w`` is changed to a second draw and
    ``self.scale`` to 0.5, and it is called again.
    """

    name: str
    mesh: str
    sizes: dict[str, int]
    args: tuple[Arg, ...]
    grad: bool
    method: str = ""
    attr: Arg | None = None
    #: Arguments passed packed in one struct parameter: (parameter, kind, class, field names), ``kind`` one of
    #: "namedtuple", "dataclass", "typeddict" (the class names the fields' dims; a TypedDict's value is a dict).
    struct: tuple[str, str, str, tuple[str, ...]] | None = None

    def to_json(self) -> dict:
        d = {"name": self.name, "mesh": self.mesh, "sizes": dict(self.sizes), "args": [a.to_json() for a in self.args],
             "grad": self.grad}
        if self.method:
            d["method"] = self.method
            d["attr"] = self.attr.to_json() if self.attr else None
        if self.struct:
            d["struct"] = [*self.struct[:3], list(self.struct[3])]
        return d

    @classmethod
    def from_json(cls, d: dict) -> Entry:
        attr, struct = d.get("attr"), d.get("struct")
        return cls(d["name"], d["mesh"], dict(d["sizes"]), tuple(Arg.from_json(a) for a in d["args"]), d["grad"],
                   d.get("method", ""), Arg.from_json(attr) if attr else None,
                   (struct[0], struct[1], struct[2], tuple(struct[3])) if struct else None)

    def packed(self, module: Any, args: Sequence[Any]) -> list[Any]:
        """The call's arguments: ``args`` (one per :attr:`args`) with the struct's fields packed in an instance
        of ``module``'s class, placed where its first field was."""
        if not self.struct:
            return list(args)
        _, kind, cls, fields = self.struct
        values = {a.name: v for a, v in zip(self.args, args)}
        made = {f: values[f] for f in fields}
        instance = made if kind == "typeddict" else getattr(module, cls)(**made)
        out = []
        for a, v in zip(self.args, args):
            if a.name == fields[0]:
                out.append(instance)
            elif a.name not in fields:
                out.append(v)
        return out

    def packed_names(self) -> list[tuple[str, bool]]:
        """(name, differentiable) of each parameter a call passes, the struct as one."""
        fields = self.struct[3] if self.struct else ()
        out = []
        for a in self.args:
            if fields and a.name == fields[0]:
                out.append((self.struct[0], True))  # (only float arguments are packed)
            elif a.name not in fields:
                out.append((a.name, a.differentiable))
        return out


@dataclass(frozen=True)
class Program:
    """A generated program and what running it needs.

    Attributes:
        text: the module's source (imports, module-level values and helpers, ``@mesh`` functions).
        mesh: the main function's mesh, a name in :data:`MESHES`.
        sizes: dim name -> global size (the main function's).
        args: the main function's parameters, in order (those a call passes).
        grad: whether the main function returns a scalar loss whose gradients are compared too.
        seed: seeds the inputs.
        provoked: why the program was built to be rejected ("" for most).
        entries: every ``@mesh`` function to check, the main one first; ``()`` means ``f`` alone,
            described by ``mesh``, ``sizes``, ``args`` and ``grad``.
        precision: "" (float32 tolerances), or "bfloat16"/"float16": the program computes in that
            dtype somewhere, so values are compared with that dtype's tolerances.
        triggers: options meshify may refuse: (reason, source fragments carrying it).
    """

    text: str
    mesh: str
    sizes: dict[str, int]
    args: tuple[Arg, ...]
    grad: bool
    seed: int
    provoked: str = ""
    #: Filled for saved regressions: the outcome the test requires, and a strict-xfail reason.
    expect: str = ""
    xfail: str = ""
    entries: tuple[Entry, ...] = ()
    precision: str = ""
    triggers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Module constants set from outside between two calls of each function: (name, first, second), each value a
    #: literal or ``"=<expression>"`` evaluated in the module (a module array's).
    rebinds: tuple[tuple[str, str, str], ...] = ()
    #: Functions made by ``f = mesh(...)(f)`` rather than decorated: ``convert`` refuses the module (with a fix),
    #: so only the decorator path runs them.
    called: tuple[str, ...] = ()

    def calls(self) -> tuple[Entry, ...]:
        """Every ``@mesh`` function to check, the main one first."""
        return self.entries or (Entry("f", self.mesh, dict(self.sizes), self.args, self.grad),)

    def metadata(self) -> dict:
        """What a saved regression file stores besides the source (see :func:`check.save`)."""
        meta = {"mesh": self.mesh, "sizes": dict(self.sizes), "args": [a.to_json() for a in self.args],
                "grad": self.grad, "seed": self.seed, "provoked": self.provoked}
        if self.entries:
            meta["entries"] = [e.to_json() for e in self.entries]
        if self.precision:
            meta["precision"] = self.precision
        if self.triggers:
            meta["triggers"] = [[reason, list(fragments)] for reason, fragments in self.triggers]
        if self.rebinds:
            meta["rebinds"] = [list(r) for r in self.rebinds]
        if self.called:
            meta["called"] = list(self.called)
        return meta


@dataclass
class _Value:
    name: str
    dims: tuple[str | None, ...]  # None: a size-1 dim from keepdims, broadcasting against anything
    scale: float  # rough rms magnitude


# -- module-level pieces shared by every function of a program ---------------------------------------


@dataclass(frozen=True)
class _Template:
    """A module-level helper generic in its operand's dims (so that functions on other meshes,
    rules and sizes can share it): ``{k}`` is where a static factor goes."""

    name: str
    body: str
    kind: str  # same | pair | droplast | project | stats


TEMPLATES = (
    _Template("center", "return (x0 - jnp.mean(x0, axis=0)){k}", "same"),
    _Template("rms_norm", "return (x0 / jnp.sqrt(jnp.mean(x0 * x0, axis=-1, keepdims=True) + 1.0)){k}", "same"),
    _Template("per_count", "return (x0 * (2.0 / x0.shape[0]) - jnp.sum(x0, axis=0) / x0.shape[0]){k}", "same"),
    _Template("normalize", "return jax.nn.softmax(x0, axis=-1){k}", "same"),
    _Template("row_mean", "return jnp.mean(x0, axis=-1){k}", "droplast"),
    _Template("gate", "return (jnp.tanh(x0) * jax.nn.sigmoid(x1)){k}", "pair"),
    _Template("project", "return jnp.tanh(x0 @ x1){k}", "project"),
    _Template("stats", "return jnp.mean(x0, axis=0), jnp.max(x0, axis=0)", "stats"),
)

#: Helpers with a custom derivative: (name, definition, scale of the result or None for the operand's).
CUSTOM = {
    "scale_grad": ("""
@jax.custom_vjp
def scale_grad(x):
    return x


def _scale_grad_fwd(x):
    return x, None


def _scale_grad_bwd(_, g):
    return (g * 0.5,)


scale_grad.defvjp(_scale_grad_fwd, _scale_grad_bwd)
""", None),
    "soft_tanh": ("""
@jax.custom_vjp
def soft_tanh(x):
    return jnp.tanh(x)


def _soft_tanh_fwd(x):
    y = jnp.tanh(x)
    return y, y


def _soft_tanh_bwd(y, g):
    return (0.5 * g * (1.0 - y * y),)


soft_tanh.defvjp(_soft_tanh_fwd, _soft_tanh_bwd)
""", 1.0),
    "rms_grad": ("""
@jax.custom_vjp
def rms_grad(x):
    return x * 1.0


def _rms_grad_fwd(x):
    return x * 1.0, x


def _rms_grad_bwd(x, g):
    return (g / (jnp.sqrt(jnp.mean(g * g)) + 1.0) + 0.01 * jnp.tanh(x),)


rms_grad.defvjp(_rms_grad_fwd, _rms_grad_bwd)
""", None),
    "mean_jvp": ("""
@jax.custom_jvp
def mean_jvp(x):
    return jnp.sin(x)


@mean_jvp.defjvp
def _mean_jvp_rule(primals, tangents):
    (x,), (t,) = primals, tangents
    return mean_jvp(x), jnp.cos(x) * t * (1.0 + 0.1 * jnp.tanh(jnp.sum(x)))
""", 1.0),
    "soft_clip": ("""
@jax.custom_jvp
def soft_clip(x):
    return 2.0 * jnp.tanh(x / 2.0)


@soft_clip.defjvp
def _soft_clip_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return soft_clip(x), 0.5 * t
""", 2.0),
}

#: Helpers taking a tuple or list of arrays of the same dims.
TUPLE_HELPERS = {
    "combine": "def combine(xs):\n    a, b = xs\n    return a * 0.5 + jnp.tanh(b)\n",
    "first_minus_second": "def first_minus_second(xs):\n    return xs[0] - xs[1] * 0.5\n",
    "mean_of": "def mean_of(xs):\n    return sum(xs) / len(xs)\n",
}


@dataclass
class _Module:
    ch: Chooser
    seed: int
    dtype: str = "float32"
    precision: str = ""
    overlap: bool = False  # hints may put one mesh axis on two dims (see generate)
    image: bool = False  # the main function starts from an image split over its spatial dims (images.py)
    imports: set[str] = field(default_factory=set)
    consts: dict[str, str] = field(default_factory=dict)
    #: Constants rebound from outside the module between two calls (``mod.C0 = 0``) -> the second value.
    rebinds: dict[str, str] = field(default_factory=dict)
    arrays: dict[str, str] = field(default_factory=dict)
    #: Module arrays whose dims a module-level hint names (``G0: Tensor["d", "e"] = ...``) -> the hint.
    array_hints: dict[str, str] = field(default_factory=dict)
    defs: dict[str, str] = field(default_factory=dict)  # name -> definition, in order
    shared: tuple[_Template, str, bool] | None = None  # template, decorator line, static factor
    triggers: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    provoked: str = ""

    def trigger(self, reason: str, *fragments: str, unnamed: bool = False) -> None:
        """Records an option meshify may refuse; ``unnamed``: it may leave a value whose dims meshify
        cannot name, refused where that value is used (the error then says so, in words of :data:`UNNAMED`)."""
        self.triggers.append((reason, tuple(f for f in fragments if f) + (UNNAMED if unnamed else ())))

    def const(self, value: str) -> str:
        name = f"C{len(self.consts)}"
        self.consts[name] = value
        return name

    def array(self, shape: Sequence[int], std: float, dtype: str, dims: Sequence[str] | None = None) -> str:
        """A module-level array ``G<n>`` of seeded normals (the same in the converted file); ``dims``: a
        module-level hint names them where it is bound."""
        self.imports.add("numpy")
        name = f"G{len(self.arrays)}"
        if dims is not None:
            self.array_hints[name] = f": {hint(dims)}"
        rng_seed = (self.seed * 31 + len(self.arrays)) % 100_003
        self.arrays[name] = (f"jnp.asarray(np.random.default_rng({rng_seed}).standard_normal({tuple(shape)!r}) * "
                             f"{round(std, 4)}, dtype=jnp.{dtype})")
        return name

    def decorator(self, static_index: int) -> tuple[str, bool]:
        """A random decorator for a helper: (the decorator line or "", whether it takes a static factor)."""
        kind = _weighted(self.ch, [("none", 60), ("jit", 10), ("checkpoint", 8), ("remat", 3), ("partial_jit", 13),
                                   ("partial_checkpoint", 4)])
        if kind == "none":
            return "", False
        if kind in ("jit", "checkpoint", "remat"):
            return f"@jax.{kind}", False
        self.imports.add("functools")
        nums = _pick(self.ch, [f"({static_index},)", str(static_index)])
        return f"@functools.partial(jax.{kind.split('_')[1]}, static_argnums={nums})", True


def _pick(ch: Chooser, options: Sequence[T]) -> T:
    return options[ch.integer(0, len(options) - 1)]


def _weighted(ch: Chooser, options: Sequence[tuple[T, int]]) -> T:
    total = sum(w for _, w in options)
    n = ch.integer(0, total - 1)
    for item, w in options:
        if n < w:
            return item
        n -= w
    raise AssertionError


# -- signatures ---------------------------------------------------------------------------------------

_SIGNATURES: dict[str, list[tuple[str, str, object]]] = {}
_NO_DEFAULT = object()


def _signature(qualname: str) -> list[tuple[str, str, object]]:
    """``qualname``'s parameters as (name, kind, default), read from the installed JAX."""
    if qualname not in _SIGNATURES:
        import importlib
        import inspect

        module, _, attr = qualname.rpartition(".")
        fn = getattr(importlib.import_module(module), attr)
        _SIGNATURES[qualname] = [(p.name, p.kind.name, _NO_DEFAULT if p.default is p.empty else p.default)
                                 for p in inspect.signature(fn).parameters.values()]
    return _SIGNATURES[qualname]


def _literal(value: object) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


@dataclass
class _Function:
    """A built ``@mesh`` function, before it is placed in the module."""

    name: str
    mesh: str
    axes: dict[str, int]
    rules: dict[str, tuple[str, ...] | None]
    rules_text: str
    sizes: dict[str, int]
    args: list[Arg]
    lines: list[str]
    ret: str
    grad: bool
    final_dims: tuple[str, ...]
    helper: str
    constraints: list[tuple[str, ...]]
    fixed: set[str]

    def decorator(self) -> str:
        axes = ", ".join(f"{n}={s}" for n, s in self.axes.items())
        return f"@mesh({axes}{self.rules_text})"

    def params(self, args: Sequence[Arg] | None = None) -> list[str]:
        return [f"{a.name}: {hint(a.dims)}" for a in (self.args if args is None else args)]

    def text(self, *, name: str = "", params: Sequence[str] | None = None, first: Sequence[str] = (),
             lines: Sequence[str] | None = None, indent: str = "", decorator: str = "") -> str:
        body = "".join(_indent(line, indent + "    ") + "\n" for line in [*first, *(self.lines if lines is None
                                                                                    else lines)])
        params = self.params() if params is None else params
        returns = f" -> {self.ret}" if self.ret else ""
        return (f"{indent}{decorator or self.decorator()}\n{indent}def {name or self.name}({', '.join(params)})"
                f"{returns}:\n{body}")

    def entry(self, name: str = "") -> Entry:
        return Entry(name or self.name, self.mesh, dict(self.sizes), tuple(self.args), self.grad)


def _indent(line: str, prefix: str) -> str:
    return "\n".join(prefix + part for part in line.split("\n"))


@dataclass
class _Builder:
    ch: Chooser
    mesh: str
    seed: int
    module: _Module = None  # type: ignore[assignment]
    name: str = "f"
    callee: _Function | None = None
    preset: dict[str, int] | None = None
    single: bool = False  # one output (a function other functions call)
    axes: dict[str, int] = field(default_factory=dict)
    rules: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    args: list[Arg] = field(default_factory=list)
    values: list[_Value] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    constraints: list[tuple[str, ...]] = field(default_factory=list)
    fixed: set[str] = field(default_factory=set)
    provoked: str = ""
    spatial: set[str] = field(default_factory=set)  # the spatial dims of images (images.py)
    image_dims: list[str] = field(default_factory=list)  # dims image ops made, in order
    dims_given: bool = False  # @mesh(dims=...) gives the image dims' sizes

    def __post_init__(self) -> None:
        if self.module is None:
            self.module = _Module(self.ch, self.seed)

    @property
    def dtype(self) -> str:
        return self.module.dtype

    @property
    def max_elements(self) -> int:
        return MAX_ELEMENTS if self.dtype == "float32" else LOW_MAX_ELEMENTS

    # -- choices -------------------------------------------------------------------------------

    def pick(self, options: Sequence[T]) -> T:
        return options[self.ch.integer(0, len(options) - 1)]

    def flag(self, percent: int) -> bool:
        """True with about ``percent``% probability; False when shrunk."""
        return self.ch.integer(0, 99) >= 100 - percent

    def weighted(self, options: Sequence[tuple[T, int]]) -> T:
        return _weighted(self.ch, options)

    def shuffled(self, items: Sequence[T]) -> list[T]:
        rest, out = list(items), []
        while rest:
            out.append(rest.pop(self.ch.integer(0, len(rest) - 1)))
        return out

    def trigger(self, reason: str, *fragments: str, unnamed: bool = False) -> None:
        self.module.trigger(reason, *fragments, unnamed=unnamed)

    def call(self, spelled: str, qualname: str, required: Sequence[str], options: dict[str, str]) -> str:
        """``spelled(required..., options...)``: each option by keyword or positionally (earlier optional
        parameters then spelled with their defaults), as ``qualname``'s real signature allows."""
        params = _signature(qualname)
        if any(kind == "VAR_POSITIONAL" for _, kind, _ in params):
            positional: list[tuple[str, object]] = []
        else:
            positional = [(n, d) for n, kind, d in params if kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
        n_req = len(required)
        reach = n_req
        for name, default in positional[n_req:]:
            if name not in options and not _literal(default):
                break
            reach += 1
        last = max([i + 1 for i, (name, _) in enumerate(positional[:reach]) if name in options], default=n_req)
        cut = self.ch.integer(n_req, last) if last > n_req else n_req
        items = list(required)
        used = set()
        for name, default in positional[n_req:cut]:
            items.append(options[name] if name in options else repr(default))
            used.add(name)
        items += [f"{k}={v}" for k, v in options.items() if k not in used]
        return f"{spelled}({', '.join(items)})"

    # -- dims and rules --------------------------------------------------------------------------

    def axes_of(self, dim: str | None) -> tuple[str, ...]:
        if dim is None:
            return ()
        if dim in self.rules:
            return self.rules[dim] or ()
        return (dim,) if dim in self.axes else ()

    def shards(self, dim: str | None) -> int:
        return math.prod(self.axes[a] for a in self.axes_of(dim))

    def disjoint(self, dims: Sequence[str | None]) -> bool:
        """Whether a hint naming ``dims`` may be written: always in an ``overlap`` module (the rules
        resolve per value: a dim whose axis an earlier dim took stays whole), else when no axis
        would split two of its dims."""
        if self.module.overlap:
            return True
        seen: list[str] = []
        for d in dims:
            seen += self.axes_of(d)
        return len(seen) == len(set(seen))

    def _rule(self, size: int | None) -> tuple[str, ...] | None:
        """A random rule: unmapped (most shrunk), explicit None, one axis, or two axes."""
        names = list(self.axes)
        options: list[tuple[str, ...]] = [(a,) for a in names]
        options += [(a, b) for a in names for b in names if a != b]
        if size is not None:
            options = [o for o in options if size % math.prod(self.axes[a] for a in o) == 0]
        kind = self.ch.integer(0, 99)
        if kind < 40 or not options:
            return ()
        if kind < 45:
            return None
        single = [o for o in options if len(o) == 1]
        pairs = [o for o in options if len(o) == 2]
        if kind < 90 or not pairs:
            return self.pick(single) if single else ()
        return self.pick(pairs)

    def set_rule(self, name: str, size: int) -> None:
        """A random rule for an existing dim of ``size`` (a dim named like an axis that does not divide it: None)."""
        rule = self._rule(size)
        if rule != ():
            self.rules[name] = rule
        elif name in self.axes and size % self.axes[name]:
            self.rules[name] = None

    def new_dim(self, size: int | None = None, base: str = "", split: bool = True) -> str:
        """A dim not used yet, with a random rule (if ``split``) and a size its shards divide (unless given)."""
        name = base or next((d for d in DIM_POOL if d not in self.sizes), "")
        if not base and split and self.flag(6):  # a dim named like a mesh axis takes that axis by default
            free = [a for a in self.axes if a not in self.sizes and (size is None or size % self.axes[a] == 0)]
            if free:
                name = self.pick(free)
                self.sizes[name] = size if size is not None else self.axes[name] * self.pick((1, 2))
                return name
        n = 0
        while not name or name in self.sizes or name in self.axes:
            n += 1
            name = f"{base or 'dim'}{n}"
        rule = self._rule(size) if split else ()
        if rule != ():
            self.rules[name] = rule
        if size is None:
            p = self.shards(name)
            size = p * self.pick((1, 2, 3)) if p > 1 else self.pick((2, 3, 4, 6, 8))
        self.sizes[name] = size
        return name

    def some_dim(self, exclude: Sequence[str | None] = (), compatible: Sequence[str | None] = ()) -> str:
        """An existing dim (not in ``exclude``, rules disjoint with ``compatible``) or a new one."""
        taken = {a for d in compatible for a in self.axes_of(d)}
        old = [d for d in self.sizes if d not in exclude and not set(self.axes_of(d)) & taken]
        if old and self.flag(55):
            return self.pick(old)
        for _ in range(4):
            d = self.new_dim()
            if not set(self.axes_of(d)) & taken:
                return d
        return self.new_dim(base="r", split=False)

    def elements(self, dims: Sequence[str | None]) -> int:
        return math.prod(1 if d is None else self.sizes[d] for d in dims)

    def fits(self, dims: Sequence[str | None]) -> bool:
        return len(dims) <= MAX_RANK and self.elements(dims) <= self.max_elements and len(set(dims) - {None}) == len(
            [d for d in dims if d is not None])

    # -- values ------------------------------------------------------------------------------------

    def param(self, dims: Sequence[str], std: float = 1.0) -> _Value:
        name = f"x{len(self.args)}"
        # Some inputs take few values, so that reductions meet exact ties (their gradients must still match).
        kind = "steps" if self.flag(12) else "float"
        self.args.append(Arg(name, tuple(dims), kind=kind, std=round(std, 4), dtype=self.dtype))
        self.constraints.append(tuple(dims))
        value = _Value(name, tuple(dims), std)
        return value

    def cancelling(self, dims: Sequence[str], axis: int) -> _Value:
        """A new low-precision parameter whose sum over ``axis`` cancels (see :class:`Arg`)."""
        name = f"x{len(self.args)}"
        self.args.append(Arg(name, tuple(dims), kind="cancel", dtype=self.dtype, axis=axis))
        self.constraints.append(tuple(dims))
        return _Value(name, tuple(dims), 1.0)

    def ids(self, dims: Sequence[str], high: int, low: int = 0, dtype: str = "float32") -> str:
        """A new ids parameter, int32 (or ``dtype``: a narrow integer type its values fit)."""
        name = f"ids{len(self.args)}"
        self.args.append(Arg(name, tuple(dims), kind="ids", high=high, low=low, dtype=dtype))
        self.constraints.append(tuple(dims))
        return name

    def id_range(self, size: int) -> tuple[int, int]:
        """Ids for a table of ``size`` rows: in range mostly, else negative ones too, or out of range both ways."""
        kind = self.weighted([("in", 70), ("negative", 15), ("out", 15)])
        if kind == "in":
            return 0, size
        if kind == "negative":
            return -size, size
        return -2 * size, 2 * size

    def key(self) -> str:
        existing = [a for a in self.args if a.kind == "key"]
        if existing:
            return existing[0].name
        name = f"key{len(self.args)}"
        self.args.append(Arg(name, (), kind="key"))
        return name

    def operand(self, dims: Sequence[str], std: float = 1.0, any_order: bool = False) -> _Value:
        """A live value with these dims (in this order, or any when ``any_order``), or a new parameter."""
        same = [v for v in self.values if (set(v.dims) == set(dims) and len(v.dims) == len(dims) if any_order
                                           else v.dims == tuple(dims)) and v.scale <= MAX_SCALE]
        if same and self.flag(40):
            return self.pick(same)
        return self.param(dims, std)

    def emit(self, expr: str, dims: Sequence[str | None], scale: float, pin: bool | None = None) -> _Value:
        """``v = expr``, or ``v: Tensor[dims] = expr`` (pinning the rules' layout) when valid."""
        name = self.fresh()
        dims = tuple(dims)
        if pin is None:
            pin = None not in dims and self.disjoint(dims) and self.flag(25)
        if pin:
            self.lines.append(f"{name}: {hint(dims)} = {expr}")  # type: ignore[arg-type]
            self.constraints.append(dims)  # type: ignore[arg-type]
        else:
            self.lines.append(f"{name} = {expr}")
        value = _Value(name, dims, min(scale, 1e6))
        self.values.append(value)
        return value

    def fresh(self) -> str:
        return f"v{len([v for v in self.values if v.name.startswith('v')])}"

    def pick_value(self) -> _Value:
        """The latest value mostly (so programs are chains), sometimes an earlier one."""
        if len(self.values) == 1 or not self.flag(30):
            return self.values[-1]
        return self.pick(self.values)

    def full_values(self, dims: Sequence[str | None]) -> list[_Value]:
        return [v for v in self.values if v.dims == tuple(dims) and v.scale <= MAX_SCALE]

    def mask(self, a: _Value) -> str:
        """A boolean mask broadcasting against ``a`` (mostly true, so that few slices are empty)."""
        kind = self.weighted([("self", 3), ("other", 2)])
        if kind == "other" and a.dims and None not in a.dims:
            k = self.ch.integer(0, len(a.dims) - 1)
            b = self.operand(a.dims[k:])  # type: ignore[arg-type]
            return f"{b.name} > {self.pick(['-1.0', '-0.5', '0'])}"
        return f"{a.name} > {self.pick(['-1.0', '0', '-0.5'])}"

    # -- program ----------------------------------------------------------------------------------

    def build(self, statements: tuple[int, int] = (2, 10), force: str = "") -> _Function:
        self.axes = dict(MESHES[self.mesh])
        for d, size in (self.preset or {}).items():
            self.sizes[d] = size
            if self.callee is not None and d in self.callee.fixed:  # a scan's layers, a reshaped dim: unsplit
                if d in self.axes:
                    self.rules[d] = None
            else:
                self.set_rule(d, size)
        if self.callee is not None:  # the callee's hints stay valid under this function's rules too
            _settle(self, self.callee.constraints)
        self.values.append(self.first_param())
        for step in range(self.ch.integer(*statements)):
            a = self.pick_value()
            if a.scale > MAX_SCALE:
                self.squash(a)
                continue
            if step == 0 and force:
                op, _, sub = force.partition(":")
                if getattr(self, f"op_{op}")(a, sub):
                    continue
            op = self.weighted([("unary", 14), ("binary", 18), ("einsum", 18), ("matmul", 9), ("reduce", 12),
                                ("softmax", 8), ("shape", 11), ("lookup", 8), ("loop", 6), ("literal", 5),
                                ("listy", 4), ("call", 5), ("const", 4), ("update", 4), ("select", 3), ("rotary", 2),
                                ("along", 2), ("sections", 2), ("einops", 3), ("diagonal", 3), ("pairs", 2), ("leaves", 2),
                                ("narrow_ids", 2), ("optional", 2), ("statistic", 4),
                                ("spatial", 60 if self.spatial else 0)])
            if not getattr(self, f"op_{op}")(a):
                self.op_unary(a)
        return self.finish()

    def first_param(self) -> _Value:
        """The first parameter: an image in an image module's main function; else fitting the callee's
        first parameter now and then, or of one to three random dims."""
        if self.module.image and self.name == "f":
            from tests.fuzz import images

            return images.start(self)
        first: list[str] = []
        if self.callee is not None and self.flag(60):  # f's first parameter fits the callee's
            first = [d for d in self.callee.args[0].dims]
        if not first or not self.disjoint(first):
            first = [self.some_dim() for _ in range(self.ch.integer(1, 3))]
            first = list(dict.fromkeys(first))
            while not self.disjoint(first):
                first.pop()
        return self.param(first)

    def squash(self, a: _Value) -> None:
        """Brings a large value back to about 1, so that round-off stays far below the tolerance."""
        c = 2 ** math.ceil(math.log2(a.scale))
        self.emit(self.pick([f"jnp.tanh({a.name} / {c})", f"{a.name} / {c}", f"{a.name} * {1 / c}"]), a.dims, 1.0)

    def finish(self) -> _Function:
        final = self.values[-1]
        if None in final.dims:
            final = self.broadcast_full(final)
        grad = not final.dims or not self.disjoint(final.dims) or self.flag(30)
        if final.dims and grad:
            final = self.loss(final)
        outputs = [final]
        other = [v for v in self.values[:-1] if None not in v.dims and self.disjoint(v.dims) and v is not final]
        if not grad and other and self.flag(10) and not self.single:
            outputs.insert(0, self.pick(other))
        hints = [hint(v.dims) for v in outputs]  # type: ignore[arg-type]
        for v in outputs:
            self.constraints.append(v.dims)  # type: ignore[arg-type]
        if self.flag(5) and not self.single:
            hints[-1] = self.provoke(outputs[-1]) or hints[-1]
        returned = ", ".join(v.name for v in outputs)
        last = self.lines[-1]
        if len(outputs) == 1 and last.startswith(f"{final.name} = ") and self.flag(25):
            self.lines[-1] = "return " + last[len(f"{final.name} = "):]
        else:
            self.lines.append(f"return {returned}")
        ret = hints[0] if len(hints) == 1 else f"tuple[{', '.join(hints)}]"
        if not self.provoked and self.flag(12):  # no return hint, as much plain code has: results leave as they are
            ret = ""
        if not ret and not grad and self.name == "f" and self.lines[-1] == f"return {returned}" and self.flag(25):
            # statistics gathered in a list (each a partial sum where its value is split), returned the ways code
            # rebuilds lists: nested in a list, as a tuple, sliced and joined, starred, filled in place
            v = self.pick([w for w in self.values if w.scale <= 4 and re.fullmatch(r"[vx]\d+", w.name)]
                          or self.values[-1:])
            stats = f"{self.fresh()}s"
            filled, held_dict = self.flag(25), self.flag(30)
            if held_dict:  # a dict of metrics held in a name, returned, copied or read by key
                self.lines.insert(len(self.lines) - 1, f'{stats} = {{"m": jnp.mean({v.name}), '
                                                       f'"q": jnp.mean({v.name} * {v.name})}}')
                self.lines[-1] = "return " + self.pick([f"{returned}, {stats}", f"{returned}, dict({stats})",
                                                        f'{returned}, {stats}["q"] * 0.5',
                                                        f'{returned}, {{**{stats}, "r": {stats}["m"]}}'])
            elif filled and v.dims and self.flag(50) and self.flag(50):  # a length meshify does not know while
                # rewriting, filled in a loop
                held_dict = True  # (its own returns: a list of unknown length is not spliced into a literal)
                self.lines[-1] = "return " + self.pick([f"{returned}, {stats}", f"{returned}, jnp.stack({stats})",
                                                        f"[{returned}, {stats}[1], {stats}[0]]",
                                                        f"{returned} * {stats}[-1], {stats}",
                                                        # starred and zipped at that unknown length
                                                        f"{returned}, [*{stats}, jnp.mean({v.name})]",
                                                        f"{returned}, (jnp.mean({v.name}), *{stats})",
                                                        f"{returned}, list(zip({stats}, {stats}))"])
                self.lines[-1:-1] = [f"{stats} = [None] * ({v.name}.shape[0] // {v.name}.shape[0] + 1)",
                                     f"for i in range(len({stats})): {stats}[i] = jnp.mean({v.name} * {v.name} ** i)"]
            elif filled and v.dims and self.flag(50):  # a dict keyed by a kept loop's counter (keys meshify does not
                # know while rewriting), collecting per-step values as code collects per-layer intermediates:
                # statistics (partial sums where v is split, completed as they go in) or arrays of v's layout
                held_dict = True
                value = self.pick([f"jnp.mean({v.name} * {v.name} ** i)", f"{v.name} * (i + 1)"])
                self.lines[-1] = "return " + self.pick([
                    f"{returned}, {stats}", f"{returned}, {{k: s * 2 for k, s in {stats}.items()}}",
                    f'{returned}, {stats}["k0"], len({stats}) * {stats}["k1"]',
                    f"{returned}, sum({stats}.values()), {{k: {stats}[k] for k in sorted({stats})}}"])
                self.lines[-1:-1] = [f"{stats} = {{}}", f"for i in range({v.name}.shape[0] // {v.name}.shape[0] + 1): "
                                                          f'{stats}[f"k{{i}}"] = {value}']
            elif filled:
                self.lines[-1:-1] = [f"{stats} = [None] * 2", f"{stats}[0] = jnp.mean({v.name})",
                                     f"{stats}[1] = jnp.mean({v.name} * {v.name})"]
            else:
                self.lines.insert(len(self.lines) - 1, f"{stats} = [jnp.mean({v.name}), jnp.mean({v.name} * {v.name})]")
            if not held_dict:
                self.lines[-1] = "return " + self.pick([f"[{returned}, [{stats}[1], {stats}[0]]]",
                                                        f"{returned}, tuple({stats})", f"[*{stats}, {returned}]",
                                                        f"{returned}, {stats}[:1] + {stats}[1:]", f"{returned}, {stats}",
                                                        f"({returned}, (*{stats}, {stats}[0]))",
                                                        # regrouped by zip: pairs, unzipped, and a comprehension
                                                        f"{returned}, tuple(zip(*[{stats}, {stats}[::-1]]))[-1]",
                                                        f"{returned}, [a * b for a, b in zip({stats}, {stats}[1:])]",
                                                        f"{returned}, tuple(zip(*zip({stats}, {stats})))[0]"])
        # low-precision programs move a run into a helper more often: a partial sum accumulated in float32
        # crossing the call (an item of a returned tuple too) must come back in the program's dtype
        chance = 20 if self.dtype == "float32" else 60
        helper = self.extract_helper() if len(self.lines) >= 3 and self.flag(chance) else ""
        if helper and self.lines[-1] == f"return {returned}" and self.lines[-2].startswith(f"{returned} = ") \
                and self.flag(40):
            # return helper(...): the helper's tuple (or array) returned as it comes, against the return hint
            self.lines[-2:] = ["return " + self.lines[-2][len(f"{returned} = "):]]
        if not ret and not grad and self.name == "f" and self.lines[-1] == f"return {returned}" and self.flag(40):
            # a NamedTuple of the module built of the results and mapped over (an EMA of params, a scaled copy),
            # returned as jax.tree.map makes it: a pytree leaving as it is, field by field
            self.module.imports.add("typing")
            self.module.defs["Pair"] = "class Pair(typing.NamedTuple):\n    a: jax.Array\n    b: jax.Array\n"
            pair = f"Pair(a={outputs[0].name}, b={outputs[-1].name})"
            if self.flag(50):  # held in a name first, as a train step holds its new params
                self.lines.insert(len(self.lines) - 1, f"pair = {pair}")
                pair = "pair"
            mapped = self.pick([f"jax.tree.map(lambda t: t * 0.5, {pair})", f"jax.tree.map(jnp.negative, {pair})"])
            self.lines[-1] = self.pick([f"return {mapped}", f"return {outputs[-1].name}, {mapped}"])
        self.module.provoked = self.module.provoked or self.provoked
        return _Function(self.name, self.mesh, self.axes, self.rules, self.rules_text(), self.sizes, self.args,
                         self.lines, ret, grad, tuple(final.dims), helper, self.constraints,  # type: ignore[arg-type]
                         self.fixed)

    def extract_helper(self) -> str:
        """Moves a run of statements into a module-level helper (unhinted parameters: the caller's layouts
        specialise it), now and then decorated, and calls it instead; "" when the run defines nothing used later."""
        body = self.lines[:-1]  # the last line returns
        i = self.ch.integer(0, len(body) - 1)
        j = self.ch.integer(i + 1, len(body))
        before = {a.name for a in self.args} | {n for line in body[:i] for n in _names(line)[1]}
        inside = body[i:j]
        free = [n for line in inside for n in _names(line)[0] if n in before]
        stored = [n for line in inside for n in _names(line)[1]]
        later = {n for line in self.lines[j:] for n in _names(line)[0]}
        outputs = [n for n in dict.fromkeys(stored) if n in later]
        if not outputs or any(re.fullmatch(r"(act|step|ck)\d+", n) for n in outputs):
            return ""  # (a function held in a name is not returned: a helper returns arrays)
        if re.fullmatch(r"v\d+[pmrls]", outputs[0]) or any(re.fullmatch(r"v\d+m", n) for n in [*free, *outputs]):
            # (a NamedTuple of values, a mask, an arange or a list of leaves first: the static scale below multiplies
            # arrays of values only; a mask's Python bools passed into a jitted helper would be traced)
            return ""
        if any(re.search(r"\b\w+_all\d+\b|\bn\d+ = |\bv\d+s\[|\[None\] \* ", line) for line in inside) \
                or any(re.fullmatch(r"n\d+", n) for n in free):  # (a counter read inside, bound before: seed 137)
            # (a list built by appends stays in the function that reads it: across a call it is refused; a loop's
            # counter stays a Python int beside the if on it: a jitted helper would take it traced)
            return ""
        if self.dtype != "float32" and self.flag(50):
            # (low precision) every name the run binds comes back, a tuple the caller unpacks: each item's
            # dtype and pending partial sum accumulated in float32 must cross the call on its own
            # (not a function held in a name: a jitted helper returns arrays, seed 4104 program 62)
            outputs += [n for n in dict.fromkeys(stored) if n not in outputs and not re.fullmatch(r"(act|step|ck)\d+", n)]
        free = list(dict.fromkeys(free))
        name = "helper" if self.name == "f" else f"helper_{self.name}"
        decorator, static = self.module.decorator(len(free))
        takes_function = any(re.fullmatch(r"(act|step|ck)\d+", n) for n in free)
        takes_treedef = any(re.fullmatch(r"v\d+t", n) for n in free)  # (jax.tree.flatten's treedef: not an array)
        if takes_function or takes_treedef:  # a held function passed in: never into jax.jit or jax.checkpoint
            decorator, static = "", False  # (arrays only: seed 4501 program 373 passed a treedef into jax.remat)
        params, args = list(free), list(free)
        inside = list(inside)
        if static:
            params.append("k")
            args.append(self.pick(["0.5", "1.0"]))
            inside.append(f"{outputs[0]} = {outputs[0]} * k")
        passes_function = not decorator and self.flag(20)
        if passes_function:  # an activation passed in, as model code passes act=jax.nn.gelu: act(h) calls it
            # (never into jax.jit or jax.checkpoint, which take arrays only: a function there fails in JAX)
            act = self.pick(["jnp.tanh", "jax.nn.gelu", "jax.nn.silu", "jnp.sin", "swish", "lambda t: jnp.tanh(t) * 0.5",
                             "functools.partial(jax.nn.leaky_relu, negative_slope=0.2)", "functools.partial(scaled, 0.5)",
                             'ACT["gelu"]', 'ACT["tanh"]'])
            if act.startswith("ACT"):  # an entry of a module-level table of activations
                self.module.defs["ACT"] = 'ACT = {"gelu": jax.nn.gelu, "tanh": jnp.tanh, "silu": jax.nn.silu}\n'
            if act == "swish":
                self.module.defs["swish"] = "def swish(x):\n    return x * jax.nn.sigmoid(x)\n"
            if act.startswith("functools"):  # a partial, walked as the lambda it stands for
                self.module.imports.add("functools")
                if "scaled" in act:
                    self.module.defs["scaled"] = "def scaled(s, x):\n    return s * jnp.tanh(x)\n"
            if self.flag(30) and not act.startswith(("lambda", "functools")):
                params.append(f"act={act}")  # left to its default
            else:
                params.append("act")
                if self.flag(30):  # held in a name first (fn = lambda ...; act = functools.partial(...))
                    held = f"act{i}"
                    self.lines.insert(i, f"{held} = {act}")
                    i, j, act = i + 1, j + 1, held
                args.append(act if self.flag(60) else f"act={act}")
            inside.append(f"{outputs[0]} = act({outputs[0]})")
        first = next((v for v in reversed(self.values) if v.name == outputs[0]), None)
        if first is not None and first.dims and None not in first.dims and self.flag(25):
            # an array default argument the call leaves out, broadcasting against the first output
            dims = first.dims[-self.ch.integer(1, len(first.dims)):]
            hinted = self.flag(60)  # B: Tensor[...] = ... at module level: the default has those dims
            g = self.module.array([self.sizes[d] for d in dims], 1.0, self.dtype,  # type: ignore[index]
                                  dims if hinted else None)
            params.append(f"b={g}")
            inside.append(f"{outputs[0]} = {outputs[0]} + 0.5 * b")
            if not hinted:
                self.trigger("a helper's array default argument", f"b={g}", "0.5 * b", unnamed=True)
        if not static and not passes_function and len(free) >= 2 and not set(free) & set(stored) and self.flag(30):
            params, args, inside = self.starred(free, params, args, inside)
        called = name if static or passes_function or takes_function or takes_treedef else self.wrapped(name)  # a traced static argument would fail
        call = f"{', '.join(outputs)} = {called}({', '.join(args)})"
        if called == name and not static and not takes_function and not passes_function and self.flag(6):
            # held in a name first, as model code holds a rematerialised block: ck = jax.checkpoint(block)
            held = f"ck{i}"
            wrapper = self.pick(["jax.checkpoint", "jax.remat", "jax.jit"])
            self.lines[i:j] = [f"{held} = {wrapper}({name})", call.replace(f"= {name}(", f"= {held}(", 1)]
        elif called == name and not static and not takes_function and not passes_function and len(args) >= 2 \
                and not any("=" in a or "*" in a for a in args) and not any("*" in p for p in params) and self.flag(8):
            # its last argument bound by a functools.partial written inline in a transform, as public code binds
            # weights or a config: jax.checkpoint(functools.partial(block, w=w))(x)
            self.module.imports.add("functools")
            wrapper = self.pick(["jax.checkpoint", "jax.remat", "jax.jit"])
            bound = params[len(args) - 1].split("=")[0]
            call = f"{', '.join(outputs)} = {wrapper}(functools.partial({name}, {bound}={args[-1]}))" \
                f"({', '.join(args[:-1])})"
            self.lines[i:j] = [call]
            # (binding a name of an array it is the helper's own call; else walked as the lambda it stands for,
            # whose tuple of partial sums meshify cannot complete in their dtypes outside it: refused)
            self.trigger("a partial sum returned through a transformed inline partial", call, "cannot tell the dtype",
                         "returns a tuple holding a partial sum")
        else:
            self.lines[i:j] = [call]
        if decorator:
            self.trigger(f"helper under {decorator}", decorator, f"def {name}(", unnamed=True)
        # a nested def in the function (taking functions too), as model code writes blocks; not where it would
        # take a module name as a parameter (W, lifted to self.w / a closure later, would be no name)
        local = all(re.fullmatch(r"[a-z_]\w*", p.split("=")[0]) for p in params) and self.flag(25)
        inner = ""
        if not local and self.flag(30):  # a helper calling a helper of its own (records carried through both)
            inside, inner = self.nest(name, params, inside, outputs)
        lines = "".join(_indent(line, "    ") + "\n" for line in inside)
        head = f"{decorator}\n" if decorator else ""
        text = f"{head}def {name}({', '.join(params)}):\n{lines}    return {', '.join(outputs)}"
        if local:
            self.lines.insert(i, text)
            return ""
        return f"\n\n{inner}\n\n\n{text}\n" if inner else f"\n\n{text}\n"

    def nest(self, name: str, params: list[str], inside: list[str], outputs: list[str]) -> tuple[list[str], str]:
        """A run of a helper's statements moved into a module-level helper of its own that the helper calls, as
        a block calls its ffn: the helper's new statements and the inner helper's text ("" where the run
        binds nothing read after it)."""
        if len(inside) < 2:
            return inside, ""
        a = self.ch.integer(0, len(inside) - 2)
        b = self.ch.integer(a + 1, len(inside) - 1)
        run = inside[a:b]
        known = {p.split("=")[0].lstrip("*") for p in params} | {n for line in inside[:a] for n in _names(line)[1]}
        free = list(dict.fromkeys(n for line in run for n in _names(line)[0] if n in known))
        stored = list(dict.fromkeys(n for line in run for n in _names(line)[1]))
        later = {n for line in inside[b:] for n in _names(line)[0]} | set(outputs)
        outs = [n for n in stored if n in later]
        if not outs or not free:
            return inside, ""
        inner = f"{name}_inner"
        body = "".join(_indent(line, "    ") + "\n" for line in run)
        text = f"def {inner}({', '.join(free)}):\n{body}    return {', '.join(outs)}"
        return [*inside[:a], f"{', '.join(outs)} = {inner}({', '.join(free)})", *inside[b:]], text

    def starred(self, free: list[str], params: list[str], args: list[str], inside: list[str]
                ) -> tuple[list[str], list[str], list[str]]:
        """A helper written with ``*rest`` (its later parameters read as ``rest[0]``, ...) or ``**kw``
        (read as ``kw["x1"]``, passed by keyword), as wrappers and blocks forward their arguments."""
        defaults = [p for p in params if "=" in p]
        bound = {n.strip() for line in inside for group in re.findall(r"lambda ([^:]*):", line)
                 for n in group.split(",")}
        if bound & set(free[1:]):  # a lambda's parameter of the same name: renaming it would break the lambda
            return params, args, inside
        if self.flag(50):
            names = {n: f"rest[{k}]" for k, n in enumerate(free[1:])}
            params = [free[0], "*rest", *defaults]
        else:
            read = self.pick(['kw["{}"]', 'kw["{}"]', 'kw.get("{}")'])
            names = {n: read.format(n) for n in free[1:]}
            params = [free[0], *defaults, "**kw"]
            args = [free[0], *(f"{n}={n}" for n in free[1:]), *args[len(free):]]
        pattern = re.compile(r"(?<![\w.\"])(" + "|".join(map(re.escape, names)) + r")(?![\w\"])")
        renamed = [pattern.sub(lambda m: names[m.group(1)], line) for line in inside]
        # a trigger's fragments as the helper now spells them too (a refusal there is still the trigger's)
        self.module.triggers[:] = [(reason, (*group, *{pattern.sub(lambda m: names[m.group(1)], f) for f in group}))
                                   for reason, group in self.module.triggers]
        return params, args, renamed

    def wrapped(self, name: str) -> str:
        """``name``, or now and then ``jax.jit(name)`` / ``jax.checkpoint(name)`` at the call site."""
        form = self.weighted([("plain", 92), ("jit", 4), ("checkpoint", 4)])
        if form == "plain":
            return name
        spelled = f"jax.{form}({name})"
        self.trigger(f"{spelled}(...) at the call site", spelled, unnamed=True)
        return spelled

    def provoke(self, value: _Value) -> str:
        """A return hint naming ``value``'s dims permuted (or one renamed): meshify must reject it."""
        dims = list(value.dims)
        if len(dims) >= 2:
            i = self.ch.integer(0, len(dims) - 2)
            dims[i], dims[i + 1] = dims[i + 1], dims[i]
            self.provoked = f"return hint swaps dims {dims[i + 1]!r} and {dims[i]!r}"
        elif dims:
            other = [d for d in self.sizes if d != dims[0]]
            if not other:
                return ""
            dims[0] = self.pick(other)
            self.provoked = f"return hint renames dim {value.dims[0]!r} to {dims[0]!r}"
        else:
            return ""
        if not self.disjoint(dims):
            self.provoked = ""
            return ""
        return hint(tuple(dims))  # type: ignore[arg-type]

    def rules_text(self) -> str:
        from tests.fuzz import images

        return self.rules_only() + images.dims_text(self)

    def rules_only(self) -> str:
        if not self.rules:
            return ""
        if None not in self.rules.values() and self.flag(20):  # Mesh-TensorFlow's string form
            return ', rules="' + ";".join(f"{d}:{'+'.join(a or ())}" for d, a in self.rules.items()) + '"'
        items = []
        for d, a in self.rules.items():
            target = "None" if a is None else repr(a[0]) if len(a) == 1 else repr(tuple(a))
            items.append(f"{d!r}: {target}")
        return ", rules={" + ", ".join(items) + "}"

    # -- op families --------------------------------------------------------------------------------
    # Each takes the primary operand and returns False when it does not apply to it.

    def op_unary(self, a: _Value) -> bool:
        fns = [("jnp.tanh({})", 1.0), ("jax.nn.relu({})", None), ("jax.nn.gelu({})", None),
               ("jax.nn.sigmoid({})", 1.0), ("jnp.sin({})", 1.0), ("jnp.cos({})", 1.0), ("jnp.abs({})", None),
               ("jax.nn.silu({})", None), ("jax.nn.softplus({})", None), ("-{}", None), ("jnp.negative({})", None),
               ("jnp.log1p(jnp.abs({}))", 1.5), ("jnp.sqrt(jnp.abs({}) + 1.0)", 2.0), ("jax.nn.leaky_relu({})", None),
               ("jax.nn.elu({})", None), ("jax.lax.tanh({})", 1.0), ("{}.astype(jnp.float32)", None),
               ("jax.nn.relu6({})", 6.0), ("jnp.maximum({}, 0.0)", None), ("jax.lax.stop_gradient({})", None),
               ("jnp.nan_to_num({}, nan=0.0, posinf=1.0)", None), ("jnp.where(jnp.isinf({0}), 0.0, {0})", None),
               ("jnp.log10(jnp.fabs({}) + 1.0)", 1.0), ("jnp.trunc({})", None), ("jnp.rint({})", None),
               ("jnp.deg2rad({})", None), ("jnp.sinc({})", 1.0)]
        if self.dtype == "float32":  # (jax.lax.complex takes float32 and float64 only)
            fns.append(("jnp.real(jax.lax.complex({0}, 0.5 * {0}) * (0.6 - 0.8j))", None))
        if a.scale <= 1.5:
            fns += [("jnp.exp({})", math.exp(a.scale) * 2), ("jnp.square({})", a.scale ** 2 * 2)]
        if self.flag(8):
            return self.unary_cast(a)
        if self.flag(6):
            return self.unary_dispatched(a)
        template, scale = self.pick(fns)
        self.emit(template.format(a.name), a.dims, scale if scale is not None else a.scale)
        return True

    def unary_dispatched(self, a: _Value) -> bool:
        """An activation picked as config-driven code picks it: ``getattr(jax.nn, C0)(x)`` by a module
        constant, ``ACT[C0](x)`` from a module table, ``CFG.act(x)`` held by an object of the module."""
        form = self.weighted([("getattr", 3), ("object", 3), ("table", 2), ("alias", 3)])
        if form == "alias":  # ACT_FN = jax.nn.gelu at module level, as configs name the activation
            if "ACT_FN" not in self.module.defs:
                act = self.pick(["jax.nn.silu", "jnp.tanh", "jax.nn.gelu", "jax.nn.relu", "jax.nn.sigmoid"])
                self.module.defs["ACT_FN"] = f"ACT_FN = {act}\n"
            self.trigger("a function a module-level name holds, on a whole array", f"ACT_FN({a.name})",
                         unnamed=True)
            self.emit(f"ACT_FN({a.name})", a.dims, a.scale)
            return True
        if form == "object":
            if "CFG" not in self.module.defs:
                self.module.imports.add("types")
                act = self.pick(["jax.nn.silu", "jnp.tanh", "jax.nn.gelu", "jax.nn.relu"])
                self.module.defs["CFG"] = f"CFG = types.SimpleNamespace(act={act}, eps=1e-5)\n"
            # (on a whole array the call runs as written and its result's dims are not named: refused where
            # they are needed, as for a function a static parameter holds)
            self.trigger("a function an object of the module holds, on a whole array", f"CFG.act({a.name})",
                         unnamed=True)
            self.emit(f"CFG.act({a.name})", a.dims, a.scale)
            return True
        if form == "table":
            self.module.defs["ACT"] = 'ACT = {"gelu": jax.nn.gelu, "tanh": jnp.tanh, "silu": jax.nn.silu}\n'
            key = self.module.const(repr(self.pick(["gelu", "tanh", "silu"])))
            self.emit(f"ACT[{key}]({a.name})", a.dims, a.scale)
            return True
        key = self.module.const(repr(self.pick(["gelu", "silu", "tanh", "relu", "sigmoid", "softplus"])))
        self.emit(f"getattr(jax.nn, {key})({a.name})", a.dims, a.scale)
        return True

    def op_update(self, a: _Value) -> bool:
        """An update of some elements along one dim, as model code writes them: ``a.at[..., 1].set(0.5)``,
        ``.at[:, 1:].multiply(0.5)``, ``.add``, ``.min``/``.max``; a traced position (``jnp.argmax(...)``-free:
        ``jnp.int32(1)``); ``jax.lax.dynamic_update_slice_in_dim`` of a slice read back by
        ``dynamic_slice_in_dim``; one position written at a traced offset (``dynamic_update_index_in_dim``, split dims
        too).  The others are refused where that dim is split (a trigger)."""
        if not a.dims or None in a.dims or any(self.sizes[d] < 2 for d in a.dims):  # type: ignore[index]
            return False
        k = self.ch.integer(0, len(a.dims) - 1)
        lead = ":, " * k
        form = self.weighted([("set", 3), ("multiply", 2), ("add", 2), ("clip", 2), ("traced", 2), ("dynamic", 3),
                              ("scatter", 5), ("position", 3)])
        if form == "scatter":
            return self.scatter(a, k)
        if form == "position":
            # one position of dim k written at a traced offset, split or not (the device holding it writes),
            # with a row of the other dims read back from position 0, or a number where a has one dim
            low, high = self.id_range(self.sizes[a.dims[k]])  # type: ignore[index]
            off = self.ids((), high, low)
            row = f"jax.lax.dynamic_index_in_dim({a.name}, 0, {k}, keepdims=False) * 0.5" if len(a.dims) > 1 \
                else f"jnp.asarray({self.pick(['0.5', '-1.0'])}, {a.name}.dtype)"  # (lax wants the operand's dtype)
            self.emit(f"jax.lax.dynamic_update_index_in_dim({a.name}, {row}, {off}, {k})", a.dims, max(a.scale, 1.0))
            return True
        if form == "set":
            expr = f"{a.name}.at[{lead}1].set({self.pick(['0.5', '-1.0', '0.0'])})"
        elif form == "multiply":
            expr = f"{a.name}.at[{lead}1:].multiply(0.5)"
        elif form == "add":
            expr = f"{a.name}.at[{lead}0].add(1.0)"
        elif form == "clip":
            expr = f"{a.name}.at[{lead}1].min(0.5).at[{lead}0].max(-0.5)"
        elif form == "traced":
            expr = f"{a.name}.at[{lead}jnp.int32(1)].set({a.name}.at[{lead}0].get())"
            if len(a.dims) == 1:
                expr = f"{a.name}.at[jnp.int32(1)].set(0.25)"
        else:
            piece = f"jax.lax.dynamic_slice_in_dim({a.name}, 0, 1, axis={k})"
            expr = f"jax.lax.dynamic_update_slice_in_dim({a.name}, {piece} * 0.5, jnp.int32(1), axis={k})"
        # along a split dim: refused (always a trigger: a twin of the function on another mesh, or rules
        # resolved per value, may split what this one keeps whole)
        self.trigger("an update along a split dim", expr, "split dim")
        scale = a.scale + (1.0 if form == "add" else 0.0)
        self.emit(expr, a.dims, max(scale, 1.0) if form in ("set", "traced") else scale)
        return True

    def scatter(self, a: _Value, k: int) -> bool:
        """``a.at[:, ids].add(v)`` (``set``, ``max``, ``min``, ``multiply``): a scatter of ids (negative and out of
        range now and then) along dim ``k``, split or not, of a value with the picked elements' dims or a
        scalar; ``mode="clip"`` now and then (refused along a split dim: a trigger) or ``mode="drop"``."""
        d = self.some_dim(exclude=list(a.dims), compatible=list(a.dims))
        region = (*a.dims[:k], d, *a.dims[k + 1:])
        if d in a.dims or not self.fits(region) or not self.disjoint(region):
            return False
        low, high = self.id_range(self.sizes[a.dims[k]])  # type: ignore[index]
        ids = self.ids([d], high, low)  # type: ignore[list-item]
        self.constraints.append(tuple(dict.fromkeys([*a.dims, d])))  # type: ignore[arg-type]
        how = self.pick(["add", "add", "set", "max", "min", "multiply"])
        scale = a.scale
        if self.flag(35) or how == "multiply":  # (scatter_mul of a traced value has no gradient in JAX)
            value = self.pick(["0.5", "-1.0", "2.0"])
            scale = a.scale * 2 if how == "multiply" else a.scale + 2
        else:
            v = self.operand(region[-self.ch.integer(1, len(region)):])
            value, scale = v.name, a.scale + v.scale
        mode = self.weighted([("", 85), (', mode="clip"', 10), (', mode="drop"', 5)])
        lead = ":, " * k if k < len(a.dims) - 1 or self.flag(50) else "..., "
        expr = f"{a.name}.at[{lead}{ids}].{how}({value}{mode})"
        if "clip" in mode:
            self.trigger("a scatter with mode=\"clip\" along a split dim", expr, 'mode="clip"')
        self.emit(expr, a.dims, scale)
        return True

    def op_select(self, a: _Value) -> bool:
        """``jax.lax.top_k`` as routers and samplers write it (values or indices, along the last dim or
        ``axis=k``, over split dims too: each device's top k gathered), reduced over the k entries; or a
        ``jax.lax.dynamic_slice`` window at a traced start along one dim, the others whole (sizes written
        ``a.shape[i]``), summed over the window; or one position at a traced offset (``dynamic_index_in_dim``, split
        dims too); or a longer 1-D table read at a traced offset (in range, negative or
        past the end) for ``a.shape[k]`` entries and multiplied into ``a`` along dim k.  The slice is refused where its dim is split (a trigger); or a
        slice whose bound is read off the shape inline (``a[:, 1 : a.shape[1]]``), summed over that dim; or a rank
        (``r = jnp.argmax(a > jnp.arange(n) * 0.1, axis=k)`` bound to a name, then ``1 / (r + 1)``)."""
        if not a.dims or None in a.dims:
            return False
        rank = len(a.dims)
        k = self.ch.integer(0, rank - 1)
        size = self.sizes[a.dims[k]]  # type: ignore[index]
        if self.flag(65):
            kk = self.ch.integer(1, min(3, size))
            axis = "" if k == rank - 1 and self.flag(50) else f", axis={k}"
            part = self.pick(["values", "values", "indices"])
            top = f"jax.lax.top_k({a.name}, {kk}{axis})"
            if part == "values":
                expr, scale = f"jnp.sum({top}[0], axis={k})", a.scale * kk
            else:
                expr, scale = f"{top}[1].astype(jnp.float32).mean(axis={k}) * 0.1", 0.1 * size
        elif self.flag(20) and size >= 2:
            # a rank, as retrieval metrics compute it (mean reciprocal rank): the first position along dim k where
            # the row passes a threshold that grows along it, bound to a name (an integer array), then 1 / (r + 1)
            shape = tuple(-1 if i == k else 1 for i in range(rank))
            r = f"{self.fresh()}r"
            self.lines.append(f"{r} = jnp.argmax({a.name} > jnp.arange({a.name}.shape[{k}]).reshape({shape}) * 0.1, "
                              f"axis={k})")
            expr = f"1.0 / ({r} + 1)" if self.dtype == "float32" else f"(1.0 / ({r} + 1)).astype({a.name}.dtype)"
            scale = 1.0
        elif self.flag(20) and size >= 2:
            # a longer table (positions, a rotary cache) read at a traced offset for a.shape[k] entries, then met
            # with a: a split of the read along dim k is a slice of a slice, which XLA folds, so JAX's clamping of
            # offsets past the end (and its reading of negative ones from the end) must survive the fold
            longer = self.new_dim(size=size + self.pick((1, 3, size)), split=False)
            table = self.param((longer,))
            low, high = self.id_range(self.sizes[longer])
            off = self.ids((), high, low)
            read = self.pick([f"jax.lax.dynamic_slice_in_dim({table.name}, {off}, {a.name}.shape[{k}])",
                              f"jax.lax.dynamic_slice({table.name}, ({off},), ({a.name}.shape[{k}],))",
                              f"jax.lax.dynamic_slice({table.name}, jnp.array([{off}]), ({a.name}.shape[{k}],))"])
            r = self.emit(read, (a.dims[k],), table.scale)
            index = ", ".join(":" if i == k else "None" for i in range(rank))
            self.emit(f"{a.name} * {r.name}[{index}]", a.dims, a.scale * r.scale)
            return True
        elif self.flag(35):
            # a slice whose bound is read off the shape inline, as real code cuts a table to a length
            # (pos[: x.shape[1]]): a split dim's .shape[k] is its global size, never the block's
            if size < 2:
                return False
            bound = self.pick([f": {a.name}.shape[{k}]", f"1 : {a.name}.shape[{k}]", f": {a.name}.shape[{k}] // 2",
                               f": {a.name}.shape[{k}] - 1"])
            prefix = ":, " * k
            if self.flag(50):  # a longer table cut to the last dim's length: b[: h.shape[-1]]
                table = self.module.array([self.sizes[a.dims[-1]] + 3], 1.0, self.dtype)  # type: ignore[index]
                expr = f"{a.name} + {table}[: {a.name}.shape[-1]]"
                self.trigger("a module array cut to a length: its dim has no name", expr, unnamed=True)
                self.emit(expr, a.dims, a.scale + 1)
                return True
            expr = f"{a.name}[{prefix}{bound}].sum(axis={k})"
            self.trigger("a slice along a split dim reaching past the neighbouring block, or of rows that do not "
                         "split evenly", expr, "halo", "which do not split")
            scale = a.scale * size
        elif self.flag(40) and size >= 2:
            # one position of dim k at a traced offset (a decoding step's), split or not: the device holding it
            # reads it, clamped as JAX clamps it (negative ones from the end)
            low, high = self.id_range(size)
            off = self.ids((), high, low)
            if self.flag(50):
                expr = f"jax.lax.dynamic_index_in_dim({a.name}, {off}, axis={k}, keepdims=False)"
            else:
                expr = f"jax.lax.dynamic_index_in_dim({a.name}, {off}, {k}).sum(axis={k})"
            scale = a.scale
        elif self.flag(40) and size >= 2:
            # a shift along dim k written as a pad of a slice (a token shift: jnp.pad(x[:, :-1], ((0, 0), (1, 0)))),
            # right or left by s rows, the fill a constant: split or not, the padded rows split evenly
            s = self.ch.integer(1, min(3, size - 1))
            prefix = ":, " * k
            right = self.flag(50)
            cut = f"{a.name}[{prefix}:-{s}]" if right else f"{a.name}[{prefix}{s}:]"
            widths = ", ".join(("(%d, 0)" % s if right else "(0, %d)" % s) if i == k else "(0, 0)" for i in range(rank))
            fill = self.pick(["", "", ", constant_values=0.5", ", constant_values=(-1.0, 2.0)"])
            expr = f"jnp.pad({cut}, ({widths},){fill})"
            self.trigger("a shift along a split dim by more rows than a block holds", expr, "halo")
            if self.flag(40):
                # a border pad (a conv's reflect padding), split or not: the border blocks fill theirs from their
                # own rows (edge, reflect, symmetric) or the far end's (wrap); cut back to dim k's rows at an offset
                lo, hi = self.ch.integer(0, 4), self.ch.integer(1, 4)
                mode = self.pick(['"edge"', '"wrap"', '"reflect"', '"symmetric"'])
                widths = ", ".join(f"({lo}, {hi})" if i == k else "(0, 0)" for i in range(rank))
                start = self.ch.integer(0, lo + hi)
                expr = f"jnp.pad({a.name}, ({widths},), mode={mode})[{prefix}{start}:{start} + {a.name}.shape[{k}]]"
                self.trigger("a border pad along a split dim wider than a block, or whose rows do not split evenly",
                             expr, "halo", "do not split", "would need")
            self.emit(expr, a.dims, a.scale + 2)
            return True
        else:
            # a window of dim k at a traced start (clamped as JAX clamps it: in range, negative, past the end),
            # read (dynamic_slice_in_dim, dynamic_slice) and summed over it, or written (dynamic_update_slice_in_dim):
            # along a split dim each device reads (writes) the rows its block holds
            n = self.ch.integer(1, size)
            low, high = self.id_range(size)
            off = self.ids((), high, low)
            form = self.pick(["in_dim", "slice", "update"])
            if form == "update":
                window = tuple(self.new_dim(size=n, split=False) if i == k else d for i, d in enumerate(a.dims))
                u = self.param(window)
                self.emit(f"jax.lax.dynamic_update_slice_in_dim({a.name}, {u.name}, {off}, axis={k})", a.dims,
                          max(a.scale, u.scale))
                return True
            if form == "in_dim":
                expr = f"jax.lax.dynamic_slice_in_dim({a.name}, {off}, {n}, axis={k}).sum(axis={k})"
            else:
                starts = ", ".join(off if i == k else "0" for i in range(rank))
                sizes = ", ".join(str(n) if i == k else f"{a.name}.shape[{i}]" for i in range(rank))
                expr = f"jax.lax.dynamic_slice({a.name}, ({starts},), ({sizes},)).sum(axis={k})"
            scale = a.scale * n
        self.emit(expr, [d for i, d in enumerate(a.dims) if i != k], scale)
        return True

    def op_along(self, a: _Value) -> bool:
        """An op that works along one dim, each row on its own (``jnp.sort``, ``x.sort(descending=True)``,
        ``jnp.argsort``, ``jnp.diff``, ``jnp.median``, ``jax.nn.glu``, ``jax.lax.cumsum(reverse=True)``,
        ``jax.lax.cummax``, ``cumlogsumexp``, ``jnp.ptp``, ``jnp.average``, ``jnp.quantile``, ``jax.nn.standardize``
        (its statistics psummed along a split dim), a flip written
        ``x[:, ::-1]``, ``jnp.fliplr``), those that change the dim's size summed over it; along a split dim sort,
        argsort, median, quantile and diff gather the rows (a diff with ``prepend=`` takes a halo), jax.lax's
        cumulative ops combine the shard totals, and glu moves its halves as jnp.split's sections."""
        if not a.dims or None in a.dims:
            return False
        rank = len(a.dims)
        k = self.ch.integer(0, rank - 1)
        size = self.sizes[a.dims[k]]  # type: ignore[index]
        n = a.name
        kind = self.pick(["sort", "sort_method", "argsort", "diff", "median", "glu", "cumsum", "cummax", "ptp",
                          "average", "reversed", "quantile", "cumlogsumexp", "diff_prepend", "standardize",
                          "associative_scan", "positions"])
        dims, scale = list(a.dims), a.scale
        if kind == "associative_scan":
            # jax.lax.associative_scan with an elementwise combine (a linear attention's running sums): along a
            # split dim it is jax.lax's cumulative op; fmax (which skips NaN, as no cumulative op does) and the
            # combines users write (a linear recurrence on pairs, x + y + c x y) scan each block and fold the
            # blocks' totals (mr.associative_scan).  (A negative axis only forward: JAX's reverse scan rejects
            # one.)
            combine = self.pick(["jnp.add", "operator.add", "jax.lax.mul", "jnp.maximum", "jax.lax.min",
                                 "jnp.logaddexp", "jnp.fmax", "pairs", "lambda x, y: x + y + 0.125 * x * y"])
            if combine == "operator.add":
                self.module.imports.add("operator")
            reverse = self.flag(40)
            axis = k if reverse or self.flag(50) else k - rank
            operand = f"jax.nn.sigmoid({n})" if combine == "jax.lax.mul" else \
                f"jnp.tanh({n}) * 0.5" if combine.startswith("lambda") else n
            tail = f", axis={axis}{', reverse=True' if reverse else ''})"
            if combine == "pairs":  # h_t = a_t h_(t-1) + b_t, a decay in (0, 1)
                expr = (f"jax.lax.associative_scan(lambda l, r: (l[0] * r[0], r[0] * l[1] + r[1]), "
                        f"(jax.nn.sigmoid({n}), {n}){tail}[1]")
            else:
                expr = f"jax.lax.associative_scan({combine}, {operand}{tail}"
            scale = {"jnp.add": a.scale * size, "operator.add": a.scale * size, "jax.lax.mul": 1.0,
                     "jnp.logaddexp": a.scale + math.log(size), "pairs": a.scale * size}.get(combine, a.scale)
            if combine.startswith("lambda"):
                scale = (1.0625 ** size - 1) / 0.125  # (1 + c s is the product of the 1 + c x, |x| <= 1/2)
            self.emit(expr, dims, scale)
            return True
        if kind == "positions":
            # 1-based positions counted along dim k (a running mean's divisor): jnp.arange(1, T + 1), T's dim
            shift = self.pick([1, 2])
            index = ", ".join(":" if i == k else "None" for i in range(rank))
            count = self.pick([f"jnp.arange({shift}, {n}.shape[{k}] + {shift})",
                               f"jnp.arange({shift}, {shift} + {n}.shape[{k}])"])
            self.emit(f"{n} / {count}[{index}]", dims, a.scale)
            return True
        if kind == "standardize":
            # (JAX's default "fast" algorithm only on an input, whose rows are near 0: it cancels elsewhere, on
            # one device too, and its rounding follows the order of the sums)
            fast = any(arg.name == n for arg in self.args) and self.flag(50)
            options = self.pick(["", ", epsilon=0.1"]) + ("" if fast else ', algorithm="stable"')
            expr, scale = f"jax.nn.standardize({n}, axis={self.pick([k, k - rank])}{options})", 1.0
        elif kind == "ptp":
            expr, scale = f"jnp.ptp({n}, axis={k})", 2 * a.scale
            del dims[k]
        elif kind == "average":
            weights = self.pick(["", f", weights=jnp.abs({n}) + 0.5"])
            expr = f"jnp.average({n}, axis={k}{weights})"
            del dims[k]
        elif kind == "reversed":
            expr = f"{n}[{':, ' * k}::-1]" if self.flag(70) else f"jnp.flip({n}, axis={k})"
            if rank == 2 and self.flag(30):
                expr = f"jnp.fliplr({n})" if k == 1 else f"jnp.flipud({n})"
        elif kind == "quantile":
            expr = f"jnp.quantile({n}, {self.pick(['0.25', '0.5', '0.9'])}, axis={k})"
            del dims[k]
        elif kind == "cumlogsumexp":
            expr, scale = f"jax.lax.cumlogsumexp({n}, axis={k}, reverse={self.pick(['False', 'True'])})", \
                a.scale + math.log(size)
        elif kind == "diff_prepend":
            expr, scale = f"jnp.diff({n}, axis={k}, prepend=0.0)", 2 * a.scale
        elif kind == "sort":
            expr = f"jnp.sort({n}, axis={k})"
        elif kind == "sort_method":
            expr = f"{n}.sort(axis={k}, descending=True)"
        elif kind == "argsort":
            expr, scale = f"jnp.argsort({n}, axis={k}).astype({n}.dtype) * 0.1", 0.1 * size
        elif kind == "cumsum":
            expr, scale = f"jax.lax.cumsum({n}, axis={k}, reverse=True)", a.scale * size
        elif kind == "cummax":
            expr = f"jax.lax.cummax({n}, axis={k})"
        else:
            if size < 2 or (kind == "glu" and size % 2):
                return False
            inner = {"diff": f"jnp.diff({n}, axis={k})", "median": f"jnp.median({n}, axis={k}, keepdims=True)",
                     "glu": f"jax.nn.glu({n}, axis={k})"}[kind]
            expr, scale = f"jnp.sum({inner}, axis={k})", a.scale * (2 if kind == "diff" else size)
            del dims[k]
        if kind == "glu":  # (along a split dim its halves move as jnp.split's sections: they must split evenly)
            self.trigger("glu along a split dim whose halves do not split into equal blocks", expr, "equal blocks",
                         "equal sections")
        self.emit(expr, dims, scale)
        return True

    def op_sections(self, a: _Value) -> bool:
        """``p, q, r = jnp.split(a, 3, axis=k)`` (or ``jnp.array_split``) into equal sections, along a split
        dim as often as not (a fused QKV projection's: ``mr.split_sections`` moves chunks between devices),
        two sections combined under a hint naming the section dim with its own rule."""
        if not a.dims or None in a.dims:
            return False
        rank = len(a.dims)
        k = self.ch.integer(0, rank - 1)
        d = a.dims[k]
        size, shards = self.sizes[d], self.shards(d)  # type: ignore[index]
        counts = [n for n in (2, 3, 4) if size % (n * shards) == 0]
        if not counts:
            return False
        n = self.pick(counts)
        section = self.new_dim(size // n, base=f"{d}_sec")
        out = (*a.dims[:k], section, *a.dims[k + 1:])
        if not self.disjoint(out):
            return False
        parts = [f"{a.name}_s{len(self.lines)}_{i}" for i in range(n)]
        fn = self.pick(["jnp.split", "jnp.array_split"])
        # (a twin function splits the dim over other axes, where a section may not split into equal blocks)
        self.trigger("sections split over another mesh's axes", "does not split into", "must split into")
        axis = k if self.flag(50) else k - rank
        if self.flag(25):  # a Python loop over the sections (the iterable rewritten where it stands)
            acc, part = f"{a.name}_acc{len(self.lines)}", f"{a.name}_part{len(self.lines)}"
            self.lines.append(f"{acc} = 0.0")  # (one statement a line: helpers are cut from these lines)
            self.lines.append(f"for {part} in {fn}({a.name}, {n}, axis={axis}): {acc} = {acc} + {part}")
            expr = f"{acc} * 0.5"
        elif self.flag(70):
            self.lines.append(f"{', '.join(parts)} = {fn}({a.name}, {n}, axis={axis})")
            i, j = self.ch.integer(0, n - 1), self.ch.integer(0, n - 1)
            expr = f"{parts[i]} - 0.5 * {parts[j]}"
        else:
            expr = f"{fn}({a.name}, {n}, {axis})[{self.ch.integer(-n, n - 1)}] * 2.0"
        self.emit(expr, out, a.scale * 2, pin=True)
        return True

    def op_rotary(self, a: _Value) -> bool:
        """Rotary embeddings as models compute them in place: frequencies ``jnp.arange(0, D, 2)`` of the last
        dim's size read off the value, its even and odd entries rotated and joined again.  Refused where the
        last dim is split (a trigger: a strided slice of a split dim)."""
        if not a.dims or None in a.dims or self.sizes[a.dims[-1]] % 2:  # type: ignore[index]
            return False
        n = a.name
        freqs = f"jnp.arange(0, {n}.shape[-1], 2) * {self.pick(['0.1', '0.05'])}"
        cos, sin = f"jnp.cos({freqs})", f"jnp.sin({freqs})"
        expr = (f"jnp.concatenate([{n}[..., ::2] * {cos} - {n}[..., 1::2] * {sin}, "
                f"{n}[..., 1::2] * {cos} + {n}[..., ::2] * {sin}], axis=-1)")
        # (a call-time refusal on the converted path quotes the generated line, wrapped: its headline names the slice)
        self.trigger("a strided slice along a split dim", expr, "the slice [::2]", "::2]")
        self.emit(expr, a.dims, a.scale * 2)
        return True

    def attention(self, a: _Value) -> bool:
        """``jax.nn.dot_product_attention(a, a, a)``: ``a`` read as [batch,] seq, heads, head_dim; refused
        where its sequence (-3) or head dim (-1) is split."""
        causal = ", is_causal=True" if self.flag(40) else ""
        if not causal and self.flag(35):  # a boolean mask, as models pass one: causal, or padding by a key row
            n = f"{a.name}.shape[-3]"
            causal = self.pick([f", mask=jnp.tril(jnp.ones(({n}, {n}), dtype=bool))",
                                f", mask=jnp.arange({n})[None, :] <= jnp.arange({n})[:, None]",
                                f", mask=jnp.ones(({n}, {n}), dtype=bool).at[:, -1].set(False)"])
        k = v = a.name
        heads = self.sizes.get(a.dims[-2]) if a.dims[-2] is not None else None
        if heads and heads > 1 and self.flag(40):
            # grouped kv heads of their own dim, whole: fewer than the devices splitting the query heads now and
            # then (one kv head: multi-query attention), each device slicing those its query heads read
            kv = self.new_dim(size=self.pick([d for d in range(1, heads) if heads % d == 0]), split=False)
            dims = (*a.dims[:-2], kv, a.dims[-1])
            if self.disjoint(dims) and self.fits(dims):
                # (in the query's dtype: a low-precision program may have widened it)
                k, v = (f"{self.param(dims).name}.astype({a.name}.dtype)" for _ in "kv")
        expr = f"jax.nn.dot_product_attention({a.name}, {k}, {v}{causal})"
        # (always a trigger: a twin of the function on another mesh may split what this one keeps whole)
        self.trigger("dot_product_attention over a split sequence or head dim", expr, "sequence dim", "head dim")
        self.emit(expr, a.dims, a.scale)
        return True

    def unary_cast(self, a: _Value) -> bool:
        """``astype`` and ``jnp.asarray(dtype=)`` spellings; a round trip through a narrower dtype only on an
        input (exact, so both programs round the same values) or in a low-precision program."""
        is_input = any(arg.name == a.name for arg in self.args)
        forms = ["{}.astype(jnp.float32)", "{}.astype('float32')", "jnp.asarray({}, dtype=jnp.float32)",
                 "jnp.astype({}, jnp.float32)", "{}.astype(float)"]
        narrow = ["{}.astype(jnp.bfloat16).astype(jnp.float32)", "{}.astype(jnp.float16).astype(jnp.float32)"]
        if is_input or self.dtype != "float32":
            forms += narrow
        if self.dtype != "float32":
            forms += [f"{{}}.astype(jnp.{self.dtype})", f"jnp.asarray({{}}, dtype=jnp.{self.dtype})"]
        # computed in float32 and cast back to the value's own dtype, as norms are written: a helper handed
        # the result cannot spell its dtype (its partial sums must still accumulate in float32)
        forms += ["({0}.astype(jnp.float32) * 0.5).astype({0}.dtype)",
                  "jnp.asarray({0}.astype(jnp.float32) - 0.25, dtype={0}.dtype)"]
        template = self.pick(forms)
        expr = template.format(a.name)
        self.trigger("astype", expr, unnamed=True)
        self.emit(expr, a.dims, a.scale)
        return True

    def op_binary(self, a: _Value) -> bool:
        if None in a.dims:  # a keepdims result: broadcast it back against a full value
            return self.broadcast_full(a) is not None
        kind = self.weighted([("arith", 45), ("keepdims", 14), ("scalar", 12), ("minmax", 12), ("shape", 9),
                              ("augassign", 8)])
        return getattr(self, f"binary_{kind}")(a)

    def second(self, a: _Value) -> tuple[_Value, tuple[str | None, ...]]:
        """A second operand broadcasting with ``a``: same dims, a trailing part, or one more dim."""
        dims = a.dims
        mode = self.weighted([("same", 5), ("suffix", 3), ("wider", 2)])
        if not self.disjoint(dims):  # no parameter can have these dims: a with itself
            return a, dims
        if mode == "suffix" and len(dims) >= 2:
            k = self.ch.integer(1, len(dims) - 1)
            return self.operand(dims[k:]), dims  # type: ignore[arg-type]
        if mode == "wider" and len(dims) < MAX_RANK:
            new = self.some_dim(exclude=dims, compatible=dims)
            wide = (new, *dims)
            if self.fits(wide) and self.disjoint(wide):
                return self.operand(wide), wide  # type: ignore[arg-type]
        return self.operand(dims), dims  # type: ignore[arg-type]

    def binary_arith(self, a: _Value) -> bool:
        b, out = self.second(a)
        op = self.pick(["+", "-", "*", "/", "jnp.add", "jnp.subtract", "jnp.multiply", "jnp.divide", "sum", "fold"])
        x, y = a, b
        if op == "sum":  # Python's own sum() of a list or tuple of arrays (partial sums stay partial)
            expr = self.pick([f"sum([{a.name}, {b.name}])", f"sum(({b.name}, {a.name}, {a.name}))",
                              f"sum([{a.name}], {b.name})", f"sum([{b.name}, 1.0], start={a.name})",
                              # a comprehension's items, partial sums summed once after it (its start counted once)
                              f"sum({a.name} * (i + 1.0) for i in range(3)) + {b.name}",
                              f"sum([{a.name} - 0.5 * i for i in range(2)], start={b.name})",
                              f"sum((t * {b.name} for t in ({a.name}, {a.name} + 1.0)), {b.name})"])
            return bool(self.emit(expr, out, 6 * a.scale + 2 * b.scale + 2))
        if op == "fold":  # functools.reduce with an elementwise fold over a list (or a comprehension's items)
            self.module.imports.add("functools")
            self.module.imports.add("operator")
            expr, scale = self.pick([
                (f"functools.reduce(lambda p, q: p + q, [{a.name} * i for i in range(3)]) - {b.name}", 3 * a.scale + b.scale),
                (f"functools.reduce(operator.add, ({a.name} - i for i in range(2)), {b.name})", 2 * a.scale + b.scale + 1),
                (f"functools.reduce(jnp.add, [{a.name}, {b.name}, {a.name}], 0.5)", 2 * a.scale + b.scale + 1),
                (f"functools.reduce(operator.sub, [{b.name}, {a.name}])", a.scale + b.scale),
                (f"functools.reduce(jnp.maximum, [{a.name} * (i - 1.0) for i in range(3)]) * {b.name}", 2 * a.scale * b.scale),
                (f"functools.reduce(lambda p, q: jnp.minimum(p, q), [{a.name}, {b.name}])", a.scale + b.scale),
                (f"functools.reduce(operator.mul, [{a.name}, {b.name}], 0.5)", a.scale * b.scale)])
            return bool(self.emit(expr, out, scale))
        if op in ("+", "-", "*", "jnp.add", "jnp.multiply") and self.flag(30):
            x, y = b, a
        if op in ("/", "jnp.divide"):
            denominator = self.pick(["(jnp.abs({}) + 1.0)", "(1.0 + {} * {})"]).format(y.name, y.name)
            expr = f"{x.name} / {denominator}" if op == "/" else f"jnp.divide({x.name}, {denominator})"
            return bool(self.emit(expr, out, x.scale))
        if op.startswith("jnp."):
            expr = f"{op}({x.name}, {y.name})"
        else:
            expr = f"{x.name} {op} {y.name}"
        scale = a.scale * b.scale if "*" in op or "mult" in op else a.scale + b.scale
        self.emit(expr, out, scale)
        return True

    def binary_keepdims(self, a: _Value) -> bool:
        """``a - max(a, axis, keepdims=True)`` and friends: a size-1 dim broadcasting back."""
        if not a.dims:
            return False
        axis = self.axis_text(len(a.dims), allow_none=False)
        kind = self.pick(["max", "mean", "sum", "min"])
        spelled = self.pick([f"jnp.{kind}({a.name}, axis={axis}, keepdims=True)",
                             f"{a.name}.{kind}(axis={axis}, keepdims=True)"])
        if kind == "sum":
            return bool(self.emit(f"{a.name} / (jnp.abs({spelled}) + 1.0)", a.dims, a.scale))
        return bool(self.emit(f"{a.name} - {spelled}", a.dims, 2 * a.scale))

    def binary_scalar(self, a: _Value) -> bool:
        c = self.pick(["0.5", "2.0", "3", "0.25"])
        expr = self.pick([f"{a.name} * {c}", f"{c} * {a.name}", f"{a.name} + {c}", f"{a.name} - {c}",
                          f"{a.name} / {c}", f"{c} - {a.name}"])
        return bool(self.emit(expr, a.dims, a.scale * 2 + 3))

    def binary_minmax(self, a: _Value) -> bool:
        if self.flag(25):  # leaky: continuous, so round-off cannot flip a branch
            return bool(self.emit(f"jnp.where({a.name} > 0, {a.name}, 0.1 * {a.name})", a.dims, a.scale))
        b, out = self.second(a)
        expr = self.pick([f"jnp.maximum({a.name}, {b.name})", f"jnp.minimum({a.name}, {b.name})",
                          f"jnp.where({a.name} > {b.name}, {a.name}, {b.name})",
                          f"jnp.clip({a.name}, {b.name})", f"{a.name}.clip(max={b.name})",
                          f"jnp.clip({a.name}, -{b.name} * {b.name}, 1.0)"])
        return bool(self.emit(expr, out, max(a.scale, b.scale)))

    def binary_shape(self, a: _Value) -> bool:
        """Divides by a global size read from ``.shape`` (meshify keeps it global on shards)."""
        if not a.dims:
            return False
        i = self.ch.integer(0, len(a.dims) - 1)
        index = self.pick([str(i), str(i - len(a.dims))])
        expr = self.pick([f"{a.name} / {a.name}.shape[{index}]", f"{a.name} * (2.0 / {a.name}.shape[{index}])",
                          f"{a.name} / {a.name}.size * {a.name}.shape[{index}]"])
        return bool(self.emit(expr, a.dims, a.scale * 2))

    def binary_augassign(self, a: _Value) -> bool:
        if a.name.startswith("ids"):
            return False
        b, out = self.second(a)
        if out != a.dims:
            return False
        op = self.pick(["+=", "-=", "*="])
        self.lines.append(f"{a.name} {op} {b.name}")
        scale = a.scale * b.scale if op == "*=" else a.scale + b.scale
        self.values = [v for v in self.values if v is not a]
        self.values.append(_Value(a.name, a.dims, scale))
        return True

    def broadcast_full(self, a: _Value) -> _Value | None:
        """``a`` (with size-1 dims) against a value naming every dim: the result has no size-1 dims."""
        taken = [d for d in a.dims if d is not None]
        dims: list[str] = []
        for d in a.dims:
            if d is None:
                d = self.some_dim(exclude=taken + dims, compatible=taken + dims)
            dims.append(d)
        if not self.fits(dims) or not self.disjoint(dims):
            dims = [d for d in a.dims if d is not None]
            return self.emit(f"jnp.sum({a.name}, axis={tuple(i for i, d in enumerate(a.dims) if d is None)})",
                             dims, a.scale)
        b = self.operand(dims)
        op = self.pick(["+", "*", "-"])
        return self.emit(f"{a.name} {op} {b.name}", dims, a.scale * b.scale + a.scale + b.scale)

    def axis_text(self, rank: int, allow_none: bool = True, allow_tuple: bool = True) -> str:
        kind = self.weighted([("one", 8), ("tuple", 2 if allow_tuple and rank >= 2 else 0),
                              ("none", 2 if allow_none else 0)])
        if kind == "none":
            return "None"
        if kind == "tuple":
            i, j = sorted(self.shuffled(range(rank))[:2])
            return f"({i}, {j})"
        i = self.ch.integer(0, rank - 1)
        return str(self.pick([i, i - rank]))

    @staticmethod
    def axes_from(text: str, rank: int) -> list[int]:
        if text == "None":
            return list(range(rank))
        value = ast.literal_eval(text)
        return sorted({v % rank for v in (value if isinstance(value, tuple) else (value,))})

    def op_reduce(self, a: _Value) -> bool:
        if not a.dims:
            return False
        kind = self.pick(["sum", "mean", "max", "min"])
        axis = self.axis_text(len(a.dims))
        keepdims = self.flag(20)
        if self.dtype != "float32" and kind in ("sum", "mean") and None not in a.dims and self.flag(40) \
                and axis.lstrip("-").isdigit() and self.disjoint(a.dims):
            split = [i for i, d in enumerate(a.dims) if self.axes_of(d)]
            if split:  # where each device holds a partial sum
                axis = str(self.pick(split))
            a = self.cancelling(a.dims, int(axis) % len(a.dims))
        reduced = self.axes_from(axis, len(a.dims))
        n = math.prod(self.sizes[a.dims[i]] for i in reduced if a.dims[i] is not None)
        if kind == "sum" and a.scale * n > MAX_SCALE:
            kind = "mean"
        options: dict[str, str] = {"axis": axis}
        if keepdims:
            options["keepdims"] = "True"
        extra = self.reduce_options(a, kind) if self.flag(18) else {}
        options |= extra
        scale = a.scale * n if kind == "sum" else a.scale
        if "initial" in extra:
            scale += 1.0
        form = self.ch.integer(0, 2)
        if form == 1 and "out" not in options:
            expr = f"{a.name}.{kind}({', '.join(f'{k}={v}' for k, v in options.items())})"
        elif form == 2 and not extra:  # the original positional form: jnp.max(x, 1, keepdims=True)
            expr = f"jnp.{kind}({a.name}, {axis}{', keepdims=True' if keepdims else ''})"
        else:
            if axis == "None" and self.flag(30):
                del options["axis"]
            expr = self.call(f"jnp.{kind}", f"jax.numpy.{kind}", [a.name], options)
        # (masks and initial= are run over split dims too; a bfloat16 dtype= may be refused)
        if extra.get("dtype", "jnp.float32") != "jnp.float32":
            self.trigger(f"jnp.{kind} with {', '.join(extra)}", expr)
        dims = [None if i in reduced else d for i, d in enumerate(a.dims)] if keepdims else \
            [d for i, d in enumerate(a.dims) if i not in reduced]
        self.emit(expr, dims, scale)
        return True

    def op_statistic(self, a: _Value) -> bool:
        """A statistic over one dim or all, with its parameters as users pass them: ``jnp.var(ddof=1)``,
        ``jnp.std(correction=)``, ``where=`` masks, ``jnp.nanstd`` of a NaN-holed value, ``jnp.linalg.norm`` /
        ``vector_norm`` of orders 1, 2, inf, -inf, 3 (matrix ``'fro'``, 1, inf over two dims), ``jnp.prod`` with
        ``initial=``/``where=``, ``jnp.nancumsum``/``nancumprod``, and on exact inputs (a new parameter: the
        result jumps where rounding moves an entry) ``argmax``/``argmin``/``nanargmax`` along a dim or flat
        (``axis=None``: a flat index over every split dim), ``count_nonzero``, ``any``/``all`` with ``where=``;
        over split dims: their collectives."""
        if not a.dims or None in a.dims:
            return False
        rank = len(a.dims)
        k = self.ch.integer(0, rank - 1)
        axis = str(k if self.flag(60) else k - rank)
        n = self.sizes[a.dims[k]]  # type: ignore[index]
        name, kept = a.name, self.flag(15)
        dims = [None if i == k else d for i, d in enumerate(a.dims)] if kept else \
            [d for i, d in enumerate(a.dims) if i != k]
        keep = ", keepdims=True" if kept else ""
        kind = self.pick(["var", "std", "nanstd", "norm", "matrix_norm", "prod", "nancum", "arg", "count", "anyall"])
        if kind == "matrix_norm" and rank < 2:
            kind = "norm"
        if kind in ("var", "std"):
            option = self.pick(["", ", ddof=1", f", where={self.mask(a)}"] + ([", correction=1.5"] if kind == "std" else []))
            expr = f"jnp.{kind}({name}, axis={axis}{option}{keep})"
            return bool(self.emit(expr, dims, a.scale * a.scale * 2 if kind == "var" else a.scale * 1.5))
        if kind == "nanstd":
            fn = self.pick(["nanstd", "nanvar", "nanmean"])
            expr = f"jnp.{fn}(jnp.where({name} > 1.5, jnp.nan, {name}), axis={axis}{keep})"
            return bool(self.emit(expr, dims, a.scale * a.scale * 2 if fn == "nanvar" else a.scale))
        if kind == "norm":
            order = self.pick(["None", "1", "2", "jnp.inf", "-jnp.inf", "3"])
            scale = a.scale * (n if order == "1" else math.sqrt(n))
            fn = self.pick(["jnp.linalg.norm", "jnp.linalg.vector_norm"])
            options = "" if order == "None" and self.flag(30) else f", ord={order}"
            return bool(self.emit(f"{fn}({name}{options}, axis={axis}{keep})", dims, scale))
        if kind == "matrix_norm":
            j = self.pick([i for i in range(rank) if i != k])
            order = self.pick(["'fro'", "1", "jnp.inf", "-1"])
            pair = tuple(sorted((k, j)))
            out = [None if i in pair else d for i, d in enumerate(a.dims)] if kept else \
                [d for i, d in enumerate(a.dims) if i not in pair]
            m = n * self.sizes[a.dims[j]]  # type: ignore[index]
            expr = f"jnp.linalg.norm({name}, ord={order}, axis={pair}{keep})"
            return bool(self.emit(expr, out, a.scale * math.sqrt(m) * 2))
        if kind == "prod":
            option = self.pick(["", ", initial=0.5", f", where={self.mask(a)}"])
            expr = f"jnp.prod(1.0 + 0.05 * jnp.tanh({name}), axis={axis}{option}{keep})"
            return bool(self.emit(expr, dims, math.exp(0.05 * n)))
        if kind == "nancum":
            if self.flag(50):
                expr = f"jnp.nancumsum(jnp.where({name} > 1.5, jnp.nan, {name}), axis={axis})"
                return bool(self.emit(expr, a.dims, a.scale * n))
            expr = f"jnp.nancumprod(jnp.where({name} > 1.5, jnp.nan, 1.0 + 0.05 * jnp.tanh({name})), axis={axis})"
            return bool(self.emit(expr, a.dims, math.exp(0.05 * n)))
        exact = self.param(a.dims)  # type: ignore[arg-type]
        x = exact.name
        if kind == "arg":
            fn = self.pick(["argmax", "argmin", "nanargmax", "nanargmin"])
            subject = f"jnp.where({x} > 1.0, jnp.nan, {x})" if fn.startswith("nan") or self.flag(15) else x
            if self.flag(30):  # a flat index into the whole array
                return bool(self.emit(f"1.0 / (2.0 + jnp.{fn}({subject}))", [], 1.0))
            return bool(self.emit(f"1.0 / (2.0 + jnp.{fn}({subject}, axis={axis}{keep}))", dims, 1.0))
        if kind == "count":
            flat = self.flag(25)
            where = "" if flat else f", axis={axis}{keep}"
            return bool(self.emit(f"jnp.count_nonzero({x} > 0.3{where}) * 0.25", [] if flat else dims, n * 0.25))
        fn = self.pick(["any", "all"])
        option = f", where={self.mask(exact)}" if self.flag(40) else ""
        expr = f"jnp.where(jnp.{fn}({x} > {self.pick(['-1.5', '0.5', '1.5'])}, axis={axis}{option}{keep}), 1.0, -1.0)"
        return bool(self.emit(expr, dims, 1.0))

    def reduce_options(self, a: _Value, kind: str) -> dict[str, str]:
        """Some of ``where=``, ``initial=``, ``dtype=`` (as ``kind``'s signature has them)."""
        names = [n for n, _, _ in _signature(f"jax.numpy.{kind}")]
        options: dict[str, str] = {}
        if "dtype" in names and self.flag(35):
            dtypes = ["jnp.float32"] + (["jnp.bfloat16"] if kind == "sum" and self.flag(20) else [])
            options["dtype"] = self.pick(dtypes)
            if options["dtype"] != "jnp.float32":
                self.module.precision = self.module.precision or "bfloat16"
        if "initial" in names and self.flag(40):
            options["initial"] = self.pick(["0.5", "1.0", "-1.0", "0.0"])
        if self.flag(60):
            options["where"] = self.mask(a)
            if kind in ("max", "min") and "initial" not in options:
                options["initial"] = self.pick(["0.0", "-1.0" if kind == "max" else "1.0"])
        if not options:
            options["where"] = self.mask(a)
            if kind in ("max", "min"):
                options["initial"] = "0.0"
        return options

    def op_einops(self, a: _Value) -> bool:
        """einops as research code writes it: a transpose, a dim split into two axes and merged back (the
        lengths by keyword, now and then in the order that leaves a device a strided piece), a size-1 axis,
        repeat then reduce over the new axis, reduce by sum/mean/max/min over some axes (split ones too)."""
        if not a.dims or None in a.dims:
            return False
        self.module.imports.add("einops")
        letters = [f"a{k}" for k in range(len(a.dims))]
        left = " ".join(letters)
        kind = self.weighted([("transpose", 3), ("split", 4), ("unit", 2), ("repeat", 2), ("reduce", 4)])
        if kind == "transpose" and len(a.dims) > 1:
            perm = self.shuffled(range(len(a.dims)))
            expr = f'einops.rearrange({a.name}, "{left} -> {" ".join(letters[p] for p in perm)}")'
            self.emit(expr, [a.dims[p] for p in perm], a.scale)
            return True
        if kind == "split":
            k = self.ch.integer(0, len(a.dims) - 1)
            size = self.sizes[a.dims[k]]
            factors = [f for f in (2, 4) if size % f == 0 and size > f]
            if not factors:
                return False
            inner = self.pick(factors)
            major = size // inner
            swapped = self.flag(15)
            parts = list(letters)
            parts[k] = "(x y)"
            out = list(letters)
            out[k] = "(y x)" if swapped else "(x y)"
            length = self.pick([f"y={inner}", f"x={major}", f"x={major}, y={inner}"])
            expr = f'einops.rearrange({a.name}, "{" ".join(parts)} -> {" ".join(out)}", {length})'
            # (the dim may be split in a copy of the function on other rules: any shard count)
            if swapped or major % 8:  # a later axis of a merge takes the split (sectioned first, or swapped)
                self.trigger("einops merge of a split axis that is not the group's first", expr)
            if major % 8:  # (refused when the function runs: the error may point at the statement calling a helper)
                self.trigger("einops length not divisible by the shards", expr, "einops failed on a device's block")
            self.emit(expr, a.dims, a.scale, pin=False if swapped else None)
            return True
        if kind == "unit":
            k = self.ch.integer(0, len(a.dims))
            out = list(letters)
            out.insert(k, self.pick(["1", "()"]))
            expr = f'einops.rearrange({a.name}, "{left} -> {" ".join(out)}")'
            self.emit(expr, [*a.dims[:k], None, *a.dims[k:]], a.scale)
            return True
        if kind == "repeat":
            r = self.pick([2, 3])
            k = self.ch.integer(0, len(a.dims))
            out = list(letters)
            out.insert(k, "r")
            how = self.pick(["mean", "sum"])
            inner = f'einops.repeat({a.name}, "{left} -> {" ".join(out)}", r={r})'
            expr = f'einops.reduce({inner}, "{" ".join(out)} -> {left}", "{how}")'
            self.emit(expr, a.dims, a.scale * (r if how == "sum" else 1))
            return True
        reduced = [k for k in range(len(a.dims)) if self.flag(40)] or [self.ch.integer(0, len(a.dims) - 1)]
        how = self.pick(["sum", "mean", "max", "min"])
        n = math.prod(self.sizes[a.dims[k]] for k in reduced)
        if how == "sum" and a.scale * n > MAX_SCALE:
            how = "mean"
        kept = [letters[k] for k in range(len(a.dims)) if k not in reduced]
        expr = f'einops.reduce({a.name}, "{left} -> {" ".join(kept)}", "{how}")'
        if how in ("max", "min"):  # (split here, or in a caller whose rules split it: a @mesh function as a helper)
            self.trigger("einops.reduce by max/min over a split axis", expr)
        self.emit(expr, [a.dims[k] for k in range(len(a.dims)) if k not in reduced],
                  a.scale * (n if how == "sum" else 1))
        return True

    def op_softmax(self, a: _Value) -> bool:
        if not a.dims or None in a.dims:
            return False
        # (not float16: XLA's CPU dot_general has no F16_F16_F32 precision, so the reference itself fails)
        if len(a.dims) in (3, 4) and len(set(a.dims)) == len(a.dims) and self.dtype != "float16" and self.flag(15):
            return self.attention(a)
        kind = self.pick(["softmax", "log_softmax", "logsumexp"])
        rank = len(a.dims)
        omit = self.flag(20)
        # (axis=None written: every dim, for softmax too -- read as the default last dim, it was a wrong result)
        axis = "None" if omit and kind == "logsumexp" else "-1" if omit else self.axis_text(rank, allow_none=True)
        reduced = self.axes_from(axis, rank)
        log_n = math.log(math.prod(self.sizes[a.dims[i]] for i in reduced))  # type: ignore[index]
        options: dict[str, str] = {} if omit else {"axis": axis}
        extras: list[str] = []
        if self.flag(20):
            mask = self.mask(a)
            options["where"] = mask
        qualname = f"jax.nn.{kind}"
        if kind != "logsumexp":
            scale = 1.0 if kind == "softmax" else a.scale + log_n
            expr = self.call(f"jax.nn.{kind}", qualname, [a.name], options) if options else f"jax.nn.{kind}({a.name})"
            if "where" in options and kind == "log_softmax":  # masked entries are -inf: keep them out of what follows
                expr = f"jnp.where({options['where']}, {expr}, 0.0)"
            return bool(self.emit(expr, a.dims, scale))
        keepdims = self.flag(15)
        if keepdims:
            options["keepdims"] = "True"
        if self.flag(15):
            k = self.ch.integer(0, rank - 1)
            w = self.operand(a.dims[k:])  # type: ignore[arg-type]
            options["b"] = self.pick([f"jnp.abs({w.name})", f"jnp.abs({w.name}) + 0.5", f"{w.name} * {w.name}"])

        sign = self.flag(6)
        if sign:
            options["return_sign"] = "True"
        dims = [None if i in reduced else d for i, d in enumerate(a.dims)] if keepdims else \
            [d for i, d in enumerate(a.dims) if i not in reduced]
        expr = self.call("jax.nn.logsumexp", qualname, [a.name], options) if options else \
            f"jax.nn.logsumexp({a.name})"
        if extras:
            self.trigger(f"jax.nn.logsumexp with {', '.join(extras)}", expr)
        if not sign:
            self.emit(expr, dims, a.scale + log_n + 2)
            return True
        lse, sgn = self.fresh(), f"v{len([v for v in self.values if v.name.startswith('v')]) + 1}"
        self.lines.append(f"{lse}, {sgn} = {expr}")
        self.values.append(_Value(lse, tuple(dims), a.scale + log_n + 2))
        self.values.append(_Value(sgn, tuple(dims), 1.0))
        self.emit(f"{lse} * {sgn}", dims, a.scale + log_n + 2)
        return True

    def op_einsum(self, a: _Value) -> bool:
        if not a.dims or None in a.dims:
            return False
        dims = list(a.dims)
        shared = self.shuffled(dims)[:self.ch.integer(1, min(2, len(dims)))]
        if not self.disjoint(shared):
            shared = shared[:1]
        extras: list[str] = []
        for _ in range(self.ch.integer(0, 2)):
            d = self.some_dim(exclude=dims + extras, compatible=shared + extras)
            if d not in dims + extras:
                extras.append(d)
        std = math.prod(self.sizes[d] for d in shared) ** -0.5  # type: ignore[index]
        b = self.operand(self.shuffled(shared + extras), std=std, any_order=True)
        union = list(dict.fromkeys(dims + list(b.dims)))
        letters = self.letters(union)
        contracted = [d for d in shared if self.flag(60)]
        if self.flag(8):
            contracted += [d for d in union if d not in shared][:1]
        out = [d for d in union if d not in contracted]
        while not self.fits(out):
            contracted.append(out[0])
            out = out[1:]
        if self.flag(30):
            out = self.shuffled(out)
        operands = [a, b]
        specs = ["".join(letters[d] for d in a.dims), "".join(letters[d] for d in b.dims)]
        if out and self.flag(10):  # a third operand: a vector over one output dim
            d = self.pick(out)
            c = self.operand([d])
            operands.append(c)
            specs.append(letters[d])
        implicit = self.flag(15)
        if implicit:
            counts = {ch: "".join(specs).count(ch) for ch in "".join(specs)}
            out_letters = "".join(sorted(ch for ch, n in counts.items() if n == 1))
            by_letter = {v: k for k, v in letters.items()}
            out = [by_letter[ch] for ch in out_letters]
            if not self.fits(out):
                implicit = False
                out = [d for d in union if d not in contracted]
        spec = ",".join(specs) + ("" if implicit else "->" + "".join(letters[d] for d in out))
        fn = self.pick(["jnp.einsum", "es", "jax.numpy.einsum"])
        n = math.prod(self.sizes[d] for d in union if d not in out)
        scale = math.prod(o.scale for o in operands) * math.sqrt(n)
        options = self.dot_options()
        expr = self.call(fn, "jax.numpy.einsum", [f"{spec!r}".replace("'", '"'), *(o.name for o in operands)], options)
        if options:
            self.trigger(f"einsum with {', '.join(options)}", expr)
        self.emit(expr, out, scale)
        return True

    def op_diagonal(self, a: _Value) -> bool:
        """The diagonal of a matrix of one dim against itself (a contrastive loss's ``img @ txt.T``, its rows
        split as ``a``'s dim is): ``jnp.diagonal``, ``jnp.diag``, ``.diagonal()``, ``s[r, r]`` with ``r =
        jnp.arange(n)``, ``jnp.trace``, of the matrix or its log-softmax along either dim, transposed or not.
        The matrix is a line of its own, never a value of the program (a dim twice in one value)."""
        if not a.dims or None in a.dims:
            return False
        x = self.pick(a.dims)
        rest = [d for d in a.dims if d != x]
        b = self.operand([x, *rest], std=self.elements(rest) ** -0.5 if rest else 1.0)
        letters = self.letters([x, *rest])
        sa = "".join(letters[d] for d in a.dims)
        sb = "X" + "".join(letters[d] for d in rest)
        sim = f"{self.fresh()}s"
        self.lines.append(f'{sim} = jnp.einsum("{sa},{sb}->{letters[x]}X", {a.name}, {b.name})')
        scale = a.scale * b.scale * math.sqrt(max(1, self.elements(rest)))
        m = sim
        if self.flag(40):
            m = f"jax.nn.log_softmax({sim}, axis={self.pick(['-1', '0', '1'])})"
            scale = scale + math.log(self.sizes[x]) + 1.0
        if self.flag(30):
            m = f"{m}.T"
        form = self.pick(["diagonal", "diag", "method", "arange", "trace", "trace_method"])
        if form.startswith("trace"):
            expr = f"jnp.trace({m})" if form == "trace" else f"({m}).trace()"
            self.emit(expr, [], scale * self.sizes[x])
            return True
        if form == "arange":
            r = f"{self.fresh()}r"
            self.lines.append(f"{r} = jnp.arange({sim}.shape[0])")
            if m != sim:  # (as a loss names its log-probabilities first: logp[r, r])
                self.lines.append(f"{sim}m = {m}")
                m = f"{sim}m"
            expr = f"{m}[{r}, {r}]"
        else:
            expr = {"diagonal": f"jnp.diagonal({m})", "diag": f"jnp.diag({m})", "method": f"({m}).diagonal()"}[form]
        self.emit(expr, [x], scale)
        return True

    def op_pairs(self, a: _Value) -> bool:
        """DLRM's pairwise interactions: the products of every pair of ``a``'s rows along dim ``x``
        (``einsum('...xc,...Xc->...xX')``), the upper (or lower) triangle read by ``iu, ju =
        jnp.triu_indices(n, k)`` and ``z[..., iu, ju]``, summed over the pairs.  Indexing a split ``x`` with
        index arrays is refused (a trigger)."""
        if len(a.dims) < 2 or None in a.dims:
            return False
        x, c = self.shuffled(list(a.dims))[:2]
        rest = [d for d in a.dims if d not in (x, c)]
        letters = self.letters(list(a.dims))
        sa = "".join(letters[d] for d in a.dims)
        sb = "".join("X" if d == x else letters[d] for d in a.dims)
        out = "".join(letters[d] for d in rest) + letters[x] + "X"
        z, iu, ju = f"{self.fresh()}z", f"{self.fresh()}i", f"{self.fresh()}j"
        self.lines.append(f'{z} = jnp.einsum("{sa},{sb}->{out}", {a.name}, {a.name})')
        kind = self.pick(["triu", "tril"])
        k = self.pick(["", ", 1", ", k=1", ", -1"] if kind == "tril" else ["", ", 1", ", k=1"])
        self.lines.append(f"{iu}, {ju} = jnp.{kind}_indices({a.name}.shape[{a.dims.index(x)}]{k})")
        expr = f"{z}[{', '.join([':'] * len(rest) + [iu, ju])}].sum(axis=-1)"
        n = self.sizes[x]
        self.emit(expr, rest, a.scale ** 2 * math.sqrt(self.sizes[c]) * n * n)
        return True

    def op_optional(self, a: _Value) -> bool:
        """An array or None known only when traced, as an optional bias is written: set under an ``if`` on a size
        meshify does not know before the call (true or false by the sizes chosen), then read by ``0.0 if m is None
        else jnp.sum(m)`` (a number or a scalar: the sum completed in its arm) or ``a + m if m is not None else a``."""
        if None in a.dims or not a.dims:
            return False
        i = self.pick(range(len(a.dims)))
        k = self.sizes[a.dims[i]] - self.pick([1, 0])
        m = f"{self.fresh()}m"
        self.lines.append(f"{m} = None")
        self.lines.append(f"if {a.name}.shape[{i}] > {k}: {m} = jnp.tanh({a.name}) * 0.5")
        if self.flag(50):
            n = self.elements(a.dims)
            self.emit(f"jnp.mean({a.name}) + (0.0 if {m} is None else jnp.sum({m}) / {n})", [], a.scale + 1)
        else:
            self.emit(f"{a.name} + {m} if {m} is not None else {a.name}", a.dims, a.scale + 1)
        return True

    def op_leaves(self, a: _Value) -> bool:
        """A penalty over a pytree's leaves, as training code sums one over its parameters: two values (of any
        layouts) held in a NamedTuple, ``sum(jnp.sum(q * q) for q in jax.tree.leaves(p))`` (each leaf its own
        layout, unrolled), or the leaves held in a name and read by index."""
        if None in a.dims:
            return False
        b = self.pick(self.values)
        if None in b.dims:
            b = a
        self.module.imports.add("typing")
        self.module.defs["Pair"] = "class Pair(typing.NamedTuple):\n    a: jax.Array\n    b: jax.Array\n"
        p = f"{self.fresh()}p"
        cls = "Pair"
        if self.flag(25):  # a registered dataclass, its fields flattened in the order it declares them or not
            self.module.imports.add("dataclasses")
            order = self.pick(['["a", "b"]', '["b", "a"]'])
            if "DPair" not in self.module.defs:
                if self.flag(40):  # a static field (a scale kept in the structure), declared by the decorator
                    self.module.imports.add("functools")
                    self.module.defs["DPair"] = (
                        "@functools.partial(jax.tree_util.register_dataclass, data_fields=" + order +
                        ', meta_fields=["k"])\n@dataclasses.dataclass\nclass DPair:\n    a: jax.Array\n'
                        "    b: jax.Array\n    k: float = 1.0\n")
                else:
                    self.module.defs["DPair"] = ("@dataclasses.dataclass\nclass DPair:\n    a: jax.Array\n    b: jax.Array\n"
                                                 f"\n\njax.tree_util.register_dataclass(DPair, data_fields={order}, "
                                                 "meta_fields=[])\n")
            if '["b", "a"]' in self.module.defs["DPair"]:  # (leaves read one by one: JAX's order checked first)
                self.trigger("leaves of a class registered in another order", "jax.tree.leaves gives the leaves")
            cls = "DPair"
        static = cls == "DPair" and "meta_fields=[\"k\"]" in self.module.defs["DPair"]
        k = self.pick(["", ", k=0.5", ", k=2.0"]) if static else ""
        self.lines.append(f"{p} = {cls}(a={a.name}, b={b.name}{k})")
        form = self.pick(["sum", "vdot", "index", "masked", "for", "size", "enumerate", "flatten", "dictcomp",
                          "sorted", "reduce", "reduce", *(["static"] * 3 * static)])
        if form == "static":  # the static field read, and kept by jax.tree.map (a Python number when traced)
            again = f"{self.fresh()}p"
            self.lines.append(f"{again} = jax.tree.map(lambda q: q * {p}.k, {p})")
            self.emit(f"jnp.mean({again}.a) * {again}.k + jnp.mean({again}.b)", [], 4 * (a.scale + b.scale))
            return True
        scale = a.scale ** 2 * self.elements(a.dims) + b.scale ** 2 * self.elements(b.dims)
        n = self.elements(a.dims) + self.elements(b.dims)
        if form in ("dictcomp", "sorted"):  # a dict of the two gone over key by key
            d = f"{self.fresh()}d"
            self.lines.append(f'{d} = {{"a": {a.name}, "b": {b.name}}}')
            if form == "dictcomp":
                e = f"{self.fresh()}e"
                self.lines.append(f'{e} = {{k: v * 0.5 for k, v in {d}.items() if k != "c"}}')
                self.emit(f'jnp.mean({e}["a"]) + jnp.mean({e}["b"])', [], 0.5 * (a.scale + b.scale))
                return True
            acc = f"{self.fresh()}acc"
            self.lines.append(f"{acc} = 0.0")
            # (a loop variable of its own: a helper these lines move into may take a static parameter 'k')
            key = f"{self.fresh()}k"
            self.lines.append(f"for {key} in sorted({d}): {acc} = {acc} + jnp.sum({d}[{key}] * {d}[{key}]) / {n}")
            self.emit(acc, [], scale / n)
            return True
        if form == "reduce":  # a reduction of a mapped pytree (an L2 penalty, a dot of two parameter trees)
            self.module.imports.add("operator")
            other = f"{self.fresh()}q"
            self.lines.append(f"{other} = {cls}(a={a.name} * 0.5, b={b.name}{k})")
            self.emit(self.pick([
                f"jax.tree_util.tree_reduce(operator.add, jax.tree.map(lambda q: jnp.sum(q * q), {p})) / {n}",
                f"jax.tree.reduce(lambda s, t: s + t, jax.tree.map(lambda q, r: jnp.sum(q * r) * 2.0, {p}, {other}),"
                f" 0.0) / {n}",
                f"jax.tree.reduce(operator.add, jax.tree.map(jnp.sum, jax.tree.map(lambda q: q * q, {p}))) / {n}"]),
                [], scale / n)
            return True
        if form == "for":  # a Python loop over leaves of different layouts (unrolled, a copy of the body per leaf)
            acc = f"{self.fresh()}acc"
            self.lines.append(f"{acc} = 0.0")
            self.lines.append(f"for q in jax.tree.leaves({p}): {acc} = {acc} + jnp.sum(q * q) / {n}")
            self.emit(acc, [], scale / n)
            return True
        if form == "size":  # a leaf's attribute read in an unrolled comprehension (q.size, q.ndim)
            self.emit(f"sum(jnp.sum(q) / q.size * q.ndim for q in jax.tree.leaves({p}))", [], a.scale + b.scale)
            return True
        if form == "enumerate":
            self.emit(f"sum(jnp.sum(q * q) * (i + 1) for i, q in enumerate(jax.tree.leaves({p}))) / {n}", [],
                      3 * scale / n)
            return True
        if form == "flatten":  # an update over the leaves filled back into the structure
            leaves, tree, again = f"{self.fresh()}l", f"{self.fresh()}t", f"{self.fresh()}p"
            self.lines.append(f"{leaves}, {tree} = jax.tree.flatten({p})")
            self.lines.append(f"{again} = jax.tree.unflatten({tree}, [q * 0.5 for q in {leaves}])")
            self.emit(f"jnp.mean({again}.a) + jnp.mean({again}.b)", [], 0.5 * (a.scale + b.scale))
            return True
        if form == "masked":  # a weight-decay mask by key path, filtering the leaves (b's leaf left out)
            mask = f"{self.fresh()}m"
            test = self.pick(['path[-1].name != "b"', '"b" not in jax.tree_util.keystr(path)'])
            self.lines.append(f"{mask} = jax.tree_util.tree_map_with_path(lambda path, q: {test}, {p})")
            self.emit(f"sum(jnp.sum(q * q) for q, keep in zip(jax.tree.leaves({p}), jax.tree.leaves({mask})) "
                      f"if keep) / {self.elements(a.dims)}", [], a.scale ** 2)
            return True
        if form == "index":
            leaves = f"{self.fresh()}l"
            self.lines.append(f"{leaves} = jax.tree_util.tree_leaves({p})")
            self.emit(f"jnp.mean({leaves}[0]) + jnp.mean({leaves}[1]) * len({leaves})", [], a.scale + 2 * b.scale)
            return True
        body = "jnp.sum(q * q)" if form == "sum" else "jnp.vdot(q, q)"
        self.emit(f"sum({body} for q in jax.tree.leaves({p})) / {self.elements(a.dims) + self.elements(b.dims)}",
                  [], scale / (self.elements(a.dims) + self.elements(b.dims)))
        return True

    def dot_options(self) -> dict[str, str]:
        if not self.flag(10):
            return {}
        kind = self.pick(["precision", "preferred_element_type"])
        if kind == "precision":
            return {"precision": self.pick(["jax.lax.Precision.HIGHEST", '"highest"', "jax.lax.Precision.DEFAULT"])}
        return {"preferred_element_type": "jnp.float32"}

    def letters(self, dims: Sequence[str]) -> dict[str, str]:
        free = list("abcdefghijklmnopqrstuvwxyz")
        return {d: free.pop(self.ch.integer(0, len(free) - 1)) for d in dims}

    def op_matmul(self, a: _Value) -> bool:
        if not a.dims or None in a.dims:
            return False
        dims = a.dims
        mode = self.pick(["right", "vector", "left", "batched"])
        spell = self.pick(["{} @ {}", "jnp.matmul({}, {})", "jnp.dot({}, {})"])
        if mode == "vector" and len(dims) >= 2:
            w = self.operand([dims[-1]], std=self.sizes[dims[-1]] ** -0.5)
            left, right, out = a, w, dims[:-1]
            if self.flag(25):
                spell = "jnp.inner({}, {})"
        elif mode == "left" and len(dims) <= 3:
            k = dims[0] if len(dims) == 1 else dims[-2]
            n = self.some_dim(exclude=dims, compatible=[k])
            w = self.operand([n, k], std=self.sizes[k] ** -0.5)
            out = (n,) if len(dims) == 1 else (*dims[:-2], n, dims[-1])
            left, right = w, a
        elif mode == "batched" and len(dims) == 3 and self.disjoint([dims[0], dims[2]]):
            n = self.some_dim(exclude=dims, compatible=[dims[0], dims[2]])
            w = self.operand([dims[0], dims[2], n], std=self.sizes[dims[2]] ** -0.5)
            left, right, out = a, w, (*dims[:-1], n)
            spell = spell.replace("jnp.dot", "jnp.matmul")
        else:
            n = self.some_dim(exclude=dims, compatible=[dims[-1]])
            w = self.operand([dims[-1], n], std=self.sizes[dims[-1]] ** -0.5)
            left, right, out = a, w, (*dims[:-1], n)
            if self.flag(15):
                spell = self.pick(["jnp.tensordot({}, {}, axes=1)", "jnp.tensordot({}, {}, axes=([-1], [0]))"])
        if not self.fits(out):
            return False
        if spell.startswith("jnp.dot") and len(right.dims) > 2:
            spell = "jnp.matmul({}, {})"
        k = self.sizes[left.dims[-1]]
        expr = spell.format(left.name, right.name)
        if spell.startswith(("jnp.matmul", "jnp.dot")):
            options = self.dot_options()
            if options:
                fn = spell.split("(")[0]
                expr = self.call(fn, "jax.numpy." + fn[4:], [left.name, right.name], options)
                self.trigger(f"{fn} with {', '.join(options)}", expr)
        self.emit(expr, out, left.scale * right.scale * math.sqrt(k))
        return True

    def op_shape(self, a: _Value) -> bool:
        if not a.dims or None in a.dims:
            return False
        kind = self.weighted([("transpose", 4), ("merge", 3), ("split", 3), ("rename", 2), ("concatenate", 2),
                              ("stack", 2), ("same_size", 2), ("unnamed_window", 3)])
        return getattr(self, f"shape_{kind}")(a) or self.shape_transpose(a)

    def shape_same_size(self, a: _Value) -> bool:
        """``B, N, _ = s.shape; s.reshape(B, N, N)``: a no-op reshape, one size read off a dim for another dim
        of the same size (Swin's ``attn.reshape(B, nW, nH, N, N)``), no hint: the dims are inferred."""
        pairs = [(i, j) for i in range(len(a.dims)) for j in range(len(a.dims))
                 if i != j and self.sizes[a.dims[i]] == self.sizes[a.dims[j]]]  # type: ignore[index]
        if not pairs:
            return False
        i, j = self.pick(pairs)
        sizes = [f"{a.name}.shape[{i if k == j else k}]" for k in range(len(a.dims))]
        expr = f"{a.name}.reshape({', '.join(sizes)})"
        # (which dims the sizes keep is then unknown: a split dim not the major part of the dims merged is refused)
        self.trigger("a reshape reading one dim's size for another", expr, "is not the major (first) part", unnamed=True)
        self.emit(expr, a.dims, a.scale)
        return True

    def shape_unnamed_window(self, a: _Value) -> bool:
        """``a.reshape(.., p, n // p, ..).reshape(.., p, n // p, ..)`` then a hinted merge back: a whole dim cut
        into two dims meshify infers (a window partition's), reshaped again by literal sizes with a split dim
        after them (Swin's ``(win @ w).reshape(n, WS * WS, 3, H, D)``): the literal sizes keep the inferred dims,
        checked when the function runs; now and then the two sizes swapped, which keep neither (refused there,
        never a silently different array), or the first size -1."""
        spots = [i for i, d in enumerate(a.dims) if not self.axes_of(d) and any(self.axes_of(e) for e in a.dims[i + 1:])
                 and any(self.sizes[d] % p == 0 for p in range(2, self.sizes[d]))]  # type: ignore[index,operator]
        if not spots or len(a.dims) >= MAX_RANK or not self.disjoint(a.dims):
            return False
        i = self.pick(spots)
        n = self.sizes[a.dims[i]]  # type: ignore[index]
        p = self.pick([q for q in range(2, n) if n % q == 0])  # type: ignore[operator]
        whole = [str(self.sizes[d]) for d in a.dims]
        read = [f"{a.name}.shape[{k}]" for k in range(len(a.dims))]  # (the other dims kept by their sizes' reads)
        cut = [*read[:i], str(p), str(n // p), *read[i + 1:]]  # type: ignore[operator]
        again = [*whole[:i], str(p), str(n // p), *whole[i + 1:]]  # type: ignore[operator]
        swapped = p != n // p and self.flag(10)  # type: ignore[operator]
        if swapped:
            again[i], again[i + 1] = again[i + 1], again[i]
            self.provoked = self.provoked or "literal reshape sizes swapped: they keep neither inferred dim"
        elif i == 0 and self.flag(30):
            again[0] = "-1"
        expr = f"{a.name}.reshape({', '.join(cut)}).reshape({', '.join(again)}).reshape({', '.join(whole)})"
        self.trigger("a reshape by literal sizes of dims meshify inferred", expr, "keeps dim")
        self.emit(expr, a.dims, a.scale, pin=True)
        return True

    def shape_transpose(self, a: _Value) -> bool:
        rank = len(a.dims)
        if rank < 2:
            return False
        form = self.ch.integer(0, 5)
        perm = self.shuffled(range(rank))
        if form == 0:
            expr, out = f"{a.name}.T", tuple(reversed(a.dims))
        elif form == 1:
            expr, out = f"jnp.transpose({a.name}, {tuple(perm)})", tuple(a.dims[p] for p in perm)
        elif form == 2:
            i, j = sorted(self.shuffled(range(rank))[:2])
            out = list(a.dims)
            out[i], out[j] = out[j], out[i]
            expr = f"jnp.swapaxes({a.name}, {i}, {j - rank if self.flag(30) else j})"
        elif form == 3:
            i, j = self.ch.integer(0, rank - 1), self.ch.integer(0, rank - 1)
            out = [d for k, d in enumerate(a.dims) if k != i]
            out.insert(j, a.dims[i])
            expr = f"jnp.moveaxis({a.name}, {i}, {j})"
        elif form == 4:
            expr, out = f"{a.name}.transpose({', '.join(map(str, perm))})", tuple(a.dims[p] for p in perm)
        else:  # a size-1 dim inserted and squeezed again (expand_dims with a negative axis now and then)
            k = self.ch.integer(0, rank)
            at = k - rank - 1 if self.flag(30) else k
            inner = f"jnp.expand_dims({a.name}, {at})"
            expr = f"{inner}.squeeze({at})" if self.flag(50) else f"jnp.squeeze({inner}, axis={at})"
            out = tuple(a.dims)
        self.emit(expr, out, a.scale)
        return True

    def shape_merge(self, a: _Value) -> bool:
        """``m: Tensor[..., "x_y", ...] = a.reshape(...)``: two adjacent dims into one (the major may be split)."""
        spots = [i for i in range(len(a.dims) - 1) if not self.axes_of(a.dims[i + 1]) or self.flag(3)]
        if not spots:
            return False
        i = self.pick(spots)
        major, minor = a.dims[i], a.dims[i + 1]
        if self.axes_of(minor):
            self.provoked = self.provoked or f"reshape merges {minor!r}, split, as the minor part"
        merged = self.new_dim(self.sizes[major] * self.sizes[minor], base=f"{major}_{minor}")  # type: ignore[index]
        out = (*a.dims[:i], merged, *a.dims[i + 2:])
        if not self.disjoint(out):
            return False
        self.fixed |= {major, minor, merged}  # type: ignore[arg-type]
        self.reshape(a, out)
        return True

    def shape_split(self, a: _Value) -> bool:
        """One dim into two: the major part keeps its split, so it is a multiple of the shards."""
        i = self.ch.integer(0, len(a.dims) - 1)
        d = a.dims[i]
        size, shards = self.sizes[d], self.shards(d)  # type: ignore[index]
        factors = [p for p in range(2, size) if size % p == 0 and p % shards == 0 and size // p >= 2]
        if not factors or len(a.dims) >= MAX_RANK:
            return False
        p = self.pick(factors)
        hi = self.new_dim(p, base=f"{d}_hi")
        lo = self.new_dim(size // p, base=f"{d}_lo")
        out = (*a.dims[:i], hi, lo, *a.dims[i + 1:])
        if not self.disjoint(out):
            return False
        self.fixed |= {d, hi, lo}  # type: ignore[arg-type]
        self.reshape(a, out)
        return True

    def reshape(self, a: _Value, out: tuple[str, ...]) -> None:
        sizes = []
        for j, d in enumerate(out):
            if d in a.dims and self.flag(40):
                sizes.append(f"{a.name}.shape[{a.dims.index(d)}]")
            else:
                sizes.append(str(self.sizes[d]))
        if self.flag(20):
            sizes[self.ch.integer(0, len(sizes) - 1)] = "-1"
        form = self.ch.integer(0, 2)
        if form == 0:
            expr = f"{a.name}.reshape({', '.join(sizes)})"
        elif form == 1:
            expr = f"{a.name}.reshape(({', '.join(sizes)}{',' if len(sizes) == 1 else ''}))"
        else:
            expr = f"jnp.reshape({a.name}, ({', '.join(sizes)}{',' if len(sizes) == 1 else ''}))"
        self.emit(expr, out, a.scale, pin=True)

    def shape_rename(self, a: _Value) -> bool:
        """``r: Tensor[new names] = a``: Mesh-TF's rename; the new names bring their own rules."""
        i = self.ch.integer(0, len(a.dims) - 1)
        d = a.dims[i]
        new = self.new_dim(self.sizes[d], base=f"{d}_r")  # type: ignore[index]
        out = (*a.dims[:i], new, *a.dims[i + 1:])
        if not self.disjoint(out):
            return False
        self.emit(a.name, out, a.scale, pin=True)
        return True

    def shape_concatenate(self, a: _Value, k: int | None = None) -> bool:
        """``c: Tensor[..., new, ...] = jnp.concatenate([a, b], axis=k)``: the joined dim gets a new name."""
        if not self.disjoint(a.dims):
            return False
        if k is None:
            k = self.ch.integer(0, len(a.dims) - 1)
        others = [self.operand(a.dims) for _ in range(self.ch.integer(1, 2))]  # type: ignore[arg-type]
        parts = [a, *others]
        joined = self.new_dim(self.sizes[a.dims[k]] * len(parts), base=f"{a.dims[k]}_cat")  # type: ignore[index]
        out = (*a.dims[:k], joined, *a.dims[k + 1:])
        if not self.disjoint(out) or not self.fits(out):
            return False
        self.fixed |= {a.dims[k], joined}  # type: ignore[arg-type]
        items = ", ".join(p.name for p in parts)
        seq = self.pick([f"[{items}]", f"({items})"])
        axis = str(self.pick([k, k - len(a.dims)]))
        if k == 0 and self.flag(20):
            expr = f"jnp.concatenate({seq})"
        else:
            expr = self.call("jnp.concatenate", "jax.numpy.concatenate", [seq], {"axis": axis})
        self.emit(expr, out, max(p.scale for p in parts), pin=True)
        return True

    def shape_stack(self, a: _Value) -> bool:
        """``s: Tensor[..., new, ...] = jnp.stack([a, b], axis=k)``: the new dim is named by the hint."""
        if not self.disjoint(a.dims) or len(a.dims) >= MAX_RANK:
            return False
        k = self.ch.integer(0, len(a.dims))
        parts = [a, *(self.operand(a.dims) for _ in range(self.ch.integer(1, 2)))]  # type: ignore[arg-type]
        new = self.new_dim(len(parts), base="stacked")
        out = (*a.dims[:k], new, *a.dims[k:])
        if not self.disjoint(out) or not self.fits(out):
            return False
        self.fixed.add(new)
        items = ", ".join(p.name for p in parts)
        seq = self.pick([f"({items})", f"[{items}]"])
        expr = self.call("jnp.stack", "jax.numpy.stack", [seq], {"axis": str(k)})
        self.emit(expr, out, max(p.scale for p in parts), pin=True)
        return True

    def op_loop(self, a: _Value) -> bool:
        """A loop carrying ``a`` with its dims: ``jax.lax.scan`` over a stacked parameter (body a lambda),
        ``jax.lax.fori_loop``, or a Python ``for`` over a range; the body may read an array of the
        caller whose dims are a suffix of ``a``'s (so that it broadcasts)."""
        k = self.ch.integer(0, len(a.dims))
        w_dims = tuple(a.dims[len(a.dims) - k:])
        if None in w_dims or not self.disjoint(w_dims):
            w_dims = ()
        kind = self.pick(("scan", "fori", "for"))
        scale = max(a.scale, 1.0) + 1.5
        if kind == "scan":
            layer = self.new_dim(size=self.pick((2, 3)), base="layer", split=False)
            self.fixed.add(layer)
            used = {x for d in (*a.dims, *w_dims) for x in self.axes_of(d)}
            ones = [x for x, n in self.axes.items() if n == 1 and x not in used]
            if ones and self.flag(50):  # 'layer' on a mesh axis of size 1 (8x1: model=1): it splits nothing
                self.rules[layer] = (self.pick(ones),)
            w = self.param((layer, *w_dims), std=0.5)
            carry = self.fresh()
            self.values.append(_Value(carry, a.dims, scale))
            ys = self.fresh()
            step = self.pick(["jnp.tanh(h * w)", "h + 0.5 * jnp.sin(w)", "h * 0.5 + jnp.cos(h * w)"])
            out = self.pick(["None", "h", "jnp.tanh(h)"])
            body = f"lambda h, w: ({step}, {out})"
            if self.flag(25):  # a module def bound by functools.partial, as model code passes its layer function
                self.module.imports.add("functools")
                n = len([d for d in self.module.defs if d.startswith("scan_step")])
                self.module.defs[f"scan_step{n}"] = f"def scan_step{n}(h, w, c):\n    return ({step}) * c, {out}\n"
                body = f"functools.partial(scan_step{n}, c=1.0)"
            if self.flag(25):  # the body held in a name first (step = lambda h, w: ...)
                held = f"step{len(self.lines)}"
                self.lines.append(f"{held} = {body}")
                body = held
            xs = w.name
            if self.flag(20):  # xs computed here, a partial sum where it contracts a split dim (an embedding over a
                # split vocabulary scanned over time; in float16/bfloat16 formed in float32: completed before the loop)
                k = self.some_dim(exclude=(layer, *w_dims), compatible=(layer, *w_dims))
                v = self.param((k,), std=self.sizes[k] ** -0.5)
                letters = self.letters([layer, *w_dims, k])
                spec = "".join(letters[d] for d in (layer, *w_dims))
                xs = f"{self.fresh()}x"
                self.lines.append(f'{xs} = jnp.einsum("{spec},{letters[k]}->{spec}", {w.name}, {v.name})')
            init = a.name
            if self.flag(20):  # a carry that starts whole (zeros of the global shape) and may come back split
                init = f"jnp.zeros({a.name}.shape, {a.name}.dtype) + 0.5"
            if out == "None":
                self.lines.append(f"{carry}, _ = jax.lax.scan({body}, {init}, {xs})")
            else:
                self.lines.append(f"{carry}, {ys} = jax.lax.scan({body}, {init}, {xs})")
                self.values.append(_Value(ys, (layer, *a.dims), scale))
            return True
        w = self.operand(w_dims, std=0.5) if w_dims or self.flag(50) else None
        step = self.pick(["jnp.tanh({h} * {w})", "{h} * 0.5 + jnp.sin({w})"]) if w else "jnp.tanh({h}) * 0.9"
        n = self.pick((1, 2, 3))
        if kind == "fori":
            body = step.format(h="h", w=w.name if w else "")
            self.emit(f"jax.lax.fori_loop(0, {n}, lambda i, h: {body}, {a.name})", a.dims, scale)
        elif self.flag(35):  # each iteration's value appended to a list (hidden states), read after the loop
            held = f"{a.name}_all{len(self.lines)}"
            first = self.flag(30)
            joined = self.weighted([("append", 6), ("extend", 2), ("tuple", 2), ("dict", 4)])
            if joined == "dict":
                return self.loop_filled_dict(a, held, first, n, step.format(h=a.name, w=w.name if w else ""), scale)
            if joined == "tuple":  # HF-Flax's all_hidden_states = all_hidden_states + (x,)
                self.lines.append(f"{held} = ({a.name},)" if first else f"{held} = ()")
                grow = f"{held} = {held} + ({a.name},)"
            else:
                self.lines.append(f"{held} = [{a.name}]" if first else f"{held} = []")
                grow = f"{held}.append({a.name})" if joined == "append" else f"{held} += [{a.name}]"
            view = held
            if joined == "append" and self.flag(15):  # handed on before the appends: refused (meshify would
                # read the other name as it was when bound)
                view = f"{held}_view"
                self.lines.append(f"{view} = {held}")
                self.trigger("a list appended to after it was handed on", f"{held}.append(")
            self.lines.append(f"for _ in range({n}):\n    {a.name} = {step.format(h=a.name, w=w.name if w else '')}"
                              f"\n    {grow}")
            count = n + first
            own = view == held
            held = view
            if joined != "tuple" and own and self.flag(40):
                # changed in place after the loop (a U-Net's skips reordered): extend, insert, del, a store
                change = self.pick(["extend", "insert", "del", "store"] if count >= 2 else ["extend", "insert"])
                self.lines.append({"extend": f"{held}.extend([{a.name} * 0.5])",
                                   "insert": f"{held}.insert({self.pick([0, 1, -1])}, {a.name} * 0.5)",
                                   "del": f"del {held}[{self.pick([0, -1])}]",
                                   "store": f"{held}[{self.pick([0, -1])}] = {held}[0] * 0.5"}[change])
                count += {"extend": 1, "insert": 1, "del": -1, "store": 0}[change]
            read = self.pick([f"jnp.stack({held}).sum(0)", f"sum({held})", f"{held}[-1] * {count}",
                              f"sum(h * 0.5 + g * 0.5 for h in {held} for g in {held}[-1:])",
                              f"jnp.stack({held}, axis=-1).mean(-1) * {count}",
                              f"jnp.stack({held}[1:] + {held}[:1]).max(0) * {count}",
                              f"jnp.stack([jnp.tanh(h) for h in {held}]).sum(0)", f"sum(h * 0.5 for h in {held})",
                              f"jnp.stack([h for i, h in enumerate({held}) if i % 2 == 0]).sum(0) * 2",
                              f"sum(h for h in {held} if h is not None)",
                              *([f"{held}.pop() * {count}", f"{held}.pop(0) * {count}"] if joined != "tuple"
                                else [])])  # (a tuple has no pop: seed 137 program 298)
            if "[1:]" in read:  # list slicing and + of lists: not modelled
                self.trigger("a list appended to in a loop, sliced and joined", f"{held}[1:] + {held}[:1]")
            self.emit(read, a.dims, scale * count)
        elif a.dims and self.flag(20):  # a counter the loop changes, then an if on it whose branches leave other
            # dims (Python takes the first): meshify must not read the counter as its first iteration left it
            count = f"n{len(self.lines)}"
            self.lines.append(f"{count} = 0")
            self.lines.append(f"for _ in range({n}):\n    {a.name} = {step.format(h=a.name, w=w.name if w else '')}"
                              f"\n    {count} = {count} + 1")
            a.scale = scale
            out = self.fresh()
            self.lines.append(f"if {count} == {n}:\n    {out} = {a.name}.sum(-1)\nelse:\n    {out} = {a.name} * 2.0")
            self.trigger("an if on a loop's counter whose branches leave other dims", f"if {count} == {n}:")
            self.values.append(_Value(out, a.dims[:-1], scale * self.sizes.get(a.dims[-1], 8)))  # type: ignore[arg-type]
        elif self.flag(25):  # a break or continue on the loop's index, before or after the update (or a temporary
            # of the body, read only inside it, left in another layout at a break)
            index, jump = f"i{len(self.lines)}", self.pick(["break", "continue"])
            cond = f"{index} {self.pick(['==', '>=', '<'])} {self.pick(range(n + 1))}"
            update = f"{a.name} = {step.format(h=a.name, w=w.name if w else '')}"
            if self.flag(30) and len(a.dims) >= 2:
                temp = f"t{len(self.lines)}"
                body = [f"{temp} = {a.name}.sum(-1)", f"if {cond}:\n        {jump}", f"{a.name} = {a.name} * 0.9 + "
                        f"{temp}[..., None] * 0.01", update]
            elif self.flag(50):
                body = [f"if {cond}:\n        {jump}", update]
            else:
                body = [update, f"if {cond}: {jump}"]
            self.lines.append(f"for {index} in range({n}):\n" + "\n".join("    " + line for line in body))
            a.scale = scale
        else:  # the carried name is rebound in the loop body (indented relative to the for)
            self.lines.append(f"for _ in range({n}):\n    {a.name} = {step.format(h=a.name, w=w.name if w else '')}")
            a.scale = scale
        return True

    def loop_filled_dict(self, a: _Value, held: str, first: bool, n: int, step: str, scale: float) -> bool:
        """Each iteration's value stored in a dict at a key of the loop's counter (``held[f"k{i}"] = a``: keys
        meshify does not know while rewriting, the loop kept), as code collects per-layer intermediates; a key
        spelled out before it (the embedding) first, sometimes; read back after the loop by key, over its
        ``.values()``/``.items()``/sorted keys, or counted."""
        self.lines.append(f'{held} = {{"first": {a.name}}}' if first else f"{held} = {{}}")
        index = f"i{len(self.lines)}"
        # a skip connection from the previous iteration's stored value (read in the loop that fills the dict)
        skip = f"\n    if {index} > 0:\n        {a.name} = {a.name} + 0.5 * {held}[f\"k{{{index} - 1}}\"]" \
            if self.flag(30) else ""
        self.lines.append(f"for {index} in range({n}):\n    {a.name} = {step}{skip}\n"
                          f"    {held}[f\"k{{{index}}}\"] = {a.name}")
        count = n + first
        scale = scale * (2 if skip else 1)
        if self.flag(40):  # what real code does to such a dict: .get, .pop, .update, .setdefault (statements)
            got = f"{held}_got{len(self.lines)}"
            self.lines += self.pick([
                [f'{got} = {held}.get(f"k{{{n} - 1}}")', f"if {got} is None:\n    {got} = {held}[\"k0\"]"],
                [f'{got} = {held}.get("zz", None)', f"if {got} is not None:\n    {got} = {got} * 100",
                 f'if {got} is None:\n    {got} = {held}["k0"]'],
                [f'{got} = {held}.pop("k0")', f'{held}.update({{"k0": {got} * 0.5}})'],
                [f'{got} = {held}.setdefault("k0", {a.name})', f"{held}.update(extra={got})"],
                [f'{got} = {held}.pop("zz", {a.name})', f'{held} = {{**{held}, "extra": {got}}}'],
                [f'{got} = {held}.get("zz", {held}["k0"])', f"{held} = dict({held}, extra={got} * 2)"],
            ])
            self.emit(f"{got} * len({held}) + sum({held}.values())", a.dims, scale * (count + 2) * 2)
            return True
        read = self.pick([f"jnp.stack(list({held}.values())).sum(0)", f"sum({held}.values())",
                          f'{held}["k{n - 1}"] * {count}', f"sum(h * 0.5 for h in {held}.values())",
                          f"sum(v for _, v in sorted({held}.items()))",
                          f"jnp.stack([{held}[k] for k in sorted({held})]).max(0) * {count}",
                          f'{held}["k0"] * len({held})',
                          f"sum(jnp.tanh(v) for v in {{k: v * 2 for k, v in {held}.items()}}.values())",
                          f"jnp.stack(jax.tree.leaves({held})).sum(0)",
                          f"jax.tree_util.tree_leaves({held})[-1] * {count}",
                          f"sum(jax.tree.leaves(jax.tree.map(lambda v: v * 0.5, {held})))",
                          f'{held}.get("k0", {a.name}) * len({held})',
                          f'sum({{**{held}, "extra": {a.name}}}.values())',
                          f"sum(dict({held}, extra={a.name}).values())"])
        self.emit(read, a.dims, scale * count)
        return True

    def op_lookup(self, a: _Value) -> bool:
        if not a.dims or None in a.dims or not self.disjoint(a.dims):
            return False
        kind = self.weighted([("index", 4), ("take", 3), ("along", 4), ("one_hot", 2), ("optax", 2), ("pick", 2),
                              ("rows", 2)])
        if kind == "one_hot":
            return self.lookup_one_hot(a)
        rank = len(a.dims)
        if kind == "rows":  # several positions per row, read or written back (a repetition penalty, a multi-hot)
            if rank != 2:
                return False
            sel = self.some_dim(exclude=a.dims, compatible=a.dims)
            idx_dims = (a.dims[0], sel)
            union = tuple(dict.fromkeys([*a.dims, sel]))
            if not self.disjoint(idx_dims) or not self.fits(idx_dims) or not self.disjoint(union):
                return False
            self.constraints.append(union)  # type: ignore[arg-type]
            low, high = self.id_range(self.sizes[a.dims[1]])  # type: ignore[index]
            ids = self.ids(idx_dims, high, low)  # type: ignore[arg-type]
            rows = f"jnp.arange({a.name}.shape[0])[:, None]"
            form = self.pick(["read", "set", "add", "multiply"])
            if form == "read":
                self.emit(f"{a.name}[{rows}, {ids}]", idx_dims, a.scale)
            elif form == "set":
                self.emit(f"{a.name}.at[{rows}, {ids}].set({self.pick(['0.5', '-1.0'])})", a.dims, a.scale + 1)
            else:
                seen = f"{a.name}[{rows}, {ids}]"
                value = f"jnp.tanh({seen})" if form == "add" else "0.5"
                self.emit(f"{a.name}.at[{rows}, {ids}].{form}({value})", a.dims, a.scale * 2 + 1)
            return True
        if kind == "pick":  # each row's entry at its label, as tutorials index: logp[jnp.arange(B), labels]
            if rank not in (2, 3) or not self.disjoint(a.dims[:-1]):
                return False
            low, high = self.id_range(self.sizes[a.dims[-1]])  # type: ignore[index]
            ids = self.ids(a.dims[:-1], high, low)  # type: ignore[arg-type]
            rows = f"jnp.arange({a.name}.shape[0])" if rank == 2 else \
                f"jnp.arange({a.name}.shape[0])[:, None], jnp.arange({a.name}.shape[1])[None, :]"
            self.emit(f"{a.name}[{rows}, {ids}]", a.dims[:-1], a.scale)
            return True
        if kind == "optax" and self.flag(35):  # a binary loss of float32 labels beside the program's logits
            self.module.imports.add("optax")
            labels = self.fresh()  # (optax casts them to the logits' dtype: float16 logits give a float16 loss)
            self.lines.append(f"{labels} = ({a.name} > 0.1).astype(jnp.float32)")
            self.emit(f"optax.sigmoid_binary_cross_entropy({a.name}, {labels})", a.dims, a.scale + 1)
            return True
        if kind == "optax":  # a loss over the last dim, as training code calls optax inside the loss
            if rank < 2 or not self.disjoint(a.dims[:-1]):
                return False
            low, high = self.id_range(self.sizes[a.dims[-1]])  # type: ignore[index]
            ids = self.ids(a.dims[:-1], high, low)  # type: ignore[arg-type]
            self.module.imports.add("optax")
            expr = f"optax.softmax_cross_entropy_with_integer_labels({a.name}, {ids})"
            self.emit(expr, a.dims[:-1], a.scale + math.log(self.sizes[a.dims[-1]]) + 1)  # type: ignore[index]
            return True
        k = 0 if kind == "index" else self.ch.integer(0, rank - 1)
        high = self.sizes[a.dims[k]]  # type: ignore[index]
        low, high = self.id_range(high)
        if kind == "along":
            sel = a.dims[k] if self.flag(40) else self.some_dim(exclude=a.dims, compatible=a.dims)
            idx_dims = (*a.dims[:k], sel, *a.dims[k + 1:])
            union = tuple(dict.fromkeys([*a.dims, sel]))
            if not self.disjoint(idx_dims) or not self.fits(idx_dims) or not self.disjoint(union):
                return False
            self.constraints.append(union)  # type: ignore[arg-type]
            ids = self.ids(idx_dims, high, low)  # type: ignore[arg-type]
            options = {"axis": str(self.pick([k, k - rank]))}
            if k == rank - 1 and self.flag(15):
                del options["axis"]
            extra = self.lookup_options(along=True)
            options |= extra
            expr = self.call("jnp.take_along_axis", "jax.numpy.take_along_axis", [a.name, ids], options)
            if extra:
                self.trigger(f"take_along_axis with {', '.join(extra)}", expr)
            self.emit(expr, idx_dims, a.scale)
            return True
        rest = [d for j, d in enumerate(a.dims) if j != k]
        if kind == "index" and high >= 2 and self.flag(10):
            # a list of indices (x[:, [0, 1]]): an array index in JAX, with a dim of its own (meshify took it
            # for an int once, dropping the dim); refused, its fix an array with a named dim
            picked = self.new_dim(size=2, split=False)
            index = ", ".join([":"] * k + ["[0, 1]"] + ([] if k else ["..."]))
            expr = f"{a.name}[{index}]"
            self.trigger("a list of indices", expr)
            self.emit(expr, (*rest[:k], picked, *rest[k:]), a.scale)
            return True
        id_dims: list[str] = []
        # now and then ids split over the axis that splits the looked-up dim (tokens and vocab both over
        # 'model'): meshify gathers the ids (or the table) over it
        share = self.flag(25)
        for _ in range(self.ch.integer(1, 2)):
            beside = rest if share else list(a.dims)
            d = self.some_dim(exclude=list(a.dims) + id_dims, compatible=beside + id_dims)
            if d not in a.dims and d not in id_dims and not set(self.axes_of(d)) & {
                    x for e in beside + id_dims for x in self.axes_of(e)}:
                id_dims.append(d)
        out = (*rest[:k], *id_dims, *rest[k:])
        if not id_dims or not self.fits(out) or not self.disjoint(out):
            return False
        if share:
            self.constraints += [tuple(a.dims), out]  # type: ignore[list-item]
        else:
            self.constraints.append((*a.dims, *id_dims))  # type: ignore[arg-type]
        ids = self.ids(id_dims, high, low)
        if kind == "take" and self.flag(20):
            # a literal 1-D table (no hint: whole on every device) taken by these ids: a local take
            n = self.sizes[a.dims[k]]  # type: ignore[index]
            table = self.pick(["jnp.linspace(-1.0, 1.0, {n})", "jnp.arange({n}) * 0.25"]).format(n=n)
            expr = self.call("jnp.take", "jax.numpy.take", [table, ids], self.lookup_options(along=False))
            if "arange" in table:
                self.trigger("jnp.take of a table whose shape meshify cannot read (arange(n) * 0.25)", expr,
                             unnamed=True)
            self.emit(expr, tuple(id_dims), 1.0)
            return True
        if kind == "index":
            self.emit(f"{a.name}[{ids}]", out, a.scale)
        else:
            extra = self.lookup_options(along=False)
            # a 1-D table now and then without axis= (JAX flattens the table: its own dim; session 31)
            axis = self.pick(["", "None"]) if rank == 1 and self.flag(40) else str(self.pick([k, k - rank]))
            expr = self.call("jnp.take", "jax.numpy.take", [a.name, ids], ({"axis": axis} if axis else {}) | extra)
            if extra:
                self.trigger(f"jnp.take with {', '.join(extra)}", expr)
            self.emit(expr, out, a.scale)
        return True

    def op_narrow_ids(self, a: _Value) -> bool:
        """Ids of a narrow integer dtype (int8, uint8, int16) into a 256-row table, split or not: each JAX function
        reads such ids its own way (``jnp.take`` adds the size in the ids' dtype, where 256 is 0 in int8;
        ``take_along_axis`` and ``x[ids]`` widen them first; ``one_hot`` compares in their dtype), and meshify's
        offsets and clamps must not wrap where JAX's do not (session 30: every int8 lookup along a split vocab of
        256 was wrong)."""
        if not a.dims or a.dims[0] is None or not self.disjoint(a.dims[:1]):
            return False
        rows = a.dims[0]
        dtype = self.pick(["int8", "uint8", "int16"])
        low, high = (0, 256) if dtype == "uint8" else self.pick([(-128, 128), (-300, 300)] if dtype == "int16"
                                                                else [(-128, 128), (0, 128)])
        # (int8 ids into 128 rows: 256 would meet a JAX bug, the gradient of a gather of int8 ids into more than 127
        # rows inside shard_map being zero, tests/regressions/mismatch_a851eebe.py)
        long = self.new_dim(size=128 if dtype == "int8" else 256)
        width = self.new_dim(size=2, split=False)
        if not self.disjoint((rows, long)) or not self.fits((rows, long)):
            return False
        form = self.pick(["take_fill", "take_clip", "along", "one_hot", "index", "dynamic_index", "dynamic_slice"])
        if form == "index" and dtype == "int8":
            form = "take_clip"  # (x[ids] with int8 ids into 256 rows: JAX itself refuses, OverflowError)
        if form in ("along", "dynamic_index", "dynamic_slice"):
            logits = self.param((rows, long))
            self.constraints.append((rows, long))
            if form == "along":
                ids = self.ids((rows,), high, low, dtype)
                expr = f"jnp.take_along_axis({logits.name}, {ids}[:, None], axis=1)[:, 0]"
                self.emit(expr, (rows,), 1.0)
                return True
            at = self.ids((), high, low, dtype)
            if form == "dynamic_index":
                self.emit(f"jax.lax.dynamic_index_in_dim({logits.name}, {at}, axis=1, keepdims=False)", (rows,), 1.0)
            else:  # a window of an unsplit dim (a split one is refused: a trigger)
                if self.axes_of(long):
                    return False
                self.emit(f"jnp.sum(jax.lax.dynamic_slice_in_dim({logits.name}, {at}, 4, axis=1), axis=1)",
                          (rows,), 2.0)
            return True
        table = self.param((long, width))
        ids = self.ids((rows,), high, low, dtype)
        expr = {"take_fill": f"jnp.take({table.name}, {ids}, axis=0, fill_value=0.0)",
                "take_clip": f"jnp.take({table.name}, {ids}, axis=0, mode='clip')",
                "one_hot": f"jax.nn.one_hot({ids}, {table.name}.shape[0]) @ {table.name}",
                "index": f"{table.name}[{ids}]"}[form]
        self.emit(expr, (rows, width), 1.0)
        return True

    def lookup_options(self, along: bool) -> dict[str, str]:
        """``mode=`` and ``fill_value=`` (and ``wrap_negative_indices=`` for take_along_axis), now and then."""
        options: dict[str, str] = {}
        if self.flag(35):
            options["mode"] = self.pick(['"fill"', '"clip"', '"wrap"', "None"] if not along else
                                        ['"fill"', '"clip"', "None"])
        if options.get("mode", "None") in ('"fill"', "None") and self.flag(25):
            options["fill_value"] = self.pick(["0.0", "-1.0", "1.0"])
        if along and self.flag(5):
            options["wrap_negative_indices"] = self.pick(["True", "False"])
        return options

    def lookup_one_hot(self, a: _Value) -> bool:
        """``o: Tensor[ids..., "depth"] = jax.nn.one_hot(ids, n)``, contracted with ``a`` over its first dim."""
        depth = a.dims[0]
        id_dims: list[str] = []
        for _ in range(self.ch.integer(1, 2)):
            d = self.some_dim(exclude=list(a.dims) + id_dims, compatible=list(a.dims) + id_dims)
            if d not in a.dims and d not in id_dims:
                id_dims.append(d)
        first = self.flag(20)  # axis=0: the classes come first
        o_dims = (depth, *id_dims) if first else (*id_dims, depth)
        out = (*id_dims, *a.dims[1:])
        if not id_dims or not self.fits(o_dims) or not self.fits(out) or not self.disjoint(o_dims) \
                or not self.disjoint(out):
            return False
        low, high = self.id_range(self.sizes[depth])  # type: ignore[index]
        ids = self.ids(id_dims, high, low)
        n = self.pick([str(self.sizes[depth]), f"{a.name}.shape[0]"])
        options: dict[str, str] = {}
        if first:
            options["axis"] = "0"
        if self.flag(20):
            options["dtype"] = f"jnp.{self.dtype}"
        expr = self.call("jax.nn.one_hot", "jax.nn.one_hot", [ids, n], options)
        pinned = self.flag(85)
        if n.isdigit():
            self.trigger("one_hot with a literal depth", expr, unnamed=True)
        if not pinned:
            self.trigger("one_hot without a hint", expr, unnamed=True)
        if options:
            self.trigger(f"one_hot with {', '.join(options)}", expr)
        o = self.emit(expr, o_dims, 1.0, pin=pinned)
        letters = self.letters(list(dict.fromkeys([*o_dims, *a.dims])))
        spec = f"{''.join(letters[d] for d in o_dims)},{''.join(letters[d] for d in a.dims)}->" \
               f"{''.join(letters[d] for d in out)}"  # type: ignore[index]
        if len(a.dims) == 2 and not first and self.flag(40):
            expr = f"{o.name} @ {a.name}"
        else:
            expr = f'jnp.einsum("{spec}", {o.name}, {a.name})'
        self.emit(expr, out, a.scale)
        return True

    # -- the newer families: literal shapes, lists, calls, module-level values -----------------------

    def op_literal(self, a: _Value) -> bool:
        """Arrays of literal shape (``jnp.ones((4, 8))``, ``jnp.arange(8)``, ``jax.random.normal(key, (8,))``)
        broadcasting against ``a``, and ``jnp.full``/``full_like`` with a value meshify may hold partial."""
        if not a.dims or None in a.dims:
            return False
        kind = self.weighted([("ctor", 6), ("full", 3), ("full_like", 3), ("random", 2)])
        if kind in ("full", "full_like"):
            return self.literal_full(a, kind)
        k = self.ch.integer(1, min(2, len(a.dims)))
        sub = a.dims[-k:]
        sizes = [self.sizes[d] for d in sub]  # type: ignore[index]
        shape = self.shape_text(a, sub, sizes)
        if kind == "random":
            key = self.key()
            fn = self.pick(["normal", "uniform"])
            ctor = f"jax.random.{fn}({key}, {shape})"
            if self.dtype != "float32" and self.flag(50):
                ctor = f"jax.random.{fn}({key}, {shape}, dtype=jnp.{self.dtype})"
        elif k == 1:
            n = sizes[0]
            ctor = self.pick([f"jnp.arange({n}) / {n}", f"jnp.arange({n}, dtype=jnp.float32) * {1 / n!r}",
                              f"jnp.linspace(-1.0, 1.0, {n})", f"jnp.ones({shape})", f"jnp.zeros({shape}) + 0.5",
                              f"jnp.full({shape}, 0.25)", f"jnp.ones({shape}, dtype=jnp.{self.dtype})"])
        else:
            n, m = sizes
            ctor = self.pick([f"jnp.ones({shape})", f"jnp.full({shape}, 0.5)", f"jnp.eye({n}, {m})",
                              f"jnp.tri({n}, {m})", f"jnp.arange({n * m}).reshape({n}, {m}) / {n * m}",
                              f"jnp.zeros({shape}) - 0.25"])
        self.trigger("an array of literal shape", ctor, unnamed=True)
        if self.flag(30) and self.disjoint(sub):  # named first, then used
            c = self.emit(ctor, sub, 1.0, pin=True)
            ctor = c.name
        op = self.pick(["*", "+", "-"])
        self.emit(f"{a.name} {op} {ctor}", a.dims, a.scale + 1.0)
        return True

    def shape_text(self, a: _Value, sub: Sequence[str | None], sizes: Sequence[int]) -> str:
        """A literal shape ``(4, 8)`` / ``8`` / ``(8,)``, or read off ``a.shape``."""
        rank, k = len(a.dims), len(sub)
        form = self.weighted([("literal", 7), ("shape", 2), ("slice", 1)])
        if form == "shape":
            return "(" + ", ".join(f"{a.name}.shape[{rank - k + i}]" for i in range(k)) + ("," if k == 1 else "") + ")"
        if form == "slice":
            return f"{a.name}.shape[{rank - k}:]"
        if k == 1:
            return self.pick([str(sizes[0]), f"({sizes[0]},)"])
        return f"({', '.join(map(str, sizes))})"

    def literal_full(self, a: _Value, kind: str) -> bool:
        scalars = self.full_values(())
        vectors = [v for i in range(1, len(a.dims)) for v in self.full_values(a.dims[i:])] if kind == "full_like" \
            else []
        source = self.weighted([("literal", 2), ("scalar", 3 if scalars else 0), ("vector", 2 if vectors else 0),
                                ("inline", 3)])
        if source == "literal":
            fill, scale = self.pick(["0.5", "2.0", "-1.0"]), 2.0
        elif source == "scalar":
            v = self.pick(scalars)
            fill, scale = v.name, v.scale
        elif source == "vector":
            v = self.pick(vectors)
            fill, scale = v.name, v.scale
        else:  # a reduction of a live value, often a partial sum where a split dim is summed
            b = self.pick([v for v in self.values if None not in v.dims and v.dims and v.scale <= MAX_SCALE] or [a])
            fill, scale = f"jnp.{self.pick(['sum', 'mean', 'max'])}({b.name})", b.scale * self.elements(b.dims)
            if fill.startswith("jnp.mean") or fill.startswith("jnp.max"):
                scale = b.scale
            if scale > MAX_SCALE:
                fill, scale = f"jnp.mean({b.name})", b.scale
        if kind == "full":
            sizes = [str(self.sizes[d]) for d in a.dims]  # type: ignore[index]
            shape = self.pick([f"{a.name}.shape", f"({', '.join(sizes)}{',' if len(sizes) == 1 else ''})"])
            expr = f"jnp.full({shape}, {fill})"
        else:
            expr = f"jnp.full_like({a.name}, {fill})"
        self.trigger(f"jnp.{kind}", expr, unnamed=True)
        if self.flag(50):
            self.emit(expr, a.dims, scale)
        else:
            self.emit(f"{a.name} + {expr}", a.dims, a.scale + scale)
        return True

    def op_listy(self, a: _Value) -> bool:
        """Lists and tuples of arrays passed to functions."""
        if not a.dims or None in a.dims or not self.disjoint(a.dims):
            return False
        kind = self.weighted([("sum", 4), ("tuple_helper", 3), ("hstack", 2), ("vstack", 2), ("stack_reduce", 2)])
        parts = [a, *(self.operand(a.dims) for _ in range(self.ch.integer(1, 2)))]  # type: ignore[arg-type]
        items = ", ".join(p.name for p in parts)
        seq = self.pick([f"[{items}]", f"({items})"])
        scale = sum(p.scale for p in parts)
        if kind == "sum":
            expr = f"sum({seq})"
            self.trigger("builtin sum of a list", expr, unnamed=True)
            self.emit(expr, a.dims, scale)
            return True
        if kind == "tuple_helper":
            name = self.pick(list(TUPLE_HELPERS))
            if name == "combine":
                parts, seq = parts[:2], self.pick([f"({a.name}, {parts[1].name})", f"[{a.name}, {parts[1].name}]"])
            self.module.defs.setdefault(name, TUPLE_HELPERS[name])
            expr = f"{self.wrapped(name)}({seq})"
            body = [line.strip() for line in TUPLE_HELPERS[name].splitlines()[1:]]
            self.trigger("a helper taking a tuple", expr, f"def {name}(", *body, unnamed=True)
            self.emit(expr, a.dims, scale)
            return True
        if kind == "stack_reduce":
            fn = self.pick(["sum", "mean", "max"])
            expr = self.pick([f"jnp.{fn}(jnp.stack({seq}), axis=0)", f"jnp.{fn}(jnp.stack({seq}, axis=-1), axis=-1)"])
            self.trigger("a reduction of a stack", expr, unnamed=True)
            self.emit(expr, a.dims, scale if fn == "sum" else max(p.scale for p in parts))
            return True
        if not self.disjoint(a.dims):
            return False
        rank = len(a.dims)
        if kind == "hstack" or rank >= 2:
            k = 0 if (kind == "vstack" or rank == 1) else 1
            joined = self.new_dim(self.sizes[a.dims[k]] * len(parts), base=f"{a.dims[k]}_cat")  # type: ignore[index]
            out: tuple[str | None, ...] = (*a.dims[:k], joined, *a.dims[k + 1:])
            self.fixed |= {a.dims[k], joined}  # type: ignore[arg-type]
        else:  # vstack of vectors: a new leading dim
            new = self.new_dim(len(parts), base="stacked")
            out = (new, *a.dims)
            self.fixed.add(new)
        if not self.disjoint(out) or not self.fits(out):
            return False
        expr = f"jnp.{kind}({seq})"
        self.trigger(f"jnp.{kind}", expr)
        self.emit(expr, out, max(p.scale for p in parts), pin=True)
        return True

    def op_call(self, a: _Value, sub: str = "") -> bool:
        """A call: the module's shared helper, a helper with a custom derivative, or another ``@mesh`` function."""
        kind = sub or self.weighted([("shared", 5), ("custom", 2), ("mesh", 6 if self.callee else 0)])
        return getattr(self, f"call_{kind}")(a)

    def call_shared(self, a: _Value) -> bool:
        if not a.dims or None in a.dims or not self.disjoint(a.dims):
            return False
        m = self.module
        if m.shared is None:
            template = self.pick(TEMPLATES)
            decorator, static = m.decorator(2 if template.kind in ("pair", "project") else 1)
            params = ["x0", "x1"][:2 if template.kind in ("pair", "project") else 1] + (["k"] if static else [])
            body = template.body.replace("{k}", " * k" if static else "")
            head = f"{decorator}\n" if decorator else ""
            m.defs[template.name] = f"{head}def {template.name}({', '.join(params)}):\n    {body}\n"
            m.shared = (template, decorator, static)
            if decorator:
                m.trigger(f"shared helper under {decorator}", decorator, f"def {template.name}(", unnamed=True)
        template, _, static = m.shared
        args = [a.name]
        dims: tuple[str | None, ...] = a.dims
        scale = a.scale
        if template.kind == "pair":
            args.append(self.operand(a.dims).name)  # type: ignore[arg-type]
            scale = 1.0
        elif template.kind == "project":
            n = self.some_dim(exclude=a.dims, compatible=[a.dims[-1]])
            w = self.operand([a.dims[-1], n], std=self.sizes[a.dims[-1]] ** -0.5)  # type: ignore[list-item]
            args.append(w.name)
            dims, scale = (*a.dims[:-1], n), 1.0
            if not self.fits(dims):
                return False
        elif template.kind == "droplast":
            dims = a.dims[:-1]
        elif template.kind == "stats":
            if len(a.dims) < 1:
                return False
            dims = a.dims[1:]
        elif template.name == "per_count":
            scale = 2 * a.scale
        elif template.name == "normalize":
            scale = 1.0
        if static:
            args.append(self.pick(["0.5", "1.0"]))
        call = f"{template.name if static else self.wrapped(template.name)}({', '.join(args)})"
        if template.kind != "stats":
            self.emit(call, dims, scale)
            return True
        mean, top = self.fresh(), f"v{len([v for v in self.values if v.name.startswith('v')]) + 1}"
        self.lines.append(f"{mean}, {top} = {call}")
        self.values.append(_Value(mean, dims, a.scale))
        self.values.append(_Value(top, dims, a.scale * 3))
        return True

    def call_custom(self, a: _Value) -> bool:
        name = self.pick(list(CUSTOM))
        text, scale = CUSTOM[name]
        self.module.defs.setdefault(name, text.lstrip("\n"))
        body = [line.strip() for line in text.splitlines() if line.startswith("    ")]
        self.trigger(f"{name}: a helper with a custom derivative", f"{name}(", *body, unnamed=True)
        self.emit(f"{name}({a.name})", a.dims, a.scale if scale is None else scale)
        return True

    def call_mesh(self, a: _Value) -> bool:
        """``v = g(...)``: a call of another ``@mesh`` function, its arguments live values or new parameters."""
        g = self.callee
        if g is None:
            return False
        args = []
        for arg in g.args:
            if any(d not in self.sizes for d in arg.dims) or not self.disjoint(arg.dims):
                return False
            if arg.kind == "ids":
                args.append(self.ids(arg.dims, arg.high, arg.low))
            elif arg.kind == "key":
                args.append(self.key())
            else:
                args.append(self.operand(arg.dims, std=arg.std).name)
        dims = g.final_dims
        self.emit(f"{g.name}({', '.join(args)})", dims, MAX_SCALE if dims else MAX_SCALE * 4)
        return True

    def op_spatial(self, a: _Value) -> bool:
        """An op over the spatial dims of an image (convolution, pooling, pad, ...: see images.py)."""
        from tests.fuzz import images

        return images.op_spatial(self, a)

    def op_const(self, a: _Value) -> bool:
        """Module-level values: a scalar constant, or an array of the module used named or unnamed."""
        if not a.dims or None in a.dims:
            return False
        kind = self.weighted([("scalar", 5), ("array", 3), ("matmul", 2), ("axis", 2)])
        if kind == "scalar":
            value = self.pick(["0.5", "2.0", "0.25", "3"])
            c = self.module.const(value)
            expr = self.pick([f"{a.name} * {c}", f"{a.name} / {c}", f"{a.name} + {c}", f"jnp.maximum({a.name}, {c})",
                              f"{c} * {a.name}"])
            others = [v for v in ("0.5", "2.0", "0.25", "3", "2") if v != value and ("." in v) == ("." in value)]
            if self.flag(25):  # set from outside the module between two calls (a schedule): read afresh
                self.module.rebinds[c] = self.pick(others)
                if "." not in value:  # an int constant: a converted file refuses a call once it changed
                    self.trigger("a converted file refuses a call after an int constant it read is rebound",
                                 f"module constant '{c}'")
            self.emit(expr, a.dims, a.scale * 3 + 3)
            return True
        if kind == "axis":  # a reduction's axis as a module constant, rebound from outside now and then
            if len(a.dims) < 2:
                return False
            axes = list(range(len(a.dims)))
            axis = self.pick(axes)
            c = self.module.const(str(self.pick([axis, axis - len(a.dims)])))
            if self.flag(70):
                self.module.rebinds[c] = str(self.pick([i for i in axes if i != axis]))
                self.trigger("a converted file refuses a call after an int constant it read is rebound",
                             f"module constant '{c}'")
            size = max(self.sizes[d] for d in a.dims)  # type: ignore[index]
            self.emit(f"{a.name} * jnp.sum(jnp.tanh({a.name}), axis={c}, keepdims=True)", a.dims,
                      a.scale * size + 1)
            return True
        if kind == "array":
            k = self.ch.integer(1, len(a.dims))
            dims = a.dims[-k:]
        else:
            n = self.some_dim(exclude=a.dims, compatible=[a.dims[-1]])
            dims = (a.dims[-1], n)
        if not self.disjoint(dims) or not self.fits(dims):
            return False
        std = 1.0 if kind == "array" else self.sizes[dims[0]] ** -0.5  # type: ignore[index]
        hinted = self.flag(20)  # G0: Tensor[dims] = ... where the module binds it, then used as it is
        g = self.module.array([self.sizes[d] for d in dims], std, self.dtype,  # type: ignore[index]
                              dims if hinted else None)  # type: ignore[arg-type]
        if hinted:
            ref = g
        elif self.flag(70):  # named first: the contract for arrays meshify does not receive as arguments
            ref = self.emit(g, dims, std, pin=True).name
        else:
            ref = g
            self.trigger("a module-level array used unnamed", g, unnamed=True)
        if kind == "array":
            self.emit(f"{a.name} {self.pick(['*', '+', '-'])} {ref}", a.dims, a.scale * 3 + 3)
            return True
        out = (*a.dims[:-1], dims[1])
        if not self.fits(out):
            return False
        self.emit(f"{a.name} @ {ref}", out, a.scale * math.sqrt(self.sizes[dims[0]]) * std)  # type: ignore[index]
        return True

    def loss(self, a: _Value) -> _Value:
        """A scalar loss of ``a`` (gradients are compared for these programs)."""
        options = [f"jnp.sum({a.name} * {a.name})", f"jnp.mean(jnp.square({a.name}))", f"jnp.sum({a.name})",
                   f"jax.nn.logsumexp({a.name})", f"{a.name}.mean()", f"jnp.max({a.name})",
                   f"jnp.mean(jax.nn.log_softmax({a.name}, axis=-1))"]
        if self.dtype == "float16":  # a sum of squares could overflow float16
            options = options[1:]
        return self.emit(self.pick(options), (), a.scale ** 2)


def _names(line: str) -> tuple[list[str], list[str]]:
    """The names a statement reads and the names it binds, in order (``a += b`` reads ``a`` too)."""
    stmt = ast.parse(line.removeprefix("return ")).body[0]
    # (a comprehension's or a lambda's own names are local to it: neither read nor bound by the statement)
    local = {n.id for c in ast.walk(stmt) if isinstance(c, ast.comprehension)
             for n in ast.walk(c.target) if isinstance(n, ast.Name)}
    local |= {a.arg for f in ast.walk(stmt) if isinstance(f, ast.Lambda) for a in (*f.args.args, *f.args.posonlyargs)}
    loads = [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and n.id not in local]
    stores = [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
              and n.id not in local]
    if isinstance(stmt, ast.AugAssign):
        loads.insert(0, stores[0])
    return loads, stores


def hint(dims: Sequence[str]) -> str:
    return "Tensor[()]" if not dims else "Tensor[" + ", ".join(f'"{d}"' for d in dims) + "]"


# -- several functions ------------------------------------------------------------------------------


def _twin(f: _Function, ch: Chooser, mesh: str, module: _Module) -> _Function:
    """``f2``: ``f``'s body and signature on ``mesh`` with other rules (sizes the same), so that ``f``'s
    helpers are specialised twice.  Dims a reshape, concatenation or scan involves keep ``f``'s rule on
    ``f``'s mesh and are unsplit elsewhere; every hint stays valid (no axis splits two of its dims)."""
    b = _Builder(ch, mesh, 0, module=module, name="f2")
    b.axes = dict(MESHES[mesh])
    b.sizes = dict(f.sizes)
    for d, size in f.sizes.items():
        if d in f.fixed:
            if mesh == f.mesh:
                if d in f.rules:
                    b.rules[d] = f.rules[d]
            elif d in b.axes or f.rules.get(d):
                b.rules[d] = None
        else:
            b.set_rule(d, size)
    _settle(b, f.constraints)
    return _Function("f2", mesh, b.axes, b.rules, b.rules_text(), f.sizes, f.args, f.lines, f.ret, f.grad,
                     f.final_dims, "", f.constraints, f.fixed)


def _settle(b: _Builder, constraints: Sequence[tuple[str, ...]]) -> None:
    """Unsplits dims until no axis splits two dims of any of ``constraints`` under ``b``'s rules."""
    for _ in range(8):
        bad = [dims for dims in constraints if not b.disjoint(dims)]
        if not bad:
            return
        for dims in bad:
            seen: set[str] = set()
            for d in dims:
                if set(b.axes_of(d)) & seen:
                    b.rules[d] = None
                seen |= set(b.axes_of(d))


def _struct_params(f: _Function, ch: Chooser, module: _Module, candidates: list[Arg]
                   ) -> tuple[str, Entry, str] | None:
    """``f`` taking two or more of its float parameters as the fields of one struct parameter ``p``, as model
    code passes its weights: a NamedTuple, a registered dataclass or a TypedDict whose fields carry the hints.
    The body reads each field where it read the parameter (``p.x0``, ``p["x0"]``), or, where a nested def or a
    lambda has a parameter of that name, unpacks it first (``x0 = p.x0``)."""
    if len(candidates) < 2:
        return None
    count = ch.integer(2, min(4, len(candidates)))
    fields = sorted((candidates[i] for i in _sample(ch, len(candidates), count)), key=f.args.index)
    kind = _weighted(ch, [("namedtuple", 45), ("dataclass", 25), ("typeddict", 30)])
    cls = "P0"
    module.imports.add("typing")
    body = "".join(f"    {a.name}: {hint(a.dims)}\n" for a in fields)
    if kind == "namedtuple":
        module.defs[cls] = f"class {cls}(typing.NamedTuple):\n{body}"
    elif kind == "typeddict":
        module.defs[cls] = f"class {cls}(typing.TypedDict):\n{body}"
    else:
        module.imports.add("dataclasses")
        module.defs[cls] = f"@jax.tree_util.register_dataclass\n@dataclasses.dataclass(frozen=True)\nclass {cls}:\n{body}"
    first, lines = [], list(f.lines)
    for a in fields:
        read = f'p["{a.name}"]' if kind == "typeddict" else f"p.{a.name}"
        if any(re.search(rf"(def \w+\(|lambda )[^:]*\b{a.name}\b|\bfor\b[^:]*\b{a.name}\b[^:]*\bin\b", line)
               for line in lines) or _weighted(ch, [(False, 75), (True, 25)]):
            first.append(f"{a.name} = {read}")
        else:
            pattern = re.compile(rf"(?<![.\w]){a.name}\b(?!\s*=(?!=))")  # (not a keyword: helper(x1, x2=W))
            lines = [pattern.sub(read.replace("\\", "\\\\"), line) for line in lines]
            # (the source fragments of the options meshify may refuse read the field too)
            module.triggers = [(reason, tuple(pattern.sub(read, f) for f in fragments))
                               for reason, fragments in module.triggers]
    params, placed = [], False
    for a, written in zip(f.args, f.params()):
        if a in fields:
            if not placed:
                params.append(f"p: {cls}")
                placed = True
        else:
            params.append(written)
    entry = Entry("f", f.mesh, dict(f.sizes), tuple(f.args), f.grad, struct=("p", kind, cls, tuple(a.name for a in fields)))
    return f.text(params=params, first=first, lines=lines), entry, ""


def _sample(ch: Chooser, n: int, k: int) -> list[int]:
    """``k`` distinct indices of ``range(n)``, drawn."""
    pool, out = list(range(n)), []
    for _ in range(k):
        out.append(pool.pop(ch.integer(0, len(pool) - 1)))
    return out


def _lift(f: _Function, ch: Chooser, module: _Module, mode: str) -> tuple[str, Entry, str] | None:
    """``f`` reading one of its array parameters another way: a module-level array, an array default
    argument, a closure over an array (``f`` made by a factory), or ``self.w`` in a method.

    Returns ``f``'s text, its entry and text to place after it; None when no parameter fits."""
    stored = {n for line in f.lines for n in _names(line)[1]}
    floats = [a for a in f.args if a.differentiable]
    candidates = [a for a in floats if a.name not in stored]
    if mode == "struct":
        return _struct_params(f, ch, module, candidates)
    if len(floats) < 2 or not candidates:
        return None
    lifted = _pick(ch, candidates)
    rest = [a for a in f.args if a is not lifted]
    named = mode in ("method", "default") or _weighted(ch, [(True, 80), (False, 20)])
    source = {"global": "", "closure": "W", "method": "self.w", "default": ""}[mode]
    if mode in ("global", "default"):
        source = module.array([f.sizes[d] for d in lifted.dims], lifted.std, lifted.dtype)
    if mode == "method" and _weighted(ch, [(False, 90), (True, 10)]):
        named = False  # self.w used without a hint
    if any(re.search(rf"(def \w+\(|lambda )[^:]*\b{lifted.name}\b", line) for line in f.lines):
        named = True  # a nested def's or lambda's parameter of that name: replaced it would be no name
    if mode != "default":
        if named:
            first, lines = [f"{lifted.name}: {hint(lifted.dims)} = {source}"], f.lines
        else:
            pattern = re.compile(rf"\b{lifted.name}\b(?!\s*=(?!=))")  # (not a keyword: helper(x1, x2=W))
            first, lines = [], [pattern.sub(source, line) for line in f.lines]
            module.trigger(f"an array read unnamed ({mode})", source, unnamed=True)
    entry = Entry("f", f.mesh, dict(f.sizes), tuple(rest), f.grad)
    if mode == "global":
        return f.text(params=f.params(rest), first=first, lines=lines), entry, ""
    if mode == "default":
        params = f.params(rest) + [f"{lifted.name}: {hint(lifted.dims)} = {source}"]
        module.trigger("an array default argument", f"= {source}")
        return f.text(params=params), entry, ""
    if mode == "method":
        scaled = [a for a in rest if a.differentiable]
        if scaled and _weighted(ch, [(False, 60), (True, 40)]):  # a float attribute, changed with self.w
            first = [*first, f"{scaled[0].name} = {scaled[0].name} * self.scale"]
            lines = [*lines]
        text = (f"class Model:\n    def __init__(self, w):\n        self.w = w\n        self.scale = 1.0\n\n"
                + f.text(params=["self", *f.params(rest)], first=first, lines=lines, indent="    "))
        attr = Arg("w", lifted.dims, lifted.kind, std=lifted.std, dtype=lifted.dtype)
        return text, Entry("Model", f.mesh, dict(f.sizes), tuple(rest), f.grad, method="f", attr=attr), ""
    # closure: scalar constants f reads may be the factory's parameters too, shadowing the module's
    used = [c for c in module.consts if any(re.search(rf"\b{c}\b", line) for line in lines)]
    in_helper = {c for c in used if re.search(rf"\b{c}\b", f.helper)}
    params, values = ["W"], [module.array([f.sizes[d] for d in lifted.dims], lifted.std, lifted.dtype)]
    for c in used:
        if "." not in module.consts[c] or not _weighted(ch, [(False, 50), (True, 50)]):
            continue  # (an int may be an axis: the factory's float values would not do)
        params.append(c)
        values.append(_pick(ch, ["0.75", "-1.5", "4.0"]))
        if c not in in_helper and not _weighted(ch, [(False, 50), (True, 50)]):
            del module.consts[c]  # only the factory's parameter is left
        module.trigger(f"closure parameter {c} shadows a module constant", c)
    text = (f"def make_f({', '.join(params)}):\n" + f.text(params=f.params(rest), first=first, lines=lines,
                                                         indent="    ") + "\n    return f\n")
    return text, entry, f"\n\nf = make_f({', '.join(values)})\n"


def generate(ch: Chooser, seed: int = 0, mesh: str | None = None) -> Program:
    """One random program; ``mesh`` fixes the main function's mesh (else it is drawn too)."""
    names = list(MESHES)
    chosen = mesh if mesh is not None else names[ch.integer(0, len(names) - 1)]
    module = _Module(ch, seed)
    module.dtype = _weighted(ch, [("float32", 90), ("bfloat16", 5), ("float16", 5)])
    # Hints whose rules put one mesh axis on two dims of a value: the rules resolve per value in dim
    # order (the later dim stays whole), so a weight and an activation split the same axis on
    # different dims (FSDP layouts: gathers as varying, their gradients reduce-scattered).
    module.overlap = _weighted(ch, [(False, 80), (True, 20)])
    # Images split over height and width (spatial parallelism: images.py), in float32.
    module.image = _weighted(ch, [(False, 85), (True, 15)])
    if module.image:
        module.dtype, module.overlap = "float32", False
    if module.dtype != "float32":
        module.precision = module.dtype
    extra = _weighted(ch, [("none", 80), ("callee", 10), ("independent", 10)])
    lift = _weighted(ch, [("none", 72), ("method", 6), ("closure", 5), ("global", 5), ("default", 4), ("struct", 8)])
    other: _Function | None = None
    if extra != "none":
        other_mesh = names[ch.integer(0, len(names) - 1)]
        force = "call:shared" if extra == "independent" or _weighted(ch, [(False, 70), (True, 30)]) else ""
        other = _Builder(ch, other_mesh, seed, module=module, name="g", single=True).build((1, 4), force=force)
    force = ""
    if extra == "callee":
        force = "call:mesh"
    elif module.shared is not None and _weighted(ch, [(False, 30), (True, 70)]):
        force = "call:shared"
    main = _Builder(ch, chosen, seed, module=module, callee=other if extra == "callee" else None,
                    preset=dict(other.sizes) if extra == "callee" and other else None).build(force=force)
    twin = None
    if lift in ("none", "global", "default") and _weighted(ch, [(False, 92), (True, 8)]):
        twin_mesh = chosen if _weighted(ch, [(True, 50), (False, 50)]) else names[ch.integer(0, len(names) - 1)]
        twin = _twin(main, ch, twin_mesh, module)
    lifted = _lift(main, ch, module, lift) if lift != "none" else None
    if lifted is None:
        main_text, main_entry, after = main.text(), main.entry(), ""
    else:
        main_text, main_entry, after = lifted
    twin_text = ""
    if twin is not None:  # f's text (its parameters, defaults and body) under another decorator
        twin_text = main_text.replace(main.decorator(), twin.decorator(), 1).replace("def f(", "def f2(", 1)
    entries = [main_entry]
    if other is not None:
        entries.append(other.entry())
    if twin is not None:
        entries.append(Entry("f2", twin.mesh, dict(twin.sizes), main_entry.args, twin.grad))
    parts = [_imports(module)]
    if module.consts or module.arrays:
        parts.append("\n" + "".join(f"{k}{module.array_hints.get(k, '')} = {v}\n"
                                     for k, v in {**module.consts, **module.arrays}.items()))
    for text in module.defs.values():
        parts.append("\n\n" + text)
    for fn in (other, main):
        if fn is not None and fn.helper:
            parts.append(fn.helper)
    if other is not None:
        parts.append("\n\n" + other.text())
    parts.append("\n\n" + main_text)
    if twin is not None:
        parts.append("\n\n" + twin_text)
    parts.append(after)
    text = "".join(parts)
    # Spellings, drawn last (so that a seed's program is otherwise the same): module aliases of the jax functions
    # it calls, and f made by mesh(...)(f) (a top-level def only)
    triggers = list(module.triggers)
    if _weighted(ch, [(False, 75), (True, 25)]):
        text, triggers = _aliased(text, ch, triggers)
    called: tuple[str, ...] = ()
    if lift in ("none", "global", "default", "struct") and f"{main.decorator()}\ndef f(" in text \
            and _weighted(ch, [(False, 88), (True, 12)]):
        text, called = _called(text, main.decorator(), ch), ("f",)
    simple = len(entries) == 1 and main_entry == main.entry() and main_entry.name == "f"
    return Program(text, chosen, dict(main.sizes), main_entry.args, main_entry.grad, seed, module.provoked,
                   entries=() if simple else tuple(entries), precision=module.precision,
                   triggers=tuple(triggers), called=called,
                   # (not where a jitted function may read them: jax.jit caches its trace, stale after a global
                   # changes, in the reference too: JAX asks jitted functions not to read mutable globals)
                   # (jax.checkpoint with static_argnums caches its trace as jax.jit does: found by seed 79)
                   # Module arrays are rebound too (to -1.5 times their values, an expression: "=..."): a trace bakes
                   # in the arrays it read, so a program cached on its arguments alone kept reading the old ones
                   rebinds=() if "jax.jit" in text or "static_argnums" in text else
                   tuple((c, module.consts[c], v) for c, v in module.rebinds.items() if c in module.consts) +
                   tuple((g, "=" + e, f"=({e}) * -1.5") for g, e in module.arrays.items()))


def _imports(module: _Module) -> str:
    text = HEADER
    standard = {"dataclasses", "functools", "operator", "types", "typing"}
    if standard & module.imports:
        text = "".join(f"import {m}\n" for m in sorted(standard & module.imports)) + "\n" + text
    if "optax" in module.imports:
        text = text.replace("import jax.numpy as jnp\n", "import jax.numpy as jnp\nimport optax\n")
    if "einops" in module.imports:
        text = text.replace("import jax.numpy as jnp\n", "import einops\nimport jax.numpy as jnp\n")
    if "numpy" in module.imports:
        text = text.replace("import jax.numpy as jnp\n", "import jax.numpy as jnp\nimport numpy as np\n")
    return text


# -- spellings: module-level aliases of jax functions, mesh(...)(f) ----------------------------------------------

#: ``jnp.tanh``, ``jax.nn.gelu``, ``jax.lax.scan``, ``jax.tree.map`` as written in a program (not ``jax.lax.Precision.X``).
_QUALIFIED = re.compile(r"(?<![\w.])(jnp|jax\.numpy|jax\.nn|jax\.lax|jax\.tree)\.([A-Za-z_]\w*)\b(?!\s*\.)")
_MODULES = {"jnp": "jax.numpy", "jax.numpy": "jax.numpy", "jax.nn": "jax.nn", "jax.lax": "jax.lax", "jax.tree": "jax.tree"}


def _function(qualname: str) -> bool:
    """Whether ``qualname`` (``jnp.tanh``) is a function of the installed JAX (not a dtype, a class or a constant)."""
    import importlib

    module, _, attr = qualname.rpartition(".")
    fn = getattr(importlib.import_module(_MODULES[module]), attr, None)
    return callable(fn) and not isinstance(fn, type)


def _body_lines(tree: ast.Module) -> set[int]:
    """The lines of every top-level function's (and method's) body: where a module name is read when called, not
    when the module runs (a def's header, defaults and decorators run at import)."""
    lines: set[int] = set()
    for node in tree.body:
        defs = [node] if isinstance(node, ast.FunctionDef) else \
            [n for n in node.body if isinstance(n, ast.FunctionDef)] if isinstance(node, ast.ClassDef) else []
        for fn in defs:
            lines.update(range(fn.body[0].lineno, fn.end_lineno + 1))
    return lines


def _harmless_keyword(qualname: str, text: str, ch: Chooser) -> str:
    """A keyword a ``functools.partial`` of ``qualname`` may fix without changing any call of it in ``text``
    (``precision="highest"``, ``approximate=``), or ""."""
    module, _, attr = qualname.rpartition(".")
    full = f"{_MODULES[module]}.{attr}"
    try:
        params = _signature(full)
    except (TypeError, ValueError):
        return ""
    names = [p[0] for p in params]
    keyword = "precision" if "precision" in names else "approximate" if full == "jax.nn.gelu" else ""
    # else a keyword at its default value (keepdims=False, where=None, axis=-1): harmless by construction
    defaults = [(n, d) for n, kind, d in params[1:] if kind in ("KEYWORD_ONLY", "POSITIONAL_OR_KEYWORD")
                and d is not _NO_DEFAULT and _literal(d) and n not in ("out",)
                and (kind == "KEYWORD_ONLY" or not re.search(rf"(?<![\w.]){re.escape(qualname)}\b(?!\s*\()", text))]
    # (a function passed as a value may be called with more positional arguments than any call shows)
    if not keyword and defaults:
        keyword, default = _pick(ch, defaults)
    if not keyword:
        return ""
    index, kind = names.index(keyword), params[names.index(keyword)][1]
    if kind != "KEYWORD_ONLY":  # no call may pass it positionally
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == qualname and (
                    len(node.args) > index or any(isinstance(a, ast.Starred) for a in node.args)):
                return ""
    value = '"highest"' if keyword == "precision" else _pick(ch, ["True", "False"]) if keyword == "approximate" \
        else repr(default)
    return f"{keyword}={value}"


def _aliased(text: str, ch: Chooser, triggers: list[tuple[str, tuple[str, ...]]]
             ) -> tuple[str, list[tuple[str, tuple[str, ...]]]]:
    """``text`` calling some of its jax functions through module-level aliases (``tanh = jnp.tanh``; an alias of an
    alias; ``functools.partial(jnp.einsum, precision="highest")``; a ``def gelu`` rebound by ``gelu =
    jax.nn.gelu``), placed above the defs or at the end of the module; in every function body (helpers, nested
    defs, lambdas, values passed to ``jax.tree.map``).  Now and then a helper's parameter takes an alias's name
    (the name is the parameter's value there, and no alias anywhere: a call of it elsewhere may be refused)."""
    tree = ast.parse(text)
    body = _body_lines(tree)
    lines = text.split("\n")
    found: list[str] = []
    for i, line in enumerate(lines, 1):
        if i in body:
            for m in _QUALIFIED.finditer(line):
                if m.group(0) not in found and _function(m.group(0)):
                    found.append(m.group(0))
    if not found:
        return text, triggers
    import builtins
    import keyword

    taken = set(re.findall(r"(?<![.\w])([A-Za-z_]\w*)", text)) | set(dir(builtins)) | set(keyword.kwlist)
    chosen = [q for q in found if _weighted(ch, [(True, 60), (False, 40)])] or [found[0]]
    names: dict[str, str] = {}
    top: list[str] = []
    bottom: list[str] = []
    functools_needed = False
    module_names: list[str] = []
    targets: dict[str, str] = {}  # alias -> what it holds
    for q in chosen:
        attr = q.rpartition(".")[2]
        name = ("tree_" + attr) if q.startswith("jax.tree.") else attr
        if name in taken:  # (not einsum_...: what meshify's errors say about unnamed values, see UNNAMED)
            name = "my_" + name
        while name in taken:
            name += "2"
        taken.add(name)
        names[q] = name
        module_names.append(name)
        targets[name] = q
        form = _weighted(ch, [("plain", 45), ("chain", 20), ("partial", 20), ("rebound", 15)])
        at_end = _weighted(ch, [(False, 75), (True, 25)])
        kw = _harmless_keyword(q, text, ch) if form == "partial" else ""
        if form == "partial" and not kw:
            form = "plain"
        if form == "plain":
            (bottom if at_end else top).append(f"{name} = {q}")
        elif form == "chain":
            base = name + "_impl"
            while base in taken:
                base += "_"
            taken.add(base)
            module_names.append(base)
            targets[base] = q
            top.append(f"{base} = {q}")
            (bottom if at_end else top).append(f"{name} = {base}")
        elif form == "partial":
            functools_needed = True
            (bottom if at_end else top).append(f"{name} = functools.partial({q}, {kw})")
        else:  # a def the alias rebinds: calling the def would raise
            top.append(f"def {name}(*args, **kwargs):\n    raise NotImplementedError(\"{name} is rebound below\")\n")
            (bottom if at_end else top).append(f"{name} = {q}")
    pattern = re.compile("|".join(rf"(?<![\w.]){re.escape(q)}\b(?!\s*\.)" for q in sorted(chosen, key=len,
                                                                                          reverse=True)))

    def sub(s: str) -> str:
        return pattern.sub(lambda m: names[m.group(0)], s)

    lines = [sub(line) if i in body else line for i, line in enumerate(lines, 1)]
    triggers = [(reason, tuple(sub(f) for f in fragments)) for reason, fragments in triggers]
    # a helper's parameter named as an alias
    helpers = [n for n in tree.body if isinstance(n, ast.FunctionDef)
               and not any(ast.unparse(d).startswith("mesh(") for d in n.decorator_list)
               and n.name not in ("f", "f2", "g", "make_f")]
    if helpers and _weighted(ch, [(False, 50), (True, 50)]):
        h = _pick(ch, helpers)
        start = (h.decorator_list[0].lineno if h.decorator_list else h.lineno) - 1
        segment = "\n".join(lines[start:h.end_lineno])
        params = [a.arg for a in (*h.args.posonlyargs, *h.args.args) if a.arg != "self"
                  and not re.search(rf"[(,]\s*{a.arg}\s*=(?!=)", text)]
        # (an elementwise function's: a name a function binds is no alias, and a call of it elsewhere is then
        # taken for an elementwise function of what it holds, checked when traced; another's would be refused)
        from meshify._unary import UNARY

        free = [n for n in module_names if not re.search(rf"(?<![\w.]){n}\b", segment)
                and _MODULES[targets[n].rpartition(".")[0]] + "." + targets[n].rpartition(".")[2] in UNARY]
        if params and free:
            p, a = _pick(ch, params), _pick(ch, free)
            segment = re.sub(rf"(?<![\w.]){p}\b", a, segment)
            lines[start:h.end_lineno] = segment.split("\n")
            triggers.append((f"helper {h.name}'s parameter {a} is named as a module alias: no alias anywhere",
                             (f"{a}(", f"({a},", f", {a})", f"'{a}'")))
    first = next(n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef))
    at = (first.decorator_list[0].lineno if first.decorator_list else first.lineno) - 1
    lines[at:at] = [*top, "", ""]
    out = "\n".join(lines).rstrip("\n") + "\n" + ("\n\n" + "\n".join(bottom) + "\n" if bottom else "")
    if functools_needed and "import functools\n" not in out:
        out = "import functools\n" + ("\n" if not out.startswith("import ") else "") + out
    return out, triggers


def _called(text: str, decorator: str, ch: Chooser) -> str:
    """``f``'s text made by ``mesh(...)(f)`` instead of the decorator: the def rebound (``f = mesh(...)(f)``)
    or kept plain under another name (``f = mesh(...)(f_plain)``)."""
    plain = _pick(ch, ["f", "f_plain"])
    out = text.replace(f"{decorator}\ndef f(", f"def {plain}(", 1)
    return out.rstrip("\n") + f"\n\n\nf = {decorator[1:]}({plain})\n"
