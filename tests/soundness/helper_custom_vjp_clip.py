"""A jax.custom_vjp helper clipping its cotangent (gradient clipping), applied to a split activation."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -0.1, 0.1),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return clip_gradient(x @ w) * 3.0


def inputs():
    rng = np.random.default_rng(130)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
