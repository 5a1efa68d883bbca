"""Row-wise library functions a contrastive model calls on its embeddings, along an unsplit dim of a split batch
(pure data parallel, where each was refused with a fix unsplitting the batch) and along a split one where a
collective computes it: ``jnp.linalg.vector_norm`` (psum over a split dim), ``jax.nn.standardize``,
``optax.safe_norm``; ``x.mT``, ``jnp.matrix_transpose``, ``jnp.permute_dims`` moving splits with the dims
(attack on CLIP); float16 too."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 1e-2


@mesh(batch=8)
def normed(x: Tensor["batch", "d"]):
    z = x / jnp.linalg.vector_norm(x, axis=-1, keepdims=True)
    sim = z @ z.mT
    return (sim, jnp.linalg.vector_norm(x, axis=1, ord=1), jax.nn.standardize(x, axis=1, epsilon=1e-3),
            optax.safe_norm(x, 1e-6, axis=-1))


@mesh(data=2, model=4, rules={"batch": "data", "d": "model"})
def split_rows(x: Tensor["batch", "t", "d"]):
    n = jnp.linalg.vector_norm(x, axis=-1)
    return n, jnp.matrix_transpose(x) * 2.0, jnp.permute_dims(x, (2, 0, 1)), jax.nn.standardize(x, axis=1)


def inputs():
    rng = np.random.default_rng(66)
    return {"normed": (rng.standard_normal((16, 8)).astype(np.float16),),
            "split_rows": (rng.standard_normal((4, 3, 16)).astype(np.float32),)}
