"""Shape ops: the transpose family (local, linear), reshapes (sizes become per-shard sizes; a
split dim must be the major part of a merge), ``concatenate``/``stack`` on unsplit dims and
``split``.
"""

from __future__ import annotations

import hashlib
import itertools

import libcst as cst

from meshify._halos import section_chunks, section_groups, section_widths
from meshify.annotate._types import BROADCAST, INFERRED, Axes, Layout, joined_slices, sliced_dim, unify_dims, unsliced
from meshify.errors import LayoutError, MeshifyError, UnsupportedError
from meshify.rewrite._collectives import axes_text, sections_kind
from meshify.rewrite._containers import sequence_item
from meshify.rewrite._plan import choose_splits
from meshify.rewrite._templates import int_node
from meshify.rewrite._values import Array, Opaque, Operand, Static, TupleValue, Value, array
from meshify.rewrite.rules._api import (
    ADD,
    At,
    Call,
    Convert,
    Emitted,
    Lowering,
    MeshAxes,
    Ref,
    RuleContext,
    Template,
    keep,
    literal_items,
    op,
    unknown_call,
)
from meshify.rewrite.rules.elementwise import _kept_partial


def _literal(operand) -> object:
    if operand is None:
        return None
    value = operand.value
    return value.literal if isinstance(value, Static) and value.known else _UNKNOWN


_UNKNOWN = object()


def _ints(ctx: RuleContext, operands, what: str, where) -> list[int]:
    out: list[int] = []
    for o in operands:
        lit = _literal(o)
        if isinstance(lit, tuple | list):
            out.extend(lit)
        elif isinstance(lit, int):
            out.append(lit)
        else:
            raise ctx.error(UnsupportedError, where, f"{what} needs literal int axes",
                            "write the axes as int literals so that meshify knows which dims move")
    return out


def _permuted(x: Operand, perm: list[int]) -> Array:
    layout = array(x).layout
    return Array(Layout(tuple(layout.dims[p] for p in perm), tuple(layout.axes[p] for p in perm), layout.partial),
                 array(x).origin)


def _x(call: Call, keyword: str = "a"):
    return call.receiver if call.receiver is not None else call.arg(0, keyword)



# -- transpose family ------------------------------------------------------------------------


@op("jax.numpy.transpose", method="transpose", reads=("a", "axes", "args"))
def _transpose(ctx: RuleContext, call: Call):
    x = _x(call)
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    rank = array(x).layout.rank
    if call.receiver is not None:
        given = list(call.args) or ([call.kwargs["axes"]] if "axes" in call.kwargs else [])
    else:
        given = [o for o in [call.arg(1, "axes")] if o is not None]
    given = [o for o in given if _literal(o) is not None]
    perm = _ints(ctx, given, "transpose", call.node) if given else list(reversed(range(rank)))
    if sorted(p % rank for p in perm) != list(range(rank)):
        raise ctx.error(LayoutError, call.node, f"transpose axes {perm} are not a permutation of {rank} dims",
                        f"list each of the {rank} axes once")
    return keep(_permuted(x, [p % rank for p in perm]))


@op("jax.numpy.expand_dims", reads=("a", "axis"))
def _expand_dims(ctx: RuleContext, call: Call):
    """``jnp.expand_dims(x, axis)``: size-1 dims inserted (never split); splits and partial sums kept."""
    x = _x(call)
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    inserted = _ints(ctx, [call.arg(1, "axis")], "expand_dims", call.node)
    rank = layout.rank + len(inserted)
    at = sorted({a % rank for a in inserted}) if all(-rank <= a < rank for a in inserted) else None
    if at is None or len(at) != len(inserted):
        raise ctx.error(LayoutError, call.node, f"expand_dims axis {inserted} out of range or repeated for a result "
                        f"of {rank} dims", f"give each new axis once, between {-rank} and {rank - 1}")
    dims, axes = list(layout.dims), list(layout.axes)
    for a in at:
        dims.insert(a, BROADCAST)
        axes.insert(a, ())
    return keep(Array(Layout(tuple(dims), tuple(axes), layout.partial), x.value.origin))


@op("jax.numpy.squeeze", method="squeeze", reads=("a", "axis"))
def _squeeze(ctx: RuleContext, call: Call):
    """``jnp.squeeze(x, axis)`` / ``x.squeeze(axis)``: the named size-1 dims removed (each unsplit); without
    ``axis`` a split value is refused: a dim whose global size is 1 (which the hints cannot tell) would
    be squeezed by the reference and kept here, and a split dim whose block has one row squeezed here only."""
    x = _x(call)
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    given = call.args[0] if call.receiver is not None and call.args else call.kwargs.get("axis") \
        if call.receiver is not None else call.arg(1, "axis")
    if given is None or _literal(given) is None:
        if layout.is_split or layout.partial:
            raise ctx.error(UnsupportedError, call.node, f"squeeze without axis of {ctx.code(x.original)!r}, which "
                            f"has layout {layout.describe()}", "name the size-1 axes: jnp.squeeze(x, axis=1)")
        return keep(Opaque())
    squeezed = _ints(ctx, [given], "squeeze", call.node)
    rank = layout.rank
    if not all(-rank <= a < rank for a in squeezed):
        raise ctx.error(LayoutError, call.node, f"squeeze axis {squeezed} out of range for {rank} dims",
                        f"give axes between {-rank} and {rank - 1}")
    gone = {a % rank for a in squeezed}
    for a in sorted(gone):
        if layout.axes[a]:
            raise ctx.error(LayoutError, call.node, f"squeeze of dim {layout.dims[a]!r}, split over "
                            f"{axes_text(layout.axes[a])}", "squeeze only size-1 dims (a split dim has more than one row)")
    kept = [i for i in range(rank) if i not in gone]
    return keep(Array(Layout(tuple(layout.dims[i] for i in kept), tuple(layout.axes[i] for i in kept),
                             layout.partial), x.value.origin))


@op("jax.numpy.swapaxes", method="swapaxes")
def _swapaxes(ctx: RuleContext, call: Call):
    x = _x(call)
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    offset = 0 if call.receiver is not None else 1
    a, b = _ints(ctx, [call.arg(offset, "axis1"), call.arg(offset + 1, "axis2")], "swapaxes", call.node)
    rank = array(x).layout.rank
    perm = list(range(rank))
    perm[a % rank], perm[b % rank] = perm[b % rank], perm[a % rank]
    return keep(_permuted(x, perm))


@op("jax.numpy.permute_dims", reads=("a", "axes"))
def _permute_dims(ctx: RuleContext, call: Call):
    """``jnp.permute_dims(x, axes)`` (the array API's transpose): the dims, their splits and a partial sum move."""
    x = call.arg(0, "a")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    rank = array(x).layout.rank
    perm = _ints(ctx, [call.arg(1, "axes")], "permute_dims", call.node)
    if sorted(p % rank for p in perm) != list(range(rank)):
        raise ctx.error(LayoutError, call.node, f"permute_dims axes {perm} are not a permutation of {rank} dims",
                        f"list each of the {rank} axes once")
    return keep(_permuted(x, [p % rank for p in perm]))


@op("jax.numpy.matrix_transpose", reads=("x",))
def _matrix_transpose(ctx: RuleContext, call: Call):
    """``jnp.matrix_transpose(x)`` (``x.mT``): the last two dims swapped."""
    x = call.arg(0, "x")
    if not isinstance(x.value, Array) or array(x).layout.rank < 2:
        return unknown_call(ctx, call)
    rank = array(x).layout.rank
    return keep(_permuted(x, [*range(rank - 2), rank - 1, rank - 2]))


