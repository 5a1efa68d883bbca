"""Fourier transforms: ``jnp.fft.fft``/``ifft``/``rfft``/``irfft``/``hfft``/``ihfft`` along one axis, their
``2``/``n`` forms over several, and ``fftshift``/``ifftshift`` (FNet's token mixing, Hyena's and FNO's long
convolutions).

A transform along a dim mixes every entry of that dim and no other: along a dim whole on every device it is
the device's own, the other dims keeping their splits (each device transforms its rows); along a split dim
each device holds a block of the signal, and the transform is refused with a fix (meshify never gathers
silently).  A pending partial sum is completed first (the transforms are linear, but a complex sum is not one
meshify carries).  The transformed dim keeps its name where its size stays (``fft``, ``ifft`` without ``n``,
or ``n`` read off that dim); a size the transform changes (``rfft``'s ``n // 2 + 1``, ``irfft``'s
``2 * (m - 1)``, ``n=2 * L``) names the dim anew: after the dim ``n`` is read off (``n=x.shape[2]``), else
inferred (``length_rfft?``).
"""

from __future__ import annotations

from meshify.annotate._types import INFERRED, Layout
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text
from meshify.rewrite._values import Array, Static
from meshify.rewrite.rules._api import Call, Convert, Lowering, RuleContext, op, unknown_call

#: The one-axis transforms, and what each does to the size of the transformed dim without ``n``.
_ONE_AXIS = {"fft": "kept", "ifft": "kept", "rfft": "halved", "irfft": "doubled", "hfft": "doubled",
             "ihfft": "halved"}
#: The several-axis transforms: the last transformed axis is the one ``rfft``/``irfft`` resize.
_MANY_AXES = {"fft2": "kept", "ifft2": "kept", "rfft2": "halved", "irfft2": "doubled", "fftn": "kept",
              "ifftn": "kept", "rfftn": "halved", "irfftn": "doubled"}


def _static(ctx: RuleContext, operand, what: str, example: str) -> object:
    """The literal of a static argument (None where not given)."""
    if operand is None:
        return None
    value = operand.value
    if isinstance(value, Static) and value.known:
        return value.literal
    if isinstance(value, Static) and what == "n":
        return value  # a size read off a dim (x.shape[1]) or computed: its value is not needed, its name may be
    raise ctx.error(UnsupportedError, operand.original, f"{what}={ctx.code(operand.original)} is not a value meshify "
                    "can read here", f"write it as a literal ({example}) so that meshify knows which dims it transforms")


def _axes_of(ctx: RuleContext, operand, layout: Layout, given: object) -> list[int]:
    axes = given if isinstance(given, tuple | list) else (given,)
    out = []
    for a in axes:
        if not isinstance(a, int) or isinstance(a, bool) or not -layout.rank <= a < layout.rank:
            raise ctx.error(LayoutError, operand.original if operand is not None else None,
                            f"axis {a!r} is out of range for a value of dims {list(layout.dims)}",
                            f"use an axis from {-layout.rank} to {layout.rank - 1}")
        out.append(a % layout.rank)
    if len(set(out)) != len(out):
        raise ctx.error(LayoutError, operand.original if operand is not None else None,
                        f"axes {tuple(axes)} name one dim twice", "name each transformed dim once")
    return out


def _refuse_split(ctx: RuleContext, call: Call, x, layout: Layout, axes: list[int], short: str) -> None:
    split = [i for i in axes if layout.axes[i]]
    if not split:
        return
    d = layout.dims[split[0]]
    raise ctx.error(UnsupportedError, call.node, f"jnp.fft.{short} of {ctx.code(x.original)!r} along {d!r}, which is "
                    f"split over {axes_text(layout.axes[split[0]])} (layout {layout.describe()}): each device holds "
                    "a block of the signal, and the transform mixes all of it",
                    f"map {d!r} to no mesh axis (rules={{{d!r}: None}}) and split another dim (the batch, the "
                    "channels): meshify never gathers silently")


