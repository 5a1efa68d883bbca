"""Random annotated programs for differential fuzzing, as source text.

A program is one ``@mesh`` function ``f`` of 2 to 10 statements drawn from every op family
meshify supports (einsum, matmul, broadcasting elementwise ops, unary functions, reductions
with ``axis``/``keepdims``, the softmax family, transposes, reshapes and renames named by
annotated assignments, lookups), over a pool of named dims whose sizes the mesh divides,
with random layout rules on a random mesh.  Generation tracks each value's dims and a rough
magnitude, so every program is valid JAX and most are within what meshify accepts; a few
are built to be rejected (a return hint with permuted dims), which ``Program.provoked`` says.
Now and then a run of statements moves into a module-level ``helper`` that ``f`` calls, so
helper specialisation (layouts and pending partial sums crossing the call) is fuzzed too;
loops (``jax.lax.scan`` over a stacked parameter, ``jax.lax.fori_loop``, ``for`` over a
range) carry a value through a few steps.

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

__all__ = ["MESHES", "Arg", "Chooser", "Program", "RandomChooser", "generate"]

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
#: Values are kept at about this magnitude or below (rms), so float32 round-off stays small.
MAX_SCALE = 8.0


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
    """One parameter of ``f``: ``float`` normals with a standard deviation, ``steps`` (floats taking a
    few values, multiples of ``std / 2``, so that ties are common), or integer ``ids`` below ``high``."""

    name: str
    dims: tuple[str, ...]
    kind: str = "float"
    high: int = 0
    std: float = 1.0

    def to_json(self) -> dict:
        return {"name": self.name, "dims": list(self.dims), "kind": self.kind, "high": self.high, "std": self.std}

    @classmethod
    def from_json(cls, d: dict) -> Arg:
        return cls(d["name"], tuple(d["dims"]), d["kind"], d["high"], d["std"])


@dataclass(frozen=True)
class Program:
    """A generated program and what running it needs.

    Attributes:
        text: the module's source (imports and ``@mesh`` function ``f``).
        mesh: the mesh's name in :data:`MESHES` (for reports).
        sizes: dim name -> global size.
        args: ``f``'s parameters, in order.
        grad: whether ``f`` returns a scalar loss whose gradients are compared too.
        seed: seeds the inputs.
        provoked: why the program was built to be rejected ("" for most).
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

    def metadata(self) -> dict:
        """What a saved regression file stores besides the source (see :func:`check.save`)."""
        return {"mesh": self.mesh, "sizes": dict(self.sizes), "args": [a.to_json() for a in self.args],
                "grad": self.grad, "seed": self.seed, "provoked": self.provoked}


@dataclass
class _Value:
    name: str
    dims: tuple[str | None, ...]  # None: a size-1 dim from keepdims, broadcasting against anything
    scale: float  # rough rms magnitude


