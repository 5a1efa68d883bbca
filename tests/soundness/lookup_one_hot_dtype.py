"""jax.nn.one_hot with a vocab-split depth and dtype=jnp.bfloat16 (the result keeps its dtype)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(logits: Tensor["batch", "vocab"], labels: Tensor["batch"]) -> Tensor["batch", "vocab"]:
    return jax.nn.one_hot(labels, logits.shape[-1], dtype=jnp.bfloat16)


def inputs():
    logits = np.random.default_rng(31).standard_normal((4, 16)).astype(np.float32)
    return logits, np.array([1, 3, 15, 0], np.int32)
