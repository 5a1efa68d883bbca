"""``jax.lax.while_loop`` over values split over both axes: the condition reads split values through
reductions (``jnp.max(jnp.abs(h))``: a pmax; ``jnp.sum(h * h)``: a partial sum completed inside the
condition), so every device decides alike; the body contracts over the split d (a psum) and counts steps in
``jnp.int32(0)``; a nested def, a module def and a lambda as the condition.  Before, "jax.lax.while_loop has no meshify
rule" (found by the user-style attack).  While loops have no reverse-mode gradient in JAX."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False


def big(c):
    h, _ = c
    return jnp.max(jnp.abs(h)) > 1.0


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]):
    def halve(c):
        h, i = c
        return h * 0.5, i + 1

    h, n = jax.lax.while_loop(big, halve, (x, jnp.int32(0)))

    def energetic(c):
        g, _ = c
        return jnp.sum(g * g) > 0.5

    def shrink(c):
        g, k = c
        return g * 0.9 + jnp.sum(g @ w) * 0.0, k + 1

    g, m = jax.lax.while_loop(energetic, shrink, (h, 0))
    k, j = jax.lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] + 1.0, c[1] + 1), (g, 0))  # a lambda condition
    return h, n, g, m, k, j


def inputs():
    rng = np.random.default_rng(318)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    x[3, 7] = 40.0
    return x, rng.standard_normal((8, 4)).astype(np.float32)
