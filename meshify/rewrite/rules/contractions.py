"""Contractions: ``einsum``, ``matmul``/``@``, ``dot``.

A contracted dim split the same way in every operand is contracted locally and the result
is a partial sum over its axes (deferred); split in some operands only, the others are
sliced locally.  Output dims keep their splits.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import libcst as cst

from meshify.annotate._types import BROADCAST, INFERRED, Axes, Layout, unify_dims
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text
from meshify.rewrite._plan import choose_splits
from meshify.rewrite._values import Array, Opaque, Operand, Static, TupleValue, Value
from meshify.rewrite.rules._api import (
    At,
    Call,
    Contraction,
    Convert,
    Lowering,
    MeshAxes,
    Ref,
    RuleContext,
    Template,
    beside,
    op,
    unknown_call,
)
from meshify.rewrite.rules.elementwise import _checked_entries

# -- contractions ---------------------------------------------------------------------------------


@op("jax.numpy.einsum", reads=("subscripts", "operands", "optimize", "precision", "preferred_element_type"))
def _einsum(ctx: RuleContext, call: Call):
    spec = call.arg(0, "subscripts")
    if spec is None or not (isinstance(spec.value, Static) and isinstance(spec.value.literal, str)):
        raise ctx.error(UnsupportedError, call.node, "einsum without literal subscripts",
                        'write the subscripts as a string literal: jnp.einsum("bd,df->bf", x, w)')
    operands = list(call.args[1:])
    inputs, output = _parse_subscripts(ctx, spec.value.literal, operands, spec.original)
    value, converts, contraction = contract(ctx, operands, inputs, output, call.node, "einsum")
    return Lowering(value, tuple(c for c in converts if c is not None), accumulate=_accumulate(value, operands),
                    contraction=contraction)


def forms_partial(value, operands: Sequence) -> bool:
    """Whether a contraction's result is a partial sum over axes none of its operands was."""
    if not isinstance(value, Array):
        return False
    before = {a for o in operands if isinstance(o.value, Array) for a in o.value.layout.partial}
    return bool(value.layout.partial - before)


def _accumulate(value, operands: Sequence):
    """A contraction forming a partial sum accumulates low-precision operands in float32."""
    return ("preferred_element_type", tuple(operands)) if forms_partial(value, operands) else None


def _parse_subscripts(ctx: RuleContext, text: str, operands, where) -> tuple[list[str], str]:
    text = text.replace(" ", "")
    lhs, arrow, output = text.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ctx.error(LayoutError, where, f"einsum subscripts {text!r} name {len(inputs)} operands but "
                        f"{len(operands)} are given", "give one subscript group per operand")
    spare = iter(c for c in string.ascii_uppercase + string.ascii_lowercase if c not in text)
    ellipsis_letters = ""
    if "..." in text:
        ranks = [(s, _rank(o)) for s, o in zip(inputs, operands)]
        width = max((r - (len(s) - 3) for s, r in ranks if "..." in s and r is not None), default=0)
        ellipsis_letters = "".join(next(spare) for _ in range(width))
    expanded = []
    for s, o in zip(inputs, operands):
        if "..." in s:
            rank = _rank(o)
            n = (rank - (len(s) - 3)) if rank is not None else 0
            s = s.replace("...", ellipsis_letters[len(ellipsis_letters) - n:] if n else "")
        rank = _rank(o)
        if rank is not None and len(s) != rank:
            raise ctx.error(LayoutError, where,
                            f"einsum subscripts {s!r} name {len(s)} dims but operand "
                            f"{ctx.code(o.original)!r} has {rank} dims {list(o.value.dims)}",
                            "make each subscript group as long as its operand's rank")
        expanded.append(s)
    if arrow:
        output = output.replace("...", ellipsis_letters)
    else:
        counts = {c: "".join(expanded).count(c) for c in "".join(expanded)}
        output = ellipsis_letters + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis_letters))
    for c in output:
        if c not in "".join(expanded):
            raise ctx.error(LayoutError, where, f"einsum output letter {c!r} appears in no operand",
                            "every output letter must name a dim of some operand")
    return expanded, output


