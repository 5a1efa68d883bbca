"""Model: causal attention with the mask written for a fixed length, jnp.tril(jnp.ones((6, 6))), heads split."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(q: Tensor["batch", "heads", "length", "d_head"], k: Tensor["batch", "heads", "length", "d_head"],
      v: Tensor["batch", "heads", "length", "d_head"]) -> Tensor["batch", "heads", "length", "d_head"]:
    scores = jnp.einsum("bhlk,bhmk->bhlm", q, k)
    scores = jnp.where(jnp.tril(jnp.ones((6, 6))) > 0, scores, -jnp.inf)
    return jnp.einsum("bhlm,bhmk->bhlk", jax.nn.softmax(scores, axis=-1), v)


def inputs():
    rng = np.random.default_rng(142)
    return tuple(rng.standard_normal((2, 4, 6, 2)).astype(np.float32) for _ in range(3))
