"""Module-level aliases of jax functions, as users write them: ``dot = jnp.dot``, ``einsum = jnp.einsum``,
``softmax = jax.nn.softmax`` (not elementwise: it reduces over a split dim), an alias of an alias, a def
rebound by an alias after it (the alias holds) and an alias called from a helper.  Each call gets its function's rule: the split contraction completed, the softmax over the split dim
computed with its collectives."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

dot = jnp.dot
einsum = jnp.einsum
softmax = jax.nn.softmax
mm = dot


def act(x):
    return jax.nn.relu(x)


act = jax.nn.gelu  # noqa: F811 - the experiment uses gelu


def proj(h, w):
    return mm(h, w)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    h = act(dot(x, w1))
    p = softmax(h, axis=-1)
    y = einsum("bf,fd->bd", p, w2) + proj(h, w2)
    return y * 0.5


def inputs():
    rng = np.random.default_rng(3601)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))
