"""Python loops over arrays whole along their first dim, as per-layer code iterates: ``for w, k in zip(ws,
keys)`` with ``keys = jax.random.split(key, len(ws))`` (dropout per layer, batch split), ``for i, k in
enumerate(keys)``, ``for row in table`` of a hinted [layers, d, d_ff] weight with d_ff split over 'model';
gradients through x and the weights.  Before, "a Python loop over an array"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(ws: tuple[Tensor["d", "d"], ...], x: Tensor["batch", "d"], table: Tensor["layers", "d", "d_ff"],
      out: Tensor["d_ff", "d"], key: Tensor["key"]) -> Tensor["batch", "d"]:
    keys = jax.random.split(key, len(ws))
    for w, k in zip(ws, keys):
        x = jnp.tanh(x @ w) * jax.random.bernoulli(k, 0.9, x.shape) / 0.9
    for i, k in enumerate(keys):
        x = x + 0.1 * i * jax.random.normal(k, x.shape)
    for w in table:
        x = x + jax.nn.relu(x @ w) @ out
    return x


def inputs():
    rng = np.random.default_rng(308)
    ws = tuple(rng.standard_normal((8, 8)).astype(np.float32) * 0.3 for _ in range(2))
    return (ws, rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32)
            * 0.2, rng.standard_normal((16, 8)).astype(np.float32) * 0.2, jax.random.key_data(jax.random.key(5)))
