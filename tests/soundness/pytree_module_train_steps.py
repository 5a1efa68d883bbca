"""A training step over an Equinox-style module, as such code writes it: ``jax.value_and_grad`` of a
function of the module (a module-level def calling ``m.loss``, a lambda calling the method, the unbound
``MLP.loss``), the SGD update by ``jax.tree.map`` over module and gradients or ``dataclasses.replace``, and
the module returned beside the loss under ``-> tuple[Tensor[()], MLP]`` (a dataclass in a mixed return hint:
before, "tuple return item 'MLP' is not a Tensor hint")."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class MLP:
    w1: Tensor["d", "d_ff"]
    w2: Tensor["d_ff", "d"]

    def __call__(self, x):
        return jax.nn.gelu(x @ self.w1) @ self.w2

    def loss(self, x, y):
        return jnp.mean((self(x) - y) ** 2)


def loss_fn(m, x, y):
    return m.loss(x, y)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def step_def(m: MLP, x: Tensor["batch", "d"], y: Tensor["batch", "d"]) -> tuple[Tensor[()], MLP]:
    loss, g = jax.value_and_grad(loss_fn)(m, x, y)
    return loss, jax.tree.map(lambda p, q: p - 0.1 * q, m, g)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def step_lambda(m: MLP, x: Tensor["batch", "d"], y: Tensor["batch", "d"]) -> tuple[Tensor[()], MLP]:
    loss, g = jax.value_and_grad(lambda mm: mm.loss(x, y))(m)
    return loss, jax.tree.map(lambda p, q: p - 0.1 * q, m, g)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def step_unbound(m: MLP, x: Tensor["batch", "d"], y: Tensor["batch", "d"]) -> tuple[Tensor[()], MLP]:
    loss, g = jax.value_and_grad(MLP.loss)(m, x, y)
    return loss, dataclasses.replace(m, w1=m.w1 - 0.1 * g.w1, w2=m.w2 - 0.1 * g.w2)


def inputs():
    rng = np.random.default_rng(3606)

    def a(*shape):
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    args = (MLP(a(8, 16), a(16, 8)), a(4, 8), a(4, 8))
    return {"step_def": args, "step_lambda": args, "step_unbound": args}
