"""``acc = 0; for h in hs: acc = acc + h @ w`` over a list of unknown length, and ``0 + x @ w + 0.0``: a literal 0
adds nothing on any device, so the partial sums stay partial and are completed once (was one psum per item: a
literal 0 is whole, and a whole term made the sum complete its partial terms first); float32 and bfloat16.  And the
same sum as a join: ``jnp.sum(jnp.stack([h @ w for h in hs]), 0)``, ``jnp.stack([...], axis=-1).mean(-1)``,
``jnp.concatenate([...], -1)`` (a join is linear: one psum of the stack, or of its sum; was one per item)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"ff": "model"})
def f(hs: list[Tensor["batch", "ff"]], w: Tensor["ff", "d"]) -> Tensor["batch", "d"]:
    acc = 0
    for h in hs:
        acc = acc + h @ w
    return acc


@mesh(batch=2, model=4, rules={"ff": "model"})
def g(x: Tensor["batch", "ff"], w: Tensor["ff", "d"]) -> Tensor["batch", "d"]:
    return 0 + x @ w - 0.0 + jnp.tanh(x[:, :1]) * 0


@mesh(model=8, rules={"ff": "model"})
def h(hs: list[Tensor["batch", "ff"]], w: Tensor["ff", "d"]) -> Tensor["batch", "d"]:
    acc = 0.0
    for x in hs:
        acc = acc + (x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)).astype(jnp.float32) * 0.5
    return acc


@mesh(batch=2, model=4, rules={"ff": "model"})
def stacked(hs: list[Tensor["batch", "ff"]], w: Tensor["ff", "d"]):
    total = jnp.sum(jnp.stack([h @ w for h in hs]), 0)
    mean = jnp.stack([jnp.tanh(h) @ w for h in hs], axis=-1).mean(-1)
    return total, mean, jnp.concatenate([h @ w for h in hs], -1)


def inputs():
    rng = np.random.default_rng(9)
    hs = [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(3)]
    w = rng.standard_normal((16, 8)).astype(np.float32)
    low = ([jnp.asarray(x, jnp.bfloat16) for x in hs], jnp.asarray(w, jnp.bfloat16))
    return {"f": (hs, w), "g": (hs[0], w), "h": (hs, w), "stacked": low}
