"""``[*hs, x]``, ``(*hs, x)``, ``[x, *hs]``, ``[*hs, *gs]`` where ``hs`` is a list whose length meshify does not know
while rewriting (a comprehension over ``range(n)`` of a static ``n``, a filtered one, appends in a loop): was refused
("*hs in a list holding arrays: meshify does not know how many items 'hs' holds").  The display is a list of that
unknown length, every item of the one layout: returned, summed, stacked, looped over, passed to a helper; a partial
sum written as an item (``h @ w2`` with d_ff split) is completed where it is written."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def appended_after(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], n: int = 3):
    hs = [x @ w1 * (i + 1) for i in range(n)]
    return [*hs, jnp.tanh(x @ w1)]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def tuple_before_and_between(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], n: int = 4):
    hs = [x @ w1 + i for i in range(n) if i != 2]
    gs = [jnp.sin(x @ w1) * i for i in range(n)]
    both = [*hs, *gs]
    return (x @ w1, *hs), sum(both), both[-1] * len(both)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def partial_item(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], n: int = 3):
    hs = []
    for i in range(n):
        hs.append(x * (i + 1))
    h = jnp.tanh(x @ w1)
    ys = [h @ w2, *hs, jnp.cos(h) @ w2]
    out = 0.0
    for y in ys:
        out = out + jnp.tanh(y)
    return out, ys


def total(items, w2):
    return sum(jnp.tanh(i) @ w2 for i in items)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def helper_takes_list(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], n: int = 2):
    hs = [x @ w1 - i for i in range(n)]
    return total([*hs, x @ w1], w2), total((x @ w1 * 2, *hs), w2)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def half(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], n: int = 3):
    hs = [jnp.tanh(x @ w1 * i) @ w2 + x for i in range(n)]
    ys = [*hs, jnp.sin(x @ w1) @ w2]
    return ys, sum(ys)


def inputs():
    rng = np.random.default_rng(4302)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w1 = (rng.standard_normal((16, 32)) / 4).astype(np.float32)
    w2 = (rng.standard_normal((32, 16)) / 4).astype(np.float32)
    h = [a.astype(np.float16) for a in (x, w1, w2)]
    return {"appended_after": (x, w1), "tuple_before_and_between": (x, w1), "partial_item": (x, w1, w2),
            "helper_takes_list": (x, w1, w2), "half": tuple(h)}
