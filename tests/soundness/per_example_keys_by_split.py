"""Per-example keys as VAE and dropout code makes them: ``keys = jax.random.split(key, x.shape[0])`` mapped over
by ``jax.vmap`` beside the batch split over devices, from a raw ``PRNGKey`` parameter (``[batch, key_data]``) and
from a typed key made inside (``[batch]``).  The keys are named by the dim whose size splits them, whole on every
device, and each device takes its own examples' keys (a local slice): every draw as on one device.  Before,
"vmap over 'keys', which is not an array with named dims" with a fix that dropped the mapping (the VAE attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def reparameterize(mu: Tensor["batch", "latent"], log_var: Tensor["batch", "latent"], key: Tensor["key_data"]):
    keys = jax.random.split(key, mu.shape[0])
    eps = jax.vmap(lambda k, m: jax.random.normal(k, m.shape))(keys, mu)
    return mu + jnp.exp(0.5 * log_var) * eps


@mesh(batch=2, model=4, rules={"latent": "model"})
def dropout(h: Tensor["batch", "latent"], seed: Tensor[()]):
    keys = jax.random.split(jax.random.key(seed), h.shape[0])
    keep = jax.vmap(lambda k: jax.random.bernoulli(k, 0.7, (h.shape[1],)))(keys)
    return jnp.where(keep, h / 0.7, 0.0).sum(axis=0)


def inputs():
    rng = np.random.default_rng(53)
    mu, log_var = (rng.standard_normal((8, 4)).astype(np.float32) for _ in range(2))
    return {"reparameterize": (mu, log_var, np.asarray(jax.random.PRNGKey(3))),
            "dropout": (rng.standard_normal((4, 8)).astype(np.float32), np.int32(5))}