def _rank(o) -> int | None:
    return o.value.layout.rank if isinstance(o.value, Array) else None


#: What the letters of a convolution (rules/convolution.py) stand for, for messages: the user wrote NWC/WIO.
_CONV_ROLES = {"a": "the convolution's batch dim", "b": "the convolution's input channel dim (the image's C, the "
               "kernel's I)", "c": "the convolution's output channel dim", "e": "the convolution's grouped input dim"}


def contract(ctx: RuleContext, operands: Sequence, inputs: Sequence[str], output: str, node, what: str
             ) -> tuple[Array, list[Convert | None], Contraction]:
    """Plans an einsum-like contraction; returns the result value, each operand's conversion, and the
    :class:`Contraction` for the interpreter to pass to :data:`OBSERVERS`.

    A contracted dim split the same way in every operand is contracted locally and the
    result is a partial sum over its axes; split in some operands only, the others are
    sliced locally (free).  Output dims keep their splits.  Where one axis would split two
    dims, the larger operand (by rank) keeps its split and the smaller is gathered.
    """
    names: dict[str, str] = {}
    for o, letters in zip(operands, inputs):
        if isinstance(o.value, TupleValue):
            raise ctx.error(UnsupportedError, o.original, f"{what} of a tuple", "unpack the tuple and use one array")
        if not isinstance(o.value, Array):
            continue
        for letter, dim in zip(letters, o.value.dims):
            if dim == BROADCAST:
                continue
            unified = unify_dims(names.get(letter, dim), dim)
            if unified is not None:
                ctx.lined_up(names.get(letter, dim), dim)
            if unified is None:
                field = "." in ctx.code(o.original) or "[" in ctx.code(o.original)
                # (a convolution's letters are meshify's own: it names the role, the channels it contracts)
                role = f"{what} letter {letter!r}" if what != "conv" else _CONV_ROLES.get(letter, "a convolution dim")
                raise ctx.error(LayoutError, node,
                                f"{role} is dim {names[letter]!r} in one operand and {dim!r} in "
                                f"{ctx.code(o.original)!r}",
                                "contracted and shared dims must have the same name in every hint"
                                + ("; a struct's field hints name one set of dims for every instance of its class "
                                   "(one MLP class for a token MLP and a channel MLP): rename them per use with "
                                   "Annotated[Mlp, {\"d_in\": \"patch\", \"d_hidden\": \"tok_ff\"}] as the "
                                   "field's or parameter's hint" if field else ""))
            names[letter] = unified
    for o, letters in zip(operands, inputs):
        for letter, dim in zip(letters, o.value.dims if isinstance(o.value, Array) else ()):
            if dim == BROADCAST:  # (x[None] @ w: a batch letter that is size 1 wherever it appears stays so)
                names.setdefault(letter, BROADCAST)
    for letters in inputs:
        for letter in letters:
            names.setdefault(letter, f"{what}_{letter}" + INFERRED)  # (a dim of an operand of unknown dims)
    order = sorted(range(len(operands)), key=lambda i: -ctx.elements(
        operands[i].value.dims if isinstance(operands[i].value, Array) else [""] * len(inputs[i])))
    candidates: dict[str, list[Axes]] = {}
    weights: dict[str, int] = {}
    for i in order:
        o = operands[i]
        if isinstance(o.value, Array):
            for letter, axes in zip(inputs[i], o.value.layout.axes):
                if axes and axes not in candidates.setdefault(letter, []):
                    candidates[letter].append(axes)
                    weights[letter] = max(weights.get(letter, 0), ctx.elements(o.value.dims))
    all_letters = list(dict.fromkeys("".join(inputs)))
    preferred = {l: ctx.rules.axes(names[l]) for l in all_letters}
    chosen = choose_splits(all_letters, candidates, preferred, weights, kept=frozenset(output))
    for letters in inputs:  # a letter twice in one operand ("ii->i", a diagonal): both copies must be whole
        for letter in {l for l in letters if letters.count(l) > 1}:
            chosen[letter] = ()
    used = {a for axes in chosen.values() for a in axes}
    partial_ops = [o for o in operands if isinstance(o.value, Array) and o.value.layout.partial]
    keep = (partial_ops[0].value.layout.partial - used) if partial_ops else frozenset()
    converts: list[Convert | None] = []
    origin = partial_ops[0].value.origin if partial_ops else ""
    for i, (o, letters) in enumerate(zip(operands, inputs)):
        dims = tuple(names[l] for l in letters)
        splits = tuple(chosen[l] for l in letters)
        named = tuple(names[l] for l in letters)
        if isinstance(o.value, Array):
            dims = tuple(d if d.endswith(INFERRED) or d == BROADCAST else n for d, n in zip(o.value.dims, dims))
            partial = o.value.layout.partial & keep if (partial_ops and o is partial_ops[0]) else frozenset()
            convert = Convert(o, Layout(dims, splits, partial), what)
            if any(d.endswith(INFERRED) and not n.endswith(INFERRED) and n != BROADCAST and axes and not before
                   for d, n, axes, before in zip(o.value.dims, named, splits, o.value.layout.axes)):
                # a whole value of a size meshify cannot read (jnp.arange(cfg.n): n?) split along the named
                # dim its letter shares: its size is checked against that dim's, else a wrong size would
                # contract block against block where one device refuses
                convert = _checked_entries(ctx, convert, named)
            converts.append(convert)
        elif isinstance(o.value, Opaque):
            replicated = Operand(Array(Layout.replicated(dims)), o.original, o.node)
            convert = Convert(replicated, Layout(dims, splits), what)
            if any(splits) and not any(n.endswith(INFERRED) or n == BROADCAST for n, a in zip(named, splits) if a):
                convert = _checked_entries(ctx, convert, named)  # an array of unknown dims, split: its size too
            converts.append(convert)
        else:
            converts.append(None)
    # An operand gathered over an axis another operand is split over (a weight split over 'data'
    # meeting activations split over 'data' on the batch: FSDP) is gathered as varying over it, so
    # its gradient is reduce-scattered back to the blocks.
    converts = beside(converts)
    contracted = [l for l in all_letters if l not in output and chosen[l]]
    summed_axes = {a for l in contracted for a in chosen[l]}
    if contracted:
        origin = "contracted " + ", ".join(f"'{names[l]}'" for l in contracted) + " split"
    out_layout = Layout(tuple(names[l] for l in output), tuple(chosen[l] for l in output),
                        frozenset(keep | summed_axes))
    value = Array(out_layout, origin)
    return value, converts, Contraction(value, tuple(converts), tuple(inputs), what)


