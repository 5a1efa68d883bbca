"""Arrays built inside the function: from dim sizes (``zeros``, ``full``, ``arange``, ``*_like``)
or literal shapes, and masks (``tril``, ``triu``): built whole on every device, so positions are
global, then sliced where needed.  ``jax.random`` draws shaped like a split array
(``shape=x.shape``) are drawn blockwise instead (``mr.local_draw``): each device computes only its
block, bit-identical to one device's draw; other draws are whole, then sliced.
"""

from __future__ import annotations

import math
from dataclasses import replace

import libcst as cst

from meshify.annotate._types import INFERRED, Layout, sliced_dim
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text
from meshify.rewrite._values import Array, Opaque, Operand, Static, StructValue, TupleValue
from meshify.rewrite.rules._api import (
    NONLINEAR,
    Call,
    Convert,
    Emitted,
    Lowering,
    Ref,
    RuleContext,
    keep,
    op,
    unknown_call,
)
from meshify.rewrite.rules.elementwise import elementwise
from meshify.rewrite.rules.shapes import _expr_name, _literal

# -- constructors and masks ---------------------------------------------------------------------------


def _shape_dims(operand) -> tuple[str, ...] | None:
    if operand is None or not isinstance(operand.value, Static):
        return None
    if operand.value.shape_of is not None:  # () too: the shape of a scalar
        return operand.value.shape_of
    if operand.value.size_of:
        return (operand.value.size_of,)
    return None


def _literal_shape(operand) -> tuple[int, ...] | None:
    """The shape an operand spells out as int literals (``8``, ``(4, 8)``), else None."""
    lit = _literal(operand)
    if isinstance(lit, int) and not isinstance(lit, bool):
        return (lit,)
    if isinstance(lit, tuple | list) and all(isinstance(n, int) and not isinstance(n, bool) for n in lit):
        return tuple(lit)
    return None


def _built(dims: tuple[str, ...] | None, shape_operand) -> Array | Opaque:
    """A freshly built whole array: named by the dims its shape came from, else opaque with the
    shape the code spells out (``jnp.zeros((4, 8))``)."""
    if dims is not None:
        return Array(Layout.replicated(dims))
    return Opaque(_literal_shape(shape_operand))


@op("jax.numpy.zeros", "jax.numpy.ones", "jax.numpy.empty", "jax.numpy.full", reads=("shape", "fill_value", "dtype"))
def _filled(ctx: RuleContext, call: Call):
    shape = call.arg(0, "shape")
    fill = call.arg(1, "fill_value") if call.name.endswith("full") else None
    converts: tuple[Convert, ...] = ()
    if fill is not None and isinstance(fill.value, Array):
        if fill.value.layout.rank:
            raise ctx.error(UnsupportedError, fill.original,
                            f"jnp.full with an array fill value {ctx.code(fill.original)!r} of dims "
                            f"{list(fill.value.dims)}", "broadcast it instead: jnp.broadcast_to(v, shape), or "
                            "jnp.zeros(shape) + v")
        # Every device must fill with the whole value: a partial sum is reduced first.
        converts = (Convert(fill, fill.value.layout.with_partial(()), "jnp.full's fill value"),)
    elif fill is not None and isinstance(fill.value, Opaque | TupleValue | StructValue):
        return unknown_call(ctx, call)
    return Lowering(_built(_shape_dims(shape), shape), converts)


@op("jax.numpy.identity", reads=("n", "dtype"))
def _identity(ctx: RuleContext, call: Call):
    """``jnp.identity(B)``: as ``jnp.eye(B)``."""
    return _eye(ctx, replace(call, params={"N": call.params["n"]} if "n" in call.params else {}))


