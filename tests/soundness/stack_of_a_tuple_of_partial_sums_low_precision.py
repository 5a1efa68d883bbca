"""float16 and bfloat16: ``jnp.stack(ys)`` / ``jnp.concatenate(ys)`` of a tuple held in a name whose items are partial sums over one axis
(``ys = (tanh(x @ w1) @ w2, relu(x @ w1) @ w2)`` with ``d_ff`` split, or the first list of ``zip(*pairs)``): a join
is linear, so the stack is one partial sum, completed once where needed.  Before, "jax.numpy.stack of something
other than a list literal" (a tuple of whole arrays of one layout was joined; of partial sums, refused)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2  # (float16 items: XLA may keep a product in float32 inside the sums, one device not)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def held(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    ys = (jnp.tanh(x @ w1) @ w2, jax.nn.relu(x @ w1) @ w2)
    return jnp.stack(ys).sum(0), jnp.concatenate(ys, axis=-1), jnp.stack(ys, axis=-1) * 2.0


@mesh(model=8, rules={"d_ff": "model", "batch": None})
def zipped(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    pairs = [(jnp.tanh(x @ w1) @ w2, x), (jax.nn.relu(x @ w1) @ w2, 2 * x)]
    hs, xs = zip(*pairs)
    return jnp.stack(hs, axis=1), jnp.concatenate(xs, axis=-1)


def inputs():
    rng = np.random.default_rng(31)

    def r(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    args = (r(4, 8), r(8, 16, scale=0.3), r(16, 8, scale=0.3))
    return {"held": tuple(a.astype(np.float16) for a in args), "zipped": tuple(a.astype(jnp.bfloat16) for a in args)}
