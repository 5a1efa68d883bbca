"""``t.reshape(L, H, -1)`` of the user's [seq, d] with d split and ``L`` a constant: the sizes do not say which
reading holds, seq kept by ``L`` and d cut into ``H`` heads, or the -1 keeping d and seq cut into ``L x H`` (as
``t.reshape(N, N, -1)`` of [tok, heads] cuts a grid of tokens, which runs).  meshify takes the second, where one dim
leads (with two, ``x.reshape(B, L, H, -1)`` of [batch, seq, d], the first: see reshape_hinted_dims_as_literals),
and checks it when the function runs (``mr.kept_dims``): here the -1 is 8, not d's 32, refused with the fixes
(``t.reshape(t.shape[0], H, -1)``, or a hint naming the result, ``h: Tensor["seq", "heads", "hd"] = ...``).
Before, the local reshape failed with a message saying only that a split dim's block could not be reshaped."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"

L, H = 16, 4


@mesh(batch=2, model=4, rules={"d": "model"})
def f(t: Tensor["seq", "d"]):
    h = t.reshape(L, H, -1)
    return jnp.sum(jnp.tanh(h) * h[:1], axis=(0, 1))


def inputs():
    return (np.random.default_rng(13).standard_normal((16, 32)).astype(np.float32),)
