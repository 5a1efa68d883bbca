"""``zip`` of tuples and lists holding arrays, a static restructuring (was refused: "zip has no meshify rule and
'pairs[0][0]' reaches it with layout [batch/'batch', d_ff/'model']", with a fix that unsharded): ``hs, xs =
zip(*pairs)``, ``list(zip(*pairs))`` and ``zip(*pairs, strict=True)`` returned, ``zip(a, b)`` bound and looped
over, in comprehensions, a helper taking the zipped tuples; items split over the mesh and partial sums (``h @ w2``
with d_ff split) regrouped, completed where they leave; and lists whose length meshify does not know while
rewriting (a filtered comprehension): ``list(zip(hs, gs))`` a list of pairs, ``zip(*rows)`` one list per
position.  float16 partial sums zipped keep their dtype (each row's items' dtypes are followed)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def unzipped(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    pairs = [(x @ w1, x), (jnp.tanh(x @ w1), 2 * x)]
    hs, xs = zip(*pairs)
    return sum(h @ w2 for h in hs) + sum(xs)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def partial_items(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    h = jnp.tanh(x @ w1)
    pairs = [(h @ w2, x), (jnp.sin(h) @ w2, x * 3)]
    ys, xs = zip(*pairs, strict=True)
    rows = list(zip(*pairs))
    return ys[0] + ys[1] * xs[1], rows, jnp.stack([ys[0], ys[1]]), pairs[1][0]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def looped(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    hs = [x @ w1, jnp.cos(x @ w1)]
    gs = [w2, w2 * 0.5]
    out = 0.0
    for h, g in zip(hs, gs):
        out = out + h @ g
    zs = [jnp.tanh(h @ g) for h, g in zip(*[hs, gs])]
    table = list(zip(hs, gs))
    return out, zs, table[1][0] @ table[0][1]


def combine(pair, w2):
    h, x = pair
    return jnp.tanh(h) @ w2 + x


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def helper_takes_pairs(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    pairs = zip([x @ w1, x @ w1 * 2], [x, -x])
    return [combine(p, w2) for p in pairs], tuple(zip((x, x + 1), (x @ w1, x @ w1 - 1)))


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def unknown_length(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], n: int = 5):
    hs = [x @ w1 * i for i in range(n) if i % 2 == 0]
    gs = [x * i for i in range(n) if i % 2 == 0]
    rows = list(zip(hs, gs))
    total = sum(h @ w2 + g for h, g in rows)
    ys, zs = zip(*rows)
    return total, rows, jnp.stack(ys) @ w2, sum(zs)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def half(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    h = jnp.tanh(x @ w1)
    pairs = [(h @ w2, x), (jnp.sin(h) @ w2, x * 3)]
    ys, xs = zip(*pairs)
    rows = list(zip(ys, xs))
    out = 0.0
    for y, x in zip(*[ys, xs]):
        out = out + y * x
    return ys[0] + ys[1], rows, sum(y * x for y, x in zip(ys, xs)), out, [y * x for y, x in pairs]


def inputs():
    rng = np.random.default_rng(4301)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w1 = (rng.standard_normal((16, 32)) / 4).astype(np.float32)
    w2 = (rng.standard_normal((32, 16)) / 4).astype(np.float32)
    calls = {name: (x, w1, w2) for name in ("unzipped", "partial_items", "looped", "helper_takes_pairs",
                                            "unknown_length")}
    return {**calls, "half": tuple(a.astype(np.float16) for a in (x, w1, w2))}
