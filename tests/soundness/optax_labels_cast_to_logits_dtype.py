"""``optax.sigmoid_binary_cross_entropy`` of float16 logits beside float32 labels (an ELECTRA discriminator's
``(replaced != ids).astype(jnp.float32)``): optax casts the labels to the logits' dtype first, so the loss is
float16 on one device; sharded it was float32 (the cast was missing from meshify's copy of the definition), and
the mean loss differed by 1.7e-4.  No gradient check: the gradient of the float32 labels runs through float16
arithmetic, which a jitted program rounds otherwise than the eager reference."""
import jax  # noqa: F401  (meshify writes optax's definition with jax and jnp)
import jax.numpy as jnp  # noqa: F401
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False


@mesh(batch=8)
def f(logits: Tensor["batch"], labels: Tensor["batch"]) -> Tensor["batch"]:
    return optax.sigmoid_binary_cross_entropy(logits, labels)


@mesh(batch=2, model=4, rules={"tags": "model"})
def g(logits: Tensor["batch", "tags"], labels: Tensor["batch", "tags"]) -> Tensor[()]:
    return optax.sigmoid_binary_cross_entropy(logits, labels).mean()


def inputs():
    rng = np.random.default_rng(21)
    return {"f": ((rng.standard_normal(8) * 3).astype(np.float16), (np.arange(8) % 2).astype(np.float32)),
            "g": ((rng.standard_normal((4, 8)) * 3).astype(np.float16), (rng.random((4, 8)) > 0.5).astype(np.float32))}
