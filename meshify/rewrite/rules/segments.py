"""Segment sums and determinants: ``jax.ops.segment_sum`` (a graph network's message passing) and
``jnp.linalg.det``/``slogdet`` (a flow's log-determinant).

``jax.ops.segment_sum(data, ids, num_segments=n)`` adds each row of ``data`` into row ``ids[e]`` of an
``n``-row result.  It is linear in ``data`` and works on each feature column alone, so: features split stay
split; rows (edges) split leave each device the sum of its own rows, a partial sum over those axes (the ids
split as the rows are), completed where a whole value is needed, as a contraction's is.  The result's first
dim is named after the size ``num_segments`` is read off (``nodes.shape[0]``: ``nodes``), else inferred.

``jnp.linalg.det(a)`` / ``slogdet(a)`` of a matrix whose last two dims are whole on every device: each device
computes its block's, the leading (batch) dims keeping their splits; over split matrix dims refused.
"""

from __future__ import annotations

from meshify.annotate._types import INFERRED, Layout
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text
from meshify.rewrite._values import Array, Static, TupleValue
from meshify.rewrite.rules._api import Call, Convert, Emitted, Lowering, MeshAxes, Ref, RuleContext, op, unknown_call


def _segments_dim(ctx: RuleContext, num) -> str:
    """The name of a segment sum's first dim: the dim ``num_segments`` is read off, its expression's name
    (``cfg.n_nodes`` -> ``n_nodes?``), else ``segments?``."""
    value = num.value
    if isinstance(value, Static) and value.size_of is not None:
        return value.size_of
    code = ctx.code(num.original)
    name = code.rsplit(".", 1)[-1]
    return (name if name.isidentifier() else "segments") + INFERRED


_SEGMENT_READS = ("data", "segment_ids", "num_segments", "indices_are_sorted", "unique_indices", "bucket_size", "mode")


@op("jax.ops.segment_sum", kind="sum", reads=_SEGMENT_READS)
@op("jax.ops.segment_max", kind="max", reads=_SEGMENT_READS)
@op("jax.ops.segment_min", kind="min", reads=_SEGMENT_READS)
def _segment_sum(ctx: RuleContext, call: Call, kind: str = "sum"):
    data, ids, num = call.arg(0, "data"), call.arg(1, "segment_ids"), call.arg(2, "num_segments")
    if data is None or not isinstance(data.value, Array):
        return unknown_call(ctx, call)
    layout = data.value.layout
    if layout.rank == 0:
        raise ctx.error(LayoutError, data.original, "segment_sum of a scalar", "pass rows to add: data[e, ...]")
    if num is None or not isinstance(num.value, Static):
        raise ctx.error(UnsupportedError, call.node, "segment_sum without a static num_segments (it would read the "
                        "ids' largest value, a traced one)", "pass num_segments=n_nodes (a Python int, a shape entry)")
    rows = layout.axes[0]
    converts = [Convert(data, layout, "segment_sum's rows")]
    if ids is not None and isinstance(ids.value, Array):
        given = ids.value.layout
        if given.rank != 1:
            raise ctx.error(UnsupportedError, ids.original, f"segment_sum's segment_ids of dims {list(given.dims)}: "
                            "one id per row is modelled", "pass a vector of ids, one per row of data")
        converts.append(Convert(ids, Layout(given.dims, (rows,)), "segment_sum's ids (split as the rows are)"))
    elif ids is not None and rows:
        raise ctx.error(UnsupportedError, ids.original, f"segment_sum's segment_ids {ctx.code(ids.original)!r} are "
                        f"an array of dims meshify cannot infer, beside rows split over {axes_text(rows)}",
                        _name_ids_fix(ctx, data, layout.dims[0]))
    dims = (_segments_dim(ctx, num), *layout.dims[1:])
    if dims[0] in layout.dims[1:]:
        dims = (dims[0].rstrip(INFERRED) + "_segments" + INFERRED, *dims[1:])
    indices = (ids,) if ids is not None and isinstance(ids.value, Array) else ()  # (verify feeds them ints)
    if kind == "sum":
        result = Layout(dims, ((), *layout.axes[1:]), layout.partial | set(rows))
        return Lowering(Array(result), tuple(converts), indices=indices)
    # max/min: a partial sum of rows is completed first (the extreme of a sum is not one of its parts)
    converts[0] = Convert(data, layout.with_partial(()), f"segment_{kind}'s rows")
    result = Layout(dims, ((), *layout.axes[1:]))
    if not rows:
        return Lowering(Array(result), tuple(converts), indices=indices)
    # (jraph's segment_softmax passes them by position: jax.ops.segment_max(logits, ids, n, sorted, unique))
    names = ("indices_are_sorted", "unique_indices", "bucket_size", "mode")
    if len(call.args) > 3 + len(names):
        raise ctx.error(UnsupportedError, call.args[-1].original, f"segment_{kind} with {len(call.args)} positional "
                        "arguments (it takes 7)", "pass data, segment_ids, num_segments and its options")
    given = {**dict(zip(names, call.args[3:])), **{k: call.kwargs[k] for k in names if k in call.kwargs}}
    options = [k for k in names if k in given]
    template = ("{mr}.segment_" + kind + "({data}, {ids}, {num}, axis_name={axes}"
                + "".join(f", {k}={{o_{k}}}" for k in options) + ")")
    fill = (("data", Ref(0)), ("ids", Ref(1)), ("num", num.node), ("axes", MeshAxes(ctx.mesh.order(rows))),
            *((f"o_{k}", given[k].node) for k in options))
    fn = "pmax" if kind == "max" else "pmin"
    emitted = Emitted(fn, ctx.mesh.order(rows), result, layout.dims[0],
                      f"{fn} over {axes_text(rows)}: segment_{kind} of {ctx.code(data.original)!r}, its rows "
                      f"'{layout.dims[0]}' split (each device's segment {kind}ima, then theirs)")
    return Lowering(Array(result), tuple(converts), template, fill, (emitted,), indices=indices)


