"""A bound method held in a name, then passed to a transform, as layer loops write it: ``blk = self.block;
x = jax.checkpoint(blk, static_argnums=(3,))(x, w1, w2, True)`` and ``ck = jax.remat(self.norm); ck(x)``;
d_ff split over 'model'; gradients through x and the weights.  Before, "a function held in a name" passed
to jax.checkpoint was refused for a method."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Model:
    def __init__(self, eps=1e-6):
        self.eps = eps

    def norm(self, x):
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + self.eps)

    def block(self, x, w1, w2, train):
        h = jax.nn.gelu(self.norm(x) @ w1)
        return x + (h * 0.9 if train else h) @ w2

    @mesh(batch=2, model=4, rules={"d_ff": "model"})
    def forward(self, x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]
                ) -> Tensor["batch", "d"]:
        blk = self.block
        x = jax.checkpoint(blk, static_argnums=(3,))(x, w1, w2, True)
        ck = jax.remat(self.norm)
        return ck(x) + blk(x, w1, w2, False) * 0.5


def scenario(mod, pick):
    x, w1, w2 = inputs()
    model = mod.Model()
    out = pick(model.forward)(x, w1, w2)
    grads = jax.grad(lambda a, b, c: jnp.sum(pick(model.forward)(a, b, c) ** 2), argnums=(0, 1, 2))(x, w1, w2)
    return out, grads


def inputs():
    rng = np.random.default_rng(312)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.3)
