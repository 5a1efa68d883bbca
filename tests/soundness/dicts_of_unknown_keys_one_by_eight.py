"""Dicts whose keys meshify does not know while rewriting, filled in a kept Python loop, on a 1x8 mesh (every
shard on ``model``, ``data`` of one device): per-head attention scores split over ``heads`` stored by
``f"block{i}"``, a partial sum over the split ``d_ff`` stored (completed before it goes in), values read back by
a key of the loop's counter, a dict comprehension over ``.items()``, and the dict returned alone and inside a
dict (one PartitionSpec for all its values); gradients through it."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=1, model=8, rules={"batch": "data", "heads": "model", "d_ff": "model"})
def scores(q: Tensor["batch", "heads", "q", "d_head"], k: Tensor["batch", "heads", "k", "d_head"],
           depth: Tensor["depth"]):
    kept = {}
    for i in range(depth.shape[0]):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) * depth[i]
        kept[f"block{i}"] = jax.nn.softmax(s, axis=-1)
        q = q + jnp.einsum("bhqk,bhkd->bhqd", kept[f"block{i}"], k)
    return q, kept


@mesh(data=1, model=8, rules={"batch": "data", "heads": "model", "d_ff": "model"})
def mlp_outputs(x: Tensor["batch", "d"], w1: Tensor["layer", "d", "d_ff"], w2: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(w1.shape[0]):
        outs[f"mlp{i}"] = jax.nn.gelu(x @ w1[i]) @ w2[i]
        x = x + outs[f"mlp{i}"] * 0.5
    norms = {name: jnp.sqrt(jnp.sum(v * v)) for name, v in outs.items()}
    return {"y": x, "mlp": outs, "norms": norms}


def inputs():
    rng = np.random.default_rng(4202)
    q = rng.standard_normal((2, 8, 4, 4)).astype(np.float32)
    k = rng.standard_normal((2, 8, 4, 4)).astype(np.float32)
    depth = np.array([0.5, 0.25, 1.0], np.float32)
    x = rng.standard_normal((2, 8)).astype(np.float32)
    w1 = (rng.standard_normal((2, 8, 16)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((2, 16, 8)) * 0.3).astype(np.float32)
    return {"scores": (q, k, depth), "mlp_outputs": (x, w1, w2)}
