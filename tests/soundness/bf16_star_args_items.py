"""``*args`` items of different dtypes (a bfloat16 activation and a float32 residual) summed by a helper
over split ``d_ff``: each item's dtype is its own (``xs[0]`` bfloat16, ``xs[1]`` float32), so the psum of
the bfloat16 contraction accumulated in float32 is cast back to what one device computes."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2  # the gradients: a bfloat16 contraction over split batch is summed from two bfloat16 partials


def first_times(*xs, **kw):
    out = xs[0] @ kw["w"]
    for t in xs[1:]:
        out = out * 0.5 + jnp.sum(t)
    return out


@mesh(data=2, model=4, rules={"batch": "data", "d_ff": "model"})
def f(x: Tensor["batch", "d_ff"], w: Tensor["d_ff", "d"], r: Tensor["d"]):
    y = first_times(x.astype(jnp.bfloat16), r, w=w.astype(jnp.bfloat16))
    return jnp.mean(y.astype(jnp.float32) ** 2)


def inputs():
    rng = np.random.default_rng(45)
    return (rng.standard_normal((8, 16)).astype(np.float32), 0.3 * rng.standard_normal((16, 6)).astype(np.float32),
            rng.standard_normal(6).astype(np.float32))
