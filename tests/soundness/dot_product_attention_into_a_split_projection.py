"""``jax.nn.dot_product_attention`` (a diffusion UNet's token attention) whose output feeds a projection
contracting the channels split over 'model': a partial sum whose dtype is the query's (bfloat16 in, bfloat16
out), completed where it is added to ``x``.  Before, "cannot tell the dtype of 'o', a partial sum", with a fix
that asked to bind what already was a name (the UNet attack, session 25)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"c": "model"})
def attn(x: Tensor["data", "tokens", "c"], wq: Tensor["c", "c"], wk: Tensor["c", "c"], wv: Tensor["c", "c"],
         wo: Tensor["c", "c"]):
    q, k, v = x @ wq, x @ wk, x @ wv
    o = jax.nn.dot_product_attention(q[:, :, None, :], k[:, :, None, :], v[:, :, None, :])[:, :, 0, :] @ wo
    return x + o


def inputs():
    rng = np.random.default_rng(69)
    x = rng.standard_normal((4, 8, 8)).astype(jnp.bfloat16)
    ws = [(rng.standard_normal((8, 8)) / 3).astype(jnp.bfloat16) for _ in range(4)]
    return {"attn": (x, *ws)}
