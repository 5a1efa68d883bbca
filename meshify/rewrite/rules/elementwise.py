"""Elementwise ops: numpy broadcasting over named dims; linearity decides which partial sums pass.

Every function of ``_signatures.UNARY`` and ``_signatures.BINARY`` is registered here by
being in that table; ``+ - * / **`` and comparisons come through :func:`elementwise` too.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import replace

import libcst as cst
import numpy as np

from meshify.annotate._types import BROADCAST, INFERRED, Axes, Layout, hint_dims, unify_dims
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._containers import sequence_item
from meshify.rewrite._plan import choose_splits
from meshify.rewrite._signatures import BINARY, STATS, UNARY
from meshify.rewrite._values import Array, Opaque, Operand, Static, StructValue, TupleValue, Value
from meshify.rewrite.rules._api import (
    ADD,
    DIV,
    MUL,
    NEG,
    NONLINEAR,
    REQUIRED,
    At,
    Call,
    Convert,
    Lowering,
    MeshAxes,
    RuleContext,
    Template,
    beside,
    keep,
    literal_items,
    op,
    unknown_call,
)

# -- elementwise ------------------------------------------------------------------------------


def _name_it(ctx: RuleContext, opaque, beside: Layout) -> str:
    """The fix for a value of unknown dims that meets a split one: a hint where it is bound, its dims
    guessed from the trailing dims of the array it meets (a size-1 dim there: a name to choose)."""
    code = ctx.code(opaque.original)
    shape = opaque.value.shape
    rank = len(shape) if shape is not None else None
    guess = list(beside.dims[-rank:]) if rank is not None and 0 < rank <= beside.rank else []
    dims = hint_dims(guess).replace("'1'", "'<its dim>'") or "..."
    target = code if code.isidentifier() else "v"
    where = "where it is bound" if code.isidentifier() else "first"
    fix = f"name its dims {where}: {target}: Tensor[{dims}] = ..." if code.isidentifier() else \
        f"name its dims {where}: {target}: Tensor[{dims}] = {code}"
    roots = _value_names(ctx, opaque.original) if not code.isidentifier() else []
    if roots:  # (an expression of a value of unknown dims: better named where that is made)
        fix += f", or name the dims of {roots[0]!r} where it is made ({roots[0]}: Tensor[...] = ...)"
    if "None]" in code or "newaxis" in code:
        fix += "; a new axis of size 1 is spelled \"1\" (Tensor[..., \"1\"])"
    return fix


def _value_names(ctx: RuleContext, node: cst.CSTNode) -> list[str]:
    """The plain names an expression reads as values (not the functions it calls, not modules), in order."""
    found: list[str] = []

    class _Names(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> bool:
            for arg in call.args:
                arg.visit(self)
            # (x.astype(...): x is read; jnp.sqrt(...), max(...): functions, not values)
            if isinstance(call.func, cst.Attribute | cst.Subscript | cst.Call):
                call.func.visit(self)
            return False

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            return not ctx.qualified_names(attribute) - {ctx.code(attribute)}  # (jnp.float32: a module's)

        def visit_Name(self, name: cst.Name) -> None:
            if name.value not in found and name.value not in ("None", "True", "False") \
                    and not ctx.qualified_names(name) - {name.value}:
                found.append(name.value)

    node.visit(_Names())
    return found


def elementwise(ctx: RuleContext, operands: Sequence, linear: str, node, what: str
                ) -> tuple[Value, list[Convert | None]]:
    """numpy-broadcast elementwise op: merge splits, keep partial sums where linearity allows.

    Returns the result and, per operand, the layout it must be converted to (None: used as it is)."""
    values = [o for o in operands if not isinstance(o.value, Static)]
    if len(values) == 1 and isinstance(values[0].value, Array) and not values[0].value.layout.partial:
        # one array and Python numbers (tanh(x), x * 0.5): its layout, as the general case below gives it
        layout = values[0].value.layout
        return Array(layout, ""), beside([Convert(o, layout, what) if o is values[0] else None for o in operands])
    literal_shapes = [o.value.shape if isinstance(o.value, Opaque) else None for o in operands]
    operands = _name_by_position(operands)
    arrays = [o for o in operands if isinstance(o.value, Array)]
    opaque = [o for o in operands if isinstance(o.value, Opaque)]
    for o in operands:
        if isinstance(o.value, TupleValue | StructValue):  # never a static: it may hold split arrays
            raise ctx.error(UnsupportedError, o.original, f"{what} on a tuple or pytree {ctx.code(o.original)!r}",
                            f"map it over the leaves (jax.tree.map(lambda t: ..., {ctx.code(o.original)})), or unpack "
                            "the tuple (or read the pytree's field) and use one array")
    if not arrays:  # jnp.arange(16) * 0.5 keeps its literal shape, to be named where it meets named dims
        return (Opaque(_broadcast_shape([o.value.shape for o in opaque])) if opaque else Static()), \
            [None] * len(operands)
    if opaque:
        for o in arrays:
            if o.value.layout.is_split or o.value.layout.partial:
                raise ctx.error(LayoutError, opaque[0].original,
                                f"cannot infer the dims of {ctx.code(opaque[0].original)!r}, used with "
                                f"{ctx.code(o.original)!r} of layout {o.value.layout.describe()}",
                                _name_it(ctx, opaque[0], o.value.layout))
        if all(o.value.layout.rank == 0 for o in arrays):  # off + jnp.arange(4): a scalar keeps the literal shape
            return Opaque(_broadcast_shape([o.value.shape for o in opaque])), [None] * len(operands)
        return Opaque(), [None] * len(operands)
    rank = max(o.value.layout.rank for o in arrays)
    letters = list(string.ascii_letters[:rank])
    names: list[str] = [BROADCAST] * rank
    for o in arrays:
        offset = rank - o.value.layout.rank
        for i, dim in enumerate(o.value.dims):
            pos = offset + i
            if dim == BROADCAST:
                continue
            unified = dim if names[pos] == BROADCAST else unify_dims(names[pos], dim)
            if unified is not None and names[pos] != BROADCAST:
                ctx.lined_up(names[pos], dim)
            if unified is None:
                raise ctx.error(LayoutError, node,
                                f"{what} lines up dim {dim!r} of {ctx.code(o.original)!r} with dim "
                                f"{names[pos]!r}", "transpose or rename so that the dims match by position "
                                "(numpy broadcasting aligns trailing dims)")
            names[pos] = unified
    arrays_by_size = sorted(arrays, key=lambda o: -ctx.elements(o.value.dims))
    candidates: dict[str, list[Axes]] = {}
    weights: dict[str, int] = {}
    for o in arrays_by_size:
        offset = rank - o.value.layout.rank
        for i, axes in enumerate(o.value.layout.axes):
            letter = letters[offset + i]
            if axes and axes not in candidates.setdefault(letter, []):
                candidates[letter].append(axes)
                weights[letter] = max(weights.get(letter, 0), ctx.elements(o.value.dims))
    preferred = {l: ctx.rules.axes(n) for l, n in zip(letters, names) if n != BROADCAST}
    chosen = choose_splits(letters, candidates, preferred, weights)
    used = {a for axes in chosen.values() for a in axes}
    keep = _kept_partial(operands, linear) - used
    converts: list[Convert | None] = []
    origin = ""
    for o in operands:
        if not isinstance(o.value, Array):
            converts.append(None)
            continue
        layout = o.value.layout
        offset = rank - layout.rank
        axes = tuple(() if d == BROADCAST else chosen[letters[offset + i]] for i, d in enumerate(layout.dims))
        partial = layout.partial & keep
        origin = origin or (o.value.origin if partial else "")
        converts.append(Convert(o, Layout(layout.dims, axes, partial), what))
    for k, (shape, c) in enumerate(zip(literal_shapes, converts)):
        if shape is not None and c is not None and any(ctx.declared.get(d) != n for n, d, axes in
                                                      zip(shape, c.layout.dims, c.layout.axes) if axes):
            converts[k] = _checked_entries(ctx, c, partner=_partner(operands, converts, k))
    for k, (o, c) in enumerate(zip(operands, converts)):
        # a whole value with a dim meshify named itself (jnp.arange(cfg.n): n?), split here along the named
        # dim it lines up with: its size is checked against that dim's, as for a literal shape (a block of
        # one entry would broadcast where, on one device, the whole array does not)
        if c is None or not isinstance(o.value, Array) or literal_shapes[k] is not None:
            continue
        offset = rank - o.value.layout.rank
        unified = tuple(names[offset + i] for i in range(o.value.layout.rank))
        if any(d.endswith(INFERRED) and not n.endswith(INFERRED) and n != BROADCAST and axes and not before
               for d, n, axes, before in zip(o.value.dims, unified, c.layout.axes, o.value.layout.axes)):
            converts[k] = _checked_entries(ctx, c, unified)
    result_axes = tuple(() if n == BROADCAST else chosen[l] for l, n in zip(letters, names))
    return Array(Layout(tuple(names), result_axes, frozenset(keep)), origin), beside(converts)


def _broadcast_shape(shapes: list) -> tuple[int, ...] | None:
    """numpy's broadcast of literal shapes (None: one is unknown, or they do not broadcast)."""
    if any(shape is None for shape in shapes):
        return None
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _checked_entries(ctx: RuleContext, c: Convert, named: tuple[str, ...] | None = None,
                     partner: str | None = None) -> Convert:
    """An array of a literal shape (``jnp.arange(8.0)``) lined up by position with a dim that is split:
    each device takes its block, and a block of one entry would broadcast against any block, running
    where the single-device program fails to broadcast.  So each block is checked, while tracing,
    against the block of those dims' sizes in the call: ``mr.entries(block, (None, "d"), (1, 4))``; where
    the call's arguments do not tell a dim's size (the function made it: a resize's, a concatenation's), against
    the block of ``partner``, the array it meets (``like=v1``)."""
    return replace(c, wrap=entries_template(ctx.mesh, c.layout, named, partner))