@op("jax.numpy.eye", reads=("N", "M", "k", "dtype"))
def _eye(ctx: RuleContext, call: Call):
    """``jnp.eye(B)`` with ``B = logits.shape[0]`` (a contrastive loss's labels against a batch-by-batch
    similarity): a whole square array named by the dim ``B`` sizes (``[batch, batch]``), lining up with the
    dims it meets; ``jnp.eye(n, m)`` likewise.  Of literal sizes it stays an array of that shape, to be named
    where it meets named dims (its rule: ``_known_shape``)."""
    n = call.params.get("N")
    m = call.params.get("M")
    rows = n.value.size_of if n is not None and isinstance(n.value, Static) else None
    cols = rows if m is None or (isinstance(m.value, Static) and m.value.known and m.value.literal is None) \
        else m.value.size_of if isinstance(m.value, Static) else None
    if rows is None or cols is None:
        return unknown_call(ctx, call)
    return keep(Array(Layout.replicated((rows, cols))))


@op("jax.numpy.linspace", reads=("start", "stop", "num", "endpoint", "dtype"))
def _linspace(ctx: RuleContext, call: Call):
    """``jnp.linspace(1e-4, 0.02, num)`` (a noise schedule's betas): a vector whole on every device; of a literal
    length, shaped so; of a length meshify cannot size (``cfg.num_timesteps``), an inferred dim named by it
    (``num_timesteps?``), as ``jnp.arange(n)``'s."""
    if not all(isinstance(o.value, Static) for o in (call.params.get("start"), call.params.get("stop")) if o):
        return unknown_call(ctx, call)
    num = call.params.get("num")
    size = num.value if num is not None else Static.of(50)
    if isinstance(size, Static) and size.known and type(size.literal) is int:
        return keep(Opaque((size.literal,)))
    name = _expr_name(num.original) if num is not None and isinstance(size, Static) else None
    if isinstance(size, Static) and size.size_of:
        return keep(Array(Layout.replicated((size.size_of,))))
    if name is not None:
        return keep(Array(Layout.replicated((name + INFERRED,))))
    return unknown_call(ctx, call)


@op("jax.numpy.arange", reads=("start", "stop", "step", "dtype"))
def _arange(ctx: RuleContext, call: Call):
    device = call.kwargs.get("device")
    if device is not None and not (isinstance(device.value, Static) and device.value.known
                                   and device.value.literal is None):
        return unknown_call(ctx, call)  # (device=None: JAX's default placement, the values unchanged)
    if set(call.kwargs) - {"dtype", "start", "stop", "step", "device"}:
        return unknown_call(ctx, call)
    bounds = [call.params.get(n) for n in ("start", "stop", "step")]
    given = [o for o in bounds if o is not None and not (isinstance(o.value, Static) and o.value.known
                                                          and o.value.literal is None)]
    if given != bounds[:len(given)]:
        return unknown_call(ctx, call)
    call = replace(call, args=tuple(given), kwargs={k: v for k, v in call.kwargs.items() if k == "dtype"})
    # jnp.arange(n) and jnp.arange(0, n) count the same entries
    count = call.args[0] if len(call.args) == 1 else \
        call.args[1] if len(call.args) == 2 and _literal(call.args[0]) == 0 else None
    dims = _shape_dims(count) if count is not None else None
    if dims is not None:
        return keep(Array(Layout.replicated(dims)))
    shifted = _shifted_count(ctx, call)
    if shifted is not None:  # jnp.arange(1, T + 1): positions counted from 1, as many as T's
        return keep(Array(Layout.replicated((shifted,))))
    half = _divided_size(ctx, count.original) if count is not None else None
    if half is not None:  # jnp.arange(D // 2): rotary frequencies, as jnp.arange(0, D, 2) below
        return keep(Array(Layout.replicated((half,))))
    size = count.value if count is not None else None
    name = _expr_name(count.original) if isinstance(size, Static) and not size.known else None
    if name is not None:
        # jnp.arange(half), jnp.arange(cfg.max_len): a Python int meshify cannot size: an inferred dim after
        # it, whole on every device, lining up with the dim it meets (a padding mask's positions beside a
        # batch split: jnp.arange(max_len)[None, :] < lengths[:, None])
        return keep(Array(Layout.replicated((name + INFERRED,))))
    stop = _shape_dims(call.arg(1, "stop")) if len(call.args) >= 2 else None
    if stop is None and len(call.args) >= 2 and isinstance(call.args[1].value, Static) \
            and not call.args[1].value.known and _expr_name(call.args[1].original) is not None:
        # jnp.arange(0, dim, 2) with dim a Python int meshify cannot size (cfg.rope_head_dim): its even entries
        # of an inferred dim named after it (dim?[::2]?), whole on every device, as jnp.arange(dim)'s
        stop = (_expr_name(call.args[1].original) + INFERRED,)
    steps = [_literal(o) for o in (call.args[0], *call.args[2:3])]
    if stop is not None and len(stop) == 1 and all(isinstance(b, int) and not isinstance(b, bool) and b > 0
                                                   for b in steps[1:]) and type(steps[0]) is int and steps[0] >= 0:
        # jnp.arange(0, D, 2) with D a dim's size (rotary frequencies): as many entries as D's even ones
        # (D[::2]?, an inferred name lining up with x[..., ::2] and x[..., :D // 2]), whole on every device;
        # jnp.arange(1, D, 2): as many as its odd ones (D[1::2]?)
        start, step = steps[0], steps[1] if len(steps) > 1 else 1
        if (start, step) == (0, 1):
            return keep(Array(Layout.replicated(stop)))
        return keep(Array(Layout.replicated((sliced_dim(stop[0], start or None, None, step if step != 1 else None),))))
    bounds = [_literal(o) for o in call.args[:3]]
    if not bounds or not all(isinstance(b, int | float) and not isinstance(b, bool) for b in bounds):
        return unknown_call(ctx, call)
    length = arange_length(bounds)
    return keep(Opaque((length,))) if length is not None else unknown_call(ctx, call)


