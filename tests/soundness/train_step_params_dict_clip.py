"""A training step as users write it around a @mesh loss: jax.value_and_grad over a params dict, an optax-like
SGD update with jax.tree.map, a global-norm gradient clip, all under jax.jit, several steps."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False


@mesh(data=2, model=4, rules={"batch": "data", "d_ff": "model"})
def loss_fn(x: Tensor["batch", "d"], y: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    h = jax.nn.gelu(x @ w1)
    return jnp.mean((h @ w2 - y) ** 2)


def scenario(mod, pick):
    fn = pick(mod.loss_fn)

    @jax.jit
    def step(params, x, y):
        loss, grads = jax.value_and_grad(lambda p: fn(x, y, p["w1"], p["w2"]))(params)
        norm = jnp.sqrt(sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads)))
        scale = jnp.minimum(1.0, 1.0 / (norm + 1e-6))
        return jax.tree.map(lambda p, g: p - 0.1 * scale * g, params, grads), loss

    rng = np.random.default_rng(10)
    params = {"w1": jnp.asarray(rng.standard_normal((8, 16)).astype(np.float32) * 0.3),
              "w2": jnp.asarray(rng.standard_normal((16, 8)).astype(np.float32) * 0.3)}
    x = jnp.asarray(rng.standard_normal((4, 8)).astype(np.float32))
    y = jnp.asarray(rng.standard_normal((4, 8)).astype(np.float32))
    losses = []
    for _ in range(3):
        params, loss = step(params, x, y)
        losses.append(loss)
    return losses, params


def inputs():
    return ()
