"""jnp.argmax(logits, axis=-1) over an unsplit vocab of a batch-split array (greedy decoding)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(logits: Tensor["batch", "vocab"]) -> Tensor["batch"]:
    return jnp.argmax(logits, axis=-1)


def inputs():
    rng = np.random.default_rng(116)
    return (rng.standard_normal((8, 6)).astype(np.float32),)
