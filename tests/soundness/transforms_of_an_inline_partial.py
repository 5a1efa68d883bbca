"""jax.vmap / jax.checkpoint of a functools.partial written inline, as public code binds a per-example loss's
weights (``jax.vmap(functools.partial(per_example, w=w))(x, y)``) or a block's config
(``jax.checkpoint(functools.partial(block, scale=0.5))(x, w)``), the classes / d split over 'model' and the batch
over all 8 devices.  Before: "'functools.partial(per_example, w=w)' is not a function meshify can follow into" (a
partial held in a name, and a scan body's partial, were followed).  Now it is walked as the lambda it stands for."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def per_example(x, y, w):
    return -jax.nn.log_softmax(x @ w)[y]


def block(x, w, scale):
    return jax.nn.gelu(x @ w) * scale


@mesh(batch=2, model=4, rules={"classes": "model"})
def f(x: Tensor["batch", "d"], y: Tensor["batch"], w: Tensor["d", "classes"]) -> Tensor[()]:
    return jnp.mean(jax.vmap(functools.partial(per_example, w=w))(x, y))


@mesh(batch=8)
def g(x: Tensor["batch", "d"], y: Tensor["batch"], w: Tensor["d", "classes"]) -> Tensor[()]:
    return jnp.mean(jax.vmap(functools.partial(per_example, w=w), in_axes=(0, 0))(x, y))


@mesh(batch=2, model=4, rules={"d": "model"})
def ckpt(x: Tensor["batch", "d"], w: Tensor["d", "d"]) -> Tensor["batch", "d"]:
    return jax.checkpoint(functools.partial(block, scale=0.5))(x, w)


def inputs():
    rng = np.random.default_rng(3216)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    y = rng.integers(-2, 8, 8).astype(np.int32)
    w = (rng.standard_normal((6, 8)) * 0.5).astype(np.float32)
    return {"f": (x, y, w), "g": (x, y, w),
            "ckpt": (rng.standard_normal((4, 8)).astype(np.float32), (rng.standard_normal((8, 8)) * 0.5).astype(np.float32))}
