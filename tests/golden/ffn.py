import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def ffn(x: Tensor["batch", "length", "d_model"],
        w1: Tensor["d_model", "d_ff"],
        w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    """Megatron FFN: d_ff split, one all-reduce at the end."""
    h = jax.nn.relu(jnp.einsum("bld,df->blf", x, w1))
    return jnp.einsum("blf,fd->bld", h, w2)
