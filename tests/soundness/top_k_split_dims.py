"""``jax.lax.top_k`` as routers and samplers write it: a mixture-of-experts router's top 2 of the
expert probabilities over split experts (its gates built with ``one_hot`` and an einsum), the top 3
logits over a split vocabulary whose blocks hold 2 entries (k beyond a block: whole blocks gathered),
a top_k along a middle dim (``axis=1``) over split length, and along an unsplit dim beside split
ones; ties (values on a coarse grid) resolve to the lower global index as on one device; gradients
through the values.  Before, "jax.lax.top_k has no meshify rule", with a fix to unsplit batch."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def router(x, w_gate, k):
    probs = jax.nn.softmax(x @ w_gate, axis=-1)
    top_p, top_i = jax.lax.top_k(probs, k)
    top_p = top_p / jnp.sum(top_p, axis=-1, keepdims=True)
    return jnp.einsum("blk,blke->ble", top_p, jax.nn.one_hot(top_i, probs.shape[-1]))


@mesh(data=2, model=4, rules={"batch": "data", "experts": "model", "vocab": "model", "length": "data"})
def f(x: Tensor["batch", "length", "d_model"], w_gate: Tensor["d_model", "experts"],
      w_in: Tensor["experts", "d_model", "d_ff"], head: Tensor["d_model", "vocab"],
      grid: Tensor["vocab", "length"]):
    gates = router(x, w_gate, 2)
    y = jnp.einsum("bld,edf,ble->blf", x, w_in, gates)
    logits = jnp.einsum("bld,dv->blv", x, head)
    best, ids = jax.lax.top_k(logits, 3)
    tied, tied_ids = jax.lax.top_k(grid, 2, axis=1)  # coarse values: ties across blocks of length
    whole, _ = jax.lax.top_k(jnp.tanh(y), 2)  # along unsplit d_ff
    return (jnp.mean(y ** 2) + jnp.mean(best) + jnp.mean(jnp.sin(ids.astype(jnp.float32)))
            + jnp.mean(tied * tied_ids) + jnp.mean(whole))


def inputs():
    rng = np.random.default_rng(71)
    grid = np.round(rng.standard_normal((8, 8)) * 2) / 2  # steps of 0.5: ties
    return (rng.standard_normal((4, 8, 6)).astype(np.float32), rng.standard_normal((6, 8)).astype(np.float32),
            0.3 * rng.standard_normal((8, 6, 5)).astype(np.float32), rng.standard_normal((6, 8)).astype(np.float32),
            grid.astype(np.float32))
