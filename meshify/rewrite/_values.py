"""What the rewriter knows about each value while it walks a function."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from meshify.annotate._types import Layout

__all__ = ["Value", "Array", "Static", "Opaque", "TupleValue", "StructValue", "Operand", "TracedLoop", "FunctionRef",
           "LambdaRef", "LocalRef"]


@dataclass(eq=False)
class LambdaRef:
    """A lambda passed to a helper (``residual(h, lambda y: mlp(y, w1, w2))``): called in the helper, it is
    walked where it was written (``owner``'s names as they are during the call) for the values the helper
    passes it; ``walked`` keeps the code each call needs, one code for all (the call site keeps one lambda).
    Compared by identity: each evaluation is its own helper version."""

    node: object
    owner: object
    walked: list = field(default_factory=list)
    #: ``functools.partial(f, *bound, **kw)`` passed in (``node`` is that call): walked as
    #: ``lambda *args: f(*bound, *args, **kw)`` with one parameter per argument the helper passes.
    partial: bool = False


@dataclass(eq=False)
class LocalRef:
    """A nested def passed to a helper (``residual(h, block)``): called in the helper, it is rewritten where
    it was defined (``owner``'s names as they are during the call), as a nested def's own calls are."""

    local: object
    owner: object


@dataclass(frozen=True, slots=True)
class FunctionRef:
    """A function passed to a helper as an argument or a default (``act=jax.nn.gelu``, ``mlp(x, swish)``):
    the literal of the helper's :class:`Static` parameter, so that ``act(h)`` in the helper is the call of
    what it names (a rule's function, or a def of the module, specialised in turn), and a version of the
    helper is written per function passed (part of its key)."""

    #: The caller's spelling (``jax.nn.gelu``), for messages.
    text: str
    #: The qualified names a rule is registered under (empty for a def of the module).
    names: frozenset[str] = frozenset()
    #: A def of the module (``swish``), and that module's path.
    helper: str = ""
    path: str = ""
    #: A method (``f = self.norm``): its class, the receiver's name ("" where the class is named), staticmethod.
    owner: str = ""
    receiver: str = ""
    static: bool = False


@dataclass(frozen=True, slots=True)
class Array:
    """A traced array with named dims and a layout on the mesh."""

    layout: Layout
    #: Why it is a partial sum, if it is one ("contracted dim 'd_ff' is split").
    origin: str = field(default="", compare=False)

    @property
    def dims(self) -> tuple[str, ...]:
        return self.layout.dims


@dataclass(frozen=True, slots=True)
class Static:
    """A Python value the same on every device: a literal, a shape entry, a dtype, a config.

    ``literal`` holds the value when the rewriter can read it (``axis=-1``), else None.
    """

    literal: object = None
    known: bool = False
    #: The global size of this dim, when the value came from ``x.shape[i]``.
    size_of: str | None = None
    #: The dims whose global sizes this tuple holds, when it came from ``x.shape``.
    shape_of: tuple[str, ...] | None = None
    #: The dims whose global sizes this number is the product of, when it came from multiplying sizes read off
    #: them (``B * T`` of ``B, T, C = x.shape``): a reshape to it merges those dims.
    product_of: tuple[str, ...] | None = None
    #: The @mesh function's static parameter this value is (``self``, ``cfg``): the attributes read
    #: off it are checked at call time (an array there would be baked in as a constant).
    param: str | None = None

    @classmethod
    def of(cls, value: object) -> Static:
        return cls(value, True)


@dataclass(frozen=True, slots=True)
class Opaque:
    """An array whose dims meshify cannot infer; it is replicated (never split or partial).

    ``shape`` is its global shape where the code spells it out (``jnp.zeros((4, 8))``):
    broadcast against named arrays, each entry takes the dim it lines up with.
    """

    shape: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class TupleValue:
    """A tuple of values (a tuple return, or ``a, b`` on a right-hand side), or a list of them (``kind``:
    what meshify writes where it rebuilds one, completing its items; not compared: the same layouts)."""

    items: tuple[Value, ...]
    kind: str = field(default="tuple", compare=False)  # or "list"

    def of(self, items) -> TupleValue:
        """Other items, of this kind."""
        return TupleValue(tuple(items), self.kind)

    def literal(self, elements: list[cst.Element]) -> cst.Tuple | cst.List:
        """A literal of this kind."""
        return cst.List(elements) if self.kind == "list" else cst.Tuple(elements)


@dataclass(frozen=True, slots=True)
class StructValue:
    """A pytree argument: a NamedTuple, dataclass or TypedDict instance with hinted fields."""

    cls: str
    fields: tuple[tuple[str, Value], ...]
    kind: str = "namedtuple"  # or "dataclass", "dict"
    #: A dataclass's static fields (no arrays; static values when traced, unknown here).
    meta: tuple[str, ...] = field(default=(), compare=False)

    def field(self, name: str) -> Value | None:
        return next((v for k, v in self.fields if k == name), None)


Value = Array | Static | Opaque | TupleValue | StructValue


def is_none(value: Value | None) -> bool:
    """Whether ``value`` is None (a pytree with no leaves to JAX: an optional field this version takes as None)."""
    return isinstance(value, Static) and value.known and value.literal is None


@dataclass(frozen=True, slots=True)
class Operand:
    """An evaluated sub-expression: its value, its original node and its rewritten node."""

    value: Value
    original: cst.BaseExpression
    node: cst.BaseExpression


def array(operand: Operand) -> Array:
    """The array ``operand`` holds, where the caller knows it holds one (a rule whose guard checked it)."""
    value = operand.value
    assert isinstance(value, Array), value
    return value


def holds_partial(value: Value) -> bool:
    """Whether ``value`` is or holds (in a tuple or a struct) a partial sum."""
    if isinstance(value, Array):
        return bool(value.layout.partial)
    if isinstance(value, TupleValue):
        return any(holds_partial(v) for v in value.items)
    if isinstance(value, StructValue):
        return any(holds_partial(v) for _, v in value.fields)
    return False


@dataclass(frozen=True, slots=True)
class UnknownLoop:
    """A Python loop whose iterations the rewriter cannot count (``for blk in blocks``, ``range(n)`` of a
    value it does not know): where it is, for explain's message."""

    line: int
    text: str  # the iterable as written
    function: str
    #: Why, where the iterable is counted but the body may skip or stop (a break or continue).
    reason: str = ""


@dataclass(frozen=True, slots=True)
class TracedLoop:
    """A loop JAX runs (scan, fori_loop): its body appears once in the HLO (``unroll`` times, as
    ``jax.lax.scan(..., unroll=k)`` copies it) but runs ``trips`` times."""

    trips: int | str | None
    #: ``unroll=``: an int k (k copies of the body in the loop, plus one per iteration left over when k does
    #: not divide the trips), or True (every iteration: no loop).
    unroll: int | bool = 1
    #: Which walk of a body this is (each a computation of its own in the HLO: XLA merges no collective
    #: of a scan body or a cond branch with one outside it, nor with another body's).
    body: int = 0
