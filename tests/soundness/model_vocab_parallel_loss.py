"""Model: embedding lookup, tied unembedding and cross-entropy, vocab split, scalar loss with gradients."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(emb: Tensor["vocab", "d"], tokens: Tensor["batch", "length"], targets: Tensor["batch", "length"]) -> Tensor[()]:
    h = jnp.tanh(emb[tokens])
    logits = jnp.einsum("bld,vd->blv", h, emb)
    logz = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return jnp.mean(logz - picked)


def inputs():
    rng = np.random.default_rng(144)
    return (rng.standard_normal((16, 4)).astype(np.float32), rng.integers(0, 16, (4, 3)).astype(np.int32),
            rng.integers(0, 16, (4, 3)).astype(np.int32))