#: Called by the interpreter as ``observe(rw, value, converts, inputs, what)`` for each contraction a
#: rule planned (a :class:`Contraction`), before its operands are converted (``meshify plan`` counts
#: FLOPs and the activations saved for the backward pass this way).
OBSERVERS: list = []


def matmul(ctx: RuleContext, operands: Sequence, node, what: str, dot: bool = False
           ) -> tuple[Value, list[Convert | None], Contraction | None]:
    """``a @ b`` / ``jnp.matmul`` / ``jnp.dot`` as a contraction (None: of values of unknown dims)."""
    ranks = [_rank(o) for o in operands]
    if any(isinstance(o.value, Static) for o in operands) or None in ranks:
        if all(not (isinstance(o.value, Array) and (o.value.layout.is_split or o.value.layout.partial))
               for o in operands):
            kind = Opaque() if any(isinstance(o.value, Array | Opaque) for o in operands) else Static()
            return kind, [None] * len(operands), None
        unknown = next(o for o, r in zip(operands, ranks) if isinstance(o.value, Static) or r is None)
        text = ctx.code(unknown.node) if isinstance(unknown.node, cst.CSTNode) else "an operand"
        raise ctx.error(LayoutError, node, f"cannot infer the dims of {text!r}, an operand of {what}",
                        f"make it a parameter with a Tensor hint, or name its dims first: "
                        f"'w: Tensor[\"d_in\", \"d_out\"] = {text}' (a whole copy on every device)")
    ra, rb = ranks
    assert ra is not None and rb is not None  # None refused above
    if ra == 0 or rb == 0:
        raise ctx.error(LayoutError, node, f"{what} of a scalar", "use * for scalars")
    if dot and rb > 2:
        a = string.ascii_letters[:ra]
        b = string.ascii_letters[ra:ra + rb - 2] + a[-1] + string.ascii_letters[ra + rb - 2]
        out = a[:-1] + b[:-2] + b[-1]
    elif ra == 1 and rb == 1:
        a, b, out = "k", "k", ""
    elif ra == 1:
        batch = "abcdefgh"[: rb - 2]
        a, b, out = "k", batch + "kj", batch + "j"
    elif rb == 1:
        batch = "abcdefgh"[: ra - 2]
        a, b, out = batch + "ik", "k", batch + "i"
    else:
        batch = "abcdefgh"[: max(ra, rb) - 2]
        a = batch[len(batch) - (ra - 2):] + "ik"
        b = batch[len(batch) - (rb - 2):] + "kj"
        out = batch + "ij"
    return contract(ctx, operands, [a, b], out, node, what)


