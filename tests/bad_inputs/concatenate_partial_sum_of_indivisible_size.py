# Bad input: a partial sum joined to split 'd' along its 6 entries, scattered over 4 devices (was a raw JAX error).
# expect: CallError at 12:5 naming 6 entries, which do not split into 4 equal blocks
# call: a=2x8 w=8x6
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules={"d": "model"})
def f(a: Tensor["b", "d"], w: Tensor["d", "k"]):
    # (the DLRM attack: bottom-MLP features beside pooled embeddings, the embed dim split)
    return jnp.concatenate([a, a @ w], axis=1)
