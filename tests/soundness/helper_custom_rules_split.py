"""Custom derivative rules on split values, as training code writes them: a custom_vjp that normalises its
cotangent by the cotangent's global norm (a sum over split dims in bwd: a psum there), called on a value
whose d_ff is split and on a whole weight (its cotangent, computed per device from a split g, is completed);
a custom_jvp (decorator form) whose rule calls the primal; fwd saves residuals as a tuple; gradients through
all the arguments."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.custom_vjp
def unit_grad(x, w):
    return jnp.tanh(x) * w


def _unit_fwd(x, w):
    return unit_grad(x, w), (x, w)


def _unit_bwd(res, g):
    x, w = res
    n = jnp.sqrt(jnp.sum(g * g)) + 1e-6
    t = 1.0 - jnp.tanh(x) ** 2
    return g * t * w / n, jnp.sum(g * jnp.tanh(x), axis=0) / n


unit_grad.defvjp(_unit_fwd, _unit_bwd)


@jax.custom_jvp
def softplus(x):
    return jnp.logaddexp(x, 0.0)


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), jax.nn.sigmoid(x) * t * 0.5


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], s: Tensor["d_ff"]) -> Tensor["batch", "d_ff"]:
    h = unit_grad(x @ w1, s)
    return softplus(h) + unit_grad(h, s)


def inputs():
    rng = np.random.default_rng(304)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.5,
            rng.standard_normal(16).astype(np.float32))
