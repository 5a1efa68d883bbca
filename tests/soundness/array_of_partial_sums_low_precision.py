"""``jnp.asarray([a, b])``, ``jnp.array`` and ``jnp.stack`` of float16/bfloat16 partial sums: each is formed in
float32 and the psum completing the array casts it back to the items' dtype (their promoted one, read from the
list's items); with ``dtype=jnp.float32`` each item is completed, and rounded to its own dtype, before the cast, as
on one device.  The float16 rows' shares (+-80000 on each device) overflow float16 where a share is rounded
before the psum."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2  # float16/bfloat16 sums: XLA may keep a product in float32 inside the reduction, one device not


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def half(x: Tensor["batch", "d_ff"]):
    a = jnp.sum(x)
    b = jnp.sum(x * 0.5)
    v = jnp.asarray([a, b])
    return v, jnp.array((b, a)), jnp.stack([a, b]) * 2.0, jnp.asarray([a, b], dtype=jnp.float32), v[0] + 1.0


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def brain(x: Tensor["batch", "d_ff"]):
    a = jnp.sum(x)
    b = jnp.sum(x * x)
    return (jnp.asarray([a, b]), jnp.array([jnp.sum(x, axis=1), jnp.max(x, axis=1)]), jnp.asarray([a, jnp.max(x), 1.0]),
            jnp.stack([a, b], dtype=jnp.float32), jnp.array([a, b], dtype=x.dtype))


def inputs():
    row = np.array([20000.0] * 8 + [-20000.0] * 8)  # shares of +80000 (model 0, 1) and -80000 (model 2, 3)
    x = np.tile(row, (8, 1)).astype(np.float16)
    y = np.random.default_rng(97).standard_normal((8, 16)).astype(jnp.bfloat16)
    return {"half": (x,), "brain": (y,)}
