"""``if inputs.ndim == 4:`` in a helper called with 4-D queries and 3-D keys (Gemma's rotary embedding): a
comparison of known Python values is known, so each version of the helper takes its branch (both branches were
joined and refused: "'sinusoid' has layout [...] after one branch and [...] after the other").  Found by the zoo's
Gemma (session 19)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def scale_by_position(inputs, positions):
    sinusoid = positions[..., jnp.newaxis] * jnp.ones(inputs.shape[-1])[jnp.newaxis, jnp.newaxis, :]
    if inputs.ndim == 4:
        sinusoid = sinusoid[..., jnp.newaxis, :]
    elif inputs.ndim != 3 or inputs.shape[-1] < 1:
        raise ValueError(f"rank {inputs.ndim}")
    return inputs * jnp.sin(sinusoid)


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(q: Tensor["batch", "length", "heads", "head_dim"], k: Tensor["batch", "length", "head_dim"]):
    positions = jnp.arange(q.shape[1])[jnp.newaxis, :]
    q = scale_by_position(q, positions)
    k = scale_by_position(k, positions)
    return jnp.einsum("blnh,blh->bln", q, k)


def inputs():
    rng = np.random.default_rng(445)
    return rng.standard_normal((4, 8, 8, 4)).astype(np.float32), rng.standard_normal((4, 8, 4)).astype(np.float32)
