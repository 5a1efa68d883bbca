"""``sum(h @ w2 for h in hs)``, ``sum([h @ w for h, w in zip(hs, ws)])`` and ``sum(..., start=...)`` over lists of
each call's length (list parameters, a list built in a loop), every term a partial sum over 'model': completed by
one psum after the sum (a sum is linear), the start counted once (on the first device along 'model').  Before,
each term was completed inside the comprehension: one psum per item (tests/test_ops_hlo.py counts them)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"f": "model"})
def gen(hs: list[Tensor["batch", "f"]], w2: Tensor["f", "d"]) -> Tensor["batch", "d"]:
    return sum(h @ w2 for h in hs)


@mesh(model=8, rules={"f": "model"})
def zipped(hs: list[Tensor["batch", "f"]], ws: list[Tensor["f", "d"]]) -> Tensor["batch", "d"]:
    return sum([h @ w for h, w in zip(hs, ws)]) * 0.5


@mesh(batch=2, model=4, rules={"f": "model"})
def started(hs: list[Tensor["batch", "f"]], w2: Tensor["f", "d"], x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    a = sum((h @ w2 for h in hs), start=x)
    b = sum([jnp.tanh(h) @ w2 for i, h in enumerate(hs) if i % 2 == 0], -1.5)
    return a + b + sum((h @ w2 for h in hs), 0.0) + sum((h @ w2 for h in hs), hs[0] @ w2)


@mesh(batch=2, model=4, rules={"f": "model"})
def built(x: Tensor["batch", "f"], ws: list[Tensor["f", "d"]], n: int = 3) -> Tensor["batch", "d"]:
    hs = []
    for i in range(n):
        hs.append(jnp.sin(x * (i + 1)))
    return sum(h @ w for h, w in zip(hs, ws)) + sum(x @ w for w in ws)


def inputs():
    rng = np.random.default_rng(71)
    hs = [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(3)]
    ws = [(rng.standard_normal((16, 8)) * 0.3).astype(np.float32) for _ in range(3)]
    x = rng.standard_normal((4, 8)).astype(np.float32)
    return {"gen": (hs, ws[0]), "zipped": (hs[:2], ws[:2]), "started": (hs, ws[0], x), "built": (hs[0], ws)}
