"""Sampling a VAE decoder's Bernoulli pixels over a split batch: ``jax.random.bernoulli(key, probs)`` (and with
``shape=probs.shape``) where ``probs`` is split, bit-identical to one device (each device draws its block of the
uniform numbers JAX compares with ``p``).  Before: refused, with a fix (``shape=x.shape``) refused again (attack on
a VAE).  float32 and bfloat16 probabilities, a typed key and a raw PRNGKey, probabilities 0 and 1 at the edges."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False  # (draws)


@mesh(data=2, model=4, rules={"batch": "data", "pixels": "model"})
def sample(logits: Tensor["batch", "pixels"], seed: Tensor[()]):
    key = jax.random.fold_in(jax.random.key(0), seed)
    probs = jax.nn.sigmoid(logits)
    return (jax.random.bernoulli(key, probs), jax.random.bernoulli(key, probs, shape=probs.shape),
            jax.random.bernoulli(jax.random.PRNGKey(3), probs.astype(jnp.bfloat16)).astype(jnp.float32) * probs,
            jax.random.bernoulli(key, probs[:, 0], shape=logits[:, 0].shape),
            jax.random.bernoulli(key, jnp.broadcast_to(probs[:, :1], logits.shape)))


def inputs():
    rng = np.random.default_rng(67)
    logits = rng.standard_normal((8, 16)).astype(np.float32) * 3
    logits[0, :4] = [-np.inf, np.inf, -1e4, 1e4]
    return {"sample": (logits, np.int32(5))}