def _partner(operands: Sequence, converts: list[Convert | None], k: int) -> str | None:
    """The name of an array among ``operands`` (not the ``k``-th) used as it is, whose blocks the literal-shaped
    ``k``-th meets: what its blocks' sizes are checked against where no argument tells them."""
    for j, (o, c) in enumerate(zip(operands, converts)):
        if j != k and isinstance(o.value, Array) and isinstance(o.node, cst.Name) and not o.value.layout.partial \
                and (c is None or c.layout == o.value.layout):
            return o.node.value
    return None


def entries_template(mesh, layout: Layout, named: tuple[str, ...] | None = None, partner: str | None = None) -> str:
    """``{mr}.entries({x}, (None, "d"), (1, 4))``: the check of a block of an array of literal shape cut to
    ``layout`` (its dims spelled ``named`` where given; ``partner``: the name of the array it meets)."""
    dims = ", ".join(f'"{d}"' if axes else "None" for d, axes in zip(named or layout.dims, layout.axes))
    shards = ", ".join(str(mesh.size(axes)) for axes in layout.axes)
    one = "," if len(layout.dims) == 1 else ""
    like = f", like={partner}" if partner else ""
    return f"{{mr}}.entries({{x}}, ({dims}{one}), ({shards}{one}){like})"


def _name_by_position(operands: Sequence) -> list:
    """Opaque operands of a known shape (``jnp.zeros((4, 8))``) as whole arrays, each entry named by
    the dim it lines up with under broadcasting (size 1: broadcast); the others stay opaque."""
    arrays = [o for o in operands if isinstance(o.value, Array)]
    if not arrays:
        return list(operands)
    rank = max(o.value.layout.rank for o in arrays)
    names: list[str | None] = [None] * rank
    for o in arrays:
        offset = rank - o.value.layout.rank
        for i, dim in enumerate(o.value.dims):
            if dim != BROADCAST and names[offset + i] is None:
                names[offset + i] = dim
    out = []
    for o in operands:
        shape = o.value.shape if isinstance(o.value, Opaque) else None
        if shape is not None and len(shape) <= rank:
            offset = rank - len(shape)
            # an entry beside no array's dim (freqs[None] of jnp.arange(8) times t[:, None]): a new dim of its
            # literal size, whole on every device, named by that size (``8?``)
            dims = tuple(BROADCAST if n == 1 else names[offset + i] or f"{n}{INFERRED}" for i, n in enumerate(shape))
            if None not in dims:
                o = Operand(Array(Layout.replicated(dims)), o.original, o.node)  # type: ignore[arg-type]
        out.append(o)
    return out