@dataclass
class _Builder:
    ch: Chooser
    mesh: str
    seed: int
    axes: dict[str, int] = field(default_factory=dict)
    rules: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    args: list[Arg] = field(default_factory=list)
    values: list[_Value] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    provoked: str = ""

    # -- choices -------------------------------------------------------------------------------

    def pick(self, options: Sequence[T]) -> T:
        return options[self.ch.integer(0, len(options) - 1)]

    def flag(self, percent: int) -> bool:
        """True with about ``percent``% probability; False when shrunk."""
        return self.ch.integer(0, 99) >= 100 - percent

    def weighted(self, options: Sequence[tuple[T, int]]) -> T:
        total = sum(w for _, w in options)
        n = self.ch.integer(0, total - 1)
        for item, w in options:
            if n < w:
                return item
            n -= w
        raise AssertionError

    def shuffled(self, items: Sequence[T]) -> list[T]:
        rest, out = list(items), []
        while rest:
            out.append(rest.pop(self.ch.integer(0, len(rest) - 1)))
        return out

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
        """Whether a hint naming ``dims`` is valid under the rules (no axis splits two dims)."""
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
        return len(dims) <= MAX_RANK and self.elements(dims) <= MAX_ELEMENTS and len(set(dims) - {None}) == len(
            [d for d in dims if d is not None])

    # -- values ------------------------------------------------------------------------------------

    def param(self, dims: Sequence[str], std: float = 1.0) -> _Value:
        name = f"x{len(self.args)}"
        # Some inputs take few values, so that reductions meet exact ties (their gradients must still match).
        kind = "steps" if self.flag(12) else "float"
        self.args.append(Arg(name, tuple(dims), kind=kind, std=round(std, 4)))
        value = _Value(name, tuple(dims), std)
        return value

    def ids(self, dims: Sequence[str], high: int) -> str:
        name = f"ids{len(self.args)}"
        self.args.append(Arg(name, tuple(dims), kind="ids", high=high))
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
        name = f"v{len([v for v in self.values if v.name.startswith('v')])}"
        dims = tuple(dims)
        if pin is None:
            pin = None not in dims and self.disjoint(dims) and self.flag(25)
        if pin:
            self.lines.append(f"{name}: {hint(dims)} = {expr}")  # type: ignore[arg-type]
        else:
            self.lines.append(f"{name} = {expr}")
        value = _Value(name, dims, min(scale, 1e6))
        self.values.append(value)
        return value

    def pick_value(self) -> _Value:
        """The latest value mostly (so programs are chains), sometimes an earlier one."""
        if len(self.values) == 1 or not self.flag(30):
            return self.values[-1]
        return self.pick(self.values)

    # -- program ----------------------------------------------------------------------------------

    def build(self) -> Program:
        self.axes = dict(MESHES[self.mesh])
        first = [self.some_dim() for _ in range(self.ch.integer(1, 3))]
        first = list(dict.fromkeys(first))
        while not self.disjoint(first):
            first.pop()
        self.values.append(self.param(first))
        for _ in range(self.ch.integer(2, 10)):
            a = self.pick_value()
            if a.scale > MAX_SCALE:
                self.squash(a)
                continue
            op = self.weighted([("unary", 14), ("binary", 18), ("einsum", 18), ("matmul", 9), ("reduce", 12),
                                ("softmax", 8), ("shape", 11), ("lookup", 8), ("loop", 6)])
            if not getattr(self, f"op_{op}")(a):
                self.op_unary(a)
        return self.finish()

    def squash(self, a: _Value) -> None:
        """Brings a large value back to about 1, so that round-off stays far below the tolerance."""
        c = 2 ** math.ceil(math.log2(a.scale))
        self.emit(self.pick([f"jnp.tanh({a.name} / {c})", f"{a.name} / {c}", f"{a.name} * {1 / c}"]), a.dims, 1.0)

    def finish(self) -> Program:
        final = self.values[-1]
        if None in final.dims:
            final = self.broadcast_full(final)
        grad = not final.dims or not self.disjoint(final.dims) or self.flag(30)
        if final.dims and grad:
            final = self.loss(final)
        outputs = [final]
        other = [v for v in self.values[:-1] if None not in v.dims and self.disjoint(v.dims) and v is not final]
        if not grad and other and self.flag(10):
            outputs.insert(0, self.pick(other))
        hints = [hint(v.dims) for v in outputs]  # type: ignore[arg-type]
        if self.flag(5):
            hints[-1] = self.provoke(outputs[-1]) or hints[-1]
        returned = ", ".join(v.name for v in outputs)
        last = self.lines[-1]
        if len(outputs) == 1 and last.startswith(f"{final.name} = ") and self.flag(25):
            self.lines[-1] = "return " + last[len(f"{final.name} = "):]
        else:
            self.lines.append(f"return {returned}")
        ret = hints[0] if len(hints) == 1 else f"tuple[{', '.join(hints)}]"
        helper = self.extract_helper() if len(self.lines) >= 3 and self.flag(20) else ""
        return Program(self.source(ret, helper), self.mesh, dict(self.sizes), tuple(self.args), grad, self.seed,
                       self.provoked)

    def extract_helper(self) -> str:
        """Moves a run of ``f``'s statements into a module-level ``helper`` (unhinted parameters: the
        caller's layouts specialise it) and calls it instead; "" when the run defines nothing used later."""
        body = self.lines[:-1]  # the last line returns
        i = self.ch.integer(0, len(body) - 1)
        j = self.ch.integer(i + 1, len(body))
        before = {a.name for a in self.args} | {n for line in body[:i] for n in _names(line)[1]}
        inside = body[i:j]
        free = [n for line in inside for n in _names(line)[0] if n in before]
        stored = [n for line in inside for n in _names(line)[1]]
        later = {n for line in self.lines[j:] for n in _names(line)[0]}
        outputs = [n for n in dict.fromkeys(stored) if n in later]
        if not outputs:
            return ""
        free = list(dict.fromkeys(free))
        self.lines[i:j] = [f"{', '.join(outputs)} = helper({', '.join(free)})"]
        lines = "".join(f"    {line}\n" for line in inside)
        return f"\n\ndef helper({', '.join(free)}):\n{lines}    return {', '.join(outputs)}\n"

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

    def source(self, ret: str, helper: str = "") -> str:
        axes = ", ".join(f"{n}={s}" for n, s in self.axes.items())
        rules = self.rules_text()
        params = ", ".join(f"{a.name}: {hint(a.dims)}" for a in self.args)
        body = "".join(f"    {line}\n" for line in self.lines)
        return f"{HEADER}{helper}\n\n@mesh({axes}{rules})\ndef f({params}) -> {ret}:\n{body}"

    def rules_text(self) -> str:
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
               ("jax.nn.relu6({})", 6.0), ("jnp.maximum({}, 0.0)", None)]
        if a.scale <= 1.5:
            fns += [("jnp.exp({})", math.exp(a.scale) * 2), ("jnp.square({})", a.scale ** 2 * 2)]
        template, scale = self.pick(fns)
        self.emit(template.format(a.name), a.dims, scale if scale is not None else a.scale)
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
        op = self.pick(["+", "-", "*", "/", "jnp.add", "jnp.subtract", "jnp.multiply", "jnp.divide"])
        x, y = a, b
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
                          f"jnp.where({a.name} > {b.name}, {a.name}, {b.name})"])
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
        reduced = self.axes_from(axis, len(a.dims))
        n = math.prod(self.sizes[a.dims[i]] for i in reduced if a.dims[i] is not None)
        if kind == "sum" and a.scale * n > MAX_SCALE:
            kind = "mean"
        extra = ", keepdims=True" if keepdims else ""
        form = self.ch.integer(0, 2)
        if form == 0:
            expr = f"jnp.{kind}({a.name}, axis={axis}{extra})"
        elif form == 1:
            expr = f"{a.name}.{kind}(axis={axis}{extra})"
        else:
            expr = f"jnp.{kind}({a.name}, {axis}{extra})"
        dims = [None if i in reduced else d for i, d in enumerate(a.dims)] if keepdims else \
            [d for i, d in enumerate(a.dims) if i not in reduced]
        self.emit(expr, dims, a.scale * n if kind == "sum" else a.scale)
        return True

    def op_softmax(self, a: _Value) -> bool:
        if not a.dims or None in a.dims:
            return False
        kind = self.pick(["softmax", "log_softmax", "logsumexp"])
        rank = len(a.dims)
        omit = self.flag(20)
        axis = "None" if omit and kind == "logsumexp" else "-1" if omit else \
            self.axis_text(rank, allow_none=kind == "logsumexp")
        reduced = self.axes_from(axis, rank)
        log_n = math.log(math.prod(self.sizes[a.dims[i]] for i in reduced))  # type: ignore[index]
        axis_part = "" if omit else f", axis={axis}"
        if kind != "logsumexp":
            scale = 1.0 if kind == "softmax" else a.scale + log_n
            return bool(self.emit(f"jax.nn.{kind}({a.name}{axis_part})", a.dims, scale))
        keepdims = self.flag(15)
        dims = [None if i in reduced else d for i, d in enumerate(a.dims)] if keepdims else \
            [d for i, d in enumerate(a.dims) if i not in reduced]
        extra = ", keepdims=True" if keepdims else ""
        self.emit(f"jax.nn.logsumexp({a.name}{axis_part}{extra})", dims, a.scale + log_n)
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
        self.emit(f"{fn}({spec!r}, {', '.join(o.name for o in operands)})".replace("'", '"'), out, scale)
        return True

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
        if not self.fits(out):
            return False
        if spell.startswith("jnp.dot") and len(right.dims) > 2:
            spell = "jnp.matmul({}, {})"
        k = self.sizes[left.dims[-1]]
        self.emit(spell.format(left.name, right.name), out, left.scale * right.scale * math.sqrt(k))
        return True

    def op_shape(self, a: _Value) -> bool:
        if not a.dims or None in a.dims:
            return False
        kind = self.weighted([("transpose", 4), ("merge", 3), ("split", 3), ("rename", 2), ("concatenate", 2),
                              ("stack", 2)])
        return getattr(self, f"shape_{kind}")(a) or self.shape_transpose(a)

    def shape_transpose(self, a: _Value) -> bool:
        rank = len(a.dims)
        if rank < 2:
            return False
        form = self.ch.integer(0, 4)
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
        else:
            expr, out = f"{a.name}.transpose({', '.join(map(str, perm))})", tuple(a.dims[p] for p in perm)
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

    def shape_concatenate(self, a: _Value) -> bool:
        """``c: Tensor[..., new, ...] = jnp.concatenate([a, b], axis=k)``: the joined dim gets a new name."""
        if not self.disjoint(a.dims):
            return False
        k = self.ch.integer(0, len(a.dims) - 1)
        others = [self.operand(a.dims) for _ in range(self.ch.integer(1, 2))]  # type: ignore[arg-type]
        parts = [a, *others]
        joined = self.new_dim(self.sizes[a.dims[k]] * len(parts), base=f"{a.dims[k]}_cat")  # type: ignore[index]
        out = (*a.dims[:k], joined, *a.dims[k + 1:])
        if not self.disjoint(out) or not self.fits(out):
            return False
        items = ", ".join(p.name for p in parts)
        self.emit(f"jnp.concatenate([{items}], axis={self.pick([k, k - len(a.dims)])})", out,
                  max(p.scale for p in parts), pin=True)
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
        items = ", ".join(p.name for p in parts)
        self.emit(f"jnp.stack(({items}), axis={k})", out, max(p.scale for p in parts), pin=True)
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
            w = self.param((layer, *w_dims), std=0.5)
            carry = f"v{len([v for v in self.values if v.name.startswith('v')])}"
            self.values.append(_Value(carry, a.dims, scale))
            ys = f"v{len([v for v in self.values if v.name.startswith('v')])}"
            step = self.pick(["jnp.tanh(h * w)", "h + 0.5 * jnp.sin(w)", "h * 0.5 + jnp.cos(h * w)"])
            out = self.pick(["None", "h", "jnp.tanh(h)"])
            if out == "None":
                self.lines.append(f"{carry}, _ = jax.lax.scan(lambda h, w: ({step}, None), {a.name}, {w.name})")
            else:
                self.lines.append(f"{carry}, {ys} = jax.lax.scan(lambda h, w: ({step}, {out}), {a.name}, {w.name})")
                self.values.append(_Value(ys, (layer, *a.dims), scale))
            return True
        w = self.operand(w_dims, std=0.5) if w_dims or self.flag(50) else None
        step = self.pick(["jnp.tanh({h} * {w})", "{h} * 0.5 + jnp.sin({w})"]) if w else "jnp.tanh({h}) * 0.9"
        n = self.pick((1, 2, 3))
        if kind == "fori":
            body = step.format(h="h", w=w.name if w else "")
            self.emit(f"jax.lax.fori_loop(0, {n}, lambda i, h: {body}, {a.name})", a.dims, scale)
        else:  # the carried name is rebound in the loop body (8 spaces: the body's own indent)
            self.lines.append(f"for _ in range({n}):\n        {a.name} = {step.format(h=a.name, w=w.name if w else '')}")
            a.scale = scale
        return True

    def op_lookup(self, a: _Value) -> bool:
        if not a.dims or None in a.dims or not self.disjoint(a.dims):
            return False
        kind = self.weighted([("index", 4), ("take", 3), ("along", 4)])
        rank = len(a.dims)
        k = 0 if kind == "index" else self.ch.integer(0, rank - 1)
        high = self.sizes[a.dims[k]]  # type: ignore[index]
        if kind == "along":
            sel = a.dims[k] if self.flag(40) else self.some_dim(exclude=a.dims, compatible=a.dims)
            idx_dims = (*a.dims[:k], sel, *a.dims[k + 1:])
            if not self.disjoint(idx_dims) or not self.fits(idx_dims):
                return False
            ids = self.ids(idx_dims, high)  # type: ignore[arg-type]
            axis = self.pick([k, k - rank])
            self.emit(f"jnp.take_along_axis({a.name}, {ids}, axis={axis})", idx_dims, a.scale)
            return True
        rest = [d for j, d in enumerate(a.dims) if j != k]
        id_dims: list[str] = []
        for _ in range(self.ch.integer(1, 2)):
            d = self.some_dim(exclude=list(a.dims) + id_dims, compatible=list(a.dims) + id_dims)
            if d not in a.dims and d not in id_dims and not set(self.axes_of(d)) & {
                    x for e in list(a.dims) + id_dims for x in self.axes_of(e)}:
                id_dims.append(d)
        out = (*rest[:k], *id_dims, *rest[k:])
        if not id_dims or not self.fits(out) or not self.disjoint(out):
            return False
        ids = self.ids(id_dims, high)
        if kind == "index":
            self.emit(f"{a.name}[{ids}]", out, a.scale)
        else:
            self.emit(f"jnp.take({a.name}, {ids}, axis={self.pick([k, k - rank])})", out, a.scale)
        return True

    def loss(self, a: _Value) -> _Value:
        """A scalar loss of ``a`` (gradients are compared for these programs)."""
        expr = self.pick([f"jnp.sum({a.name} * {a.name})", f"jnp.mean(jnp.square({a.name}))", f"jnp.sum({a.name})",
                          f"jax.nn.logsumexp({a.name})", f"{a.name}.mean()", f"jnp.max({a.name})",
                          f"jnp.mean(jax.nn.log_softmax({a.name}, axis=-1))"])
        return self.emit(expr, (), a.scale ** 2)


def _names(line: str) -> tuple[list[str], list[str]]:
    """The names a statement reads and the names it binds, in order (``a += b`` reads ``a`` too)."""
    stmt = ast.parse(line.removeprefix("return ")).body[0]
    loads = [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    stores = [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    if isinstance(stmt, ast.AugAssign):
        loads.insert(0, stores[0])
    return loads, stores


def hint(dims: Sequence[str]) -> str:
    return "Tensor[()]" if not dims else "Tensor[" + ", ".join(f'"{d}"' for d in dims) + "]"


def generate(ch: Chooser, seed: int = 0, mesh: str | None = None) -> Program:
    """One random program; ``mesh`` fixes the mesh (else it is drawn too)."""
    names = list(MESHES)
    chosen = mesh if mesh is not None else names[ch.integer(0, len(names) - 1)]
    return _Builder(ch, chosen, seed).build()