@op("jax.numpy.matmul", reads=("a", "b", "precision", "preferred_element_type"))
def _matmul(ctx: RuleContext, call: Call):
    operands = [call.arg(0, "a"), call.arg(1, "b")]
    value, converts, contraction = matmul(ctx, operands, call.node, "matmul")
    return Lowering(value, tuple(c for c in converts if c is not None), accumulate=_accumulate(value, operands),
                    contraction=contraction)


@op("jax.lax.dot_general", reads=("lhs", "rhs", "dimension_numbers", "precision", "preferred_element_type"))
def _dot_general(ctx: RuleContext, call: Call):
    """``jax.lax.dot_general(x, w, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)``: the
    einsum its dimension numbers spell (batch dims first, then the free dims of each operand in order),
    planned as one (an int8 matmul accumulating in int32 included)."""
    lhs, rhs, numbers = call.arg(0, "lhs"), call.arg(1, "rhs"), call.arg(2, "dimension_numbers")
    if not (isinstance(lhs.value, Array) and isinstance(rhs.value, Array)):
        return unknown_call(ctx, call)
    spelled = _dimension_numbers(numbers, lhs.value.layout.rank, rhs.value.layout.rank)
    if spelled is None:
        raise ctx.error(UnsupportedError, numbers.original, f"dimension_numbers {ctx.code(numbers.original)!r} of "
                        "jax.lax.dot_general is not a literal meshify can read",
                        "write it as a literal: (((1,), (0,)), ((), ())), or use jnp.einsum")
    operands = [lhs, rhs]
    value, converts, contraction = contract(ctx, operands, *spelled, call.node, "dot_general")
    return Lowering(value, tuple(c for c in converts if c is not None), accumulate=_accumulate(value, operands),
                    contraction=contraction)


def _dimension_numbers(numbers: Operand, ra: int, rb: int) -> tuple[list[str], str] | None:
    """dot_general's ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`` as einsum letters, or None."""
    literal = numbers.value.literal if isinstance(numbers.value, Static) and numbers.value.known else None
    try:
        (lc, rc), (lb, rb_) = literal  # type: ignore[misc]
        lc, rc, lb, rb_ = (tuple(int(i) % r for i in dims) for dims, r in ((lc, ra), (rc, rb), (lb, ra), (rb_, rb)))
    except (TypeError, ValueError):
        return None
    if len(lc) != len(rc) or len(lb) != len(rb_) or len({*lc, *lb}) != len(lc) + len(lb) \
            or len({*rc, *rb_}) != len(rc) + len(rb_):
        return None
    spare = iter(string.ascii_letters)
    a: list[str] = [""] * ra
    b: list[str] = [""] * rb
    batch = ""
    for i, j in zip(lb, rb_):
        a[i] = b[j] = letter = next(spare)
        batch += letter
    for i, j in zip(lc, rc):
        a[i] = b[j] = next(spare)
    free = ""
    for letters in (a, b):
        for i, letter in enumerate(letters):
            if not letter:
                letters[i] = next(spare)
                free += letters[i]
    return ["".join(a), "".join(b)], batch + free