def _shifted_count(ctx: RuleContext, call: Call) -> str | None:
    """The dim ``D`` of ``jnp.arange(k, D + k)`` (or ``k + D``, step 1; ``k`` an int literal, ``D`` a dim's size
    as :func:`_shape_entry` reads it): as many entries as ``D`` (1-based positions, ``jnp.arange(1, T + 1)``)."""
    if len(call.args) not in (2, 3) or (len(call.args) == 3 and _literal(call.args[2]) != 1):
        return None
    start, stop = _literal(call.args[0]), call.args[1].original
    if type(start) is not int or not (isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add)):
        return None
    for size, shift in ((stop.left, stop.right), (stop.right, stop.left)):
        if isinstance(shift, cst.Integer) and int(shift.value, 0) == start:
            return _shape_entry(ctx, size)
    return None


def _divided_size(ctx: RuleContext, node: cst.CSTNode) -> str | None:
    """The inferred dim of ``D // k`` entries (``D`` bound to ``x.shape[-1]`` or written so, ``k`` an int literal): as many
    as ``D``'s entries ``k - 1, 2k - 1, ...`` (``D[1::2]?`` for ``D // 2``: its odd ones), so that it lines up
    with any other inferred dim and joins with ``x[..., ::2]`` to ``D`` (:func:`joined_slices`)."""
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.FloorDivide)
            and isinstance(node.right, cst.Integer)):
        return None
    k = int(node.right.value, 0)
    dim = _shape_entry(ctx, node.left)
    if dim is None or k <= 0:
        return None
    return dim if k == 1 else sliced_dim(dim, k - 1, None, k)


def _shape_entry(ctx: RuleContext, node: cst.BaseExpression) -> str | None:
    """The dim whose size ``node`` is: a name bound to ``x.shape[-1]``, or ``x.shape[-1]`` written out."""
    if isinstance(node, cst.Name):
        value = ctx.bound(node.value)
        return value.size_of if isinstance(value, Static) else None
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape" \
            and isinstance(node.value.value, cst.Name) and len(node.slice) == 1 \
            and isinstance(node.slice[0].slice, cst.Index):
        x, i = ctx.bound(node.value.value.value), node.slice[0].slice.value
        negative = isinstance(i, cst.UnaryOperation) and isinstance(i.operator, cst.Minus)
        literal = i.expression if negative else i  # type: ignore[attr-defined]
        if isinstance(x, Array) and isinstance(literal, cst.Integer):
            index = -int(literal.value, 0) if negative else int(literal.value, 0)
            if -x.layout.rank <= index < x.layout.rank:
                return x.layout.dims[index]
    return None


