"""Python loops whose iterable meshify rewrites: ``for t in jnp.split(x @ w, 3, -1)`` with the fused dim split
(the iterable was left as written, so each device split its own block: wrong numbers), ``enumerate`` and
``zip`` of splits, a list literal of a partial sum (``for t in [jnp.mean(x, 0)]``: crashed with a KeyError);
and a list returned by the @mesh function (``return jnp.split(...)``, ``[a, b]``: the out_specs were a
tuple, so shard_map refused the list); ``list(jnp.split(...))`` (was "list has no meshify rule").  Found by the attack on fused splits (session 17)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"qkv": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "qkv"]):
    acc = 0.0
    for t in jnp.split(x @ w, 3, axis=-1):
        acc = acc + t
    for i, t in enumerate(jnp.split(x @ w, 3, axis=-1)):
        acc = acc + t * i
    for a, b in zip(jnp.split(x, 2, axis=0), jnp.split(x, 2, axis=0)):
        acc = acc + jnp.sum(a * b)
    for t in [jnp.mean(x, axis=0)]:
        acc = acc + jnp.sum(t)
    parts = list(jnp.split(x @ w, 3, axis=-1))
    return [acc, jnp.split(x @ w, 3, axis=-1)[0] * parts[2]]


@mesh(batch=2, model=4, rules={"qkv": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "qkv"]):
    return jnp.split(x @ w, 3, axis=-1)


def inputs():
    rng = np.random.default_rng(412)
    args = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 24)).astype(np.float32) * 0.4
    return {"f": args, "g": args}