def _kept_partial(operands: Sequence, linear: str) -> frozenset[str]:
    """The partial-sum axes an elementwise op may carry through (deferred all-reduce)."""
    partials = [o.value.layout.partial if isinstance(o.value, Array) else frozenset() for o in operands]
    if linear == NEG:
        return partials[0]
    if linear == ADD:
        # Sums of partial sums stay partial over the axes they share (the rest is reduced first); a literal 0
        # adds nothing on any device (acc = 0, then acc = acc + h @ w in a loop)
        terms = [p for o, p in zip(operands, partials) if not _zero(o.value)]
        if terms and all(isinstance(o.value, Array) for o in operands if not _zero(o.value)):
            return frozenset.intersection(*terms)
        return frozenset()
    if linear == MUL:
        carriers = [p for p in partials if p]
        return carriers[0] if len(carriers) == 1 else frozenset()
    if linear == DIV:
        return partials[0] if not partials[1] else frozenset()
    return frozenset()


def _zero(value) -> bool:
    """A literal 0 (``0``, ``0.0``; not ``False``): adding it changes no value, so a partial sum stays one."""
    return isinstance(value, Static) and value.known and type(value.literal) in (int, float) and value.literal == 0


def _unary_rule(ctx: RuleContext, call: Call, linear: str = NONLINEAR):
    x = call.receiver if call.receiver is not None else call.arg(0, "x")
    if x is None:
        raise ctx.error(UnsupportedError, call.node, f"{call.name} needs an array argument", "pass the array first")
    if call.name == "jax.lax.stop_gradient" and isinstance(x.value, StructValue | TupleValue) and not call.kwargs:
        # stop_gradient(ref_params): JAX maps it over the pytree's leaves; every leaf keeps its layout (a partial
        # sum too: it is linear)
        return keep(x.value)
    for name, extra in call.kwargs.items():
        if isinstance(extra.value, Array):
            raise ctx.error(UnsupportedError, extra.original, f"array keyword {name}= of {call.name}",
                            f"apply {name}= with jnp.where or an elementwise op instead")
    value, converts = elementwise(ctx, [x], linear, call.node, call.name.rsplit(".", 1)[-1])
    return Lowering(value, tuple(c for c in converts if c is not None))


