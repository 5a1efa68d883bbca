import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


def layer_norm(x, g, eps=1e-5):
    # Called with d_model whole (block) and with d_model split (norm_split): two versions.
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + eps) * g


def mlp(x, w1, w2, train=True):
    h = jax.nn.gelu(jnp.einsum("bd,df->bf", x, w1))
    if not train:
        return jnp.einsum("bf,fd->bd", h, w2)
    return jnp.einsum("bf,fd->bd", h * 1.0, w2)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def block(x: Tensor["batch", "d_model"], g: Tensor["d_model"],
          w1: Tensor["d_model", "d_ff"], w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "d_model"]:
    # The partial sum leaves mlp() and is reduced once, at the residual add.
    x = x + mlp(layer_norm(x, g), w1, w2)
    return x + mlp(layer_norm(x, g), w1, w2)


@mesh(model=4, rules={"d_model": "model"})
def norm_split(x: Tensor["batch", "d_model"], g: Tensor["d_model"]) -> Tensor["batch", "d_model"]:
    return layer_norm(x, g)
