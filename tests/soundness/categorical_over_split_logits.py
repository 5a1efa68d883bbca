"""``jax.random.categorical`` of logits split over the batch (a sampler in data parallel), over the vocabulary
(a vocab-parallel head: the argmax across devices) and both, with a raw ``PRNGKey``, a typed ``jax.random.key``
and ``mode="high"``: each device draws its block of JAX's Gumbel noise, bit-identical to the single-device draw,
so the samples are the same integers.  Before, "jax.random.categorical has no meshify rule" (ELECTRA's generator
sampling replaced tokens)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False


@mesh(batch=8)
def f(logits: Tensor["batch", "vocab"], key: Tensor["key_data"]) -> Tensor["batch"]:
    return jax.random.categorical(key, logits, axis=-1)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "vocab"], key: Tensor["key_data"]):
    logits = x @ w
    replaced = jax.random.categorical(key, logits)
    first = jax.random.categorical(key, logits.T, axis=0, mode="high")
    return replaced, first, jnp.sum(replaced == first)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def typed(logits: Tensor["batch", "vocab"], seed: Tensor[()]) -> Tensor["batch"]:
    return jax.random.categorical(jax.random.key(seed), logits / 0.7)


def inputs():
    rng = np.random.default_rng(271)
    logits = rng.standard_normal((8, 32)).astype(np.float32)
    x, w = rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32)
    key = np.asarray(jax.random.PRNGKey(7))
    return {"f": (logits, key), "g": (x, w, key), "typed": (logits, np.int32(11))}
