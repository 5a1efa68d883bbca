"""Images in random programs: values with spatial dims (height and width, or one length) split over mesh
axes, and the ops that look across a block's edge.

An *image module* (see :func:`programs.generate`) starts its main function from an image parameter
(``batch, h, w, c`` or ``batch, c, h, w``, or ``batch, t, c``) whose spatial dims the rules split over
one or two mesh axes, and draws, besides every other op family, what spatial parallelism rewrites:
``jax.lax.conv_general_dilated`` / ``jax.lax.conv`` (kernel sizes 1, 3, 5, strides 1 and 2, rhs
dilation 1 and 2, SAME / SAME_LOWER / VALID / explicit padding, dimension numbers as letters or
``ConvDimensionNumbers`` in any order, grouped and depthwise), max and average pooling
(``jax.lax.reduce_window``), ``jnp.pad`` (zeros, ``constant_values=``, ``edge`` / ``wrap`` and other modes), slices
``x[:, 1:-1]`` (strided now and then: ``x[:, 1::2]``), ``jnp.roll``, ``jnp.flip``, ``jax.image.resize``, ``jnp.repeat``, ``jnp.concatenate``
along spatial dims or channels, and group / batch norm statistics.

Each op knows the sizes, so it predicts what meshify refuses by design (a window whose output cannot
split at the block boundaries, a halo wider than a block, a grouped convolution of split features, a
``mode=`` other than constant, edge or wrap along a split dim, a downsampling that is not nearest): such a draw is
recorded as a trigger (its source, and the headline of the call-time error, which has no place in the
file), so that any other refusal shows as unprovoked.  A result whose spatial size changes gets a new
dim name, pinned by a hint, split like its source where the blocks allow.  Half the image modules give
the image dims' sizes in ``@mesh(dims=...)``, so that meshify checks (and explains) at rewrite time
what it otherwise checks when tracing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tests.fuzz.programs import _Builder, _Value, hint

#: The spatial dims' names, and their letters in dimension numbers.
SPATIAL = ("h", "w")
LETTERS = "HW"
#: The headlines of call-time refusals (they point at no line of the program).
HALO = "a halo of"
OPS = ("conv", "pool", "pad", "slice", "roll", "flip", "resize", "repeat", "concatenate", "norm")
WEIGHTS = (30, 14, 9, 7, 6, 5, 7, 5, 6, 9)


def start(b: _Builder) -> _Value:
    """The image parameter: a batch, one or two spatial dims split over free mesh axes (mostly), channels."""
    b.dims_given = b.flag(50)
    batch = b.new_dim(2, base="batch")
    taken = set(b.axes_of(batch))
    spatial = []
    for name in SPATIAL[:b.weighted([(2, 85), (1, 15)])]:
        free = [a for a in b.axes if a not in taken]
        options = [(a,) for a in free] + [(x, y) for x in free for y in free if x != y]
        rule = b.pick(options) if options and b.flag(90) else ()
        shards = math.prod(b.axes[a] for a in rule)
        b.sizes[name] = shards * b.weighted([(4, 6), (8, 3), (2, 1)]) if rule else b.pick((4, 8))
        if rule:
            b.rules[name] = rule
        taken |= set(rule)
        spatial.append(name)
    channels = b.new_dim(b.pick((2, 4)), base="c")
    if set(b.axes_of(channels)) & taken:
        b.rules[channels] = None
    dims = [batch, *spatial, channels] if b.flag(70) else [batch, channels, *spatial]
    b.spatial |= set(spatial)
    _image_dims(b, *dims)
    return b.param(dims)


def _image_dims(b: _Builder, *dims: str) -> None:
    """Dims an image op made: kept whole in ``f2`` (``fixed``) and sized in ``@mesh(dims=...)``."""
    b.fixed |= set(dims)
    b.image_dims += [d for d in dims if d not in b.image_dims]


def image(b: _Builder, v: _Value) -> tuple[list[int], list[int]] | None:
    """Positions of ``v``'s spatial dims and of its two others (batch, channels) when it is an image."""
    if None in v.dims or v.scale > 8.0:
        return None
    spatial = [i for i, d in enumerate(v.dims) if d in b.spatial]
    other = [i for i, d in enumerate(v.dims) if d not in b.spatial]
    return (spatial, other) if spatial and len(spatial) <= 2 and len(other) == 2 and b.disjoint(v.dims) else None


