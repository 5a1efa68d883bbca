"""A per-example function written once and batched by ``@jax.vmap``, as code does: ``attend(q, k, v)`` on
one example's [heads, length, d_head] (heads split over 'model'; the vmapped batch split over 'batch'), a
per-row norm over the split heads inside (a psum in the vmapped body), and a tuple result; a second vmapped
helper called on a whole (unsplit) leading dim; gradients through all."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.vmap
def attend(q, k, v):
    s = jnp.einsum("hqd,hkd->hqk", q, k) / jnp.sqrt(q.shape[-1] * 1.0)
    o = jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s, axis=-1), v)
    return o, jnp.sqrt(jnp.sum(o * o))


@jax.vmap
def center(row):
    return row - jnp.mean(row)


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(q: Tensor["batch", "heads", "length", "d_head"], k: Tensor["batch", "heads", "length", "d_head"],
      v: Tensor["batch", "heads", "length", "d_head"], w: Tensor["length", "d_head"]
      ) -> tuple[Tensor["batch", "heads", "length", "d_head"], Tensor["batch"], Tensor["length", "d_head"]]:
    o, n = attend(q, k, v)
    return o / n[:, None, None, None], n, center(w)


def inputs():
    rng = np.random.default_rng(303)
    return (*(rng.standard_normal((4, 8, 3, 2)).astype(np.float32) for _ in range(3)),
            rng.standard_normal((3, 2)).astype(np.float32))
