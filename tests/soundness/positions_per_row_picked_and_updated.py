"""Several positions per row, as decoding code writes a repetition penalty: ``seen = logits[jnp.arange(B)[:, None],
prev]`` reads each row's entries at its previous tokens (``prev [batch, k]``), and ``logits.at[jnp.arange(B)[:,
None], prev].set(...)`` writes them back; also ``.add`` of a ``[batch, k, d]`` value and ``.set`` of one scalar
(a multi-hot mask).  The vocab (the positions' dim) split over 'model' too: each device reads with a masked local
lookup and writes the positions in its block, dropping the others.  Ids include negatives that wrap, ids below
-size and past the end (read clamped, written nowhere), and repeats.  Before, "with the array index
'jnp.arange(B)[:, None]' beside indices other than ':'", whose fix (``x.at[:, ids]``) does not fit (the RNN
attack, session 24)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model"})
def penalised(logits: Tensor["batch", "vocab"], prev: Tensor["batch", "k"]):
    B = logits.shape[0]
    seen = logits[jnp.arange(B)[:, None], prev]
    out = logits.at[jnp.arange(B)[:, None], prev].set(jnp.where(seen > 0, seen / 1.3, seen * 1.3))
    return jnp.tanh(out)


@mesh(batch=8)
def multi_hot(x: Tensor["batch", "vocab"], prev: Tensor["batch", "k"]):
    mask = jnp.zeros_like(x).at[jnp.arange(x.shape[0])[:, None], prev].set(1.0)
    return mask * x


@mesh(data=2, model=4, rules={"batch": "data", "time": "model"})
def scattered_rows(x: Tensor["batch", "time", "d"], pos: Tensor["batch", "k"], v: Tensor["batch", "k", "d"]):
    rows = jnp.arange(x.shape[0])[:, None]
    picked = x[rows, pos]
    return jnp.sin(x.at[jnp.arange(x.shape[0])[:, None], pos].add(v * picked))


def inputs():
    rng = np.random.default_rng(61)
    prev = rng.integers(-12, 12, (8, 3)).astype(np.int32)
    prev[0] = [-20, 9, 9]  # below -size, past the end, a repeat
    return {"penalised": (rng.standard_normal((8, 8)).astype(np.float32), prev),
            "multi_hot": (rng.standard_normal((8, 8)).astype(np.float32), prev),
            "scattered_rows": (rng.standard_normal((8, 8, 4)).astype(np.float32), prev,
                               rng.standard_normal((8, 3, 4)).astype(np.float32))}
