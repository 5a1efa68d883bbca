"""A ``jax.lax.dynamic_slice`` / ``dynamic_slice_in_dim`` result split along the dim it read, by a hint or by
meeting an array split there: the split is ``mr.local_block`` of the read, a slice of a slice, which XLA:CPU folds
into one slice clamped to the outer bounds, losing JAX's clamping of the user's start (offsets past
``max_len - L`` and negative ones read other rows; left open in session 27).  The starts are clamped where the
read is made (``mr.dynamic_slice``), so the fold is harmless."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "seq": "model"})
def hinted(table: Tensor["max_len", "hd"], offset: Tensor[()], x: Tensor["batch", "seq", "hd"]):
    L, D = x.shape[1], x.shape[2]
    s: Tensor["seq", "hd"] = jax.lax.dynamic_slice(table, (offset, 0), (L, D))
    c: Tensor["seq", "hd"] = jax.lax.dynamic_slice_in_dim(table, offset, L, 0)
    return x * s + c


@mesh(data=2, model=4, rules={"batch": "data", "seq": "model"})
def met(table: Tensor["max_len", "hd"], offset: Tensor[()], x: Tensor["batch", "seq", "hd"]):
    s = jax.lax.dynamic_slice(table, (offset, 0), (x.shape[1], x.shape[2]))
    c = jax.lax.dynamic_slice_in_dim(table, offset, x.shape[1], axis=0, allow_negative_indices=False)
    return x * s - c


@mesh(data=2, model=4, rules={"batch": "data", "seq": "model"})
def traced_starts(table: Tensor["max_len", "wide"], starts: Tensor["two"], x: Tensor["batch", "seq", "hd"]):
    s = jax.lax.dynamic_slice(table, (starts[0], starts[1]), (x.shape[1], x.shape[2]))
    return x + s


def scenario(mod, pick):
    """Offsets inside the table, at its last start, past its end (clamped to 8) and negative (from the end)."""
    rng = np.random.default_rng(91)
    table = rng.standard_normal((16, 4)).astype(np.float32)
    x = rng.standard_normal((2, 8, 4)).astype(np.float32)
    out = {}
    for off in (0, 3, 8, 11, 15, 40, -3, -20):
        for fn in ("hinted", "met"):
            out[f"{fn}-{off}"] = pick(getattr(mod, fn))(table, np.array(off, np.int32), x)
        wide = np.concatenate([table, table], axis=1)
        out[f"traced-{off}"] = pick(mod.traced_starts)(wide, np.array([off, off // 2], np.int32), x)
    return out


def inputs():
    return {}