def _resized(ctx: RuleContext, d: str, dims: tuple[str, ...], size: object, change: str, short: str) -> str:
    """The name of a transformed dim of size ``size`` (an ``n`` given, or None)."""
    if isinstance(size, Static) and size.size_of is not None:
        return size.size_of if size.size_of == d or size.size_of not in dims else d + f"_{short}" + INFERRED
    if size is None and change == "kept":
        return d
    return d.rstrip(INFERRED) + f"_{short}" + INFERRED


def _one_axis(ctx: RuleContext, call: Call, short: str):
    x = call.arg(0, "a")
    if x is None or not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = x.value.layout
    if layout.rank == 0:
        raise ctx.error(LayoutError, x.original, f"jnp.fft.{short} of a scalar", "pass an array of samples")
    axis_op = call.arg(2, "axis")
    axis_given = _static(ctx, axis_op, "axis", "axis=-1")
    (axis,) = _axes_of(ctx, axis_op, layout, -1 if axis_given is None else axis_given)
    _static(ctx, call.arg(3, "norm"), "norm", 'norm="ortho"')
    n = _static(ctx, call.arg(1, "n"), "n", "n=2 * L")
    _refuse_split(ctx, call, x, layout, [axis], short)
    dims = list(layout.dims)
    dims[axis] = _resized(ctx, dims[axis], layout.dims, n, _ONE_AXIS[short], short)
    whole = layout.with_partial(())
    return Lowering(Array(Layout(tuple(dims), layout.axes)), (Convert(x, whole, f"jnp.fft.{short}"),))


def _many_axes(ctx: RuleContext, call: Call, short: str):
    x = call.arg(0, "a")
    if x is None or not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = x.value.layout
    axes_op, s_op = call.arg(2, "axes"), call.arg(1, "s")
    given = _static(ctx, axes_op, "axes", "axes=(1, 2)")
    s = _static(ctx, s_op, "s", "s=(64, 64)")
    if s is not None and not isinstance(s, tuple | list):
        raise ctx.error(UnsupportedError, s_op.original, f"s={ctx.code(s_op.original)} is not a tuple meshify can "
                        "read here", "write the sizes as a tuple literal, s=(64, 64), or drop s=")
    if given is None:
        given = (-2, -1) if short.endswith("2") else tuple(range(-len(s), 0)) if s is not None \
            else tuple(range(layout.rank))
    axes = _axes_of(ctx, axes_op, layout, given)
    if s is not None and len(s) != len(axes):
        raise ctx.error(LayoutError, s_op.original, f"s={tuple(s)} gives {len(s)} sizes for {len(axes)} axes",
                        "give one size per transformed axis")
    _static(ctx, call.arg(3, "norm"), "norm", 'norm="ortho"')
    _refuse_split(ctx, call, x, layout, axes, short)
    dims = list(layout.dims)
    for k, i in enumerate(axes):
        change = _MANY_AXES[short] if k == len(axes) - 1 else "kept"
        size = s[k] if s is not None else None
        dims[i] = _resized(ctx, dims[i], layout.dims, size, change, short)
    whole = layout.with_partial(())
    return Lowering(Array(Layout(tuple(dims), layout.axes)), (Convert(x, whole, f"jnp.fft.{short}"),))


def _shift(ctx: RuleContext, call: Call, short: str):
    """``fftshift``/``ifftshift``: a roll by half of each dim in ``axes`` (all without): local along whole dims."""
    x = call.arg(0, "x")
    if x is None or not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = x.value.layout
    axes_op = call.arg(1, "axes")
    given = _static(ctx, axes_op, "axes", "axes=-1")
    axes = _axes_of(ctx, axes_op, layout, tuple(range(layout.rank)) if given is None else given)
    _refuse_split(ctx, call, x, layout, axes, short)
    return Lowering(Array(layout), (Convert(x, layout, f"jnp.fft.{short}"),))


for _short in _ONE_AXIS:
    op(f"jax.numpy.fft.{_short}", short=_short, reads=("a", "n", "axis", "norm"))(_one_axis)
for _short in _MANY_AXES:
    op(f"jax.numpy.fft.{_short}", short=_short, reads=("a", "s", "axes", "norm"))(_many_axes)
for _short in ("fftshift", "ifftshift"):
    op(f"jax.numpy.fft.{_short}", short=_short, reads=("x", "axes"))(_shift)
