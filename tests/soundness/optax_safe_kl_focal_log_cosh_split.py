"""optax.safe_softmax_cross_entropy with -inf logits of label 0, kl_divergence (axis=-1 and axis=0), log_cosh, sigmoid_focal_loss(alpha=) over a split vocab."""

import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(logits: Tensor["batch", "vocab"], soft: Tensor["batch", "vocab"]):
    probs = jax.nn.softmax(soft)
    masked = jnp.where(jnp.arange(16) < 3, -jnp.inf, logits)
    e = optax.safe_softmax_cross_entropy(masked, jnp.where(jnp.arange(16) < 3, 0.0, probs))
    k = optax.kl_divergence(jax.nn.log_softmax(logits), probs)
    k2 = optax.losses.kl_divergence(jax.nn.log_softmax(logits, axis=0), jax.nn.softmax(soft, axis=0), axis=0)
    c = optax.log_cosh(logits, soft).sum(-1) + optax.sigmoid_focal_loss(logits, soft > 0, alpha=0.25).mean(-1)
    return (e + k + c).mean() + k2.sum()


def inputs():
    rng = np.random.default_rng(22)
    return rng.standard_normal((4, 16)).astype(np.float32), rng.standard_normal((4, 16)).astype(np.float32)
