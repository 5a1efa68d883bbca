"""Module-level aliases of jax functions, as users write them: ``dot = jnp.dot``, ``softmax =
jax.nn.softmax`` (not elementwise: it reduces over a split dim), ``scan = jax.lax.scan``, ``tree_map =
jax.tree_util.tree_map``, ``remat = jax.checkpoint`` as a helper's decorator, ``einsum =
functools.partial(jnp.einsum, precision="highest")``, an alias of an alias, a def rebound by an alias after
it (the alias holds) and an alias called from a helper.  Each call gets its function's rule: the split
contraction completed, the softmax over the split dim computed with its collectives."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

dot = jnp.dot
softmax = jax.nn.softmax
mm = dot
scan = jax.lax.scan
tree_map = jax.tree_util.tree_map
remat = jax.checkpoint
einsum = functools.partial(jnp.einsum, precision="highest")


def act(x):
    return jax.nn.relu(x)


act = jax.nn.gelu  # noqa: F811 - the experiment uses gelu


def proj(h, w):
    return mm(h, w)


@remat
def block(h, w1, w2):
    return proj(act(h @ w1), w2)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    h = act(dot(x, w1))
    p = softmax(h, axis=-1)
    y = einsum("bf,fd->bd", p, w2) + proj(h, w2)
    y = y + tree_map(lambda a: a * 0.5, (x,))[0]

    def body(carry, _):
        return carry + block(carry, w1, w2), None

    y, _ = scan(body, y, None, length=2)
    return y * 0.5


def inputs():
    rng = np.random.default_rng(3601)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.3)
