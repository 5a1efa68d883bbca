"""Scatters ``x.at[:, ids].op(v)`` with an index array, as real code writes them: an embedding's
gradient-style ``table.at[ids].add(g)`` into a split vocabulary (each device puts the ids in its block),
``set``/``max``/``multiply`` along an unsplit dim beside split ones (each device scatters into its block),
``...`` before the index, a 2-D index, a value that is a partial sum (``h @ w`` over a split contraction,
completed first), a scalar value, ``multiply`` of a traced value with ids promised unique
(``unique_indices=True``: JAX differentiates it only then; each device's ids stay unique), ids negative (wrapped) and out of range (dropped), gradients through the
table, the values and the array.  Before, "with the array index ... (a scatter)"."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model", "d": "model"})
def f(table: Tensor["vocab", "e"], ids: Tensor["batch"], g: Tensor["batch", "e"], x: Tensor["batch", "seq", "d"],
      cols: Tensor["k"], v: Tensor["batch", "k", "d"], grid: Tensor["r", "c"], h: Tensor["batch", "d"],
      w: Tensor["d", "e"]):
    table = table.at[ids].add(g)
    table = table.at[ids - 3].max(jnp.tanh(g))
    table = table.at[grid].set(0.5)
    table = table.at[..., ids, :].multiply(1.5)
    x = x.at[:, cols].set(v)
    x = x.at[..., cols, :].add(v * 2.0)
    y = x.at[:, cols].max(0.0)
    proj = h @ w
    t2 = table.at[ids].add(proj)
    t3 = t2.at[jnp.abs(ids) % 16].multiply(jnp.tanh(g) + 1.0, unique_indices=True)  # (unique: differentiable)
    return jnp.mean(table ** 2) + jnp.mean(y ** 2) + jnp.mean(t2 ** 2) + jnp.mean(t3 ** 2)


def inputs():
    rng = np.random.default_rng(5)
    return (rng.standard_normal((16, 3)).astype(np.float32), np.array([0, 5, -2, 19], np.int32),
            rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 6, 8)).astype(np.float32),
            np.array([1, -1, 4], np.int32), rng.standard_normal((4, 3, 8)).astype(np.float32),
            np.array([[0, 15], [-16, 7]], np.int32), rng.standard_normal((4, 8)).astype(np.float32),
            rng.standard_normal((8, 3)).astype(np.float32))