#: Unary functions a partial sum passes through (f(a + b) = f(a) + f(b)): its psum is deferred past them.
#: (The real and imaginary parts and the conjugate are linear over the reals, as a partial sum is.)
_LINEAR_UNARY = frozenset({"jax.numpy.negative", "jax.lax.neg", "jax.lax.stop_gradient", "jax.numpy.real",
                           "jax.numpy.imag", "jax.numpy.conj", "jax.numpy.conjugate", "jax.lax.real", "jax.lax.imag",
                           "jax.lax.conj"})

for _name in UNARY:  # a new elementwise function is one line in _signatures.UNARY
    op(_name, reads=(REQUIRED,), passthrough=True, linear=NEG if _name in _LINEAR_UNARY else NONLINEAR)(
        _unary_rule)
op(method="conj", reads=(), linear=NEG)(_unary_rule)  # x.conj(), x.conjugate()
op(method="conjugate", reads=(), linear=NEG)(_unary_rule)


@op("optax.huber_loss", "optax.losses.huber_loss", "optax.l2_loss", "optax.losses.l2_loss", "optax.squared_error",
    "optax.losses.squared_error", "optax.hinge_loss", "optax.losses.hinge_loss", "optax.log_cosh",
    "optax.losses.log_cosh", "optax.sigmoid_focal_loss", "optax.losses.sigmoid_focal_loss",
    reads=("predictions", "predictor_outputs", "logits", "targets", "labels", "delta", "alpha", "gamma"))
def _optax_elementwise(ctx: RuleContext, call: Call):
    """optax's regression, hinge and focal losses (a value head's ``huber_loss(values, returns, delta=0.5)``):
    each entry's loss from the same entries of its arguments, so elementwise (a partial sum completed first);
    the call kept as written, run on each device's block."""
    short = call.name.rsplit(".", 1)[-1]
    for name in ("delta", "alpha", "gamma"):
        number = call.params.get(name)
        if number is not None and not isinstance(number.value, Static):
            raise ctx.error(UnsupportedError, number.original, f"optax.{short}({name}={ctx.code(number.original)}), "
                            "an array", f"pass {name}= as a number")
    operands = [o for name in ("predictions", "predictor_outputs", "logits", "targets", "labels")
                if (o := call.params.get(name)) is not None and not (isinstance(o.value, Static) and o.value.known
                                                                     and o.value.literal is None)]
    value, converts = elementwise(ctx, operands, NONLINEAR, call.node, short)
    return Lowering(value, tuple(c for c in converts if c is not None))


@op("jax.numpy.nan_to_num", reads=("x", "copy", "nan", "posinf", "neginf"))
def _nan_to_num(ctx: RuleContext, call: Call):
    """``jnp.nan_to_num(x, nan=0.0, posinf=..., neginf=...)``: elementwise, its replacements numbers."""
    for o in [*call.args[1:], *call.kwargs.values()]:
        if not isinstance(o.value, Static):
            raise ctx.error(UnsupportedError, o.original, f"an array replacement {ctx.code(o.original)!r} in "
                            "jnp.nan_to_num", "give nan=, posinf=, neginf= as numbers, or use jnp.where")
    return _unary_rule(ctx, call)