def arange_length(bounds: list) -> int | None:
    """How many entries ``jnp.arange(*bounds)`` has (``bounds``: 1 to 3 numbers); None for a zero step."""
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    return max(0, math.ceil((stop - start) / step)) if step else None


@op("jax.numpy.zeros_like", "jax.numpy.ones_like", "jax.numpy.empty_like", "jax.numpy.full_like",
    reads=("a", "prototype", "fill_value", "dtype", "shape"))
def _like(ctx: RuleContext, call: Call):
    x = call.arg(0, "a")
    if not isinstance(x.value, Array) or "shape" in call.kwargs or len(call.args) > 3:
        return unknown_call(ctx, call)
    # Only the shape matters: the result is the same on every device of a partial axis (and JAX's
    # replication check must see that: a partial x is passed as its shape and dtype, mr.like(x)).
    shape = Operand(Array(x.value.layout.with_partial(())), x.original, x.node)
    like = (Convert(x, x.value.layout, "the shape", wrap="{mr}.like({x})"),) if x.value.layout.partial else ()
    fill = call.arg(1, "fill_value") if call.name.endswith("full_like") else None
    if fill is None or isinstance(fill.value, Static):
        return Lowering(shape.value, like)
    # An array fill broadcasts into the shape: aligned like an elementwise op (a partial sum reduced).
    value, converts = elementwise(ctx, [shape, fill], NONLINEAR, call.node, "full_like")
    if not isinstance(value, Array):  # an opaque fill beside a whole x: the result is shaped like x
        value = shape.value
    if value.dims != shape.value.dims:
        raise ctx.error(LayoutError, fill.original, f"full_like's fill value {ctx.code(fill.original)!r} "
                        f"has more dims than {ctx.code(x.original)!r}", "fill with a value that broadcasts "
                        "into the array's shape")
    wrap = "{mr}.like({x})" if x.value.layout.partial else None
    return Lowering(value, tuple(replace(c, wrap=wrap) if c.operand.original is x.original else c
                                 for c in converts if c is not None))


@op("jax.numpy.tril", "jax.numpy.triu")
def _triangle(ctx: RuleContext, call: Call):
    m = call.arg(0, "m")
    if not isinstance(m.value, Array):
        return unknown_call(ctx, call)
    layout = m.value.layout
    if layout.rank < 2:
        raise ctx.error(LayoutError, call.node, f"{call.name} needs at least 2 dims",
                        "pass a matrix (or a stack of them)")
    target = Layout(layout.dims, (*layout.axes[:-2], (), ()))
    return Lowering(Array(target), (Convert(m, target, call.name.rsplit(".", 1)[-1] + " (positions must be global)"),))



# -- randomness and splitting -------------------------------------------------------------------------


#: jax.random samplers -> (position, keyword) of their shape argument.
_SAMPLERS = {"normal": (1, "shape"), "uniform": (1, "shape"), "bernoulli": (2, "shape"),
             "truncated_normal": (3, "shape"), "randint": (1, "shape"), "gumbel": (1, "shape"),
             "laplace": (1, "shape"), "exponential": (1, "shape"), "rademacher": (1, "shape"),
             "beta": (3, "shape"), "gamma": (2, "shape")}


