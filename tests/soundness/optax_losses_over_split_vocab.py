"""optax classification and regression losses over a split vocab: integer-label and soft cross entropy, safe_softmax_cross_entropy, sigmoid BCE of bool labels, l2_loss."""

import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(logits: Tensor["batch", "vocab"], labels: Tensor["batch"], soft: Tensor["batch", "vocab"]):
    a = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
    b = optax.softmax_cross_entropy(logits, jax.nn.softmax(soft))
    c = optax.sigmoid_binary_cross_entropy(logits, soft > 0).mean(-1)
    d = optax.l2_loss(logits, soft).sum(-1)
    e = optax.safe_softmax_cross_entropy(logits, jax.nn.softmax(soft))
    return (a + b + c + d + e).mean()


def inputs():
    rng = np.random.default_rng(22)
    return (
        rng.standard_normal((4, 16)).astype(np.float32),
        rng.integers(0, 16, (4,)).astype(np.int32),
        rng.standard_normal((4, 16)).astype(np.float32),
    )
