"""``sum(h @ w for h in hs)`` and ``sum(..., start=x)`` of float16/bfloat16 terms that are partial sums over 'model'
(list parameters of each call's length, a list built in a loop): each term formed in float32, their sum
completed by one psum in float32 and cast back to the items' promoted dtype (``like=(*hs, w)``, or the list
built in the loop itself).  The float16 shares (+-80000 on each device) overflow float16 where a share is rounded
before the psum."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2  # float16/bfloat16 sums: one device rounds each term, the sharded program their sum once


@mesh(batch=2, model=4, rules={"f": "model"})
def half(hs: list[Tensor["batch", "f"]], w: Tensor["f", "d"], x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return sum(h @ w for h in hs) + sum((h @ w for h in hs), start=x)


@mesh(model=8, rules={"f": "model"})
def brain(x: Tensor["batch", "f"], ws: list[Tensor["f", "d"]], n: int = 2) -> Tensor["batch", "d"]:
    hs = []
    for i in range(n):
        hs.append(x * (i + 1))
    return sum([h @ w for h, w in zip(hs, ws)]) + sum((x @ w for w in ws), 1.0)


def inputs():
    row = np.array([20000.0] * 8 + [-20000.0] * 8)  # shares of +80000 (model 0, 1) and -80000 (model 2, 3)
    hs = [np.tile(row, (4, 1)).astype(np.float16) for _ in range(2)]
    w = np.ones((16, 4), np.float16) * np.float16(0.5)
    x = np.ones((4, 4), np.float16)
    rng = np.random.default_rng(5)
    xb = rng.standard_normal((4, 16)).astype(jnp.bfloat16)
    ws = [(rng.standard_normal((16, 4)) * 0.3).astype(jnp.bfloat16) for _ in range(2)]
    return {"half": (hs, w, x), "brain": (xb, ws)}
