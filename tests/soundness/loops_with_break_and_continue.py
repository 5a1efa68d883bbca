"""``break`` and ``continue`` in Python loops over per-layer weights, as model code skips or stops at layers
chosen by a config (layer drop at inference, early exit): on a static condition (the loop's index, a config
field, a static argument), kept as written; a value the loop carries that is a partial sum at the jump,
where it entered whole, is completed there (as at the body's end); a list appended to before a break; a
temporary of the body left in another layout at a break and never read after the loop; a float16
accumulator over the loop items (its partial sums formed in float32 with the items' own dtypes)."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 3e-3


class Config(NamedTuple):
    skip: int = 1
    stop: int = 2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d_ff"], ...], vs: tuple[Tensor["d_ff", "d"], ...],
      cfg: Config = Config()) -> Tensor["batch", "d"]:
    acc = jnp.zeros_like(x)
    hs = []
    for i, (w, v) in enumerate(zip(ws, vs)):
        acc = acc + jax.nn.relu(x @ w) @ v
        if i == cfg.skip:
            continue
        x = x + 0.5 * acc
        hs.append(x)
        last = x * 2
        if i >= cfg.stop: break
    return x + acc + last + sum(hs)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def g(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d_ff"], ...], vs: tuple[Tensor["d_ff", "d"], ...],
      skip: int = 1, stop: int = 9) -> Tensor["batch", "d"]:
    h = x
    for i in range(len(ws)):
        h = jax.nn.relu(h @ ws[i]) @ vs[i]
        if i == skip:
            continue
        h = h * 0.5
        if i == stop:
            break
        t = h @ ws[i]
        if i + 1 == stop:
            break
        h = jnp.tanh(h) + 0.01 * jnp.tanh(t).sum(-1, keepdims=True)
    return h


@mesh(batch=8, rules={"d_ff": None})
def k(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d_ff"], ...], vs: tuple[Tensor["d_ff", "d"], ...],
      skip: int = 0) -> Tensor["batch", "d"]:
    out = jnp.zeros_like(x)
    for n, (w, v) in enumerate(zip(ws, vs)):
        if n == skip:
            continue
        out = out + jax.nn.relu(x @ w) @ v
    return out


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def k16(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d_ff"], ...], vs: tuple[Tensor["d_ff", "d"], ...],
        skip: int = 0) -> Tensor["batch", "d"]:
    out = jnp.zeros_like(x)
    for n, (w, v) in enumerate(zip(ws, vs)):
        if n == skip:
            continue
        out = out + jax.nn.relu(x @ w) @ v
    return out


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 8)).astype(np.float32)
    ws = tuple((rng.normal(size=(8, 16)) * 0.3).astype(np.float32) for _ in range(4))
    vs = tuple((rng.normal(size=(16, 8)) * 0.3).astype(np.float32) for _ in range(4))
    half = lambda t: tuple(a.astype(np.float16) for a in t)  # noqa: E731
    return {"f": (x, ws, vs), "g": (x, ws, vs), "k": (x, ws, vs), "k16": (x.astype(np.float16), half(ws), half(vs))}


def scenario(mod, pick):
    args = inputs()
    x, ws, vs = args["f"]
    out = [pick(mod.f)(x, ws, vs, cfg) for cfg in (mod.Config(), mod.Config(0, 5), mod.Config(3, 0), mod.Config(9, 1))]
    out += [pick(mod.g)(x, ws, vs, skip, stop) for skip, stop in ((0, 9), (1, 2), (3, 0), (7, 1), (2, 3))]
    out += [pick(mod.k)(x, ws, vs), pick(mod.k)(x, ws, vs, 3), pick(mod.k16)(*args["k16"]),
            pick(mod.k16)(*args["k16"], skip=2)]
    loss = lambda ws, vs: pick(mod.f)(x, ws, vs).sum() + pick(mod.g)(x, ws, vs, 1, 3).sum()  # noqa: E731
    out.append(jax.grad(loss, argnums=(0, 1))(ws, vs))
    return out
