"""Ids and positions of a narrow integer dtype (int8, uint8, int16) into a dim longer than the dtype's range
(a 256-entry vocab split over 4 devices, blocks of 64).  meshify's lookups compared an int8 id with the size 256 and
subtracted block offsets in the ids' own dtype, where 256 wraps to 0: every int8 lookup along a split vocab came back
NaN or summed several devices' rows, silently; ``dynamic_slice_in_dim`` clamped an int8 start to ``size - n`` (252
wraps to -4) and always read from 0; ``dynamic_index_in_dim`` widened an int8 position before reading it from the
end, where JAX adds the size in int8 (so -1 stays -1 and is clamped to 0); ``one_hot`` of int8 ids missed the
classes past 127, which JAX's iota in int8 wraps to the negative ids (found in session 30; the existing cases used
int8 positions only on dims of 16).  Each now reads the ids as JAX does: ``jnp.take`` adds the size in the ids'
dtype, ``take_along_axis`` and ``x[ids]`` widen first, ``one_hot`` compares in x's dtype, and offsets, comparisons
and clamps are done in int32."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def take_fill(emb: Tensor["vocab", "d"], ids: Tensor["batch"]):
    return jnp.take(emb, ids, axis=0)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def take_clip(emb: Tensor["vocab", "d"], ids: Tensor["batch"]):
    return jnp.take(emb, ids, axis=0, mode="clip")


@mesh(batch=2, model=4, rules={"vocab": "model"})
def lookup(emb: Tensor["vocab", "d"], ids: Tensor["batch"]):
    return emb[ids] * 2.0


@mesh(batch=2, model=4, rules={"vocab": "model"})
def picked(logits: Tensor["batch", "vocab"], ids: Tensor["batch"]):
    return jnp.take_along_axis(logits, ids[:, None], axis=1)[:, 0]


@mesh(batch=2, model=4, rules={"vocab": "model"})
def hot(logits: Tensor["batch", "vocab"], ids: Tensor["batch"]):
    return jnp.sum(logits * jax.nn.one_hot(ids, logits.shape[1]), axis=1)


@mesh(batch=2, model=4, rules={"vocab": None})
def window(logits: Tensor["batch", "vocab"], start: Tensor[()]):
    return jax.lax.dynamic_slice_in_dim(logits, start, 4, axis=1)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def column(logits: Tensor["batch", "vocab"], start: Tensor[()]):
    return jax.lax.dynamic_index_in_dim(logits, start, axis=1, keepdims=False)


def scenario(mod, pick):
    rng = np.random.default_rng(98)
    emb = jnp.asarray(rng.standard_normal((256, 4)).astype(np.float32))
    logits = jnp.asarray(rng.standard_normal((8, 256)).astype(np.float32))
    signed = np.array([0, 5, 100, 127, -1, -100, -128, 64])
    unsigned = np.array([0, 5, 100, 127, 200, 255, 130, 64])
    out = {}
    for dtype in (np.int8, np.uint8, np.int16):
        values = unsigned if dtype == np.uint8 else signed
        for k in range(0, 8, 3):
            ids = jnp.asarray(np.roll(values, k).astype(dtype))
            key = f"{np.dtype(dtype).name}-{k}"
            out[f"take_fill-{key}"] = pick(mod.take_fill)(emb, ids)
            out[f"take_clip-{key}"] = pick(mod.take_clip)(emb, ids)
            out[f"picked-{key}"] = pick(mod.picked)(logits, ids)
            out[f"hot-{key}"] = pick(mod.hot)(logits, ids)
            if dtype != np.int8:  # (x[ids] with int8 ids into 256 entries: JAX itself refuses, OverflowError)
                out[f"lookup-{key}"] = pick(mod.lookup)(emb, ids)
        for v in values:
            start = jnp.asarray(np.array(v).astype(dtype))
            out[f"window-{np.dtype(dtype).name}-{v}"] = pick(mod.window)(logits, start)
            out[f"column-{np.dtype(dtype).name}-{v}"] = pick(mod.column)(logits, start)
    ids = jnp.asarray(signed.astype(np.int8))
    out["grad-picked"] = jax.grad(lambda x: jnp.sum(pick(mod.picked)(x, ids) ** 2))(logits)
    out["grad-take_fill"] = jax.grad(lambda e: jnp.sum(jnp.nan_to_num(pick(mod.take_fill)(e, ids)) ** 2))(emb)
    return out


def inputs():
    return {}