@op("jax.numpy.asarray", "jax.numpy.array", reads=("a", "object", "dtype", "copy"))
def _asarray(ctx: RuleContext, call: Call):
    x = call.arg(0, "a") or call.arg(0, "object")
    if isinstance(x.value, Static):  # jnp.array([1., 2.]): a whole array of the literal's shape
        shape = _literal_shape(x.value.literal) if x.value.known else None
        scalar = shape == () or x.value.size_of is not None  # jnp.asarray(x.shape[-1], jnp.float32): a 0-d array
        return keep(Static() if scalar else Opaque(shape))
    items = literal_items(x)
    if items is not None and isinstance(x.value, TupleValue):
        return _array_of_items(ctx, call, x, items)
    return _unary_rule(ctx, call)


def _array_of_items(ctx: RuleContext, call: Call, seq: Operand, items: list[Operand]) -> Lowering:
    """``jnp.array([a, b])`` of arrays: their stack; of scalars and numbers (``jnp.array([pos, 0])``, dynamic
    slice starts): a whole vector, its dim named by its length, each partial sum completed first."""
    if all(isinstance(i.value, Array) for i in items):
        from meshify.rewrite.rules.shapes import _joined

        return _joined(ctx, call, seq, items, "stack", 0, "jnp.array of arrays")
    for i in items:
        if not (isinstance(i.value, Static) or isinstance(i.value, Array) and not i.value.layout.rank):
            raise ctx.error(UnsupportedError, i.original, f"{call.short} of a list holding "
                            f"{ctx.code(i.original)!r}, neither a number nor a scalar array",
                            "stack arrays of one layout (jnp.stack([a, b])), or give each item a Tensor hint")
    converts = tuple(Convert(i, Layout((), ()), f"an item of {call.short}") for i in items
                     if isinstance(i.value, Array))
    return Lowering(Array(Layout.replicated((f"{len(items)}{INFERRED}",))), converts)


def _literal_shape(value: object) -> tuple[int, ...] | None:
    """numpy's shape of a nested list/tuple of numbers, or None if it is ragged or not numbers."""
    if isinstance(value, bool | int | float | complex):
        return ()
    if isinstance(value, list | tuple) and value:
        inner = {_literal_shape(v) for v in value}
        if len(inner) == 1 and None not in inner:
            return (len(value), *inner.pop())
    return None


@op("jax.numpy.astype", method="astype", reads=("x", "dtype", "copy"))
def _astype(ctx: RuleContext, call: Call):
    # Casting a partial sum changes where rounding happens: materialise it first.
    return _unary_rule(ctx, call)


@op("jax.numpy.clip", method="clip", reads=("arr", "min", "max"))
def _clip(ctx: RuleContext, call: Call):
    """``jnp.clip(x, lo, hi)`` / ``x.clip(lo, hi)``: elementwise over all three, each bound an array
    (broadcast against ``x``, split or not) or a scalar; a partial sum is completed first (clipping
    is not linear)."""
    if call.receiver is not None:
        x, bounds = call.receiver, [call.arg(0, "min"), call.arg(1, "max")]
    else:
        x, bounds = call.arg(0, "arr"), [call.arg(1, "min"), call.arg(2, "max")]
    if x is None:
        raise ctx.error(UnsupportedError, call.node, f"{call.name} needs an array to clip", "pass the array first")
    operands = [x, *(b for b in bounds if b is not None)]
    value, converts = elementwise(ctx, operands, NONLINEAR, call.node, "clip")
    return Lowering(value, tuple(c for c in converts if c is not None))


def _binary_rule(ctx: RuleContext, call: Call, linear: str = NONLINEAR, arity: int = 2):
    operands = [call.arg(i, k) for i, k in enumerate(["x1", "x2", "x3"][:arity])]
    if arity == 3:
        operands = [call.arg(0, "condition"), call.arg(1, "x"), call.arg(2, "y")]
    if any(o is None for o in operands):
        raise ctx.error(UnsupportedError, call.node, f"{call.name} needs {arity} array arguments",
                        f"pass {arity} arrays (or scalars)")
    value, converts = elementwise(ctx, operands, linear, call.node, call.name.rsplit(".", 1)[-1])
    return Lowering(value, tuple(c for c in converts if c is not None))