def _det_rule(ctx: RuleContext, call: Call, kind: str):
    a = call.arg(0, "a")
    if a is None or not isinstance(a.value, Array):
        return unknown_call(ctx, call)
    layout = a.value.layout
    if layout.rank < 2:
        raise ctx.error(LayoutError, a.original, f"{kind} of {ctx.code(a.original)!r}, of dims {list(layout.dims)}: "
                        "a matrix has two", "pass a square matrix (or a stack of them)")
    split = [d for d, axes in zip(layout.dims[-2:], layout.axes[-2:]) if axes]
    if split:
        raise ctx.error(UnsupportedError, call.node, f"{kind} of {ctx.code(a.original)!r} over split dim "
                        f"{split[0]!r} (layout {layout.describe()}): each device holds a block of the matrix",
                        f"map {split[0]!r} to no mesh axis (rules={{{split[0]!r}: None}}): the determinant needs "
                        "the whole matrix on each device")
    source = layout.with_partial(())
    out = Array(Layout(source.dims[:-2], source.axes[:-2]))
    value = TupleValue((out, out)) if kind == "slogdet" else out
    return Lowering(value, (Convert(a, source, kind),))


op("jax.numpy.linalg.det", kind="det", reads=("a",))(_det_rule)
op("jax.numpy.linalg.slogdet", kind="slogdet", reads=("a", "method"))(_det_rule)


def _name_ids_fix(ctx: RuleContext, data, rows: str) -> str:
    """The fix for segment ids of unknown dims: a hint naming them as the rows; where the rows' name is one
    meshify made (``batch_bag?``, not a name a hint may spell), the rows named alike where they are made."""
    if not rows.endswith(INFERRED):
        return f"bind them to a name with a hint first (ids: Tensor[{rows!r}] = ...)"
    name = rows.rstrip(INFERRED)
    return (f"name both where they are made, with one name: the ids (ids: Tensor[{name!r}] = ...) and the rows of "
            f"{ctx.code(data.original)!r} (their first dim, {rows!r} here: e.g. flat: Tensor[{name!r}] = "
            "ids.reshape(-1))")


@op("jax.numpy.bincount", reads=("x", "weights", "minlength", "length"))
def _bincount(ctx: RuleContext, call: Call):
    """``jnp.bincount(receivers, length=n)`` (a graph's in-degrees), ``weights=``: a segment sum of ones (of
    the weights).  Ids split over mesh axes leave each device the counts of its own ids, a partial sum over
    those axes (JAX's semantics per id: negatives count at 0, ids past ``length`` are dropped); the counts'
    dim is named after the size ``length`` is read off.  ``length=`` must be static: JAX reads the ids'
    largest value otherwise, which it cannot inside a traced program."""
    x, weights, length = call.arg(0, "x"), call.arg(1, "weights"), call.kwargs.get("length")
    if x is None or not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = x.value.layout.with_partial(())
    if layout.rank != 1:
        raise ctx.error(LayoutError, x.original, f"bincount of {ctx.code(x.original)!r}, of dims "
                        f"{list(layout.dims)}: one vector of ids", "pass a vector (ids.reshape(-1))")
    if length is None or not isinstance(length.value, Static):
        raise ctx.error(UnsupportedError, call.node, "jnp.bincount without a static length= (it would read the "
                        "ids' largest value, a traced one)", "pass length=n (a Python int, a shape entry: "
                        "length=nodes.shape[0])")
    converts = [Convert(x, layout, "bincount's ids")]
    if weights is not None and not (isinstance(weights.value, Static) and weights.value.literal is None):
        if not (isinstance(weights.value, Array) and weights.value.dims == layout.dims):
            raise ctx.error(LayoutError, weights.original, f"bincount's weights {ctx.code(weights.original)!r} do "
                            f"not have the ids' dims {list(layout.dims)}", "pass one weight per id")
        converts.append(Convert(weights, layout, "bincount's weights (split as the ids are)"))
    result = Layout((_segments_dim(ctx, length),), ((),), set(layout.split_axes))
    return Lowering(Array(result), tuple(converts), indices=(x,))