@op("jax.numpy.dot", reads=("a", "b", "precision", "preferred_element_type"))
def _dot(ctx: RuleContext, call: Call):
    operands = [call.arg(0, "a"), call.arg(1, "b")]
    value, converts, contraction = matmul(ctx, operands, call.node, "dot", dot=True)
    return Lowering(value, tuple(c for c in converts if c is not None), accumulate=_accumulate(value, operands),
                    contraction=contraction)




@op("jax.numpy.outer", reads=("a", "b"))
def _outer(ctx: RuleContext, call: Call):
    """``jnp.outer(a, b)`` of two vectors: ``einsum("i,j->ij")``, each output dim keeping its split."""
    operands = [_literal_vector(call.arg(0, "a")), _literal_vector(call.arg(1, "b"))]
    if any(_rank(o) != 1 for o in operands if isinstance(o.value, Array)) or \
            not all(isinstance(o.value, Array) for o in operands):
        return _flattened(ctx, call, operands, "outer")
    value, converts, contraction = contract(ctx, operands, ["i", "j"], "ij", call.node, "outer")
    return Lowering(value, tuple(c for c in converts if c is not None), contraction=contraction)


def _literal_vector(operand: Operand) -> Operand:
    """A vector of a literal length (``jnp.arange(0, 8, 2)``, a config's size): a whole array, its dim named
    by that length (``4?``), as an elementwise op names such a value by position.  Other operands as given."""
    shape = operand.value.shape if isinstance(operand.value, Opaque) else None
    if shape is None or len(shape) != 1:
        return operand
    return Operand(Array(Layout.replicated((f"{shape[0]}{INFERRED}",))), operand.original, operand.node)


@op("jax.numpy.kron", reads=("a", "b"))
def _kron(ctx: RuleContext, call: Call):
    """``jnp.kron(a, b)``: each dim of the result runs over ``a``'s dim (major) and ``b``'s (minor), so a
    block of ``a``'s split dim gives a block of the result's: ``a`` keeps its splits (and a partial sum:
    the product is linear in it), ``b`` is taken whole (its blocks would interleave).  Each result dim is
    named ``{a}_{b}?`` (inferred), or the one whose partner has size 1."""
    a, b = call.arg(0, "a"), call.arg(1, "b")
    if not (isinstance(a.value, Array) and isinstance(b.value, Array)):
        return unknown_call(ctx, call)
    la, lb = a.value.layout, b.value.layout
    if la.rank != lb.rank:
        if la.is_split or lb.is_split or la.partial or lb.partial:
            raise ctx.error(UnsupportedError, call.node, f"jnp.kron of values of {la.rank} and {lb.rank} dims, one "
                            "of them split", "give both the same number of dims (jnp.expand_dims) first")
        return Lowering(Opaque(), (Convert(a, la, "kron"), Convert(b, lb, "kron")))
    dims = tuple(da if db == BROADCAST else db if da == BROADCAST else
                 f"{da.rstrip(INFERRED)}_{db.rstrip(INFERRED)}{INFERRED}" for da, db in zip(la.dims, lb.dims))
    whole_b = Layout.replicated(lb.dims)
    converts = (Convert(a, la, "kron"), Convert(b, whole_b, "kron's right operand (its blocks would interleave)"))
    return Lowering(Array(Layout(dims, la.axes, la.partial)), converts)