def _sampler(ctx: RuleContext, call: Call, kind: str):
    """A draw named by its shape argument (``shape=x.shape``) is drawn split as ``x`` is: each
    device computes only its own block, bit-identical to the single-device draw
    (``mr.local_draw``).  Any other draw is made for the *global* shape, the same on every
    device, and consumers slice their block.
    """
    position, keyword = _SAMPLERS[kind]
    if kind == "bernoulli":
        split = _split_probabilities(ctx, call)
        if split is not None:
            return split
    for operand in [*call.args, *call.kwargs.values()]:
        if isinstance(operand.value, Array) and (operand.value.layout.is_split or operand.value.layout.partial):
            raise ctx.error(UnsupportedError, operand.original,
                            f"jax.random.{kind} with {ctx.code(operand.original)!r} of layout "
                            f"{operand.value.layout.describe()}: a draw must not depend on how arrays are split",
                            "broadcast the probabilities to the draw's shape first, "
                            "jax.random.bernoulli(key, jnp.broadcast_to(p, x.shape)) (drawn per device, bit-identical)"
                            if kind == "bernoulli" else
                            "pass replicated keys and parameters, and the global shape (shape=x.shape)")
    shape = call.arg(position, keyword)
    given = shape is not None and not (isinstance(shape.value, Static) and shape.value.known
                                       and shape.value.literal is None)
    if not given and all(isinstance(o.value, Static) for i, o in enumerate(call.args) if i) \
            and all(isinstance(o.value, Static) for o in call.kwargs.values()):
        # jax.random.uniform(k) < p, jax.random.beta(k, a, a): one number, the same on every device (a 0-d array)
        return keep(Array(Layout.replicated(())))
    layout = _draw_layout(ctx, call, shape)
    if layout is None:
        return keep(_built(_shape_dims(shape), shape))
    return _local_draw(ctx, call, layout)


def _split_probabilities(ctx: RuleContext, call: Call) -> Lowering | None:
    """``jax.random.bernoulli(key, p)`` (``shape=p.shape`` too) of probabilities split over the mesh (a VAE
    decoder's samples of a split batch): drawn as JAX draws it, uniform numbers of ``p``'s shape compared with
    ``p``, each device drawing only its block (``mr.bernoulli``); None where it is not that form."""
    key, p = call.arg(0, "key"), call.arg(1, "p")
    shape, mode = call.arg(2, "shape"), call.kwargs.get("mode") or call.arg(3, "mode")
    if p is None or not isinstance(p.value, Array) or not (p.value.layout.is_split or p.value.layout.partial):
        return None
    if key is None or (isinstance(key.value, Array) and (key.value.layout.is_split or key.value.layout.partial)):
        return None
    if mode is not None and not (isinstance(mode.value, Static) and mode.value.literal == "low"):
        return None  # (mode="high" draws two numbers per entry: refused below)
    same = shape is None or (isinstance(shape.value, Static) and shape.value.known and shape.value.literal is None) \
        or (isinstance(shape.original, cst.Attribute) and shape.original.attr.value == "shape"
            and (ctx.code(shape.original.value) == ctx.code(p.original) or _shape_dims(shape) == p.value.dims))
    if not same or set(call.kwargs) - {"key", "p", "shape", "mode"}:
        return None
    whole = p.value.layout.with_partial(())
    split = [a for axes in whole.axes for a in axes]
    note = (f"local draw over {axes_text(split)} (no communication): each device draws only its block of the "
            f"uniform numbers {ctx.code(call.node.func)} compares with {ctx.code(p.original)!r}, bit-identical to "
            "one device")
    return Lowering(Array(whole), (Convert(p, whole, "jax.random.bernoulli's probabilities"),),
                    "{mr}.bernoulli({key}, {p}, " + _spec_text(whole) + ")", (("key", key.node), ("p", Ref(0))),
                    notes=(note,))


@op("jax.random.permutation", reads=("key", "x", "axis", "independent"))
def _permutation(ctx: RuleContext, call: Call):
    """``perm = jax.random.permutation(key, x.shape[0])`` (mixup's partner of each example): a permutation of a
    dim's positions, named by that dim, the same on every device (whole: consumers take their block)."""
    key, x = call.arg(0, "key"), call.arg(1, "x")
    if isinstance(key.value, Array) and (key.value.layout.is_split or key.value.layout.partial):
        raise ctx.error(UnsupportedError, key.original, "jax.random.permutation with a key of layout "
                        f"{key.value.layout.describe()}: a draw must not depend on how arrays are split",
                        "pass a replicated key")
    if x is not None and isinstance(x.value, Static) and x.value.size_of is not None:
        return keep(Array(Layout.replicated((x.value.size_of,))))
    return unknown_call(ctx, call)


