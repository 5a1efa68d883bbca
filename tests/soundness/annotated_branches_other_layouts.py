"""Branches of different layouts whose result is annotated (issue #14): a conditional expression on a
static flag (a partial sum vs a value split on batch) and jax.lax.cond on a traced predicate (a partial
sum vs a whole value; d_ff split over model vs built whole); each branch is converted to the hint."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], train: bool = True) \
        -> tuple[Tensor["batch", "d"], Tensor["batch", "d_ff"]]:
    h = jnp.tanh(x @ w1)
    y: Tensor["batch", "d"] = h @ w2 if train else x * 2.0
    z: Tensor["batch", "d"] = jax.lax.cond(jnp.sum(x) > 0, lambda: h @ w2, lambda: jnp.tanh(x))
    g: Tensor["batch", "d_ff"] = jax.lax.cond(jnp.sum(y) > 0, lambda: h, lambda: jnp.ones((x.shape[0], w1.shape[1])))
    return y + z, g * 3.0


def scenario(mod, pick):
    x, w1, w2 = inputs()
    fn = pick(mod.f)
    grad = jax.grad(lambda a, b: sum(jnp.sum(o ** 2) for o in fn(a, b, w2, False)) + jnp.sum(fn(a, b, w2)[0]),
                    argnums=(0, 1))(x, w1)
    return fn(x, w1, w2), fn(x, w1, w2, False), fn(-x, w1, w2), fn(-x, w1, w2, False), grad


def inputs():
    rng = np.random.default_rng(1431)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32))
