"""``jax.scipy.stats`` densities as flows and VAEs write their log-likelihoods: ``norm.logpdf(z)`` (standard and
with ``loc``/``scale`` arrays of the split feature dim), ``logistic.logpdf``, ``t.logpdf`` with a scalar df,
``norm.cdf``, ``gamma.logpdf``, ``poisson.logpmf`` of counts, ``jax.scipy.special.ndtri``: elementwise in every
array argument, the batch split over 'data' and the features over 'model'; in float16 too (a sum over the split features of a
density: its dtype is known, so the partial sum formed in float32 is cast back).  Before, "jax.scipy.stats.norm.logpdf
has no meshify rule", whose fix unsplit the batch (the flow attack, session 25)."""
import jax.numpy as jnp
import numpy as np
from jax.scipy import special, stats

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "feat": "model"})
def log_likelihood(z: Tensor["batch", "feat"], loc: Tensor["feat"], log_scale: Tensor["feat"],
                   counts: Tensor["batch", "feat"]):
    prior = jnp.sum(stats.norm.logpdf(z), axis=-1)
    posterior = jnp.sum(stats.norm.logpdf(z, loc, jnp.exp(log_scale)), axis=-1)
    heavy = stats.t.logpdf(z, 3.0) + stats.logistic.logpdf(z, scale=2.0) + stats.gamma.logpdf(jnp.abs(z) + 0.1, 2.0)
    p = stats.norm.cdf(z * 0.5)
    quantiles = special.ndtri(jnp.clip(p, 0.01, 0.99))
    poisson = stats.poisson.logpmf(counts, jnp.exp(loc))
    return prior - posterior + jnp.mean(heavy + quantiles + poisson, axis=-1)


def log_density(z, loc):
    # (a helper's float16 sum over the split features, formed in float32 and cast back before it returns: its
    # dtype is the density's)
    return jnp.sum(stats.norm.logpdf(z, loc), axis=-1) + jnp.sum(stats.logistic.logpdf(z), axis=-1) \
        + 1e-3 * jnp.sum(loc ** 2)


@mesh(data=2, model=4, rules={"batch": "data", "feat": "model"})
def half_precision(z: Tensor["batch", "feat"], loc: Tensor["feat"]):
    return log_density(z, loc)


def inputs():
    rng = np.random.default_rng(68)
    return {"log_likelihood": (rng.standard_normal((8, 8)).astype(np.float32),
                               rng.standard_normal(8).astype(np.float32) * 0.3,
                               rng.standard_normal(8).astype(np.float32) * 0.2,
                               rng.integers(0, 5, (8, 8)).astype(np.float32)),
            "half_precision": (rng.standard_normal((8, 8)).astype(np.float16),
                               (rng.standard_normal(8) * 0.3).astype(np.float16))}
