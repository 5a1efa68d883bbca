"""``jnp.linalg.vector_norm`` over every entry or a tuple of dims, some split (gradient clipping by a global norm,
a per-example norm over two dims), every ``ord`` JAX takes for a vector norm, keepdims, float16.  Before: refused
("over every dim of 'x'"), where ``jnp.linalg.norm(x)`` was supported."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-3


@mesh(data=2, model=4, rules={"batch": "data", "d": "model"})
def f(x: Tensor["batch", "seq", "d"], w: Tensor["d", "f"]):
    total = jnp.linalg.vector_norm(w) + jnp.linalg.vector_norm(x)
    per_row = jnp.linalg.vector_norm(x, axis=(1, -1), keepdims=True)
    kinds = [jnp.linalg.vector_norm(x, ord=o, axis=(0, 2)) for o in (1, 0, 3, 0.5, -1)]
    peak = jnp.linalg.vector_norm(x, ord=jnp.inf) - jnp.linalg.vector_norm(x, ord=-jnp.inf, axis=(0, 2)).sum()
    return x / per_row * total + peak, sum(jnp.sum(k) for k in kinds)


@mesh(data=2, model=4, rules={"batch": "data", "d": "model"})
def half(x: Tensor["batch", "seq", "d"]):
    return jnp.linalg.vector_norm(x) + jnp.linalg.vector_norm(x, axis=(0, 2)).astype(jnp.float32).sum()


@mesh(data=2, model=4, rules={"batch": "data", "d": "model"})
def ints(x: Tensor["batch", "seq", "d"]):
    # (an integer array keeps its dtype under ord 1, inf, -inf, as JAX's vector_norm keeps it: found by the attack)
    return (jnp.linalg.vector_norm(x, ord=1, axis=(0, 2)), jnp.linalg.vector_norm(x, ord=jnp.inf),
            jnp.linalg.vector_norm(x, ord=-jnp.inf, axis=(0, 2)), jnp.linalg.vector_norm(x, axis=(0, 2)))


def inputs():
    rng = np.random.default_rng(71)
    x = rng.standard_normal((4, 3, 8)).astype(np.float32)
    x[0, 1, 2] = 0.0
    return {"f": (x, rng.standard_normal((8, 5)).astype(np.float32)),
            "half": ((30 * x).astype(np.float16),), "ints": ((10 * x).astype(np.int32),)}