@op("jax.numpy.inner", reads=("a", "b", "precision", "preferred_element_type"))
def _inner(ctx: RuleContext, call: Call):
    """``jnp.inner(a, b)``: the last dims contracted (``einsum("...k,...k->......")``)."""
    operands = [call.arg(0, "a"), call.arg(1, "b")]
    ranks = [_rank(o) for o in operands]
    if not all(isinstance(o.value, Array) for o in operands) or 0 in ranks:
        return _flattened(ctx, call, operands, "inner")
    ra, rb = ranks
    assert ra is not None and rb is not None
    a = string.ascii_letters[:ra - 1] + "Z"
    b = string.ascii_letters[ra - 1:ra - 1 + rb - 1] + "Z"
    value, converts, contraction = contract(ctx, operands, [a, b], a[:-1] + b[:-1], call.node, "inner")
    return Lowering(value, tuple(c for c in converts if c is not None), accumulate=_accumulate(value, operands),
                    contraction=contraction)


@op("jax.numpy.vdot", reads=("a", "b", "precision", "preferred_element_type"))
def _vdot(ctx: RuleContext, call: Call):
    """``jnp.vdot(a, b)`` of two arrays of the same dims (an L2 penalty's ``vdot(p, p)``): every dim contracted
    (``einsum("ij,ij->")`` with ``a`` conjugated, as jnp does), the blocks lined up; a split dim leaves a
    partial sum.  Arrays of other dims (vdot ravels them) as :func:`_flattened` takes them."""
    operands = [call.arg(0, "a"), call.arg(1, "b")]
    if not all(isinstance(o.value, Array) for o in operands) or operands[0].value.dims != operands[1].value.dims:
        return _flattened(ctx, call, operands, "vdot")
    letters = string.ascii_letters[:_rank(operands[0])]
    value, converts, contraction = contract(ctx, operands, [letters, letters], "", call.node, "vdot")
    return Lowering(value, tuple(c for c in converts if c is not None), accumulate=_accumulate(value, operands),
                    contraction=contraction)


@op("jax.numpy.tensordot", reads=("a", "b", "axes", "precision", "preferred_element_type"))
def _tensordot(ctx: RuleContext, call: Call):
    """``jnp.tensordot(a, b, axes)`` with literal axes (an int N: a's last N dims with b's first N; or two
    sequences of axes): an einsum over the paired dims."""
    operands = [call.arg(0, "a"), call.arg(1, "b")]
    if not all(isinstance(o.value, Array) for o in operands):
        return _flattened(ctx, call, operands, "tensordot")
    ra, rb = (_rank(o) for o in operands)
    assert ra is not None and rb is not None
    given = call.arg(2, "axes")
    axes = 2 if given is None else given.value.literal if isinstance(given.value, Static) and given.value.known \
        else None
    if isinstance(axes, int) and 0 <= axes <= min(ra, rb):
        pairs = list(zip(range(ra - axes, ra), range(axes)))
    elif isinstance(axes, tuple | list) and len(axes) == 2 and all(isinstance(x, tuple | list | int) for x in axes):
        left, right = ([x] if isinstance(x, int) else list(x) for x in axes)
        if len(left) != len(right) or not all(isinstance(i, int) and -r <= i < r
                                                for side, r in ((left, ra), (right, rb)) for i in side):
            raise ctx.error(LayoutError, given.original, f"tensordot axes {axes!r} do not pair dims of a ({ra} dims) "
                            f"with dims of b ({rb} dims)", "give two sequences of the same length")
        pairs = [(i % ra, j % rb) for i, j in zip(left, right)]
    else:
        where = given.original if given is not None else call.node
        raise ctx.error(UnsupportedError, where, "tensordot with axes meshify cannot read",
                        "write axes as an int literal or two tuples of int literals")
    a = list(string.ascii_letters[:ra])
    b = list(string.ascii_letters[ra:ra + rb])
    for i, j in pairs:
        b[j] = a[i]
    out = [l for i, l in enumerate(a) if i not in {p for p, _ in pairs}] + \
        [l for j, l in enumerate(b) if j not in {q for _, q in pairs}]
    value, converts, contraction = contract(ctx, operands, ["".join(a), "".join(b)], "".join(out), call.node,
                                            "tensordot")
    return Lowering(value, tuple(c for c in converts if c is not None), accumulate=_accumulate(value, operands),
                    contraction=contraction)


