"""The softmax family's ``where=`` and ``b=`` over a split dim at their edges, as attention and
losses meet them: a row masked out entirely (softmax NaN-free zeros with JAX's own derivative, log_softmax
-inf, logsumexp -inf), a row masked out on some devices' blocks only, -inf scores beside a mask (a causal
mask built with ``jnp.where(..., -jnp.inf)``), logsumexp weights that are zero or negative (a negative sum
is NaN), keepdims, float16 scores; gradients through the scores and the weights (the non-finite results
returned replaced by marks, so that the gradient of their sum stays finite where JAX's is)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-3


@mesh(batch=2, model=4, rules={"keys": "model"})
def f(s: Tensor["batch", "keys"], mask: Tensor["batch", "keys"], w: Tensor["batch", "keys"]
      ) -> tuple[Tensor[()], Tensor["batch", "keys"], Tensor["batch", "keys"], Tensor["batch"], Tensor["batch"],
                 Tensor["batch"]]:
    causal = jnp.where(mask, s, -jnp.inf)
    p = jax.nn.softmax(s, axis=-1, where=mask)
    lp = jax.nn.log_softmax(s, where=mask)
    lse = jax.nn.logsumexp(s, axis=-1, b=w, keepdims=True)
    lse2 = jax.nn.logsumexp(causal, axis=-1, where=mask)
    lse3 = jax.nn.logsumexp(causal, axis=-1)
    h = jax.nn.softmax(s.astype(jnp.float16), axis=-1, where=mask).astype(jnp.float32)
    finite = jnp.where(jnp.isfinite(lp), lp, 0.0)
    total = (jnp.sum(p * s) + jnp.sum(finite) + jnp.sum(jnp.where(jnp.isnan(lse), 0.0, lse))
             + jnp.sum(jnp.where(jnp.isfinite(lse2), lse2, 0.0)) + jnp.sum(jnp.where(jnp.isfinite(lse3), lse3, 0.0))
             + jnp.sum(h * s))
    return (total, p, jnp.where(jnp.isfinite(lp), lp, -99.0), jnp.where(jnp.isnan(lse), -77.0, lse)[:, 0],
            jnp.where(jnp.isfinite(lse2), lse2, -55.0), jnp.where(jnp.isfinite(lse3), lse3, -33.0))


def inputs():
    rng = np.random.default_rng(71)
    s = rng.standard_normal((4, 8)).astype(np.float32)
    mask = s > -0.3
    mask[0] = False            # a row masked out entirely
    mask[1, :6] = False        # masked out on the first three devices' blocks
    w = rng.standard_normal((4, 8)).astype(np.float32)
    w[2] = np.abs(w[2])        # a row of positive weights (the others may sum below zero: NaN)
    w[3, ::2] = 0.0
    return s, mask, w
