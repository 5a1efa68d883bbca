"""optax losses in a module that imports neither jax nor jax.numpy (a loss file importing optax alone): meshify writes
optax's definition with jax.numpy's full name and carries ``import jax`` into the converted file.  Before, "add
import jax and import jax.numpy as jnp" (a forced import)."""
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(logits: Tensor["batch", "vocab"], labels: Tensor["batch"], soft: Tensor["batch", "vocab"]):
    hard = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    return hard + optax.softmax_cross_entropy(logits, soft).mean()


def inputs():
    rng = np.random.default_rng(61)
    soft = rng.random((4, 16)).astype(np.float32)
    return (rng.standard_normal((4, 16)).astype(np.float32), np.array([1, 3, 15, 0], np.int32),
            soft / soft.sum(-1, keepdims=True))
