"""Shapes spelled with a starred shape, as sampling and VAE code writes them: ``jax.random.normal(key, (n,
*mu.shape))``, ``jnp.zeros((4, *x.shape))``, ``jnp.ones((*x.shape, 2))``, beside ``(n,) + mu.shape``; over a
batch split over 'data' and a latent dim split over 'model'.  Before: "cannot infer the dims of 'eps2'" (a
starred shape in a tuple literal was not read entry by entry)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "latent": "model"})
def f(mu: Tensor["batch", "latent"], log_var: Tensor["batch", "latent"], key: Tensor[()]):
    eps = jax.random.normal(key, (3, *mu.shape))
    z = mu[None] + jnp.exp(0.5 * log_var)[None] * eps
    more = jax.random.uniform(jax.random.fold_in(key, 1), (2,) + mu.shape)
    acc = jnp.zeros((4, *mu.shape)) + z[:1]
    pair = jnp.ones((*mu.shape, 2)) * mu[..., None]
    return jnp.mean(z ** 2) + jnp.mean(acc * mu) + jnp.mean(pair ** 2) + jnp.mean(more * log_var)


def inputs():
    rng = np.random.default_rng(70)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.1 * rng.standard_normal((4, 8)).astype(np.float32),
            jax.random.key(3))
