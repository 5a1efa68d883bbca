"""``jnp.asarray([a, b])``, ``jnp.array((a, b))`` and ``jnp.stack([a, b])`` of partial sums (``a = jnp.sum(x)``
over a split dim, psum deferred), as code gathering statistics writes them.  Refused before ("cannot tell the
dtype of 'jnp.asarray([a, b])', a partial sum"): the dtype of ``jnp.array`` of a list was read from the list
itself, which has none.  Now the items' promoted dtype: the array stays a partial sum (one psum completes it),
beside plain arrays and numbers its partial items are completed first, and with ``dtype=`` (a cast, which rounds
or truncates each device's share differently from the whole sum) every partial item is completed before the
cast; before, ``jnp.asarray([a, b], dtype=jnp.int32)`` summed the devices' truncated shares."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def stats(x: Tensor["batch", "d_ff"]):
    a = jnp.sum(x)
    b = jnp.sum(x * x)
    return jnp.asarray([a, b]), jnp.array((a, b)), jnp.stack([a, b]), jnp.array([b, a, b])


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def rows(x: Tensor["batch", "d_ff"]):
    return jnp.array([jnp.sum(x, axis=1), jnp.sum(jnp.sin(x), axis=1)]), jnp.asarray((jnp.mean(x, axis=-1),))


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def mixed(x: Tensor["batch", "d_ff"]):
    a = jnp.sum(x)
    return jnp.asarray([a, jnp.max(x), 2.0]), jnp.stack([a, jnp.max(x)]), jnp.array([a, 0])


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def used_after(x: Tensor["batch", "d_ff"]):
    v = jnp.asarray([jnp.sum(x), jnp.sum(x * x)])
    w = v * 2.0 - v  # still a partial sum
    return w, jnp.sqrt(v[1] / x.size - (v[0] / x.size) ** 2)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def cast(x: Tensor["batch", "d_ff"]):
    a = jnp.sum(x)
    b = jnp.sum(x * 3.0)
    return (jnp.asarray([a, b], dtype=jnp.int32), jnp.array([a, b], jnp.int32), jnp.stack([a, b], dtype=jnp.int32),
            jnp.concatenate([a[None], b[None]], dtype=jnp.int32), jnp.asarray([a, b], dtype=jnp.bfloat16),
            jnp.asarray([a, b], dtype=None))


def inputs():
    x = np.random.default_rng(96).standard_normal((8, 16)).astype(np.float32)
    thirds = np.full((8, 16), 0.3, np.float32)  # each device's share of the sum, truncated, loses its fraction
    return {"stats": (x,), "rows": (x,), "mixed": (x,), "used_after": (x,), "cast": (thirds,)}