_LINEARITY = {"add": ADD, "subtract": ADD, "multiply": MUL, "divide": DIV, "true_divide": DIV}
for _name in BINARY:  # likewise, one line in _signatures.BINARY
    op(_name, reads=(REQUIRED,), linear=_LINEARITY.get(_name.rpartition(".")[2], NONLINEAR))(_binary_rule)
op("jax.numpy.where", reads=("condition", "x", "y"), arity=3)(_binary_rule)


def _stats_rule(ctx: RuleContext, call: Call):
    """``norm.logpdf(z)``, ``t.pdf(x, df, loc, scale)``: elementwise over every array argument given (numpy
    broadcasting); a partial sum is completed first (none of them is linear)."""
    operands = [o for o in (*call.args, *call.kwargs.values()) if o is not None]
    if not operands:
        raise ctx.error(UnsupportedError, call.node, f"{call.name} needs an array", "pass the values to evaluate")
    value, converts = elementwise(ctx, operands, NONLINEAR, call.node, ".".join(call.name.rsplit(".", 2)[-2:]))
    return Lowering(value, tuple(c for c in converts if c is not None))


for _name, _params in STATS.items():  # one line each in _signatures.STATS
    op(_name, reads=tuple(p.split("=")[0].strip() for p in _params.split(",")))(_stats_rule)


@op("builtins.sum", reads=("iterable", "start"))
def _builtin_sum(ctx: RuleContext, call: Call):
    """Python's ``sum([a, b, c])`` (or a tuple, or ``start=``): ``start + a + b + c``, elementwise with numpy
    broadcasting; partial sums stay partial over the axes every term shares (the default start, 0, adds
    nothing; a whole start joins them counted once, :func:`_start_once`), so ``sum(h @ w for h in hs)`` is
    completed by one psum after the sum.  The items must be written out, or made by a comprehension, or be one
    list's of one layout: a list built elsewhere may hold anything."""
    seq, start = call.arg(0, "iterable"), call.arg(1, "start")
    items = literal_items(seq)
    listed = seq.value.items if items is None and isinstance(seq.value, TupleValue) else \
        (sequence_item(seq.value),) if items is None and seq is not None and sequence_item(seq.value) is not None \
        else None
    if listed is not None and isinstance(seq.value, TupleValue) and isinstance(seq.node, cst.Tuple | cst.List) \
            and len(seq.node.elements) == len(listed) \
            and not any(isinstance(e, cst.StarredElement) for e in seq.node.elements):
        # sum(jnp.sum(p ** 2) for p in jax.tree.leaves(params)): a comprehension meshify unrolled, its terms
        # written out in the rewritten code, so each may be converted in its place
        items = [Operand(v, e.value, e.value) for v, e in zip(listed, seq.node.elements)]
        listed = None
    if listed is not None:  # sum(terms): a list built before (appended to in a loop: its one item), as it is
        terms = [Operand(v, seq.original, seq.node) for v in listed]
        value, converts, once = _terms_and_start(ctx, call, terms, start)
        moved = next((c for c in converts if c is not None and c.layout != c.operand.value.layout
                      and c.operand in terms), None)
        if moved is not None:
            raise ctx.error(LayoutError, call.node, f"sum() of {ctx.code(seq.original)!r}: its terms have different "
                            f"layouts ({moved.operand.value.layout.describe()} must become "
                            f"{moved.layout.describe()}), and meshify converts only terms written out",
                            f"write the terms out: sum([{ctx.code(seq.original)}[0], ...]) or add them with +")
        return Lowering(value, tuple(c for c in converts if c is not None and c.operand not in terms), replace=once)
    if items is None:
        if seq is not None and isinstance(seq.value, Static) and (start is None or isinstance(start.value, Static)):
            return unknown_call(ctx, call)
        raise ctx.error(UnsupportedError, call.node, f"sum() of {ctx.code(call.node.args[0].value)!r}, which is not "
                        "a list meshify can see into, so it cannot tell which arrays it adds",
                        "write the terms out: sum([a, b, c]) or a + b + c")
    if not any(isinstance(o.value, Array | Opaque | TupleValue | StructValue) for o in [*items, *filter(None, [start])]):
        return keep(Static())
    value, converts, once = _terms_and_start(ctx, call, items, start)
    return Lowering(value, tuple(c for c in converts if c is not None), replace=once)


