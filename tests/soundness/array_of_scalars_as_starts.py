"""``jnp.array([0, pos, 0])`` as ``dynamic_slice`` starts, and ``jnp.array`` / ``jnp.asarray`` of a list of
scalars or of arrays, as decoding code writes them.  Refused before ("array on a tuple or pytree"): a list of
scalars is now a whole vector (each partial sum completed first), a list of arrays their stack, and the starts
of a dynamic slice of a split operand are read through ``jnp.array([...])`` (a split dim still read whole, from a
literal 0)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def window(x: Tensor["batch", "seq", "d"], off: Tensor[()]):
    return jax.lax.dynamic_slice(x, jnp.array([0, off, 0]), (x.shape[0], 2, x.shape[2]))


@mesh(batch=2, model=4, rules={"d": "model"})
def unsplit_table(t: Tensor["seq", "e"], x: Tensor["batch", "seq", "d"], off: Tensor[()]):
    return jax.lax.dynamic_slice(t, jnp.asarray((off, 1)), (2, 3)), jnp.tanh(x)


@mesh(batch=2, model=4, rules={"d": "model"})
def scalars(x: Tensor["batch", "seq", "d"], w: Tensor["d", "f"], off: Tensor[()]):
    total = jnp.sum(x @ w)  # a partial sum over 'model'
    v = jnp.array([total, jnp.max(x), 3.0])
    return v * 2.0, jnp.array([off, 0]) + 1, jnp.asarray([total, total * total], dtype=jnp.float32)


@mesh(batch=2, model=4, rules={"d": "model"})
def of_arrays(x: Tensor["batch", "seq", "d"]):
    s = jnp.array([jnp.sin(x), x * 2.0])
    return jnp.sum(s, axis=0), jnp.array([jnp.sum(x, axis=1), jnp.max(x, axis=1)])


def inputs():
    rng = np.random.default_rng(94)
    x = rng.standard_normal((4, 6, 16)).astype(np.float32)
    t = rng.standard_normal((6, 5)).astype(np.float32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    return {"window": (x, np.int32(5)), "unsplit_table": (t, x, np.int32(-2)), "scalars": (x, w, np.int32(7)),
            "of_arrays": (x,)}
