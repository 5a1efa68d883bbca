"""Dicts of keys known only when traced (``kept[f"block{i}"]`` in a kept loop) on a 1x8 mesh (every shard on
``model``): per-head attention probabilities split over ``heads``, read back from the previous block in the loop
that fills the dict, ``.get`` with and without a default, ``.pop``, ``.update`` from keywords and another such
dict, ``{**kept, "extra": p}`` and ``dict(kept, extra=p)``, ``jax.tree.leaves`` (ten blocks: "block10" sorts
before "block2") and ``jax.tree.map``; a key added under an if on a size known only when traced; gradients."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=1, model=8, rules={"batch": "data", "heads": "model"})
def f(q: Tensor["batch", "heads", "q", "d_head"], k: Tensor["batch", "heads", "k", "d_head"],
      depth: Tensor["depth"]):
    kept = {}
    for i in range(depth.shape[0]):
        p = jax.nn.softmax(jnp.einsum("bhqd,bhkd->bhqk", q, k) * depth[i], axis=-1)
        if i > 0:
            p = 0.5 * (p + kept[f"block{i - 1}"])
        kept[f"block{i}"] = p
        q = q + 0.1 * jnp.einsum("bhqk,bhkd->bhqd", p, k)
    first = kept.get("block0")
    if first is not None:
        q = q + jnp.einsum("bhqk,bhkd->bhqd", first, k)
    spare = kept.get("none", jnp.zeros_like(kept["block0"]))
    popped = kept.pop("block1")
    more = {"a": popped}
    more.update(kept, b=spare)
    both = {**kept, "extra": popped * 2}
    again = dict(kept, extra=spare + 1)
    if q.shape[2] > 2:
        more["wide"] = popped
    leaves = jax.tree.leaves(both)
    scaled = jax.tree.map(lambda v: v * 3, again)
    return q, more, jnp.stack(leaves)[3], scaled, len(leaves) * jnp.sum(leaves[-1])


def inputs():
    rng = np.random.default_rng(4216)
    q = rng.standard_normal((2, 8, 4, 4)).astype(np.float32)
    k = rng.standard_normal((2, 8, 4, 4)).astype(np.float32)
    return q, k, np.linspace(0.5, 1.5, 11).astype(np.float32)
