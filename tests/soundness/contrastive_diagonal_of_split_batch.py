"""The diagonal of a batch-by-batch similarity matrix whose rows are split over the data-parallel devices, as
contrastive (CLIP) losses read the matching pairs: ``jnp.diagonal(logp)``, ``jnp.diag``, ``logp.diagonal()``,
``logp[b, b]`` with ``b = jnp.arange(n)``, ``jnp.trace``, of the log-softmax along either dim (the transposed
matrix has its columns split), with the embed dim split too (the logits a partial sum before the softmax), in
bfloat16, and the diagonal of a stack of per-example matrices (the pair unsplit).  Each device's share of the
diagonal lies in its own square block (``mr.diagonal_block``), no communication.  Before, "jax.numpy.diagonal
has no meshify rule" with a fix dropping data parallelism (the CLIP attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def clip(img: Tensor["batch", "embed"], txt: Tensor["batch", "embed"], t: Tensor[()]):
    logits = img @ txt.T * jnp.exp(t)
    i2t = -jnp.diagonal(jax.nn.log_softmax(logits, axis=-1)).mean()
    t2i = -jnp.diag(jax.nn.log_softmax(logits.T, axis=-1)).mean()
    return (i2t + t2i) / 2


@mesh(batch=2, model=4, rules={"embed": "model"})
def clip_hybrid(img: Tensor["batch", "embed"], txt: Tensor["batch", "embed"]):
    logits = jnp.einsum("ie,je->ij", img, txt)
    logp = jax.nn.log_softmax(logits, axis=1)
    n = logits.shape[0]
    b = jnp.arange(n)
    picked = logp[b, b]
    return -picked.mean(), -logp.diagonal().sum() / n, jnp.trace(logits) / n


@mesh(batch=4)
def clip_bf16(img: Tensor["batch", "embed"], txt: Tensor["batch", "embed"]):
    logits = (img @ txt.T).astype(jnp.bfloat16)
    return jnp.diagonal(logits), logits.trace()


@mesh(batch=8)
def per_example(m: Tensor["batch", "n", "n"], v: Tensor["batch", "n"]):
    return jnp.diagonal(m, axis1=1, axis2=2) * v + jnp.trace(m, axis1=-2, axis2=-1)[:, None], jnp.diag(v[0])


TOL = 2e-2


def inputs():
    rng = np.random.default_rng(41)
    img, txt = (rng.standard_normal((16, 8)).astype(np.float32) for _ in range(2))
    m = rng.standard_normal((8, 3, 3)).astype(np.float32)
    v = rng.standard_normal((8, 3)).astype(np.float32)
    return {"clip": (img, txt, np.float32(0.5)), "clip_hybrid": (img, txt), "clip_bf16": (img, txt),
            "per_example": (m, v)}
