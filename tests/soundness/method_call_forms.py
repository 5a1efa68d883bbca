"""The ways class-based code calls its own methods, with model-parallel weights: ``self.snorm(x)`` of a
staticmethod, ``Model.snorm(x)``, ``Model.norm(self, x)``, ``jax.checkpoint(self.block, static_argnums=(3,))``,
``self(x)`` (``__call__``), ``self.norm`` inside a checkpointed lambda and inside a nested def, ``norm =
self.norm; norm(x)``; d_ff and the norm's d split over 'model'; gradients through x and the weights.  Before,
each was refused (or failed at the call) while ``self.norm(x)`` worked."""
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

    @staticmethod
    def snorm(x):
        return x / (jnp.max(jnp.abs(x), axis=-1, keepdims=True) + 1.0)

    def block(self, x, w1, w2, train):
        h = jax.nn.gelu(self.norm(x) @ w1)
        return x + (h * 0.9 if train else h) @ w2

    def __call__(self, x):
        return Model.snorm(x) * 2.0

    @mesh(batch=2, model=4, rules={"d_ff": "model"})
    def forward(self, x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]
                ) -> Tensor["batch", "d"]:
        x = jax.checkpoint(self.block, static_argnums=(3,))(x, w1, w2, True)
        x = self.snorm(x) + Model.norm(self, x)
        y = jax.checkpoint(lambda t: self.norm(t))(x)

        def inner(t):
            return self.norm(t) * 0.5

        norm = self.norm  # a bound method held in a name
        return self(y) + inner(x) + norm(x) * 0.25

    @mesh(batch=2, model=4, rules={"d": "model"})
    def forward_split_d(self, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
        return self.snorm(x) + Model.norm(self, x) + self(x)


def scenario(mod, pick):
    x, w1, w2 = inputs()
    model = mod.Model()
    out = pick(model.forward)(x, w1, w2), pick(model.forward_split_d)(x)
    grads = jax.grad(lambda a, b, c: jnp.sum(pick(model.forward)(a, b, c) ** 2), argnums=(0, 1, 2))(x, w1, w2)
    grads_d = jax.grad(lambda a: jnp.sum(pick(model.forward_split_d)(a) ** 2))(x)
    return out, grads, grads_d


def inputs():
    rng = np.random.default_rng(305)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.3)
