"""Top-p (nucleus) sampling over a vocab split over 'model', as decoding code writes it: sort the logits
(descending), cumulative softmax, the cutoff logit by take_along_axis, mask and draw; argsort and median along the
split vocab too.  Sort, argsort and median need every entry of each row: the rows are all-gathered (before, refused
with a fix unsplitting the vocab of the whole LM head); float32 and float16, a NaN row and ties."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False  # (sampling: ids)


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model"})
def nucleus(logits: Tensor["batch", "vocab"], key: Tensor[()]):
    sorted_logits = jnp.sort(logits, axis=-1)[:, ::-1]
    cum = jnp.cumsum(jax.nn.softmax(sorted_logits.astype(jnp.float32), axis=-1), axis=-1)
    cutoff_idx = jnp.sum(cum < 0.9, axis=-1, keepdims=True)
    cutoff = jnp.take_along_axis(sorted_logits, cutoff_idx, axis=-1)
    masked = jnp.where(logits < cutoff, -jnp.inf, logits)
    return jax.random.categorical(jax.random.fold_in(jax.random.key(0), key), masked, axis=-1), masked


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model"})
def ranks(logits: Tensor["batch", "vocab"]):
    order = jnp.argsort(-logits, axis=1)
    mid = jnp.median(logits, axis=1)
    return order, mid, logits.sort(axis=1, descending=True)


def inputs():
    rng = np.random.default_rng(63)
    x = (rng.standard_normal((8, 32)) * 3).astype(np.float32)
    x[1, :] = 0.5  # ties everywhere
    x[2, 5] = np.nan
    h = x.astype(np.float16)
    return {"nucleus": (x, np.int32(3)), "ranks": (h,)}
