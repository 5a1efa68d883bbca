"""Cross-entropy through jax.nn.one_hot with a vocab-split depth, labels negative and out of range (all-zero rows)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(logits: Tensor["batch", "vocab"], labels: Tensor["batch"]) -> Tensor["batch"]:
    logp = jax.nn.log_softmax(logits, axis=-1)
    onehot = jax.nn.one_hot(labels, logits.shape[-1])
    return -jnp.sum(onehot * logp, axis=-1)


def inputs():
    logits = np.random.default_rng(30).standard_normal((4, 16)).astype(np.float32)
    return logits, np.array([-1, 3, 16, -16], np.int32)
