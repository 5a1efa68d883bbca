"""Contrastive losses whose labels are an identity the size of the batch (``jnp.eye(logits.shape[0])``): SigLIP's
``2 * eye(n) - ones((n, n))`` against batch-by-batch logits of a data-parallel batch, big_vision's soft labels over
the embed dim split too, ``jnp.identity``.  The identity is named by the dims its size reads (``[batch, batch]``).
Before, "cannot infer the dims of jnp.eye(n)" (the CLIP attack: a naming hint was forced)."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def siglip(img: Tensor["batch", "embed"], txt: Tensor["batch", "embed"], t: Tensor[()], b: Tensor[()]):
    logits = img @ txt.T * t + b
    n = logits.shape[0]
    labels = 2 * jnp.eye(n) - jnp.ones((n, n))
    return -jnp.mean(jax.nn.log_sigmoid(labels * logits))


@mesh(batch=2, model=4, rules={"embed": "model"})
def big_vision(img: Tensor["batch", "embed"], txt: Tensor["batch", "embed"]):
    logits = jnp.einsum("ie,je->ij", img, txt)
    labels = jnp.eye(logits.shape[0], dtype=logits.dtype)
    both = optax.softmax_cross_entropy(logits, labels) + optax.softmax_cross_entropy(logits.T, jnp.identity(len(img)))
    return jnp.mean(both)


def inputs():
    rng = np.random.default_rng(29)
    img, txt = (rng.standard_normal((8, 4)).astype(np.float32) for _ in range(2))
    return {"siglip": (img, txt, np.float32(2.0), np.float32(-1.0)), "big_vision": (img, txt)}
