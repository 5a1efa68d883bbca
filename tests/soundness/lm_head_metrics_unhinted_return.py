"""A user's LM head and metrics: cross-entropy via take_along_axis over a split vocab, label smoothing via
one_hot, a z-loss (logsumexp squared), accuracy from argmax, a temperature keyword with a default."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model"})
def f(h: Tensor["batch", "seq", "d_model"], w: Tensor["d_model", "vocab"], targets: Tensor["batch", "seq"],
      temperature: float = 1.5, smoothing: float = 0.1):
    logits = jnp.einsum("bsd,dv->bsv", h, w) / temperature
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    smooth = -jnp.mean(logp, axis=-1)
    z = jax.nn.logsumexp(logits, axis=-1)
    loss = jnp.mean((1.0 - smoothing) * nll + smoothing * smooth) + 1e-4 * jnp.mean(z ** 2)
    acc = jnp.mean((jnp.argmax(logits, axis=-1) == targets).astype(jnp.float32))
    onehot = jax.nn.one_hot(targets, logits.shape[-1])
    agree = jnp.sum(onehot * jax.nn.softmax(logits, axis=-1)) / targets.size
    return loss, acc, agree


def inputs():
    rng = np.random.default_rng(5)
    return (rng.standard_normal((4, 6, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.integers(0, 16, (4, 6)).astype(np.int32))