def op_spatial(b: _Builder, a: _Value) -> bool:
    """One image op on ``a`` (or on the latest image, when ``a`` is not one)."""
    if image(b, a) is None:
        images = [v for v in b.values if image(b, v) is not None]
        if not images:
            return False
        a = images[-1]
    spatial, other = image(b, a)  # type: ignore[misc]
    kind = b.weighted(list(zip(OPS, WEIGHTS)))
    return bool(globals()[f"_{kind}"](b, a, spatial, other))


# -- what meshify can split, and the dims of results ---------------------------------------------------


def window_splits(b: _Builder, dim: str, window: int, stride: int, lo: int, hi: int) -> bool:
    """Whether a window over ``dim`` runs split (always, when ``dim`` is whole): an output of ``rows /
    stride`` rows cut at the block boundaries takes a halo a block must hold; any other output (a VALID
    window shrinking the dim) is cut into equal blocks again, each device reading the rows its windows
    cover from its direct neighbours only."""
    if not b.axes_of(dim):
        return True
    rows, shards = b.sizes[dim], b.shards(dim)
    block = rows // shards
    if window - stride <= lo + hi <= window - 1 and block % stride == 0 and lo >= 0:
        return max(lo, window - stride - lo) <= block
    out = (rows + lo + hi - window) // stride + 1 if rows + lo + hi >= window else 0
    if out <= 0 or out % shards:
        return False
    out_block = out // shards
    for i in range(shards):  # device i reads rows [first, last) of the image
        first = max(i * out_block * stride - lo, 0)
        last = min(i * out_block * stride - lo + (out_block - 1) * stride + window, rows)
        if first < last and max(i * block - first, last - (i + 1) * block) > block:
            return False
    return True


def reblocks(b: _Builder, dim: str, start: int, out_rows: int) -> bool:
    """Whether rows ``[start, start + out_rows)`` of ``dim`` (beyond it: padding) split into equal blocks
    again, each needing rows of its direct neighbours only."""
    if not b.axes_of(dim):
        return True
    shards = b.shards(dim)
    rows = b.sizes[dim] // shards
    if out_rows <= 0 or out_rows % shards:
        return False
    block = out_rows // shards
    for i in range(shards):
        lo, hi = max(start + i * block, 0), min(start + (i + 1) * block, rows * shards)
        if lo < hi and max(i * rows - lo, hi - (i + 1) * rows) > rows:
            return False
    return True


def _resized(b: _Builder, dim: str, rows: int, split: bool = True) -> str:
    """``dim`` when it keeps its size, else a new dim of ``rows`` (spatial if ``dim`` is), split as ``dim``
    when ``split`` and its blocks divide ``rows``."""
    if rows == b.sizes[dim]:
        return dim
    new = b.new_dim(rows, base=dim.rstrip("0123456789"), split=False)
    if split and b.axes_of(dim) and rows % b.shards(dim) == 0:
        b.rules[new] = b.axes_of(dim)
    if dim in b.spatial:
        b.spatial.add(new)
    _image_dims(b, new)
    return new


def _drawn(b: _Builder, ok: bool) -> bool:
    """Whether to go on with a draw: always when meshify splits it, else now and then (a provoked refusal)."""
    return ok or b.flag(20)


def _refused(b: _Builder, reason: str, expr: str, *headlines: str) -> None:
    """A draw meshify refuses by design: at ``expr``'s line, or (when tracing) with one of ``headlines``."""
    b.trigger(reason, expr, *headlines)


def _result(b: _Builder, expr: str, a: _Value, dims: Sequence[str], scale: float | None = None) -> bool:
    """``expr`` as a new value: pinned by a hint when it renames a dim, else pinned or not at random."""
    if not b.fits(dims) or not b.disjoint(dims):
        return False
    b.emit(expr, dims, a.scale if scale is None else scale, pin=True if tuple(dims) != a.dims else None)
    return True