def _flattened(ctx: RuleContext, call: Call, operands: Sequence, what: str) -> Lowering:
    """outer/inner/tensordot of a scalar, of values of unknown dims, or outer of arrays of more than one dim
    (numpy flattens them first): whole values only."""
    split = next((o for o in operands if isinstance(o.value, Array) and (o.value.layout.is_split
                                                                          or o.value.layout.partial)), None)
    if split is not None:
        unknown = next((o for o in operands if not isinstance(o.value, Array)), None)
        if unknown is not None:
            text = ctx.code(unknown.original)
            raise ctx.error(LayoutError, call.node, f"cannot infer the dims of {text!r}, an operand of {what}",
                            f"make it a parameter with a Tensor hint, or name its dims first: "
                            f"'v: Tensor[...] = {text}' (a whole copy on every device)")
        raise ctx.error(UnsupportedError, call.node, f"jnp.{what} of {ctx.code(split.original)!r} (layout "
                        f"{split.value.layout.describe()}) with a scalar, or (outer) of arrays of more than one "
                        "dim, which it flattens", "write it as jnp.einsum with named dims, or as a product")
    return unknown_call(ctx, call)


# -- attention ------------------------------------------------------------------------------------------

_ATTENTION_ROLES = {-3: "sequence dim", -1: "head dim"}


@op("jax.nn.dot_product_attention", reads=("query", "key", "value", "bias", "mask", "scale", "is_causal",
                                           "query_seq_lengths", "key_value_seq_lengths", "local_window_size",
                                           "implementation"))
