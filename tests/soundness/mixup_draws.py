"""Mixup as image-classification code draws it inside the step: ``lam = jax.random.beta(k, a, a)`` and ``use =
jax.random.uniform(k) < p`` (one number each: 0-d, the same on every device), ``perm = jax.random.permutation(k,
x.shape[0])`` (named by the batch dim, whole: each device's rows read their partners, a masked lookup), over a
batch split on 'batch' and the channels on 'model'.  Before, each needed a hint ("cannot infer the dims of 'lam'",
the ResNet attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"c": "model"})
def f(x: Tensor["batch", "c"], y: Tensor["batch", "classes"], key: Tensor["key_data"]):
    k1, k2, k3 = jax.random.split(key, 3)
    use = jax.random.uniform(k1) < 0.7
    lam = jax.random.beta(k2, 0.4, 0.4)
    perm = jax.random.permutation(k3, x.shape[0])
    xm = lam * x + (1 - lam) * x[perm]
    ym = lam * y + (1 - lam) * y[perm]
    return jnp.where(use, xm, x), jnp.where(use, ym, y), jax.random.gamma(k1, 2.0)


def inputs():
    rng = np.random.default_rng(97)
    return (rng.standard_normal((8, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32),
            np.asarray(jax.random.PRNGKey(5)))