@op("jax.numpy.moveaxis")
def _moveaxis(ctx: RuleContext, call: Call):
    x = call.arg(0, "a")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    rank = array(x).layout.rank
    src = [s % rank for s in _ints(ctx, [call.arg(1, "source")], "moveaxis", call.node)]
    dst = [d % rank for d in _ints(ctx, [call.arg(2, "destination")], "moveaxis", call.node)]
    order = [n for n in range(rank) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return keep(_permuted(x, order))


# -- reshape ----------------------------------------------------------------------------------------


@op("jax.numpy.reshape", method="reshape", reads=("a", "shape", "args", "copy"))
def _reshape_unnamed(ctx: RuleContext, call: Call):
    x = _x(call)
    if isinstance(x.value, Array) and (array(x).layout.is_split or array(x).layout.partial):
        return _reshape_inferred(ctx, call, x)
    if isinstance(x.value, Array):  # whole: the dims it gets when split (a size-1 mesh axis splits nothing)
        try:
            return _reshape_inferred(ctx, call, x)
        except MeshifyError:
            pass  # a reshape no split could cross: unknown dims, as any whole value may have
    return unknown_call(ctx, call)


def _reshape_inferred(ctx: RuleContext, call: Call, x: Operand, guess: bool = True):
    """``(h @ wq).reshape(B, L, H, D)`` without a naming hint: the result's dims are inferred.

    A size read off a dim (``B, L, _ = x.shape``; ``x.shape``) keeps that dim; the dims between two
    kept ones are a group, merged or split, that a split may enter only as its major (first) part,
    which takes the split.  New dims are named from their size expressions (``cfg.heads`` ->
    ``heads?``; the mark says meshify chose the name), and merging the parts of a split dim back
    gives its name again (``[heads?, head_dim?]`` -> ``q_features``).  Without ``guess``, no dim is taken
    as kept by a size that does not read it (:func:`_whole_leads`)."""
    layout = array(x).layout
    sizes, size_nodes, spelled = _shape_operands(ctx, call, whole_shape=True)
    read = [s.value.size_of if isinstance(s.value, Static) and s.value.size_of in layout.dims else None
            for s in sizes]
    kept = [name if name is not None and layout.dims.count(name) == 1 and read.count(name) == 1 else None
            for name in read]
    anchors = [(layout.dims.index(n), j) for j, n in enumerate(kept) if n is not None]
    more = _whole_of_one_size(ctx, layout, sizes, anchors)
    if more:
        joined = sorted([*anchors, *more], key=lambda a: a[1])
        anchors = joined if [i for i, _ in joined] == sorted(i for i, _ in joined) else anchors
    if [i for i, _ in anchors] != sorted(i for i, _ in anchors):
        anchors = []  # sizes read off dims in another order: no dim is kept as it is
    anchors = _size_one_anchors(layout, sizes, anchors)
    while anchors and not _anchors_consistent(layout, sizes, anchors):
        anchors = anchors[:-1]  # a kept dim with new dims beside it and no dim they come from: the sizes do not
        # say which it is (Transformer-XL's _rel_shift reshapes (.., q, k+1) into (.., k+1, q)): the dims after
        # the last consistent one are merged and split as one group
    def guessed(given: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        return _whole_leads(ctx, layout, sizes, given) if guess else (given, [])

    fused, leads = guessed(anchors)
    if leads and _fused_after(ctx, layout, sizes, fused):
        # (win @ w_qkv).reshape(n, 4, 3, 8, -1): the tokens kept, the features cut into 3 sections of 8 heads,
        # not the -1 keeping the features and the tokens cut into 4 x 3 x 8 (what _trailing_rest would take)
        anchors, rest, checked = fused, False, []
    elif len(leads) > 1 and not any(layout.dims[i].endswith(INFERRED) for i, _ in leads):
        # x.reshape(B, L, H, -1) of the user's [batch, seq, d] with d split: batch and seq kept, d cut into heads
        # (not the -1 keeping d and batch x seq cut into B x L x H, what _trailing_rest would take); where one dim
        # leads, the -1 keeping the split dim is taken as before (t.reshape(N, N, -1) of [tok, heads])
        anchors, rest = fused, False
        anchors, checked = _split_tails(ctx, layout, sizes, size_nodes, anchors)
    else:
        anchors, rest = _trailing_rest(layout, sizes, anchors)
        anchors, checked = _split_tails(ctx, layout, sizes, size_nodes, anchors)
        anchors, leads = guessed(anchors)
    axes: list[Axes] = [()] * len(sizes)
    names: list[str | None] = [None] * len(sizes)
    bounds = [(-1, -1), *anchors, (layout.rank, len(sizes))]
    origins: list[tuple[tuple[str, ...], str]] = []
    sectioned: tuple[int, int] | None = None  # (input dim, sections): a fused dim cut into its sections first
    for (i0, j0), (i1, j1) in zip(bounds, bounds[1:]):
        group = list(range(i0 + 1, i1)), list(range(j0 + 1, j1))
        for group_in, group_out in _carved(*group, _inferred_pieces(layout, sizes, *group)):
            sections = _sections_first(ctx, layout, group_in, group_out, sizes)
            if sections is not None:  # (x @ w_qkv).reshape(B, N, 3, H, D) with the fused dim split
                sectioned = (group_in[0], sections)
                axes[group_out[1]] = layout.axes[group_in[0]]
            else:
                read = [s.value.size_of if isinstance(s.value, Static) and s.value.size_of else k
                        for s, k in zip(sizes, kept)]  # (a size read off a dim names it in the fix's hint)
                _group(ctx, call.node, layout, _hint_names(read, size_nodes), group_in, group_out, axes,
                       named=False, ones=frozenset(j for j in group_out if _literal(sizes[j]) == 1))
            for j, name in zip(group_out, _group_names(ctx, layout, group_in, [size_nodes[j] for j in group_out],
                                                       origins, [sizes[j] for j in group_out])):
                names[j] = name
        if i1 < layout.rank:
            axes[j1], names[j1] = layout.axes[i1], layout.dims[i1]
    # (a literal 1 beside new dims, not taking a split: a size-1 dim, broadcast against any, as reshape((-1, 1, 1))
    # of an arange lined up with a split value's dims)
    names = [BROADCAST if _literal(sizes[j]) == 1 and not axes[j] and names[j] not in layout.dims else names[j]
             for j in range(len(sizes))]
    dims = _unique([n or "" for n in names])
    for name, dim in zip(names, dims):
        if name and dim != name and name.endswith(INFERRED):  # (N, N kept as tok?, tok_2?: one size)
            ctx.lined_up(name, dim)
    _record_sizes(ctx, layout, dims, sizes, size_nodes)
    shards = [_shard_size(ctx, sz, nd, ctx.mesh.size(a), d.rstrip(INFERRED), _major_of(layout, d, a))
              for sz, nd, a, d in zip(sizes, size_nodes, axes, dims)]
    for j in checked:  # a size taken for a split dim's: checked against that dim's size when the function runs
        shards[j] = Template("{mr}.kept_size({size}, {dim}, {shards})",
                             (("size", size_nodes[j]), ("dim", dims[j]), ("shards", ctx.mesh.size(axes[j]))))
    if rest:  # the -1 left as written: mr.kept_dims (below) checks that it keeps the split dim, so it is its block
        shards[-1] = None
    value = Array(Layout(tuple(dims), tuple(axes), layout.partial), array(x).origin)
    kept = _kept_check(ctx, call, layout, sizes, leads, rest)
    if sectioned is not None:
        return _sectioned_reshape(ctx, call, x, layout, sectioned, value, _resized(call, sizes, shards, spelled),
                                  tuple(origins), kept)
    converts = () if kept is None else (Convert(x, layout, "the sizes a reshape keeps", wrap=kept[0], fill=kept[1]),)
    return Lowering(value, converts, replace=_resized(call, sizes, shards, spelled), origins=tuple(origins))


def _unmerges(dim: str, sizes: list) -> bool:
    """Whether ``sizes`` read, in order, the dims an earlier reshape merged into ``dim`` (``y.reshape(B, T, C)``
    of [batch_length?, C] with ``B, T`` read off batch and length): that merge undone."""
    parts = merged_parts(dim)
    read = [s.value.size_of.rstrip(INFERRED) if isinstance(s.value, Static) and s.value.size_of else None
            for s in sizes]
    return len(parts) > 1 and read == list(parts)


def _merges(dims: list[str], size) -> bool:
    """Whether ``size`` multiplies the sizes of ``dims`` (``B * T`` of [batch, length, ...], or ``T * B``)."""
    product = size.value.product_of if isinstance(size.value, Static) else None
    return len(dims) > 1 and product is not None and sorted(product) == sorted(dims)


def _inferred_pieces(layout: Layout, sizes: list, group_in: list[int], group_out: list[int]
                     ) -> list[tuple[list[int], list[int]]]:
    """The parts of a group of :func:`_reshape_inferred` whose sizes say which dims they are: a merged dim split
    back into the dims it merged (:func:`_unmerges`), and dims merged into a size multiplying theirs
    (:func:`_merges`)."""
    out = []
    for j in group_out:
        for n in range(2, len(group_in) + 1):
            out += [(group_in[k:k + n], [j]) for k in range(len(group_in) - n + 1)
                    if _merges([layout.dims[i] for i in group_in[k:k + n]], sizes[j])]
    for i in group_in:
        for n in range(2, len(group_out) + 1):
            out += [([i], group_out[k:k + n]) for k in range(len(group_out) - n + 1)
                    if _unmerges(layout.dims[i], [sizes[j] for j in group_out[k:k + n]])]
    return out


def _carved(group_in: list[int], group_out: list[int], pieces: list[tuple[list[int], list[int]]]
            ) -> list[tuple[list[int], list[int]]]:
    """A reshape group cut into ``pieces`` known to hold the same elements (a merge undone, [batch_length?] ->
    (B, T); dims merged, [batch, length] -> B * T) and what lies between them: RWKV's group norm,
    ``y.reshape(B, T, H * N)`` of [batch_length?, heads, N], is [batch_length?] -> (B, T) and [heads, N] -> H * N,
    each its own group, a split entering each as its major part.  A piece overlapping or crossing an earlier one
    is left out; the group is kept as it is where what is left between the pieces is more than one group (whose
    sizes are then not known to match)."""
    taken: list[tuple[list[int], list[int]]] = []
    for ins, outs in sorted(pieces):  # (in order, each after the last taken on both sides)
        if not taken or (ins[0] > taken[-1][0][-1] and outs[0] > taken[-1][1][-1]):
            taken.append((ins, outs))
    if not taken:
        return [(group_in, group_out)]
    rests, i_next, j_next = [], group_in[0], group_out[0]
    for ins, outs in taken:
        rests.append((list(range(i_next, ins[0])), list(range(j_next, outs[0]))))
        i_next, j_next = ins[-1] + 1, outs[-1] + 1
    rests.append((list(range(i_next, group_in[-1] + 1)), list(range(j_next, group_out[-1] + 1))))
    if any(bool(a) != bool(b) for a, b in rests) or sum(1 for a, _ in rests if a) > 1:
        return [(group_in, group_out)]
    return sorted([*taken, *(r for r in rests if r[0])])


def sectioned_moves(ctx: RuleContext, x: Operand, layout: Layout, axis: int, sections: int
                    ) -> tuple[str, tuple[Emitted, ...]]:
    """The conversion template (``mr.sectioned``) and the ppermutes of cutting ``x``'s split dim ``axis`` into
    ``sections`` whose blocks each device then holds side by side (before a reshape or an einops pattern
    splits the dim into the sections and a dim taking the split)."""
    axes, dim = layout.axes[axis], layout.dims[axis]
    shards = ctx.mesh.size(axes)
    record = Layout(layout.dims, layout.axes)
    moves = {to: len(rounds) for to, rounds in section_groups((1,) * sections, shards).items()
             if any(t != j for j, t in enumerate(to))}
    many = f" {{}} of {len(moves)}" if len(moves) > 1 else ""
    first = (f"sections over {axes_text(axes)}: each device's block of {ctx.code(x.original)!r} cut into {sections} "
             "chunks, each sent to the device holding that block of its section (ppermute" + many + ": {} chunk{})")
    later = f"sections over {axes_text(axes)}: the same cut's ppermute" + many + " ({} chunk{})"
    emitted = tuple(Emitted(sections_kind(k, sections), axes, record, dim,
                            (later if i > 1 else first).format(*((i,) if many else ()), k, "s" * (k != 1)))
                    for i, k in enumerate(moves.values(), 1))
    names = ", ".join(f'"{a}"' for a in axes)
    axis_name = f'"{axes[0]}"' if len(axes) == 1 else f"({names})"
    wrap = "{mr}.sectioned({x}, " + f"{sections}, {axis - layout.rank}, axis_name={axis_name})"
    return wrap, emitted


def _sections_first(ctx: RuleContext, layout: Layout, group_in: list[int], group_out: list[int],
                    sizes: list) -> int | None:
    """The sections a split fused dim is cut into before a reshape (timm's ``qkv.reshape(B, N, 3, H, D)``):
    where one split dim becomes several, the first of a literal size (3) that its shards do not divide, the
    next taking the split; None otherwise (the split goes to the first, as any reshape's)."""
    if len(group_in) != 1 or len(group_out) < 2 or not layout.axes[group_in[0]]:
        return None
    first = _literal(sizes[group_out[0]])
    shards = ctx.mesh.size(layout.axes[group_in[0]])
    if type(first) is not int or first <= 1 or first % shards == 0:
        return None
    return first


def _sectioned_reshape(ctx: RuleContext, call: Call, x: Operand, layout: Layout, sectioned: tuple[int, int],
                       value: Array, replaced, origins, kept: tuple[str, tuple] | None = None) -> Lowering:
    """The reshape of a fused dim cut into its sections first: ``mr.sectioned`` moves each device's chunks
    (as ``jnp.split``'s sections move, :func:`_split_sections`) until it holds its block of every section, side
    by side; the user's reshape then cuts that into the sections and its block of the next dim (the heads).
    ``kept``: the check of sizes taken to keep whole dims (:func:`_kept_check`), made first."""
    wrap, emitted = sectioned_moves(ctx, x, layout, *sectioned)
    fill: tuple = ()
    if kept is not None:
        wrap, fill = wrap.replace("{x}", kept[0], 1), kept[1]
    return Lowering(value, (Convert(x, layout, "the sections of a fused dim", wrap=wrap, fill=fill),),
                    emitted=emitted, replace=replaced, origins=origins)


_ARITHMETIC = {cst.Multiply: "*", cst.FloorDivide: "//", cst.Add: "+", cst.Subtract: "-"}


def _record_sizes(ctx: RuleContext, layout: Layout, dims: list[str], sizes: list, size_nodes: list) -> None:
    """Tells explain how to size the dims a reshape made, from the sizes it is given (``ctx.sized_by``): each size
    as arithmetic of literals and sizes read off dims (``H // ws``), a -1 as what the others leave."""
    recipes = [_size_recipe(ctx, node, size) for node, size in zip(size_nodes, sizes)]
    for j, (dim, recipe) in enumerate(zip(dims, recipes)):
        if _literal(sizes[j]) == -1:
            others = tuple(r if r is not None else ("dim", d) for k, (d, r) in enumerate(zip(dims, recipes)) if k != j)
            ctx.sized_by(dim, ("rest", tuple(layout.dims), others))
        elif recipe is not None:
            ctx.sized_by(dim, recipe)


def _size_recipe(ctx: RuleContext, node: cst.BaseExpression, size: Operand | None = None) -> tuple | None:
    """A reshape size as explain computes it: ``("int", n)``, ``("dim", name)``, or ``(op, a, b)`` of those (None
    where meshify cannot say)."""
    value = size.value if size is not None else None
    if value is None:
        if isinstance(node, cst.Name):
            value = ctx.bound(node.value)
        elif isinstance(node, cst.Integer):
            return ("int", int(node.value))
        else:
            try:
                value = ctx.operand(node).value
            except KeyError:
                value = None
    if isinstance(value, Static) and type(value.literal) is int and value.known:
        return ("int", value.literal)
    if isinstance(value, Static) and value.size_of:
        return ("dim", value.size_of)
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _ARITHMETIC:
        left, right = _size_recipe(ctx, node.left), _size_recipe(ctx, node.right)
        return None if left is None or right is None else (_ARITHMETIC[type(node.operator)], left, right)
    if isinstance(node, cst.Integer):
        return ("int", int(node.value))
    return None


def _anchors_consistent(layout: Layout, sizes: list, anchors: list[tuple[int, int]]) -> bool:
    """Whether the dims between each two kept dims can become the sizes between them: a group of new sizes
    with no dim of ``x`` to come from holds only literal 1s, and a group of dims with no size to go to holds
    only size-1 dims (else the sizes were read off dims they are not: ``(B, N, N)`` with ``N`` read off one)."""
    bounds = [(-1, -1), *anchors, (layout.rank, len(sizes))]
    for (i0, j0), (i1, j1) in itertools.pairwise(bounds):
        group_in, group_out = range(i0 + 1, i1), range(j0 + 1, j1)
        if not group_in and any(_literal(sizes[j]) != 1 for j in group_out):
            return False
        if not group_out and any(layout.dims[i] != BROADCAST or layout.axes[i] for i in group_in):
            return False
    return True


def _whole_of_one_size(ctx: RuleContext, layout: Layout, sizes: list, anchors: list[tuple[int, int]]
                       ) -> list[tuple[int, int]]:
    """Sizes read off a dim that the rule above does not keep: (B, N, N) of [.., tok, tok] (an attention's
    scores; which N is which dim?), or N read off ``tok`` of [.., query_pos, ..] where ``tok`` was lined up with
    ``query_pos`` in an op (JAX checked they have one size).  Where as many sizes read it as ``x`` has dims of its
    size (the dim, or those lined up with it, and with those), all whole, each is kept in turn."""
    read = [s.value.size_of if isinstance(s.value, Static) and s.value.size_of else None for s in sizes]
    taken_in, taken_out = {i for i, _ in anchors}, {j for _, j in anchors}
    out: list[tuple[int, int]] = []
    for name in dict.fromkeys(n for j, n in enumerate(read) if n is not None and j not in taken_out):
        same = ctx.same_size(name)
        places = [i for i, d in enumerate(layout.dims) if d in same]
        ats = [j for j, n in enumerate(read) if n == name]
        if places and len(places) == len(ats) and not any(layout.axes[i] for i in places) \
                and not taken_in & set(places) and not taken_out & set(ats):
            out.extend(zip(places, ats))
    out.sort(key=lambda a: a[1])
    return out if [i for i, _ in out] == sorted(i for i, _ in out) else []


def _split_tails(ctx: RuleContext, layout: Layout, sizes: list, size_nodes: list[cst.BaseExpression],
                 anchors: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[int]]:
    """``anchors`` with the last dim of a group kept as the group's last size, where that dim is split but is not
    the group's first (a split enters a merge only as its major part) and the size names it: timm's
    ``attn.view(-1, num_win, num_heads, N, N)`` of [windows, heads, N, N] with the heads split, where an earlier
    reshape by ``num_heads`` made the ``num_heads?`` dim that was lined up with ``heads`` (a dim of the user's:
    its size is the call's).  Whether the size is that dim's is checked when the function runs: the positions of the sizes to check there (``mr.kept_size``), the
    reshape refused where one is not."""
    checked: list[int] = []
    while True:
        bounds = [(-1, -1), *anchors, (layout.rank, len(sizes))]
        added = None
        for (i0, j0), (i1, j1) in itertools.pairwise(bounds):
            group_in, group_out = list(range(i0 + 1, i1)), list(range(j0 + 1, j1))
            if len(group_in) < 2 or len(group_out) < 2 or not layout.axes[group_in[-1]]:
                continue
            i, j = group_in[-1], group_out[-1]
            name = _expr_name(size_nodes[j])
            read = sizes[j].value.size_of if isinstance(sizes[j].value, Static) else None
            if layout.dims[i] != BROADCAST and not layout.dims[i].endswith(INFERRED) \
                    and _literal(sizes[j]) not in (-1, 1) and (
                    name is not None and layout.dims[i] in ctx.same_size(name + INFERRED)
                    or read is not None and layout.dims[i] in ctx.same_size(read)):
                added = (i, j)
                break
        if added is None:
            return anchors, checked
        extended = sorted([*anchors, added], key=lambda a: a[1])
        if not _anchors_consistent(layout, sizes, extended):
            return anchors, checked
        anchors = extended
        checked.append(added[1])


def _whole_leads(ctx: RuleContext, layout: Layout, sizes: list, anchors: list[tuple[int, int]]
                 ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``anchors`` with the dims that lead a group before its last split dim each kept by the size in its place,
    where no size reads them (Swin written ``(win @ w_qkv).reshape(win.shape[0], WS * WS, 3, NH, C // NH)`` of
    [windows, tok?, qkv_features] with the features split, ``tok?`` a dim meshify inferred, of a size it cannot
    know before the call; or ``.reshape(-1, WS * WS, C)`` of [windows, tok?, heads, d] with windows and heads
    split): a split dim enters a merge only as its major part, so the dims before it are taken as kept, and
    whether they are is checked when the function runs, against the array's sizes (``mr.kept_dims``; else another
    size, ``(n, 2, 8, ...)`` of a 16, would merge rows of the split dim's blocks silently).  By a size read off a
    dim that no dim of ``x`` is lined up with (``l`` read off ``x``'s ``seq`` plainly keeps no other dim; ``T`` of
    ``B, T, _ = x.shape`` keeps the dim ``jnp.stack(outs, 1)`` made of a list filled over time, in
    ``.reshape(B, T, H * N)`` with the heads split), a dim meshify inferred by any other size, and the user's
    hinted dims by a size meshify reads as a number (``x.reshape(4, 8, H, -1)`` or ``x.reshape(B, L, H, -1)`` of
    [batch, seq, d] with d split), and a -1 (``q.reshape(b, -1, heads, q.shape[-1] // heads)`` of [batch, latents,
    attn_features] with the features split: public code's heads reshape, for queries and keys of any length).
    A naming hint's merge check makes no guess
    (``per_group`` taken as kept by a 32 would make it see merges that are not there).  Also the pairs so kept,
    (input dim, size)."""
    leads: list[tuple[int, int]] = []
    bounds = [(-1, -1), *anchors, (layout.rank, len(sizes))]
    for (i0, j0), (i1, j1) in itertools.pairwise(bounds):
        group_in, group_out = list(range(i0 + 1, i1)), list(range(j0 + 1, j1))
        last = max((k for k, i in enumerate(group_in) if layout.axes[i]), default=0)
        if last == 0 or len(group_out) <= last:
            continue
        pairs = list(zip(group_in[:last], group_out[:last]))
        if all(_may_keep(ctx, layout, i, sizes[j]) for i, j in pairs):
            leads.extend(pairs)
    if not leads:
        return anchors, []
    extended = sorted([*anchors, *leads], key=lambda a: a[1])
    return (extended, leads) if _anchors_consistent(layout, sizes, extended) else (anchors, [])


def _may_keep(ctx: RuleContext, layout: Layout, i: int, size: Operand) -> bool:
    """Whether :func:`_whole_leads` may take ``size`` to keep ``x``'s whole dim ``i`` (checked when the function
    runs): see there."""
    if layout.dims[i] == BROADCAST or _literal(size) == 1:
        return False
    read = size.value.size_of if isinstance(size.value, Static) else None
    if read:  # (nor a part of a dim of x that a reshape merged: [batch_length?] -> (B, T) is that merge undone)
        same = ctx.same_size(read)
        return not any(d in same or same & set(merged_parts(d)) for d in layout.dims)
    return layout.dims[i].endswith(INFERRED) or type(_literal(size)) is int


def _fused_after(ctx: RuleContext, layout: Layout, sizes: list, anchors: list[tuple[int, int]]) -> bool:
    """Whether, with ``anchors``, some group is one split dim cut into sections first (a fused qkv's
    ``(.., 3, H, D)``, :func:`_sections_first`)."""
    bounds = [(-1, -1), *anchors, (layout.rank, len(sizes))]
    return any(_sections_first(ctx, layout, list(range(i0 + 1, i1)), list(range(j0 + 1, j1)), sizes) is not None
               for (i0, j0), (i1, j1) in itertools.pairwise(bounds))


def _kept_check(ctx: RuleContext, call: Call, layout: Layout, sizes: list, leads: list[tuple[int, int]],
                rest: bool = False) -> tuple[str, tuple[tuple[str, object], ...]] | None:
    """The wrapper checking, when the function runs, the sizes :func:`_whole_leads` took to keep dims, and with
    ``rest`` the trailing -1 :func:`_trailing_rest` took to keep the split last dim (whose local reshape would
    fail anyway, with a message that cannot say why): its template around ``{x}`` and the template's fill."""
    kept = [*leads, *([(layout.rank - 1, len(sizes) - 1)] if rest else [])]
    if not kept:
        return None
    def spelled(items: list[str]) -> str:
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"

    pairs = spelled([f"({i}, {j})" for i, j in kept])
    every = spelled([f"{{size{j}}}" for j in range(len(sizes))])
    shards = spelled([str(ctx.mesh.size(axes)) for axes in layout.axes])
    names = spelled([repr(d.rstrip(INFERRED)) for d in layout.dims])
    fill = tuple((f"size{j}", size.node) for j, size in enumerate(sizes))
    return (f"{{mr}}.kept_dims({{x}}, {pairs}, {every}, {shards}, {{reshape}}, dims={names}"
            + (", rest=True)" if rest else ")"), (*fill, ("reshape", ctx.code(call.node))))


def _trailing_rest(layout: Layout, sizes: list, anchors: list[tuple[int, int]]
                   ) -> tuple[list[tuple[int, int]], bool]:
    """``anchors`` with a trailing ``-1`` kept as ``x``'s last dim, where that dim is split and no size reads it
    (timm's relative position bias, ``table[index.view(-1)].view(N, N, -1)`` with the heads split): a split dim
    enters a merge only as its major part, so -1 can mean nothing else; and whether it does, when the function
    runs, against the array's sizes (``mr.kept_dims``, :func:`_kept_check`), so that the -1 left as written is
    that dim's block on each device (a dim meshify inferred included, whose size the call's arguments do not
    tell: ``y.reshape(B * T, H * N).reshape(B, T, -1)`` with the heads split)."""
    last = len(sizes) - 1
    if last < 1 or _literal(sizes[last]) != -1 or not layout.axes[-1] or layout.dims[-1] == BROADCAST \
            or any(i == layout.rank - 1 or j == last for i, j in anchors):
        return anchors, False
    extended = [*anchors, (layout.rank - 1, last)]
    return (extended, True) if _anchors_consistent(layout, sizes, extended) else (anchors, False)


def _hint_names(kept: list[str | None], size_nodes: list[cst.BaseExpression]) -> tuple[str, ...]:
    """A name per size of a reshape, for a fix's hint: the dim a size is read off, the size's own name
    (``cfg.heads`` -> ``heads``), ``1`` for a literal 1, else ``dim<k>``."""
    out = []
    for k, (name, node) in enumerate(zip(kept, size_nodes)):
        literal_one = isinstance(node, cst.Integer) and node.value == "1"
        out.append(name or _expr_name(node) or (BROADCAST if literal_one else f"dim{k}"))
    return tuple(out)


def _size_one_anchors(layout: Layout, sizes: list, anchors: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``anchors`` with each literal ``1`` of the new sizes kept as a size-1 dim of ``x`` between the same
    anchors (``x[:, None, :]`` of [batch, 1, q_features] reshaped ``(B, 1, H, D)``: the 1 stays a 1, and
    q_features alone splits into H, D), in order; the others as they were."""
    ones = [j for j, s in enumerate(sizes) if isinstance(s.value, Static) and s.value.known
            and type(s.value.literal) is int and s.value.literal == 1]
    if not ones or BROADCAST not in layout.dims:
        return anchors
    out = list(anchors)
    for j in ones:
        before = max((a for a in out if a[1] < j), default=(-1, -1), key=lambda a: a[1])
        after = min((a for a in out if a[1] > j), default=(layout.rank, len(sizes)), key=lambda a: a[1])
        free = [i for i in range(before[0] + 1, after[0]) if layout.dims[i] == BROADCAST]
        if free:
            out.append((free[0], j))
            out.sort(key=lambda a: a[1])
    return out if [i for i, _ in out] == sorted(i for i, _ in out) else anchors


def _major_of(layout: Layout, dim: str, axes: Axes) -> str | None:
    """The dim a new dim taking a split is the major part of (``kv_heads?`` of ``kv_features``), for the
    size check's message: fewer kv heads than devices is the usual way to miss it."""
    if not axes or dim in layout.dims:
        return None
    return next(d for d, a in zip(layout.dims, layout.axes) if a == axes)


def _group_names(ctx: RuleContext, layout: Layout, group_in: list[int], size_nodes: list[cst.BaseExpression],
                 origins: list[tuple[tuple[str, ...], str]], sizes: list | None = None) -> list[str]:
    """Names for the result dims of one reshape group (see :func:`_reshape_inferred`); a split of one
    dim appends to ``origins`` its new dims and that dim, for the module to remember."""
    if len(group_in) == 1 and len(size_nodes) == 1:
        return [layout.dims[group_in[0]]]  # the same dim, its size spelled another way
    if len(group_in) == 1 and sizes and _unmerges(layout.dims[group_in[0]], sizes):
        return [s.value.size_of for s in sizes]  # a merge undone: its parts' names again
    read = sizes[0].value.size_of if sizes and len(sizes) == 1 and isinstance(sizes[0].value, Static) else None
    if read is not None and read in layout.dims:
        read = None
    parts = tuple(layout.dims[i] for i in group_in)
    merged = ctx.reshape_origin(parts)
    if len(size_nodes) == 1 and merged is not None:
        # the dim these parts were split from; but a name meshify inferred for the dim the size is read off
        # (group norm's C = x.shape[-1] of a concatenate's 'ch?') is this call's own, where an earlier call of
        # the helper split the user's 'ch'.  (A user's name read off another dim of that size is not: timm's
        # reshape(B, N, C) merges the heads back into the attention features, C read off d_model.)
        return [read if read is not None and read.endswith(INFERRED) and unify_dims(read, merged) else merged]
    if len(size_nodes) == 1 and read is not None and read.endswith(INFERRED):
        return [read]  # merged back to the size read off the dim (of a name meshify inferred) that was split
    if len(size_nodes) == 1:
        return [_merged_name(parts) + INFERRED]
    names = _unique([_expr_name(n) or f"{_merged_name(parts)}_{k}" for k, n in enumerate(size_nodes)])
    names = [n + INFERRED for n in names]
    if len(group_in) == 1:
        origins.append((tuple(names), parts[0]))
    return names


#: Each name :func:`_merged_name` made -> the dims it merges (read by :func:`merged_parts`).
_MERGES: dict[str, tuple[str, ...]] = {}


def _merged_name(parts: tuple[str, ...], limit: int = 40) -> str:
    """The name of dims merged (``height_width``); past ``limit`` characters (a window partition merges
    half a dozen dims, each merged before), the first and last parts and a digest of all, so that messages
    stay readable and two different merges never share a name."""
    joined = "_".join(p.rstrip(INFERRED) for p in parts)
    if len(joined) > limit:
        digest = hashlib.blake2s(joined.encode(), digest_size=3).hexdigest()
        joined = f"{parts[0].rstrip(INFERRED).split('_')[0]}_to_{parts[-1].rstrip(INFERRED).split('_')[-1]}_{digest}"
    _MERGES.setdefault(joined, tuple(p.rstrip(INFERRED) for p in parts))
    return joined


def merged_parts(dim: str) -> tuple[str, ...]:
    """The dims an inferred dim merges (``batch_beam?`` of ``x.reshape(B * K, V)``: batch, beam), else ()."""
    return _MERGES.get(dim.rstrip(INFERRED), ()) if dim.endswith(INFERRED) else ()


def merge_renamed(dims: tuple[str, ...], names: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """The first dim a reshape merged that ``names`` (a hint, position by position) calls after one of its parts
    (``batch_beam?`` named ``batch``: a name with two sizes): (that name, the parts), else None."""
    for d, t in zip(dims, names) if len(dims) == len(names) else ():
        parts = merged_parts(d)
        if d != t and len(parts) > 1 and t in parts:
            return t, parts
    return None


def _expr_name(node: cst.BaseExpression) -> str | None:
    """``cfg.heads`` -> ``heads``, ``n_heads`` -> ``n_heads``; None for literals and arithmetic."""
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return None


def _unique(names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        base, n = name, 2
        while name in out and name != BROADCAST:
            name, n = f"{base.rstrip(INFERRED)}_{n}" + (INFERRED if base.endswith(INFERRED) else ""), n + 1
        out.append(name)
    return out


def reshape_named(ctx: RuleContext, call: Call, dims: tuple[str, ...]) -> Lowering:
    """``h: Tensor[dims] = x.reshape(...)`` (the annotated assignment passes the hint's ``dims``): the
    result's layout, and each size of a split dim replaced by its per-shard size.  The sizes are read
    one by one from the call's nodes (static expressions: reading them changes no state)."""
    x = _x(call)
    if not isinstance(x.value, Array):
        return keep(Opaque())
    sizes, size_nodes, spelled = _shape_operands(ctx, call)
    if len(size_nodes) != len(dims):
        raise ctx.error(LayoutError, call.node, f"reshape to {len(size_nodes)} sizes but the hint names {len(dims)} "
                        f"dims {list(dims)}", "give the hint one name per size")
    layout = array(x).layout
    _check_merges_named(ctx, call, x, dims)
    out_axes = _reshape_axes(ctx, call.node, layout, dims)
    shards = [_shard_size(ctx, s, n, ctx.mesh.size(a), d) for s, n, a, d in zip(sizes, size_nodes, out_axes, dims)]
    value = Array(Layout(dims, tuple(out_axes), layout.partial), array(x).origin)
    return Lowering(value, replace=_resized(call, sizes, shards, spelled))


def _check_merges_named(ctx: RuleContext, call: Call, x: Operand, dims: tuple[str, ...]) -> None:
    """A naming hint calling a dim the reshape merges (``flat: Tensor["batch", "vocab"] = logits.reshape(B * K,
    V)``: ``batch`` x ``beam``) after one of its parts: refused, as that name's size is another (a later
    reshape reading ``batch``'s size off another array would split the merged dim wrong: beam search)."""
    try:
        inferred = _reshape_inferred(ctx, call, x, guess=False).result
    except MeshifyError:
        return
    renamed = merge_renamed(inferred.dims, dims) if isinstance(inferred, Array) else None
    if renamed is not None:
        t, parts = renamed
        raise ctx.error(LayoutError, call.node, f"the reshape merges {' x '.join(repr(p) for p in parts)} into "
                        f"one dim, which the hint names {t!r}, the name of one of them (a dim of another size: "
                        f"a reshape reading {t!r}'s size would split it wrong)",
                        f"give the merged dim a name of its own ({'_'.join(parts)!r}) in this hint and in the "
                        "hints of the helpers it is passed to")


def _shape_operands(ctx: RuleContext, call: Call, whole_shape: bool = False
                    ) -> tuple[list, list[cst.BaseExpression], At | None]:
    """The size operands of a reshape, unpacking a tuple literal: (evaluated, original nodes, None).  With
    ``whole_shape``, a shape variable of known dims (``x.reshape(y.shape)``) is its entries ``y.shape[i]``,
    and the third item is where it is written (it is spelled out there).  The operands are those the
    interpreter evaluated for the call: each size is read once."""
    places = _size_args(call)
    args = [a for _, a in places]
    if len(args) == 1 and isinstance(args[0].value, cst.Tuple | cst.List):
        nodes = [e.value for e in args[0].value.elements]
        return [call.items[n] for n in nodes], nodes, None
    operands = [_operand_at(call, i) for i, _ in places]
    if len(args) == 1:
        single = operands[0].value
        if isinstance(single, Static) and single.shape_of and whole_shape:
            entries = _entries(call, operands[0])
            return list(entries), [e.original for e in entries], At(places[0][0])
        if isinstance(single, Static) and single.shape_of:
            raise ctx.error(UnsupportedError, args[0].value, "reshape to a whole shape variable",
                            "spell the sizes out: x.reshape(b, l, heads, d_head)")
    return operands, [a.value for a in args], None


def _operand_at(call: Call, position: int) -> Operand:
    """The operand of argument ``position`` (as written, keywords counted)."""
    arg = call.node.args[position]
    return call.args[position] if arg.keyword is None else call.kwargs[arg.keyword.value]


def _entries(call: Call, shape: Operand) -> tuple[Operand, ...]:
    """The entries of a shape operand (``y.shape``): as the interpreter evaluated ``y.shape[i]``, or,
    for a shape it did not read that way (one a call returns), its evaluated node indexed."""
    given = call.entries.get(shape.original)
    if given is not None:
        return given
    dims = shape.value.shape_of if isinstance(shape.value, Static) and shape.value.shape_of else ()
    return tuple(Operand(Static(size_of=d), node, node) for d, node in
                 ((d, cst.Subscript(shape.node, [cst.SubscriptElement(cst.Index(int_node(i)))]))
                  for i, d in enumerate(dims)))


def _size_args(call: Call) -> list[tuple[int, cst.Arg]]:
    """The arguments of a reshape that give its sizes, with their positions in the call: a method's
    positional arguments (``x.reshape(b, l, d)``), jnp.reshape's ``shape`` (its second positional
    argument or ``shape=``/``newshape=``); never ``order=`` or ``copy=``."""
    if call.receiver is not None:
        return [(i, a) for i, a in enumerate(call.node.args) if a.keyword is None]
    positional = [(i, a) for i, a in enumerate(call.node.args) if a.keyword is None]
    if len(positional) > 1:
        return [positional[1]]
    return [(i, a) for i, a in enumerate(call.node.args) if a.keyword and a.keyword.value in ("shape", "newshape")]


def _size_places(call: Call) -> list[At]:
    """Where each size of a reshape is written: an argument, or an item of one tuple or list."""
    args = _size_args(call)
    if len(args) == 1 and isinstance(args[0][1].value, cst.Tuple | cst.List):
        return [At(args[0][0], j) for j in range(len(args[0][1].value.elements))]
    return [At(i) for i, _ in args]


def _resized(call: Call, sizes: list[Operand], shards: list, spelled: At | None) -> tuple[tuple[At, object], ...]:
    """A reshape's ``replace``: each size of a split dim by its per-shard size (``shards``, None where
    kept); a shape variable spelled out per dim (``spelled``) by its sizes, a tuple of them."""
    if spelled is None:
        return tuple((at, shard) for at, shard in zip(_size_places(call), shards) if shard is not None)
    parts = tuple(s.node if shard is None else shard for s, shard in zip(sizes, shards))
    return ((spelled, parts[0] if len(parts) == 1 else parts),)


def _reshape_axes(ctx: RuleContext, node, layout: Layout, out: tuple[str, ...]) -> list[Axes]:
    """Maps input dims to output dims through names they share; splits follow the major part."""
    ins = layout.dims
    shared = [d for d in ins if d != BROADCAST and ins.count(d) == 1 and out.count(d) == 1]
    anchors = [(ins.index(d), out.index(d)) for d in shared]
    if [j for _, j in anchors] != sorted(j for _, j in anchors):
        raise ctx.error(LayoutError, node, f"reshape from {list(ins)} to {list(out)} reorders dims",
                        "reshape keeps the order of elements: transpose first")
    ones_in = [i for i, d in enumerate(ins) if d == BROADCAST]
    ones_out = [j for j, d in enumerate(out) if d == BROADCAST]
    if ones_in and len(ones_in) == len(ones_out):  # size-1 dims kept as they are, in order ("1" in the hint)
        paired = sorted([*anchors, *zip(ones_in, ones_out)])
        if [j for _, j in paired] == sorted(j for _, j in paired):
            anchors = paired
    axes: list[Axes] = [()] * len(out)
    bounds = [(-1, -1), *anchors, (len(ins), len(out))]
    for (i0, j0), (i1, j1) in zip(bounds, bounds[1:]):
        between, to = list(range(i0 + 1, i1)), list(range(j0 + 1, j1))
        # (a hint naming the parts of a merged dim: that merge undone)
        undone = [([i], to[k:k + n]) for i in between for n in range(2, len(to) + 1) for k in range(len(to) - n + 1)
                  if merged_parts(ins[i]) == tuple(out[j].rstrip(INFERRED) for j in to[k:k + n])]
        for group_in, group_out in _carved(between, to, undone):
            _group(ctx, node, layout, out, group_in, group_out, axes)
        if i1 < len(ins):
            axes[j1] = layout.axes[i1]
    return axes


def _held_shape_name(node) -> str | None:
    """``shape`` where a reshape's only size is a name (``x.reshape(shape)``, ``jnp.reshape(x, shape)``)."""
    if not isinstance(node, cst.Call):
        return None
    sizes = [a for a in node.args if a.keyword is None or a.keyword.value in ("shape", "newshape")]
    if isinstance(node.func, cst.Attribute) and node.func.attr.value == "reshape" and len(node.args) == 1:
        sizes = list(node.args)
    elif len(sizes) == 2:
        sizes = sizes[1:]
    return sizes[0].value.value if len(sizes) == 1 and isinstance(sizes[0].value, cst.Name) else None


def _group(ctx: RuleContext, node, layout: Layout, out, group_in: list[int], group_out: list[int], axes: list[Axes],
           named: bool = True, ones: frozenset[int] = frozenset()) -> None:
    """``group_in`` merged or split into ``group_out``: a split may enter only as the major (first) part, which
    takes it.  Size-1 dims lead nothing (``ones``: the out dims of a literal size 1): one head cut from a split
    dim, ``(1, d_head)``, takes the split on ``d_head``, and merging it back gives the split to the merged dim."""
    split = [i for i in group_in if layout.axes[i]]
    if not split:
        return
    sized = [i for i in group_in if layout.dims[i] != BROADCAST] or group_in
    major = [j for j in group_out if j not in ones and out[j] != BROADCAST] or group_out
    if split != [sized[0]] or not group_out:
        names = [layout.dims[i] for i in group_in]
        into: object = [out[j] for j in group_out]
        minor = layout.dims[split[-1]]
        # (a dim meshify named, attn_1?, takes no rule: its split came from the dim it was cut from, whose major
        # part, 4 heads of 32 features, had fewer entries than the mesh axis has devices)
        unsplit = f"map {minor!r} to no mesh axis (rules={{{minor!r}: None}})" if not minor.endswith(INFERRED) \
            else ("split the dim it was cut from over fewer devices, or give its major part (the heads) a multiple "
                  "of the devices: meshify split its minor part because the major one could not take them")
        fix = ("split only the first dim of a merge (e.g. merge [heads, d_head] with heads split), "
               "or transpose so that the split dim comes first (its order in the merged dim changes: a weight "
               f"read against it must follow), or {unsplit}")
        if layout.dims[sized[0]] == "stacked" and len(split) == 1:  # jnp.stack([a, b], 1).reshape(B, -1)
            fix = (f"a stack merged with split {minor!r} after it is a concatenate along {minor!r}: write "
                   f"jnp.concatenate([...], axis=...) instead, which meshify runs along a split dim, or {fix}")
        if len(split) > 1 and not minor.endswith(INFERRED):  # x.reshape(B, H * W, C) of h and w both split
            fix += (f"; to keep the others split, make {minor!r} whole before the merge with a hint renaming it to "
                    f"a dim no rule maps (xg: Tensor[..., \"{minor}_whole\", ...] = x; then xg.reshape(...))")
        if not named:
            into = f"{len(group_out)} new dim{'s' * (len(group_out) != 1)}"
        if not named and len(group_out) > 1:  # (one merged dim: which dims it merges is not in doubt)
            # (a name meshify inferred, 'tok?', is written as the user would: a hint's name takes its place)
            hint = ", ".join(f'"{d.rstrip(INFERRED)}"' if d.rstrip(INFERRED).isidentifier() else f'"dim{k}"'
                             for k, d in enumerate(out))
            fix += ("; where the sizes do not say which dims they keep (x.shape entries keep theirs), name the "
                    f"result with an annotated assignment, one dim per size: <name>: Annotated[jax.Array, {hint}] = "
                    + ctx.code(node))
        held = _held_shape_name(node)
        if held is not None and len(out) == 1:  # x.reshape(shape), shape = x.shape[:-1] + (H, D): not read
            fix = (f"if {held!r} holds a shape, write it in the call, where meshify reads each size: "
                   f"x.reshape(x.shape[:-1] + (H, D)) or x.reshape(b, l, H, D); else " + fix)
        raise ctx.error(UnsupportedError, node,
                        f"reshape merges {names} into {into} but split dim "
                        f"{layout.dims[split[-1]]!r} is not the major (first) part", fix)
    axes[major[0]] = layout.axes[sized[0]]


def _shard_size(ctx: RuleContext, size: Operand, node: cst.BaseExpression, shards: int, dim: str,
                major_of: str | None = None, what: str = "reshape size") -> int | Template | None:
    """The per-shard size of ``size`` over ``shards`` (None: the size as written, unsplit or -1): a
    literal divided, or ``mr.shard_size`` checking the division when the function runs."""
    if shards == 1:
        return None
    literal = _literal(size)
    if isinstance(literal, int):
        if literal == -1:
            return None
        if literal % shards:
            fix = f"choose a size of {dim!r} that is a multiple of {shards}"
            if major_of is not None:
                fix += f", or keep {major_of!r} whole on each device: rules={{{major_of!r}: None}}"
            raise ctx.error(LayoutError, node, f"{what} {literal} of dim {dim!r} is not divisible by its "
                            f"{shards} shards", fix)
        return literal // shards
    # Known only when the function runs: checked then (a size the shards do not divide is an error).
    fill = (("size", size.node), ("shards", shards), ("dim", dim))
    if major_of is not None:
        return Template("{mr}.shard_size({size}, {shards}, {dim}, major_of={of})", (*fill, ("of", major_of)))
    return Template("{mr}.shard_size({size}, {shards}, {dim})", fill)


# -- concatenate / stack ------------------------------------------------------------------------------


def _sequence(ctx: RuleContext, call: Call, keyword: str):
    seq = call.arg(0, keyword)
    items = literal_items(seq)
    if items is None and seq is not None and _one_item(seq.value) is not None:
        return seq, None  # a list the function appended to (or a sequence parameter): one item's value
    if items is None:
        raise ctx.error(UnsupportedError, call.node, f"{call.name} of something other than a list literal",
                        f"write {call.name.rsplit('.', 1)[-1]}([a, b], axis=...)")
    return seq, items


@op("jax.numpy.hstack", kind="hstack", reads=("tup", "dtype"))
@op("jax.numpy.vstack", kind="vstack", reads=("tup", "dtype"))
@op("jax.numpy.column_stack", kind="column_stack", reads=("tup",))
@op("jax.numpy.concatenate", kind="concatenate", reads=("arrays", "axis", "dtype"))
@op("jax.numpy.concat", kind="concatenate", reads=("arrays", "axis"))
@op("jax.numpy.stack", kind="stack", reads=("arrays", "axis", "dtype"))
def _join(ctx: RuleContext, call: Call, kind: str):
    seq, items = _sequence(ctx, call, "tup" if kind in ("hstack", "vstack", "column_stack") else "arrays")
    join = _joined if items is not None else _joined_items
    if kind == "column_stack":  # vectors: the columns of a matrix (a stack along 1); else a concatenate along 1
        listed = items if items is not None else [Operand(_one_item(seq.value), seq.original, seq.node)]
        ranks = {array(i).layout.rank for i in listed if isinstance(i.value, Array)}
        if len(ranks) > 1 and 1 in ranks:
            raise ctx.error(UnsupportedError, call.node, "column_stack of vectors and matrices together",
                            "make the vectors columns first (v[:, None]) and write jnp.concatenate([...], axis=1)")
        return join(ctx, call, seq, items, "stack" if ranks == {1} else "concatenate", 1, kind)
    if kind in ("hstack", "vstack"):  # numpy's: a concatenate along a fixed axis (vstack of vectors: a stack)
        listed = items if items is not None else [Operand(_one_item(seq.value), seq.original, seq.node)]
        rank = next((array(i).layout.rank for i in listed if isinstance(i.value, Array)), 2)
        if kind == "vstack" and rank == 1:
            return join(ctx, call, seq, items, "stack", 0, kind)
        return join(ctx, call, seq, items, "concatenate", 1 if kind == "hstack" and rank > 1 else 0, kind)
    axis_op = call.arg(1, "axis")
    axis = _literal(axis_op) if axis_op is not None else 0
    return join(ctx, call, seq, items, kind, axis)


@op("jax.lax.concatenate", reads=("operands", "dimension"))
def _lax_concatenate(ctx: RuleContext, call: Call):
    """``jax.lax.concatenate([a, b], 1)``: ``jnp.concatenate`` along ``dimension`` (:func:`_joined`)."""
    seq, items = _sequence(ctx, call, "operands")
    dimension = call.arg(1, "dimension")
    axis = _literal(dimension) if dimension is not None else _UNKNOWN
    join = _joined if items is not None else _joined_items
    return join(ctx, call, seq, items, "concatenate", axis, "jax.lax.concatenate")


@op("jax.numpy.append", reads=("arr", "values", "axis"))
def _append(ctx: RuleContext, call: Call):
    """``jnp.append(x, v, axis=1)``: ``jnp.concatenate([x, v], axis=1)`` (:func:`_joined`: along a split dim
    re-blocked where both split alike, else the split one gathered and the join done whole).  Without
    ``axis=`` both are flattened first: a split one (or a partial sum) gathered whole first, its blocks not
    blocks of the flattened array; the result one whole dim."""
    x, v = call.arg(0, "arr"), call.arg(1, "values")
    axis_op = call.arg(2, "axis")
    axis = _literal(axis_op) if axis_op is not None else None
    if axis is None:  # both flattened: a split one gathered (its blocks are not blocks of the flattened array)
        operands = [o for o in (x, v) if isinstance(o.value, Array)]
        if not any(array(o).layout.is_split or array(o).layout.partial for o in operands):
            return unknown_call(ctx, call)
        if any(not isinstance(o.value, Array | Static) for o in (x, v)):
            raise ctx.error(LayoutError, call.node, "jnp.append of an array whose dims meshify cannot infer",
                            "annotate each operand with a Tensor hint")
        converts = tuple(Convert(o, Layout(array(o).layout.dims, ((),) * array(o).layout.rank),
                                 "jnp.append without axis= (it flattens both)") for o in operands)
        return Lowering(Array(Layout(("appended" + INFERRED,), ((),))), converts)
    return _joined(ctx, call, None, [x, v], "concatenate", axis, "jnp.append")


def _one_item(value) -> Value | None:
    """The value every item of a list has: a sequence's item, or a tuple value's items all of one layout."""
    from meshify.rewrite._helpers import signature_of

    if isinstance(value, TupleValue) and value.items and isinstance(value.items[0], Array) \
            and all(signature_of(i) == signature_of(value.items[0]) for i in value.items[1:]):
        return value.items[0]  # (partial sums over the same axes too: a join is linear, the result one partial sum)
    return sequence_item(value)


def _joined_items(ctx: RuleContext, call: Call, seq, items: None, kind: str, axis, what: str | None = None):
    """``jnp.stack(hidden)`` of a list held in a name (appended to in a loop, ``_containers.appending``): every
    item has one layout, so each device joins its blocks as written.  A stack's new dim is unsplit, its size
    the list's length (an inferred name: the list's); a concatenate along a split dim is refused (each
    device's blocks of the items are not its block of the result), else the joined dim gets an inferred name."""
    item = _one_item(seq.value)
    if not isinstance(item, Array):
        return unknown_call(ctx, call)
    layout = item.layout
    what = what or kind
    if not isinstance(axis, int):
        raise ctx.error(UnsupportedError, call.node, f"{what} needs a literal axis", "write axis=<int literal>")
    code = ctx.code(seq.original)
    dims, axes = list(layout.dims), list(layout.axes)
    if kind == "stack":
        axis %= layout.rank + 1
        dims.insert(axis, (code if code.isidentifier() else "stacked") + INFERRED)
        axes.insert(axis, ())
    else:
        axis %= layout.rank
        if layout.axes[axis]:
            raise ctx.error(UnsupportedError, call.node, f"{what} of the items of {code!r} along dim "
                            f"{layout.dims[axis]!r}, split over {axes_text(layout.axes[axis])}: each device holds "
                            "a block of every item, which together are not its block of the result",
                            f"join them along another dim, or map {layout.dims[axis]!r} to no mesh axis")
        if dims[axis] != BROADCAST:
            dims[axis] = dims[axis].rstrip(INFERRED) + INFERRED
    if layout.partial and _casts(call):
        raise ctx.error(UnsupportedError, call.node, f"{what} of the partial sums in {code!r} with dtype=: the cast "
                        "would round each device's share of a sum where the single-device program rounds the whole",
                        "complete them first (cast each item as it is appended), or drop dtype= and cast the result")
    return keep(Array(Layout(tuple(dims), tuple(axes), layout.partial), item.origin))


def _casts(call: Call) -> bool:
    """Whether a join (``jnp.stack``, ``jnp.concatenate``, ``jnp.array`` of a list) is given a ``dtype=``: its
    items are cast, and a partial sum must be completed before (the cast rounds, or truncates, each device's
    share where the single-device program rounds the whole sum; float32-formed sums of float16/bfloat16 items
    would skip the rounding of each item to its own dtype)."""
    dtype = call.params.get("dtype")
    return dtype is not None and not (isinstance(dtype.value, Static) and dtype.value.known
                                      and dtype.value.literal is None)


def _split_alike(ctx: RuleContext, arrays: list[Operand], axis: int, along: Axes) -> bool:
    """Whether every array of a concatenate along a dim split over ``along`` in some of them can be split so
    too: split that way already, or whole with a size known now (``@mesh(dims=...)``) that is a multiple of
    the devices (a local slice, no communication).  The result is then cut into blocks again
    (``mr.spatial_concatenate``: each device's block of the global result, never its blocks of the arrays side
    by side, ``[a0 b0 | a1 b1]``, a permutation of it)."""
    shards = ctx.mesh.size(along)
    split = {array(a).layout.dims[axis] for a in arrays if array(a).layout.axes[axis] == along}
    for a in arrays:
        layout = array(a).layout
        if layout.axes[axis]:
            if layout.axes[axis] != along:
                return False
            continue
        if layout.dims[axis] in split and not layout.dims[axis].endswith(INFERRED):
            continue  # the size of a dim another array splits that way (a multiple: checked where it is bound)
        size = ctx.sizes.get(layout.dims[axis])
        if not isinstance(size, int) or size % shards:
            return False  # (a size known only when called: the decision cannot wait for it)
    return True


def _gathered_join(ctx: RuleContext, arrays: list[Operand], axis: int, along: Axes, what: str) -> str:
    """The purpose a concatenate along a split dim names where its arrays are not split alike
    (:func:`_split_alike`): the split ones gathered along it and joined whole, as one device joins them."""
    for a in arrays:
        layout = array(a).layout
        if layout.axes[axis] and layout.axes[axis] != along:
            over = axes_text(layout.axes[axis])
            return f"{what} with {ctx.code(a.original)!r} along this dim (split over {over}: the join done whole)"
        if not layout.axes[axis] and layout.dims[axis] == BROADCAST:
            return f"{what} with {ctx.code(a.original)!r} along this dim (of size 1: the join done whole)"
        if not layout.axes[axis]:
            size = ctx.sizes.get(layout.dims[axis])
            why = "its size not known when rewriting" if not isinstance(size, int) else \
                f"its size {size} not a multiple of the {ctx.mesh.size(along)} devices"
            return f"{what} with whole {ctx.code(a.original)!r} along this dim ({why}: the join done whole)"
    return f"{what} along a dim split over {axes_text(along)}, which another dim of the result takes"


def _joined(ctx: RuleContext, call: Call, seq, items, kind: str, axis, what: str | None = None):
    arrays = [i for i in items if isinstance(i.value, Array)]
    if not arrays:
        return unknown_call(ctx, call)
    if len(arrays) != len(items):
        raise ctx.error(LayoutError, call.node, f"{kind} of arrays whose dims meshify cannot infer",
                        "annotate each operand with a Tensor hint")
    rank = arrays[0].value.layout.rank
    if not isinstance(axis, int):
        raise ctx.error(UnsupportedError, call.node, f"{kind} needs a literal axis", "write axis=<int literal>")
    axis %= rank + (1 if kind == "stack" else 0)
    if any(array(a).layout.rank != rank for a in arrays):
        raise ctx.error(LayoutError, call.node, f"{kind} of arrays of different ranks",
                        "give every array the same dims (expand with x[None] where needed)")
    dims = arrays[0].value.dims
    candidates: dict[int, list[Axes]] = {}
    for a in arrays:
        if a.value.dims != dims and kind == "stack":
            # dims differing only by names meshify inferred (a reshape's seq_r_0?) are the user's
            joined = [unify_dims(d, e) for d, e in zip(dims, a.value.dims)]
            if None in joined:
                raise ctx.error(LayoutError, call.node, f"stack of arrays with dims {list(a.value.dims)} and "
                                f"{list(dims)}", "stack arrays with the same dims in the same order")
            dims = tuple(joined)  # type: ignore[arg-type]
        for i, ax in enumerate(array(a).layout.axes):
            if ax and (kind == "stack" or i != axis) and ax not in candidates.setdefault(i, []):
                candidates[i].append(ax)
    chosen = choose_splits(list(range(rank)), candidates, {i: ctx.rules.axes(d) for i, d in enumerate(dims)})
    along: Axes = ()
    if kind == "concatenate":
        # split along the joined dim (one way in every array that is): the result is cut into blocks again,
        # each device taking the blocks its new one overlaps (mr.spatial_concatenate), never the whole dim
        splits = {array(a).layout.axes[axis] for a in arrays if array(a).layout.axes[axis]}
        taken = {x for i, ax in chosen.items() if i != axis for x in ax}
        along = next(iter(splits)) if len(splits) == 1 and not set(next(iter(splits))) & taken else ()
        if any(array(a).layout.dims[axis] == BROADCAST for a in arrays):
            along = ()  # a size-1 dim (keepdims=True) splits into no blocks: the joined dim whole
        first = next((array(a).layout.axes[axis] for a in arrays if array(a).layout.axes[axis]), ())
        if first and not (along and _split_alike(ctx, arrays, axis, along)):
            what = _gathered_join(ctx, arrays, axis, along or first, what or kind)
            along = ()  # the split arrays gathered along it, joined whole
        chosen[axis] = along
    kept = _kept_partial(items, ADD) - {x for ax in chosen.values() for x in ax}
    if _casts(call):  # jnp.stack([a, b], dtype=jnp.int32): a cast rounds each whole sum, not the blocks' sums
        kept = frozenset()
    converts = tuple(Convert(a, Layout(a.value.dims, tuple(chosen[i] for i in range(rank)),
                                       array(a).layout.partial & kept), what or kind) for a in arrays)
    out_axes = [chosen[i] for i in range(rank)]
    out_dims = list(dims)
    if kind == "stack":
        out_dims.insert(axis, "stacked")
        out_axes.insert(axis, ())
    if along or (kind == "concatenate" and len(arrays) > 1):
        # the joined dim has another size than its operands': an inferred name (its size: the call's), never
        # the size-1 dim of a zero column padded on (jnp.concatenate([zeros(.., 1), x], -1))
        named = [array(a).layout.dims[axis] for a in arrays if array(a).layout.dims[axis] != BROADCAST]
        whole = joined_slices([array(a).layout.dims[axis] for a in arrays]) if not along else None
        # (a rotary embedding's even and odd halves joined again: as long as the dim they were cut from)
        out_dims[axis] = whole or (unsliced(named[0]) if named else "joined") + INFERRED
    value = Array(Layout(tuple(out_dims), tuple(out_axes), frozenset(kept)))
    if along:
        from meshify.rewrite.rules.spatial import concat_lowering

        return concat_lowering(ctx, call, seq, arrays, converts, axis, along, value)
    return Lowering(value, converts)




@op("jax.numpy.split", "jax.numpy.array_split")
def _split(ctx: RuleContext, call: Call):
    x, sections = call.arg(0, "ary"), call.arg(1, "indices_or_sections")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    axis = _literal(call.arg(2, "axis")) if call.arg(2, "axis") is not None else 0
    count = _literal(sections)
    written = sections.original if sections is not None else None
    pieces = count if isinstance(count, int) and not isinstance(count, bool) else len(count) + 1 \
        if isinstance(count, tuple | list) else len(written.elements) + 1 \
        if isinstance(written, cst.List | cst.Tuple) else None  # [n_rep, n_rep + 1]: its length is known
    if not isinstance(axis, int) or pieces is None:
        raise ctx.error(UnsupportedError, call.node, f"{call.name.rsplit('.', 1)[-1]}(...) with "
                        f"{'an axis' if not isinstance(axis, int) else 'a number of sections'} meshify cannot read "
                        "here", "write the axis and the number of sections (or a list of the indices) in the call: "
                        "jnp.split(x, 3, axis=-1), jnp.split(x, [q, q + kv], axis=-1)")
    axis %= layout.rank
    if layout.axes[axis]:  # indices meshify cannot read (a config's fields) are read at trace time
        known = count if isinstance(count, int | tuple | list) and not isinstance(count, bool) and (
            isinstance(count, int) or all(type(i) is int for i in count)) else None
        return _split_sections(ctx, call, x, layout, axis, known, pieces)
    if pieces > 1 and layout.dims[axis] != BROADCAST:  # each section another size than the dim's: an inferred name
        bounds = _split_bounds(count, written)
        if bounds is not None:  # at indices: each section named as the slice it is (dim[:q]?, dim[q:]?)
            return keep(TupleValue(tuple(Array(_renamed(layout, axis, sliced_dim(layout.dims[axis], lo, hi, None)),
                                               array(x).origin) for lo, hi in zip((None, *bounds), (*bounds, None)))))
        layout = _renamed(layout, axis, layout.dims[axis].rstrip(INFERRED) + INFERRED)
    return keep(TupleValue(tuple(Array(layout, array(x).origin) for _ in range(pieces))))


def _split_bounds(count: object, written: cst.BaseExpression | None) -> list[int | str] | None:
    """The indices of ``jnp.split(x, [a, b])`` as slice bounds: ints, or the names of Python ints meshify
    cannot read (``cfg.qk_nope_head_dim``: ``qk_nope_head_dim``); None for a number of sections, or an index
    written otherwise (arithmetic)."""
    if isinstance(count, tuple | list) and all(type(i) is int and i >= 0 for i in count):
        return list(count)
    if not isinstance(written, cst.List | cst.Tuple):
        return None
    names = [_expr_name(e.value) for e in written.elements]
    return names if all(names) and len(set(names)) == len(names) else None  # type: ignore[return-value]


def _renamed(layout: Layout, axis: int, name: str) -> Layout:
    dims = list(layout.dims)
    dims[axis] = name
    return Layout(tuple(dims), layout.axes, layout.partial)


def _split_sections(ctx: RuleContext, call: Call, x: Operand, layout: Layout, axis: int,
                    count: int | tuple | list | None, n: int) -> Lowering:
    """``q, k, v = jnp.split(x @ w_qkv, 3, -1)`` (or at indices, a multi-query ``[q | k | v]``) with the fused
    dim split: each device's block holds pieces of whole sections, so ``mr.split_sections`` moves chunks until
    every device holds its block of each section, one ppermute per distinct way they move
    (:func:`meshify._halos.section_rounds`; the same schedule counts them here, where the dim's size is known
    for indices).  Each section keeps the dim's split, its size an inferred name."""
    axes = layout.axes[axis]
    dim = layout.dims[axis]
    shards, size = ctx.mesh.size(axes), ctx.sizes.get(dim)
    widths: list[int] | None = None
    uneven = call.name.endswith("array_split")
    function = "jnp.array_split" if uneven else "jnp.split"
    if isinstance(size, int) and count is not None:
        widths = section_widths(count, size, uneven)
        bad = [w for w in widths or [] if w % shards or w < 0]
        if widths is None or bad:
            raise ctx.error(UnsupportedError, call.node,
                            f"{function} of {dim!r} ({size}, split over {axes_text(axes)} into {shards} blocks) into "
                            f"sections of {widths if widths is not None else f'{size} / {n}'} rows: each section "
                            f"must split into {shards} equal blocks",
                            f"make every section a multiple of {shards} rows, or map {dim!r} to no mesh axis")
    dims = list(layout.dims)
    dims[axis] = dims[axis].rstrip(INFERRED) + INFERRED
    value = Array(Layout(tuple(dims), layout.axes, layout.partial), array(x).origin)
    record = Layout(layout.dims, layout.axes)
    if isinstance(count, int) or widths is not None:
        sizes = (1,) * n if isinstance(count, int) else section_chunks(widths, shards)[1]  # type: ignore[arg-type]
        moves = {to: len(rounds) for to, rounds in section_groups(sizes, shards).items()
                 if any(t != j for j, t in enumerate(to))}
        m = sum(sizes)
        many = f" {{}} of {len(moves)}" if len(moves) > 1 else ""
        first = (f"sections over {axes_text(axes)}: each device's block of {ctx.code(x.original)!r} cut into {m} "
                 "chunks, each sent to the device holding that block of its section (ppermute" + many +
                 ": {} chunk{})")
        later = f"sections over {axes_text(axes)}: the same split's ppermute" + many + " ({} chunk{})"
        emitted = tuple(Emitted(sections_kind(k, m), axes, record, dim,
                                (later if i > 1 else first).format(*((i,) if many else ()), k, "s" * (k != 1)))
                        for i, k in enumerate(moves.values(), 1))
    else:  # indices unread, or into a dim of unknown size: the schedule follows from the sizes at trace time
        emitted = (Emitted(sections_kind(1, 1), axes, record, dim,
                           f"sections over {axes_text(axes)}: chunks of each device's block of "
                           f"{ctx.code(x.original)!r} sent to the devices holding their sections' blocks (ppermutes "
                           "moving at most a block in all; how many follows from the sizes at trace time)"),)
    template = "{mr}.split_sections({x}, {sections}, {axis}, axis_name={axes}" + (", uneven=True)" if uneven else ")")
    sections = call.arg(1, "indices_or_sections")
    fill = (("x", Ref(0)), ("sections", sections.node), ("axis", axis - layout.rank), ("axes", MeshAxes(axes)))
    return Lowering(TupleValue(tuple(value for _ in range(n))), (Convert(x, layout, "split"),), template, fill,
                    emitted)


# -- repeat / broadcast_to (grouped-query attention's kv heads) ----------------------------------------


@op("jax.numpy.repeat", reads=("a", "repeats", "axis", "total_repeat_length"))
def _repeat(ctx: RuleContext, call: Call):
    """``jnp.repeat(k, n_rep, axis=2)``: each element of the dim repeated ``n_rep`` times in place, so
    a device holding a block of that dim holds the repeats of exactly that block: local, any split
    kept (kv heads split over 'model' become the query heads of the same devices).  The dim's size
    changes, so its name is an inferred one (``kv_heads?``) that lines up with the query heads."""
    x, repeats, axis_op = call.arg(0, "a"), call.arg(1, "repeats"), call.arg(2, "axis")
    total = call.params.get("total_repeat_length")
    if total is not None:
        return _repeat_to_length(ctx, call, x, repeats, axis_op, total)
    if isinstance(repeats.value, Array | Opaque):
        raise ctx.error(UnsupportedError, repeats.original, f"jnp.repeat with per-element repeats "
                        f"{ctx.code(repeats.original)!r} and no total_repeat_length: traced under shard_map, the "
                        "result's length must be known when tracing (one device, outside jit, reads it off the "
                        "values)", "pass the length: jnp.repeat(ids, counts, total_repeat_length=nodes.shape[0])")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    axis = _literal(axis_op) if axis_op is not None else None
    count = repeats.value.size_of if isinstance(repeats.value, Static) else None
    if layout.rank == 1 and axis in (None, 0, -1) and count is not None and not layout.partial \
            and layout.dims[0] != BROADCAST:
        # jnp.repeat(jnp.arange(B), L): each entry L times in place, as ids.reshape(-1) of [batch, L] lays
        # them out (a bag's row ids beside its flattened entries): named as that reshape names them, the
        # split of the vector kept (a device's block repeats into its block)
        name = _merged_name((layout.dims[0], count)) + INFERRED
        return keep(Array(Layout((name,), layout.axes), array(x).origin))
    if not isinstance(axis, int):
        if not layout.is_split and not layout.partial:
            return unknown_call(ctx, call)
        raise ctx.error(UnsupportedError, call.node, "jnp.repeat of a split value without a literal axis",
                        "write the axis: jnp.repeat(k, n_rep, axis=2)")
    if not isinstance(repeats.value, Static):
        raise ctx.error(UnsupportedError, repeats.original, "jnp.repeat with per-element repeats (an array)",
                        "repeat by one int: jnp.repeat(k, n_rep, axis=2)")
    axis %= layout.rank
    dims = list(layout.dims)
    dims[axis] = dims[axis].rstrip(INFERRED) + INFERRED if dims[axis] != BROADCAST else f"{_repeat_name(call)}?"
    return keep(Array(Layout(tuple(dims), layout.axes, layout.partial), array(x).origin))


def _repeat_to_length(ctx: RuleContext, call: Call, x: Operand, repeats: Operand, axis_op, total: Operand):
    """``jnp.repeat(jnp.arange(n_graph), n_node, total_repeat_length=nodes.shape[0])`` (jraph's graph id of
    each node): per-element repeats to a length a dim sizes, of values whole on every device: the same on
    every device, its dim the one the length reads (``nodes``).  Repeats (``n_node`` with the graphs split)
    or a value split along the repeated dim, or a partial sum, are gathered whole first: where each entry
    lands depends on every count before it."""
    axis = _literal(axis_op) if axis_op is not None else None
    converts = []
    for o in (x, repeats):
        layout = o.value.layout if isinstance(o.value, Array) else None
        along = layout is not None and isinstance(axis, int) and o is x and layout.rank \
            and not layout.axes[axis % layout.rank] and not layout.partial  # x split along other dims only
        if layout is not None and (layout.is_split or layout.partial) and not along:
            if o is x and isinstance(axis, int) and layout.rank:
                whole = Layout(layout.dims, tuple(() if d == axis % layout.rank else ax
                                                  for d, ax in enumerate(layout.axes)))
            else:
                whole = Layout.replicated(layout.dims)
            converts.append(Convert(o, whole, "jnp.repeat to a total length (where an entry lands depends on "
                                    "every count before it)"))
    size = total.value.size_of if isinstance(total.value, Static) else None
    literal = _literal(total)
    name = size or (f"{_expr_name(total.original)}{INFERRED}" if _expr_name(total.original) else
                    f"{literal}{INFERRED}" if type(literal) is int else None)  # (12?: a literal length)
    rank = x.value.layout.rank if isinstance(x.value, Array) else None
    if name is None or (axis is not None and (not isinstance(axis, int) or rank is None)):
        if converts:
            raise ctx.error(UnsupportedError, call.node, "jnp.repeat(..., total_repeat_length=...) of a split "
                            "value or repeats, to a length meshify cannot name", "read the length off a dim: "
                            "total_repeat_length=nodes.shape[0]")
        return unknown_call(ctx, call)
    if axis is None:
        return Lowering(Array(Layout.replicated((name,))), tuple(converts))
    layout = next((c.layout for c in converts if c.operand is x), x.value.layout)  # type: ignore[union-attr]
    dims = list(layout.dims)
    dims[axis % rank] = name
    return Lowering(Array(Layout(tuple(dims), layout.axes), x.value.origin), tuple(converts))  # type: ignore[union-attr]


def _repeat_name(call: Call) -> str:
    return _expr_name(call.arg(1, "repeats").original) or "repeated"


@op("jax.numpy.broadcast_to", reads=("array", "shape"))
def _broadcast_to(ctx: RuleContext, call: Call):
    """``jnp.broadcast_to(cls_token, (B, 1, D))``: size-1 dims grow to sizes read off other values'
    dims (``x.shape[0]``: that dim, split by the rules where the axis is free) or to new sizes (inferred
    names); the value's own dims keep their splits, and each device builds only its block."""
    x = call.arg(0, "array")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    shape = call.arg(1, "shape")
    node = shape.original
    if isinstance(node, cst.Tuple | cst.List):
        size_ops = [call.items[e.value] for e in node.elements]
    elif isinstance(shape.value, Static) and shape.value.shape_of:
        size_ops = list(_entries(call, shape))
    else:
        raise ctx.error(UnsupportedError, call.node, "jnp.broadcast_to of a split value to a shape meshify cannot read",
                        "spell the sizes out: jnp.broadcast_to(v, (x.shape[0], 1, d))")
    offset = len(size_ops) - layout.rank
    if offset < 0:
        raise ctx.error(LayoutError, call.node, "jnp.broadcast_to to fewer dims than the value has",
                        "broadcast to a shape at least as long as the value's")
    dims: list[str] = []
    axes: list[Axes] = []
    for j, size in enumerate(size_ops):
        i = j - offset
        own = layout.dims[i] if i >= 0 else BROADCAST
        literal = _literal(size)
        if own != BROADCAST or literal == 1:
            dims.append(own)
            axes.append(layout.axes[i] if i >= 0 else ())
            continue
        of = size.value.size_of if isinstance(size.value, Static) else None
        dims.append(of or f"{_expr_name(size.original) or 'broadcast'}{INFERRED}")
        axes.append(())
    taken = {a for ax in axes for a in ax}
    for j, (dim, ax) in enumerate(zip(dims, axes)):
        i = j - offset
        if (i < 0 or layout.dims[i] == BROADCAST) and dim != BROADCAST and not dim.endswith(INFERRED):
            want = ctx.rules.axes(dim)
            if want and not taken & set(want) and not layout.partial & set(want):
                axes[j] = want
                taken |= set(want)
    dims = _unique(dims)
    shards = [_shard_size(ctx, s, s.original, ctx.mesh.size(a), d.rstrip(INFERRED)) for s, a, d in
              zip(size_ops, axes, dims)]
    value = Array(Layout(tuple(dims), tuple(axes), layout.partial), array(x).origin)
    if shards == [None] * len(shards) and isinstance(node, cst.Tuple | cst.List):
        return keep(value)
    # the shape as a tuple of its (per-shard) sizes
    return Lowering(value, replace=((At(call.position(shape)), tuple(s.node if p is None else p
                                                                     for s, p in zip(size_ops, shards))),))


@op("jax.numpy.tile", reads=("A", "reps"))
def _tile(ctx: RuleContext, call: Call):
    """``jnp.tile(latents[None], (B, 1, 1))`` (a Perceiver's latent array, one copy per example): a size-1 dim
    repeated to a size read off another value's dim is that dim, split by the rules where the axis is free, as
    :func:`_broadcast_to` grows it, and each device tiles only its block; a rep of 1 keeps the dim and its split.
    Tiling a dim of more entries makes an inferred one (``d_tiled?``), refused where that dim is split (each
    device's copies of its block would interleave the blocks)."""
    x, reps = call.arg(0, "A"), call.arg(1, "reps")
    if not isinstance(x.value, Array) or not isinstance(reps.original, cst.Tuple | cst.List):
        return unknown_call(ctx, call)
    layout = array(x).layout
    size_ops = [call.items[e.value] for e in reps.original.elements]
    rank = max(len(size_ops), layout.rank)
    dims: list[str] = []
    axes: list[Axes] = []
    grown: list[bool] = []
    for j in range(rank):
        i, r = j - (rank - layout.rank), j - (rank - len(size_ops))
        own, own_axes = (layout.dims[i], layout.axes[i]) if i >= 0 else (BROADCAST, ())
        size = size_ops[r] if r >= 0 else None
        grown.append(size is not None and _literal(size) != 1 and own == BROADCAST)
        if size is None or _literal(size) == 1:
            dims.append(own)
        elif own == BROADCAST:
            of = size.value.size_of if isinstance(size.value, Static) else None
            dims.append(of or f"{_expr_name(size.original) or 'tiled'}{INFERRED}")
        elif own_axes:
            raise ctx.error(UnsupportedError, call.node, f"jnp.tile of {ctx.code(x.original)!r} along its dim {own!r}, "
                            f"split over {axes_text(own_axes)}", f"tile it whole (map {own!r} to no mesh axis), or "
                            "tile a new size-1 dim: jnp.tile(v[None], (n, 1, 1))")
        else:
            dims.append(f"{own.rstrip(INFERRED)}_tiled{INFERRED}")
        axes.append(own_axes)
    taken = {a for ax in axes for a in ax}
    for j, dim in enumerate(dims):
        if grown[j] and not dim.endswith(INFERRED):
            want = ctx.rules.axes(dim)
            if want and not taken & set(want) and not layout.partial & set(want):
                axes[j] = want
                taken |= set(want)
    value = Array(Layout(tuple(_unique(dims)), tuple(axes), layout.partial), array(x).origin)
    offset = rank - len(size_ops)
    shards = [_shard_size(ctx, s, s.original, ctx.mesh.size(axes[offset + r]), dims[offset + r].rstrip(INFERRED),
                          what="tile count") if grown[offset + r] else None for r, s in enumerate(size_ops)]
    if shards == [None] * len(shards):
        return keep(value)
    return Lowering(value, replace=((At(call.position(reps)), tuple(s.node if p is None else p
                                                                    for s, p in zip(size_ops, shards))),))