def _terms_and_start(ctx: RuleContext, call: Call, terms: list, start, what: str = "sum"
                     ) -> tuple[Value, list[Convert | None], tuple]:
    """``start + t0 + t1 + ...`` elementwise: the result, each operand's conversion (terms first, then the start
    where it is kept) and what replaces the start in the call (:func:`_start_once`)."""
    if start is not None and isinstance(start.value, Static) and start.value.known \
            and type(start.value.literal) in (int, float) and start.value.literal == 0:
        start = None  # sum(xs, 0.0): adds nothing
    once = _start_once(ctx, call, terms, start)
    if once is not None:
        shared, counted = once
        value, converts = elementwise(ctx, [*terms, counted], ADD, call.node, what)
        if converts[-1] is None or converts[-1].layout == counted.value.layout:
            replaced = Template("{mr}.on_one_device({c}, {axes})", (("c", start.node), ("axes", MeshAxes(shared))))
            return value, [*converts[:-1], None], ((At(call.position(start)), replaced),)
    value, converts = elementwise(ctx, [*terms, *([start] if start is not None else [])], ADD, call.node, what)
    return value, converts, ()


def _start_once(ctx: RuleContext, call: Call, terms: list, start):
    """``sum(h @ w for h in hs, start=x)``: every term a partial sum over some axes and ``x`` whole: ``x`` joins
    them as a partial sum over those axes too, itself on the first device along them and zeros on the others
    (``mr.on_one_device``), so that the sum is completed once; (those axes, ``x`` as that partial sum), or None."""
    if start is None or not all(isinstance(t.value, Array) for t in terms) or not terms:
        return None
    shared = frozenset.intersection(*(t.value.layout.partial for t in terms))
    value = start.value
    if not shared or not (isinstance(value, Static) or isinstance(value, Array) and not value.layout.partial
                          and not shared & {a for axes in value.layout.axes for a in axes}):
        return None
    layout = value.layout if isinstance(value, Array) else Layout((), (), frozenset())
    return ctx.mesh.order(shared), Operand(Array(layout.with_partial(shared), value.origin if isinstance(
        value, Array) else ""), start.original, start.node)


#: The two-argument functions ``functools.reduce`` folds a list with elementwise, by their linearity (a sum keeps
#: the items' partial sums pending; any other completes them first).
_FOLDS = {**{n: ADD for n in ("jax.numpy.add", "jax.lax.add", "operator.add", "jax.numpy.subtract", "jax.lax.sub",
                              "operator.sub")},
          **{n: MUL for n in ("jax.numpy.multiply", "jax.lax.mul", "operator.mul")},
          **{n: NONLINEAR for n in ("jax.numpy.maximum", "jax.numpy.minimum", "jax.numpy.fmax", "jax.numpy.fmin",
                                    "jax.lax.max", "jax.lax.min", "jax.numpy.logaddexp")}}
#: ``lambda a, b: a + b`` and the like: the operator of the lambda's body, by its linearity.
_FOLD_OPERATORS = {cst.Add: ADD, cst.Subtract: ADD, cst.Multiply: MUL}


def fold_linearity(scope, fn: cst.BaseExpression) -> str | None:
    """The linearity of ``fn`` as ``functools.reduce`` folds with it: a function of :data:`_FOLDS` named as it is
    (``jnp.add``, ``operator.mul``), or a lambda of two parameters whose body is one of them on both (``lambda a,
    b: a + b``, ``lambda a, b: jnp.maximum(a, b)``); None for anything else.  ``scope``: what names ``fn``'s
    qualified names (a rule's context, or the module's)."""
    named = scope.qualified_names(fn) & _FOLDS.keys() if isinstance(fn, cst.Name | cst.Attribute) else set()
    if named:
        return _FOLDS[next(iter(named))]
    if not (isinstance(fn, cst.Lambda) and len(fn.params.params) == 2 and not fn.params.posonly_params
            and not fn.params.kwonly_params and fn.params.star_arg is cst.MaybeSentinel.DEFAULT
            and fn.params.star_kwarg is None and all(p.default is None for p in fn.params.params)):
        return None
    names = [p.name.value for p in fn.params.params]
    body = fn.body
    if isinstance(body, cst.BinaryOperation) and type(body.operator) in _FOLD_OPERATORS:
        operands = [body.left, body.right]
        kind = _FOLD_OPERATORS[type(body.operator)]
    elif isinstance(body, cst.Call) and len(body.args) == 2 and all(a.keyword is None and not a.star
                                                                    for a in body.args):
        named = scope.qualified_names(body.func) & _FOLDS.keys()
        if not named:
            return None
        operands, kind = [a.value for a in body.args], _FOLDS[next(iter(named))]
    else:
        return None
    read = [o.value for o in operands if isinstance(o, cst.Name)]
    if sorted(read) != sorted(names):
        return None
    if isinstance(body, cst.BinaryOperation) and isinstance(body.operator, cst.Subtract) and read != names:
        return None  # lambda a, b: b - a is not a fold of subtraction
    return kind


