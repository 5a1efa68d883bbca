"""A slice leaving one entry (``top_k(logits, k)[0][:, -1:]``, ``h[:, -1:]``, ``x[:, :1]``) broadcasts as a keepdims
result does: top-k filtering of logits split over the vocab (the k-th largest of each row, broadcast against the
split row), the last position's hidden state projected by a vocab-parallel head, the first column subtracted from
every column.  Before, the one-entry dim lined up with the split ``vocab`` as if it had its size, and the call
failed with "cannot split axis 1 of a [2, 1] array" (a fix that could not help); a return hint may name it."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def top_k_filter(logits: Tensor["batch", "vocab"]) -> Tensor["batch", "vocab"]:
    kth = jax.lax.top_k(logits, 3)[0][:, -1:]
    filtered = jnp.where(logits < kth, -1e9, logits)
    return jax.nn.log_softmax(filtered + logits[:, :1], axis=-1)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def last_logits(h: Tensor["batch", "seq", "d"], w: Tensor["d", "vocab"]) -> Tensor["batch", "last", "vocab"]:
    return jnp.tanh(h[:, -1:, :]) @ w


@mesh(batch=8)
def centred(x: Tensor["batch", "cols"]):
    return x - x[:, 0:1], (x[:, -1:] * x).sum(axis=0)


def inputs():
    rng = np.random.default_rng(43)
    logits = rng.standard_normal((4, 32)).astype(np.float32)
    h, w = rng.standard_normal((4, 6, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
    return {"top_k_filter": (logits,), "last_logits": (h, w), "centred": (rng.standard_normal((8, 5)).astype(np.float32),)}
