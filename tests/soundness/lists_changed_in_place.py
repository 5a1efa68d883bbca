"""Lists of arrays changed in place, as model code does with skip connections and hidden states:
``hs.extend([...])``, ``hs.insert(i, v)``, ``hs.pop(0)``, ``del hs[0]`` / ``del hs[a:b]``, ``hs[i] = v``, on a list
the function made; item by item where meshify knows the indices, a list of one layout where a loop carries it
(a loop keeping the last few: ``if len(hs) > 4: del hs[0]``); a partial sum stored or inserted is completed
first; ``len(hs)`` hands nothing on."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def a(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d"], ...]) -> Tensor["batch", "d"]:
    hs = [x]
    for w in ws:
        x = jnp.tanh(x @ w)
        hs.append(x)
    hs.extend([x * 2, x * 3])
    first = hs.pop(0)
    hs.insert(0, first * 0.5)
    hs[1] = hs[1] + 1
    del hs[-1]
    return sum(hs)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def b(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d"], ...], vs: tuple[Tensor["d", "d_ff"], ...],
      us: tuple[Tensor["d_ff", "d"], ...]) -> Tensor["batch", "d"]:
    hs = [x, x * 2, x * 3]
    hs.extend([x * 4])
    hs.insert(1, jnp.tanh(x))
    y = hs.pop(0) * hs.pop(2)
    del hs[0:1]
    hs[0] = jax.nn.relu(x @ vs[0]) @ us[0]  # a partial sum over 'model', completed before it is stored
    hs.insert(-1, jax.nn.relu(x @ vs[1]) @ us[1])
    hs.append(y)
    return sum(h * (i + 1) for i, h in enumerate(hs))


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def c(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d_ff"], ...]) -> Tensor["batch", "d_ff"]:
    hs = []
    for w in ws:
        hs.extend([x @ w, (x * 2) @ w])
        if len(hs) > 4:
            del hs[0]
    hs[0] = hs[-1] * 2
    return hs.pop(0) + hs[1]


@mesh(batch=8)
def unet(x: Tensor["batch", "h", "w", "c"], downs: tuple[Tensor["c", "c"], ...]) -> Tensor["batch", "h", "w", "c"]:
    skips = []
    for w in downs:
        x = jax.nn.gelu(x @ w)
        skips.insert(0, x)  # newest first
    for w in downs:
        x = x + skips.pop(0) @ w
    return x


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 8)).astype(np.float32)
    ws = tuple((rng.normal(size=(8, 8)) * 0.3).astype(np.float32) for _ in range(3))
    vs = tuple((rng.normal(size=(8, 16)) * 0.3).astype(np.float32) for _ in range(2))
    us = tuple((rng.normal(size=(16, 8)) * 0.3).astype(np.float32) for _ in range(2))
    ws16 = tuple((rng.normal(size=(8, 16)) * 0.3).astype(np.float32) for _ in range(3))
    img = rng.normal(size=(8, 4, 4, 8)).astype(np.float32)
    return {"a": (x, ws), "b": (x, ws, vs, us), "c": (x, ws16), "unet": (img, ws)}