def _draw_layout(ctx: RuleContext, call: Call, shape) -> Layout | None:
    """The split layout of the array whose ``.shape`` the draw takes (``x`` of ``x.shape``), where
    the draw can be made blockwise: None for a whole draw."""
    dims = _shape_dims(shape)
    original = shape.original if shape is not None else None
    if dims is None or not (isinstance(original, cst.Attribute) and original.attr.value == "shape"
                            and isinstance(original.value, cst.Name)):
        return None
    source = ctx.bound(original.value.value)
    if not isinstance(source, Array) or source.dims != dims or not source.layout.is_split:
        return None
    # A parameter array broadcast against the shape (bernoulli's p of x's shape) is global; a raw
    # key (uint32[2]) is no such parameter.
    key = call.arg(0, "key")
    if any(isinstance(o.value, Array) and o.value.layout.rank and o is not key
           for o in [*call.args, *call.kwargs.values()]):
        return None
    if any(arg.star for arg in call.node.args):
        return None
    return Layout(dims, source.layout.axes)


def _local_draw(ctx: RuleContext, call: Call, layout: Layout) -> Lowering:
    """``mr.local_draw(<sampler>, P(...), <the user's arguments>)``."""
    keywords = [arg.keyword.value for arg in call.node.args if arg.keyword is not None]
    arguments = ", ".join([*(f"{{a{i}}}" for i in range(len(call.args))),
                           *(f"{k}={{k_{k}}}" for k in keywords)])
    template = "{mr}.local_draw({fn}, %s, %s)" % (_spec_text(layout), arguments)
    fill = (("fn", call.node.func), *((f"a{i}", o.node) for i, o in enumerate(call.args)),
            *((f"k_{k}", call.kwargs[k].node) for k in keywords))
    note = (f"local draw over {axes_text([a for axes in layout.axes for a in axes])} (no communication): each "
            f"device draws only its block of {ctx.code(call.node.func)}, bit-identical to one device (threefry "
            f"bits by global position; drawn whole and sliced if jax_threefry_partitionable is off or the key is "
            f"not threefry)")
    return Lowering(Array(layout), template=template, fill=fill, notes=(note,))


def _spec_text(layout: Layout) -> str:
    """``{mr}.P("batch", None)``: the layout's split as a PartitionSpec in generated code."""
    entries = ["None" if not axes else f'"{axes[0]}"' if len(axes) == 1
               else "(" + ", ".join(f'"{a}"' for a in axes) + ")" for axes in layout.axes]
    return "{mr}.P(" + ", ".join(entries) + ")"


for _kind in _SAMPLERS:
    op(f"jax.random.{_kind}", kind=_kind)(_sampler)



@op("jax.random.split", reads=("key", "num"))
def _split_keys(ctx: RuleContext, call: Call):
    """``keys = jax.random.split(key, x.shape[0])``: one key per entry of a dim (per-example keys, mapped over by
    ``jax.vmap`` beside that dim's arrays): named by the dim, whole on every device, so that a split consumer
    takes its block of them (each device the keys of its own examples, as on one device).  A typed key (0-d)
    gives ``[dim]``, a raw one (``uint32[2]``) ``[dim, <its dim>]``; any other split is as it was."""
    key, num = call.arg(0, "key"), call.arg(1, "num")
    size = num.value.size_of if num is not None and isinstance(num.value, Static) else None
    count = 2 if num is None else num.value.literal if isinstance(num.value, Static) and num.value.known \
        and type(num.value.literal) is int and num.value.literal > 0 else None
    if size is None and count is not None:  # key, sub = jax.random.split(key): a dim sized by its name, "2?"
        size = f"{count}{INFERRED}"
    made = ctx.qualified_names(key.original.func) if isinstance(key.original, cst.Call) else set()
    if size is not None and not isinstance(key.value, Array) and made & {"jax.random.key", "jax.random.PRNGKey"}:
        # split(jax.random.key(seed), B): a key made here, typed (0-d) or raw (uint32[2])
        raw = "jax.random.PRNGKey" in made
        return keep(Array(Layout.replicated((size, "key_data" + INFERRED) if raw else (size,))))
    if size is None or not isinstance(key.value, Array) or key.value.layout.rank > 1:
        return unknown_call(ctx, call)
    layout = key.value.layout
    if layout.is_split or layout.partial:
        raise ctx.error(UnsupportedError, key.original, f"jax.random.split of {ctx.code(key.original)!r} of layout "
                        f"{layout.describe()}: a key must be the same on every device", "pass a replicated key")
    return Lowering(Array(Layout.replicated((size, *layout.dims))), (Convert(key, layout, "jax.random.split"),))