def _dot_product_attention(ctx: RuleContext, call: Call):
    """``jax.nn.dot_product_attention(q, k, v, ...)`` over ``[batch, seq, heads, head_dim]`` (or without
    batch): local where batch and heads are split (the same way in q, k and v; grouped kv heads split as
    the query heads are, so each device's query heads read its own kv heads); a split sequence or head
    dim is refused (it needs ring attention, or a partial sum inside the softmax).  bias and mask
    (``[batch, heads, q_seq, kv_seq]``, right-aligned) and the sequence lengths (``[batch]``) take the
    batch and heads splits."""

    q, k, v = call.arg(0, "query"), call.arg(1, "key"), call.arg(2, "value")
    qkv = [q, k, v]
    if not all(isinstance(o.value, Array) for o in qkv):
        return _flattened(ctx, call, qkv, "dot_product_attention")
    ranks = {o.value.layout.rank for o in qkv}
    if len(ranks) != 1 or ranks.pop() not in (3, 4):
        raise ctx.error(LayoutError, call.node, "dot_product_attention of query, key and value of other ranks than "
                        "[batch, seq, heads, head_dim] (or [seq, heads, head_dim]) each",
                        "give each of query, key and value those dims")
    for o in qkv:
        layout = o.value.layout
        for pos, role in _ATTENTION_ROLES.items():
            if layout.axes[pos]:
                raise ctx.error(UnsupportedError, call.node, f"dot_product_attention with its {role} "
                                f"({layout.dims[pos]!r} of {ctx.code(o.original)!r}) split over "
                                f"{axes_text(layout.axes[pos])}", f"map {layout.dims[pos]!r} to no mesh axis (a split "
                                "sequence needs ring attention; split batch or heads instead)")
    rank = q.value.layout.rank
    heads = next((o.value.layout.axes[-2] for o in qkv if o.value.layout.axes[-2]), ())
    batch = next((o.value.layout.axes[0] for o in qkv if o.value.layout.axes[0]), ()) if rank == 4 else ()
    if set(heads) & set(batch):
        raise ctx.error(LayoutError, call.node, "dot_product_attention with batch and heads split over one axis",
                        "split batch and heads over different mesh axes")

    # grouped kv heads (their own dim name) left whole by the rules: each device slices the kv heads its query
    # heads read at run time (mr.grouped_kv), so fewer kv heads than devices work too (multi-query attention)
    q_heads = q.value.layout.dims[-2]
    grouped = bool(heads) and all(o.value.layout.dims[-2] != q_heads and not o.value.layout.axes[-2]
                                  for o in (k, v))

    def laid(o: Operand) -> Layout:
        dims = o.value.layout.dims
        own = () if grouped and o is not q else heads
        return Layout(dims, ((batch,) if rank == 4 else ()) + ((), own, ()), frozenset())

    converts = [Convert(o, laid(o), "dot_product_attention") for o in qkv]
    replaced: list = []
    notes: tuple[str, ...] = ()
    if grouped:
        for i in (1, 2):
            wrap = Template("{mr}.grouped_kv({kv}, {query}, axis_name={axes})",
                            (("kv", Ref(i)), ("query", Ref(0)), ("axes", MeshAxes(heads))))
            replaced.append((At(call.position(qkv[i])), wrap))
        notes = ((f"grouped kv heads {k.value.layout.dims[-2]!r} whole: each device slices those its query heads "
                  f"({q_heads!r}, split over {axes_text(heads)}) read"),)
    for name, positions in (("bias", (-4, -3)), ("mask", (-4, -3)), ("query_seq_lengths", (-1,)),
                            ("key_value_seq_lengths", (-1,))):
        index = {"bias": 3, "mask": 4}.get(name)
        extra = call.arg(index, name) if index is not None else call.kwargs.get(name)
        if extra is None or isinstance(extra.value, Static):
            continue
        wanted = {-4: batch, -3: heads} if len(positions) == 2 else {-1: batch}
        if not isinstance(extra.value, Array):
            if batch or heads:
                text = ctx.code(extra.original)
                raise ctx.error(LayoutError, extra.original, f"cannot infer the dims of {text!r}, the {name} of "
                                "dot_product_attention with its batch or heads split",
                                f"name its dims first: '{name}: Tensor[...] = {text}' (size-1 dims as \"1\")")
            continue
        layout = extra.value.layout
        q_dims = q.value.layout.dims
        own = {-4: q_dims[0], -3: q_dims[-2]} if len(positions) == 2 else {-1: q_dims[0]}
        # split as the query's batch / heads where it is that dim; another name there (size 1) is broadcast
        axes = [wanted.get(i - layout.rank, ()) if dim == own.get(i - layout.rank) else ()
                for i, dim in enumerate(layout.dims)]
        converts.append(Convert(extra, Layout(layout.dims, tuple(axes), frozenset()), "dot_product_attention"))
    value = Array(laid(q))
    return Lowering(value, tuple(converts), contraction=_attention_contractions(converts, value, rank),
                    replace=tuple(replaced), notes=notes)


def _attention_contractions(converts: list[Convert], value: Array, rank: int) -> tuple[Contraction, ...]:
    """Attention's two contractions, for ``meshify plan``'s FLOPs and saved activations: the scores
    (``bqhd,bkhd->bhqk``: every query head against its kv head's keys) and the weighted values
    (``bhqk,bkhe->bqhe``)."""
    q, k, v = converts[:3]
    qd, kd = q.layout.dims, k.layout.dims
    b = "b" if rank == 4 else ""
    scores_dims = ((qd[0],) if rank == 4 else ()) + (qd[-2], qd[-3], kd[-3])
    scores_axes = ((q.layout.axes[0],) if rank == 4 else ()) + (q.layout.axes[-2], (), ())
    scores = Convert(q.operand, Layout(scores_dims, scores_axes, frozenset()), "dot_product_attention")
    return (Contraction(Array(scores.layout), (q, k), (f"{b}qhd", f"{b}khd"), "dot_product_attention"),
            Contraction(value, (scores, v), (f"{b}hqk", f"{b}khe"), "dot_product_attention"))
