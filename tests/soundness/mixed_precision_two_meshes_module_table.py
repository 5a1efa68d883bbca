"""Mixed precision as model code writes it: float32 master weights cast to bfloat16 inside, layer norm
computed in float32 (x.astype(jnp.float32)) and cast back, bfloat16 matmuls whose partial sums cross
devices, a hinted module-level table, two @mesh functions on different meshes sharing the helpers."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 3e-2
POS: Tensor["seq", "d_model"] = jnp.asarray(np.sin(np.arange(6 * 8).reshape(6, 8) / 7.0), jnp.float32)


def norm(x, g):
    x32 = x.astype(jnp.float32)
    mu = jnp.mean(x32, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x32 - mu), axis=-1, keepdims=True)
    return ((x32 - mu) * jax.lax.rsqrt(var + 1e-5) * g).astype(x.dtype)


def mlp(x, w1, w2):
    h = jax.nn.gelu(x @ w1.astype(x.dtype))
    return h @ w2.astype(x.dtype)


@mesh(data=2, model=4, rules={"batch": "data", "d_ff": "model"})
def train_loss(x: Tensor["batch", "seq", "d_model"], g: Tensor["d_model"], w1: Tensor["d_model", "d_ff"],
               w2: Tensor["d_ff", "d_model"]) -> Tensor[()]:
    h = (x + POS).astype(jnp.bfloat16)
    y = h + mlp(norm(h, g), w1, w2)
    return jnp.mean(jnp.square(y.astype(jnp.float32)))


@mesh(model=8, rules={"d_ff": "model"})
def logits(x: Tensor["batch", "seq", "d_model"], g: Tensor["d_model"], w1: Tensor["d_model", "d_ff"],
           w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "seq", "d_model"]:
    h = (x + POS).astype(jnp.bfloat16)
    return (h + mlp(norm(h, g), w1, w2)).astype(jnp.float32)


def inputs():
    rng = np.random.default_rng(17)
    args = (rng.standard_normal((4, 6, 8)).astype(np.float32), 1.0 + 0.1 * rng.standard_normal(8).astype(np.float32),
            0.3 * rng.standard_normal((8, 16)).astype(np.float32), 0.3 * rng.standard_normal((16, 8)).astype(np.float32))
    return {"train_loss": args, "logits": args}