def _pairs(pads: Sequence[tuple[int, int]], form: str = "tuple") -> str:
    text = ", ".join(f"({lo}, {hi})" for lo, hi in pads)
    return f"[{text}]" if form == "list" else f"({text}{',' if len(pads) == 1 else ''})"


def _ints(values: Sequence[int]) -> str:
    return f"({', '.join(map(str, values))}{',' if len(values) == 1 else ''})"


def _same_pads(padding: str, rows: int, window: int, stride: int) -> tuple[int, int]:
    """``jax.lax.padtype_to_pads`` of one dim."""
    if padding == "VALID":
        return 0, 0
    total = max((-(-rows // stride) - 1) * stride + window - rows, 0)
    return (total - total // 2, total // 2) if padding == "SAME_LOWER" else (total // 2, total - total // 2)


def _window_pads(b: _Builder, windows: Sequence[int], stride: int) -> list[tuple[int, int]]:
    """Explicit padding per windowed dim: mostly a total meshify splits (window - stride to window - 1)."""
    pads = []
    for w in windows:
        if b.flag(85):
            total = b.ch.integer(max(w - stride, 0), max(w - 1, 0))
        else:
            total = b.ch.integer(0, 3)
        lo = b.ch.integer(0, total)
        pads.append((lo, total - lo))
    return pads


def _windowed(b: _Builder, a: _Value, spatial: list[int], windows: list[int], stride: int,
              pads: list[tuple[int, int]]) -> tuple[list[int], bool] | None:
    """Each spatial dim's output rows, and whether meshify splits them all; None: an empty output."""
    rows = [(b.sizes[a.dims[p]] + lo + hi - w) // stride + 1 for p, w, (lo, hi) in zip(spatial, windows, pads)]
    if min(rows) < 1:
        return None
    ok = all(window_splits(b, a.dims[p], w, stride, lo, hi) for p, w, (lo, hi) in zip(spatial, windows, pads))
    return rows, ok


# -- convolution -------------------------------------------------------------------------------------------


def _conv(b: _Builder, a: _Value, spatial: list[int], other: list[int]) -> bool:
    """``jax.lax.conv_general_dilated`` (or ``jax.lax.conv``) of ``a`` with a new kernel parameter."""
    n, c = other if b.flag(85) else other[::-1]
    kernels = [b.weighted([(3, 5), (1, 2), (5, 2)]) for _ in spatial]
    if len(spatial) == 2 and b.flag(70):
        kernels[1] = kernels[0]
    stride, dilation = b.weighted([(1, 7), (2, 3)]), b.weighted([(1, 3), (2, 1)])
    windows = [(k - 1) * dilation + 1 for k in kernels]
    cin = b.sizes[a.dims[c]]
    groups = b.weighted([(1, 80), (cin, 10), (2 if cin % 2 == 0 else 1, 10)])
    padding, pads = _conv_padding(b, a, spatial, windows, stride)
    shape = _windowed(b, a, spatial, windows, stride, pads)
    if shape is None or not _drawn(b, shape[1]):
        return False
    rows, ok = shape
    letters = "".join("N" if i == n else "C" if i == c else LETTERS[spatial.index(i)] for i in range(len(a.dims)))
    specs = _conv_dims(b, a, spatial, letters, kernels, groups, [_resized(b, a.dims[p], r, ok)
                                                                 for p, r in zip(spatial, rows)])
    if specs is None:
        return False
    (rhs, out), (kernel_dims, out_dims), cout = specs
    kernel = b.param(kernel_dims, std=round((math.prod(kernels) * cin // groups) ** -0.5, 4))
    strides = _ints([stride] * len(spatial))
    space = LETTERS[:len(spatial)]
    if (letters, rhs, out) == ("NC" + space, "OI" + space, "NC" + space) and dilation == groups == 1 and b.flag(15):
        expr = f"jax.lax.conv({a.name}, {kernel.name}, {strides}, {padding})"
    else:
        options = _conv_options(b, letters, rhs, out, dilation, groups, len(spatial))
        order = [space.index(x) for x in rhs if x in space]
        if options.get("dimension_numbers", "").startswith('("') and padding[0] in "([":
            # Letters pair the spatial dims in the kernel spec's order (JAX sorts the image's by it):
            # explicit padding is written in that order, as a user reading JAX's docs writes it.
            padding = _pairs([pads[i] for i in order], "list" if padding[0] == "[" else "tuple")
        expr = b.call("jax.lax.conv_general_dilated", "jax.lax.conv_general_dilated",
                      [a.name, kernel.name, strides, padding], options)
    if not ok:
        _refused(b, "a convolution whose output rows do not split into equal blocks", expr,
                 "a convolution over dim", HALO)
    if groups > 1 and any(b.axes_of(d) for d in (a.dims[c], cout, kernel_dims[rhs.index("I")])):
        _refused(b, "a grouped convolution of split features", expr)
    return _result(b, expr, a, out_dims)


def _conv_dims(b: _Builder, a: _Value, spatial: list[int], letters: str, kernels: list[int], groups: int,
               out_space: list[str]):
    """The kernel's and the output's dimension-number letters (in a random order) and dims, and the output
    features' dim (split at random, whole where it would share an axis); None where no hint can name them."""
    space = LETTERS[:len(spatial)]
    cin = b.sizes[a.dims[letters.index("C")]]
    cout = b.new_dim(groups * b.pick((1, 2)) if groups > 1 else b.pick((2, 4)), base="d")
    per_group = a.dims[letters.index("C")] if groups == 1 else b.new_dim(cin // groups, base="cg", split=False)
    taps = [b.new_dim(k, base=f"k{a.dims[p]}", split=False) for k, p in zip(kernels, spatial)]
    rhs = b.pick([space + "IO", "OI" + space, "".join(b.shuffled("OI" + space))])
    out = b.pick([letters, "NC" + space, "N" + space + "C", "".join(b.shuffled("NC" + space))])
    by_letter = {"N": a.dims[letters.index("N")], "C": cout, "O": cout, "I": per_group}
    kernel_dims = [by_letter.get(x) or taps[space.index(x)] for x in rhs]
    out_dims = [by_letter.get(x) or out_space[space.index(x)] for x in out]
    if not b.disjoint(kernel_dims) or not b.disjoint(out_dims):
        b.rules[cout] = None
    if not b.disjoint(kernel_dims) or not b.disjoint(out_dims):
        return None
    _image_dims(b, cout, per_group, *taps)
    return (rhs, out), (kernel_dims, out_dims), cout


def _conv_padding(b: _Builder, a: _Value, spatial: list[int], windows: list[int],
                  stride: int) -> tuple[str, list[tuple[int, int]]]:
    kind = b.weighted([("SAME", 50), ("VALID", 15), ("explicit", 28), ("SAME_LOWER", 7)])
    if kind == "explicit":
        pads = _window_pads(b, windows, stride)
        return _pairs(pads, b.pick(["tuple", "list"])), pads
    pads = [_same_pads(kind, b.sizes[a.dims[p]], w, stride) for p, w in zip(spatial, windows)]
    return f'"{kind}"', pads


def _conv_options(b: _Builder, lhs: str, rhs: str, out: str, dilation: int, groups: int, n: int) -> dict[str, str]:
    options: dict[str, str] = {}
    if dilation != 1 or b.flag(10):
        options["rhs_dilation"] = _ints([dilation] * n)
    if (lhs, rhs, out) != ("NC" + LETTERS[:n], "OI" + LETTERS[:n], "NC" + LETTERS[:n]) or b.flag(50):
        options["dimension_numbers"] = _dimension_numbers(b, lhs, rhs, out)
    if groups != 1 or b.flag(5):
        options["feature_group_count"] = str(groups)
    return options


def _dimension_numbers(b: _Builder, lhs: str, rhs: str, out: str) -> str:
    """As letters (mostly), or as ``jax.lax.ConvDimensionNumbers`` of dim indices."""
    if b.flag(80):
        return f'("{lhs}", "{rhs}", "{out}")'
    space = [x for x in LETTERS if x in lhs]

    def spec(letters: str, first: str) -> str:
        return _ints([letters.index(x) for x in (*first, *space)])

    return f"jax.lax.ConvDimensionNumbers({spec(lhs, 'NC')}, {spec(rhs, 'OI')}, {spec(out, 'NC')})"


# -- pooling -----------------------------------------------------------------------------------------------


def _pool(b: _Builder, a: _Value, spatial: list[int], other: list[int]) -> bool:
    size = b.weighted([(2, 5), (3, 4)])
    stride = b.weighted([(size, 5), (1, 4), (2, 2)])
    average = b.flag(40)
    dilation = b.weighted([(1, 8), (2, 2)]) if average else 1  # a dilated max pool has no VJP in JAX
    window = (size - 1) * dilation + 1
    kind = b.weighted([("SAME", 40), ("VALID", 45), ("explicit", 15)])
    if kind == "explicit":
        pads = _window_pads(b, [window] * len(spatial), stride)
    else:
        pads = [_same_pads(kind, b.sizes[a.dims[p]], window, stride) for p in spatial]
    shape = _windowed(b, a, spatial, [window] * len(spatial), stride, pads)
    if shape is None:
        return False
    rows, ok = shape
    if not _drawn(b, ok):
        return False
    rank = len(a.dims)
    windows = _ints([size if i in spatial else 1 for i in range(rank)])
    strides = _ints([stride if i in spatial else 1 for i in range(rank)])
    padding = f'"{kind}"' if kind != "explicit" else _pairs(
        [pads[spatial.index(i)] if i in spatial else (0, 0) for i in range(rank)])
    init, computation = ("0.0", "jax.lax.add") if average else ("-jnp.inf", "jax.lax.max")
    expr = f"jax.lax.reduce_window({a.name}, {init}, {computation}, {windows}, {strides}, {padding}"
    if dilation != 1:
        expr += f", window_dilation={_ints([dilation if i in spatial else 1 for i in range(rank)])}"
    expr += ")" + (f" / {size ** len(spatial)}" if average else "")
    if not ok:
        _refused(b, "a pooling window whose output rows do not split into equal blocks", expr,
                 "a pooling window", HALO)
    dims = list(a.dims)
    for p, r in zip(spatial, rows):
        dims[p] = _resized(b, a.dims[p], r, ok)
    return _result(b, expr, a, dims)


# -- re-blocking: pad and slices ---------------------------------------------------------------------------------


def _pad(b: _Builder, a: _Value, spatial: list[int], other: list[int]) -> bool:
    rank = len(a.dims)
    widths = [(0, 0)] * rank
    for p in spatial:
        if b.flag(80):
            widths[p] = (b.ch.integer(0, 2), b.ch.integer(0, 2))
    if b.flag(15):
        widths[other[1]] = (0, 1)
    form = b.weighted([("pairs", 85), ("int", 15)])
    if form == "int":
        widths = [(1, 1)] * rank
    options = _pad_options(b, widths)
    expr = b.call("jnp.pad", "jax.numpy.pad", [a.name, "1" if form == "int" else _pairs(widths)], options)
    padded = [i for i in range(rank) if any(widths[i]) and b.axes_of(a.dims[i])]
    mode = options.get("mode", '"constant"').strip('"')
    other_mode = bool(padded) and mode not in ("constant", *BORDER_PADS)
    if mode in BORDER_PADS:  # every block takes (lo, hi) rows of its neighbours (round a ring for wrap; its own, mirrored)
        even = all(_border_pads(b, a.dims[i], *widths[i], mode) for i in padded)
    else:
        even = all(reblocks(b, a.dims[i], -widths[i][0], b.sizes[a.dims[i]] + sum(widths[i])) for i in padded)
    if not _drawn(b, even and not other_mode):
        return False
    if other_mode:
        _refused(b, f"jnp.pad(mode={options['mode']}) along a split dim", expr)
    elif not even and mode in BORDER_PADS:
        _refused(b, f"jnp.pad(mode={options['mode']}) whose result does not split into equal blocks", expr,
                 "jnp.pad(mode=", HALO)
    elif not even:
        _refused(b, "jnp.pad whose result does not split into equal blocks", expr, "jnp.pad along dim", HALO)
    dims = [_resized(b, d, b.sizes[d] + lo + hi) for d, (lo, hi) in zip(a.dims, widths)]
    return _result(b, expr, a, dims, a.scale + 1.0)


#: ``jnp.pad`` modes meshify pads a split dim with from the border blocks' neighbours.
BORDER_PADS = ("edge", "wrap", "reflect", "symmetric")


def _border_pads(b: _Builder, dim: str, lo: int, hi: int, mode: str) -> bool:
    """Whether ``jnp.pad(mode="edge" | "wrap" | "reflect" | "symmetric")`` of ``(lo, hi)`` rows along ``dim``
    splits into equal blocks, each padded from its direct neighbours only (a reflect pad narrower than a block:
    its border blocks mirror their rows leaving the edge row out)."""
    shards = b.shards(dim)
    return (b.sizes[dim] + lo + hi) % shards == 0 and max(lo, hi) + (mode == "reflect") <= b.sizes[dim] // shards


def _pad_options(b: _Builder, widths: Sequence[tuple[int, int]]) -> dict[str, str]:
    """``mode=`` (constant mostly) and, for constant, ``constant_values=`` now and then."""
    mode = b.weighted([("constant", 88), ("edge", 4), ("reflect", 3), ("wrap", 3), ("symmetric", 2)])
    options = {"mode": f'"{mode}"'} if mode != "constant" or b.flag(10) else {}
    if mode == "constant" and b.flag(25):
        options["constant_values"] = b.pick(["0.5", "-1.0", _pairs([(0.5, -0.5)] * len(widths)),
                                             _pairs([(0.0, 0.0)] * (len(widths) - 1) + [(1.0, 2.0)])])
    return options


def _slice(b: _Builder, a: _Value, spatial: list[int], other: list[int]) -> bool:
    parts, kept, ones, dropped = [":"] * len(a.dims), {}, set(), set()
    for p in spatial:
        if not b.flag(75):
            continue
        rows, block = b.sizes[a.dims[p]], b.sizes[a.dims[p]] // b.shards(a.dims[p])
        if b.flag(15):  # one entry, split or not: the global entry, gathered (an int index drops the dim)
            k = b.pick([0, 1, rows - 1, block, -1, -2, -rows])
            if not -rows <= k < rows:
                continue
            if b.flag(40) and len(dropped) + 1 < len(a.dims):
                parts[p] = str(k)
                dropped.add(p)
            else:
                parts[p] = b.pick(["-1:", ":1", f"{k}:{k + 1}" if k >= 0 else f"{k}:{k + 1 or ''}"])
                ones.add(p)
            continue
        bounds = [(lo, hi) for lo in (0, 1, 2, block) for hi in (None, -1, -2, -block, rows - 1)
                  if (lo, hi) != (0, None) and range(rows)[lo:hi]]
        if not bounds:  # a one-row dim: no slice but the whole
            continue
        even = [(lo, hi) for lo, hi in bounds if reblocks(b, a.dims[p], lo, len(range(rows)[lo:hi]))]
        lo, hi = b.pick(even if even and b.flag(85) else bounds)
        step = b.pick([2, 2, 3]) if b.flag(8) else 1
        parts[p] = f"{lo or ''}:{'' if hi is None else hi}" + (f":{step}" if step > 1 else "")
        kept[p] = range(rows)[lo:hi:step]
        if not kept[p]:
            return False
    # A strided slice re-blocks the rows from its start to its last row taken (plus step - 1), then takes
    # every step-th row of each block: the rows taken must split into equal blocks too.
    ok = all(reblocks(b, a.dims[p], r.start, len(r) * r.step)
             and (r.step == 1 or not b.axes_of(a.dims[p]) or len(r) % b.shards(a.dims[p]) == 0)
             for p, r in kept.items())
    if not (kept or ones or dropped) or not _drawn(b, ok):
        return False
    dims = [_resized(b, d, 1, False) if p in ones else _resized(b, d, len(kept[p]), ok) if p in kept else d
            for p, d in enumerate(a.dims) if p not in dropped]
    if parts[-1] != ":" and set(parts[:-1]) == {":"} and b.flag(30):
        parts = ["...", parts[-1]]
    while parts[-1] == ":":
        parts.pop()
    expr = f"{a.name}[{', '.join(parts)}]"
    if not ok:
        _refused(b, "a slice whose result does not split into equal blocks", expr, "the slice [", HALO)
    return _result(b, expr, a, dims)


# -- periodic and mirrored -------------------------------------------------------------------------------------


def _roll(b: _Builder, a: _Value, spatial: list[int], other: list[int]) -> bool:
    dims = b.shuffled(spatial)[:b.ch.integer(1, len(spatial))]
    shifts = []
    for p in dims:
        rows = b.sizes[a.dims[p]]
        shifts.append(b.pick([1, -1, 2, -3, rows // max(b.shards(a.dims[p]), 1) + 1, rows - 1]))
    if b.flag(5):  # the flattened array: refused when a dim is split
        expr = f"jnp.roll({a.name}, {shifts[0]})"
        if any(b.axes_of(d) for d in a.dims):
            _refused(b, "jnp.roll without axis=", expr)
    elif len(dims) == 1 and b.flag(60):
        expr = b.call("jnp.roll", "jax.numpy.roll", [a.name, str(shifts[0])], {"axis": str(dims[0])})
    else:
        expr = f"jnp.roll({a.name}, {_ints(shifts)}, axis={_ints(dims)})"
    return _result(b, expr, a, a.dims)


def _flip(b: _Builder, a: _Value, spatial: list[int], other: list[int]) -> bool:
    form = b.weighted([("one", 5), ("both", 3), ("all", 1)])
    if form == "all":
        expr = f"jnp.flip({a.name})"
    elif form == "both" and len(spatial) == 2:
        expr = f"jnp.flip({a.name}, axis={_ints(spatial)})"
    else:
        expr = f"jnp.flip({a.name}, {b.pick(spatial)})"
    return _result(b, expr, a, a.dims)


# -- resizing -------------------------------------------------------------------------------------------------


def _resize(b: _Builder, a: _Value, spatial: list[int], other: list[int]) -> bool:
    factor = b.weighted([(2.0, 6), (0.5, 3), (1.0, 1)])
    method = b.pick(["nearest", "bilinear", "linear"]) if factor >= 1 else b.weighted([("nearest", 8), ("linear", 2)])
    dims, sizes, ok = list(a.dims), [], True
    for i, d in enumerate(a.dims):
        rows = b.sizes[d]
        if i in spatial and int(rows * factor) >= 1:
            rows = int(rows * factor)
            shards = b.shards(d)
            if b.axes_of(d) and (rows % shards or (factor < 1 and (method != "nearest"
                                                                   or (b.sizes[d] // shards) % 2))):
                ok = False
        sizes.append(rows)
    if not _drawn(b, ok):
        return False
    dims = [_resized(b, d, r, ok) for d, r in zip(a.dims, sizes)]
    shape = _ints(sizes) if b.flag(60) else "(" + ", ".join(
        f"{a.name}.shape[{i}]" + ("" if r == b.sizes[d] else " * 2" if r > b.sizes[d] else " // 2")
        for i, (d, r) in enumerate(zip(a.dims, sizes))) + ")"
    options = {"antialias": "False"} if b.flag(10) else {}
    expr = b.call("jax.image.resize", "jax.image.resize", [a.name, shape, f'"{method}"'], options)
    if not ok:
        _refused(b, "a resize meshify does not split (not by an integer factor, or linear downsampling)", expr,
                 "jax.image.resize")
    return _result(b, expr, a, dims)


def _repeat(b: _Builder, a: _Value, spatial: list[int], other: list[int]) -> bool:
    p = b.pick(spatial)
    times = b.pick([2, 3])
    dims = list(a.dims)
    dims[p] = _resized(b, a.dims[p], b.sizes[a.dims[p]] * times)
    axis = b.pick([p, p - len(a.dims)])
    return _result(b, f"jnp.repeat({a.name}, {times}, axis={axis})", a, dims)


def _concatenate(b: _Builder, a: _Value, spatial: list[int], other: list[int]) -> bool:
    """A skip connection: along the channels, or along a spatial dim."""
    k = b.pick([other[1], *spatial])
    if not b.shape_concatenate(a, k):
        return False
    joined = b.values[-1].dims[k]
    if a.dims[k] in b.spatial:
        b.spatial.add(joined)  # type: ignore[arg-type]
    _image_dims(b, joined)  # type: ignore[arg-type]
    return True


# -- normalisation -----------------------------------------------------------------------------------------------


def _norm(b: _Builder, a: _Value, spatial: list[int], other: list[int]) -> bool:
    """Group norm (channels reshaped into groups; statistics over the spatial dims and each group's channels)
    or batch norm (statistics over the batch and the spatial dims)."""
    n, c = other
    k = len(b.lines)
    variance = b.pick(["jnp.var({x}, axis={axes}, keepdims=True)",
                       "jnp.mean(jnp.square({x} - {m}), axis={axes}, keepdims=True)"])
    scale = b.pick(["jax.lax.rsqrt({v} + 1e-5)", "1.0 / jnp.sqrt({v} + 1e-5)"])
    if b.flag(50):
        axes = _ints(sorted([n, *spatial]))
        m, v = f"mu{k}", f"var{k}"
        b.lines.append(f"{m} = jnp.mean({a.name}, axis={axes}, keepdims=True)")
        b.lines.append(f"{v} = " + variance.format(x=a.name, axes=axes, m=m))
        return bool(b.emit(f"({a.name} - {m}) * " + scale.format(v=v), a.dims, 4.0))
    channels = b.sizes[a.dims[c]]
    groups = b.pick([g for g in (1, 2, channels) if channels % g == 0])
    group = b.new_dim(groups, base="groups", split=False)
    per_group = b.new_dim(channels // groups, base="per_group", split=False)
    if b.axes_of(a.dims[c]):
        if groups % b.shards(a.dims[c]):
            return False
        b.rules[group] = b.axes_of(a.dims[c])
    _image_dims(b, group, per_group)
    g_dims = [*a.dims[:c], group, per_group, *a.dims[c + 1:]]
    sizes = [f"{a.name}.shape[{i}]" if b.flag(50) else str(b.sizes[d]) for i, d in enumerate(a.dims)]
    split = [*sizes[:c], str(groups), f"{sizes[c]} // {groups}", *sizes[c + 1:]]
    axes = _ints(sorted([g_dims.index(a.dims[p]) for p in spatial] + [c + 1]))
    g, m, v, x = f"grouped{k}", f"mu{k}", f"var{k}", f"normed{k}"
    b.lines += [f"{g}: {hint(g_dims)} = {a.name}.reshape({', '.join(split)})",
                f"{m} = jnp.mean({g}, axis={axes}, keepdims=True)",
                f"{v} = " + variance.format(x=g, axes=axes, m=m),
                f"{x}: {hint(g_dims)} = ({g} - {m}) * " + scale.format(v=v)]
    return bool(b.emit(f"{x}.reshape({', '.join(sizes)})", a.dims, 4.0, pin=True))


def dims_text(b: _Builder) -> str:
    """``, dims={...}``: the image dims' sizes, when this function gives them."""
    text = "\n".join(b.lines) + "".join(hint(a.dims) for a in b.args)
    named = [d for d in b.image_dims if f'"{d}"' in text]
    if not b.dims_given or not named:
        return ""
    return ", dims={" + ", ".join(f'"{d}": {b.sizes[d]}' for d in named) + "}"