@op("functools.reduce", reads=("function", "iterable", "initial"))
def _functools_reduce(ctx: RuleContext, call: Call):
    """``functools.reduce(f, xs)``, ``functools.reduce(f, xs, init)`` with ``f`` an elementwise function of two
    arrays it knows (``operator.add``, ``jnp.maximum``, ``lambda a, b: a + b``): ``f`` applied elementwise across
    the items (and ``init``), numpy broadcasting; a sum keeps the items' partial sums pending (one psum after the
    fold, an ``init`` counted once as ``sum``'s start), any other fold needs them whole (a comprehension's items
    are completed in it; a list's of partial sums is refused).  Any other ``f`` has no rule."""
    fn, seq, init = call.arg(0, "function"), call.arg(1, "iterable"), call.arg(2, "initial")
    linear = fold_linearity(ctx, fn.original) if fn is not None and seq is not None else None
    if linear is None:
        return unknown_call(ctx, call)
    assert seq is not None
    items = literal_items(seq)
    listed = seq.value.items if items is None and isinstance(seq.value, TupleValue) else \
        (sequence_item(seq.value),) if items is None and sequence_item(seq.value) is not None else None
    if items is None and listed is None:
        if isinstance(seq.value, Static) and (init is None or isinstance(init.value, Static)):
            return unknown_call(ctx, call)
        raise ctx.error(UnsupportedError, call.node, f"functools.reduce over {ctx.code(seq.original)!r}, which is "
                        "not a list meshify can see into, so it cannot tell which arrays it folds",
                        "fold a list or tuple of arrays, or write the folds out: f(f(a, b), c)")
    terms = items if items is not None else [Operand(v, seq.original, seq.node) for v in listed]  # type: ignore[union-attr]
    if linear == ADD:
        value, converts, once = _terms_and_start(ctx, call, terms, init, "functools.reduce")
    else:
        value, converts = elementwise(ctx, [*terms, *([init] if init is not None else [])], linear, call.node,
                                      "functools.reduce")
        once = ()
    if items is None:
        moved = next((c for c in converts if c is not None and c.layout != c.operand.value.layout
                      and c.operand in terms), None)
        if moved is not None:
            what = "partial sums, which this fold needs whole" if moved.operand.value.layout.partial and \
                not moved.layout.partial else "of another layout than the fold's result"
            raise ctx.error(LayoutError, call.node, f"functools.reduce over {ctx.code(seq.original)!r}: its items are "
                            f"{what} ({moved.operand.value.layout.describe()} must become "
                            f"{moved.layout.describe()}), and meshify converts only items written out",
                            "make the list with a comprehension ([h @ w for w in ws]: each item completed in it), "
                            "or write the items out")
        converts = [c for c in converts if c is None or c.operand not in terms]
    return Lowering(value, tuple(c for c in converts if c is not None), replace=once)


# -- dtypes of arrays ------------------------------------------------------------------------------------


def _result_type_rule(ctx: RuleContext, call: Call):
    """``jnp.result_type(x, w)``: a dtype, read off the arrays' dtypes alone (static when JAX traces), as
    mixed-precision code asks it; a partial sum is refused, as meshify may hold it in float32 for
    float16/bfloat16 operands (its ``.dtype`` is read as the dtype it has once summed)."""
    for o in [*call.args, *call.kwargs.values()]:
        if isinstance(o.value, Array) and o.value.layout.partial:
            code = ctx.code(o.original)
            raise ctx.error(UnsupportedError, o.original, f"{call.name} of {code!r}, a partial sum: meshify may "
                            "hold it in float32 where its operands are float16/bfloat16",
                            f"ask its dtype as {code}.dtype (jnp.result_type({code}.dtype, ...)), which meshify "
                            "reads as the dtype it has once summed")
        if isinstance(o.value, TupleValue | StructValue):
            raise ctx.error(UnsupportedError, o.original, f"{call.name} of a tuple or pytree "
                            f"{ctx.code(o.original)!r}", "pass its arrays (or their dtypes) one by one")
    return keep(Static())


op("jax.numpy.result_type", reads=("args",))(_result_type_rule)