@op("jax.random.categorical", reads=("key", "logits", "axis", "shape", "replace", "mode"))
def _categorical(ctx: RuleContext, call: Call):
    """``jax.random.categorical(key, logits, axis)`` of logits split over mesh axes (a sampler over a batch-split
    or vocab-split head): ``mr.categorical`` draws each device's block of JAX's Gumbel noise (bit-identical to
    the single-device draw's block), adds the local logits and takes the argmax along ``axis`` (across devices
    where that dim is split).  Whole logits: the call as written.  ``shape=`` and ``replace=False`` over split
    logits are refused."""
    key, logits = call.arg(0, "key"), call.arg(1, "logits")
    if logits is None or not isinstance(logits.value, Array):
        return unknown_call(ctx, call)
    if key is not None and isinstance(key.value, Array) and (key.value.layout.is_split or key.value.layout.partial):
        raise ctx.error(UnsupportedError, key.original, f"jax.random.categorical with a key of layout "
                        f"{key.value.layout.describe()}: a draw must not depend on how arrays are split",
                        "pass a replicated key")
    layout = logits.value.layout
    axis_op = call.arg(2, "axis")
    axis = axis_op.value.literal if axis_op is not None and isinstance(axis_op.value, Static) \
        and axis_op.value.known else -1 if axis_op is None else None
    if not isinstance(axis, int) or isinstance(axis, bool) or not -layout.rank <= axis < layout.rank:
        raise ctx.error(UnsupportedError, axis_op.original if axis_op is not None else call.node,
                        f"jax.random.categorical's axis {ctx.code(axis_op.original) if axis_op else ''} is not an "
                        f"int literal within the logits' {layout.rank} dims", "write axis=-1 (or another int literal)")
    axis %= layout.rank
    whole = layout.with_partial(())
    result = Layout(layout.dims[:axis] + layout.dims[axis + 1:], layout.axes[:axis] + layout.axes[axis + 1:])
    converts = (Convert(logits, whole, "jax.random.categorical's logits"),)
    if not whole.is_split:
        return Lowering(Array(result), converts)
    for name, default in (("shape", None), ("replace", True)):
        given = call.kwargs.get(name) or call.arg(3 if name == "shape" else 4, name)
        if given is not None and not (isinstance(given.value, Static) and given.value.known
                                      and given.value.literal == default):
            raise ctx.error(UnsupportedError, given.original, f"jax.random.categorical({name}=...) of logits split "
                            f"as {whole.describe()}", f"drop {name}= (draw one sample per row), or map the logits' "
                            "dims to no mesh axis")
    mode = call.kwargs.get("mode") or call.arg(5, "mode")
    template = ("{mr}.categorical({key}, {x}, " + _spec_text(whole) + ", axis={axis}"
                + (", mode={mode}" if mode else "") + ")")
    fill = (("key", key.node), ("x", Ref(0)), ("axis", axis), *((("mode", mode.node),) if mode else ()))
    split = [a for axes in whole.axes for a in axes]
    note = (f"local draw over {axes_text(split)}: each device draws only its block of the Gumbel noise of "
            f"{ctx.code(call.node.func)}, bit-identical to one device" + (
                f"; argmax across {axes_text(whole.axes[axis])} (split '{layout.dims[axis]}')" if whole.axes[axis]
                else ""))
    emitted = () if not whole.axes[axis] else (Emitted(
        "argmax", whole.axes[axis], Layout(layout.dims, tuple(() if i == axis else a for i, a in enumerate(whole.axes))),
        layout.dims[axis], f"argmax over {axes_text(whole.axes[axis])}: jax.random.categorical over split "
        f"'{layout.dims[axis]}' of {ctx.code(logits.original)!r}: the first global index of the noisy max"),)
    return Lowering(Array(result), converts, template, fill, emitted, notes=(note,))
