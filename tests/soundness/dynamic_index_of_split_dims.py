"""``jax.lax.dynamic_index_in_dim`` and ``dynamic_update_index_in_dim`` at a traced position of a split dim (a
decoding step reading or writing one position of a sequence split over devices).  Both were refused (MSH030:
"along split dim"; the update had no rule at all) while ``x[:, pos]`` worked.  The device whose block holds the
position, clamped as JAX clamps it (negatives from the end unless ``allow_negative_indices=False``), reads it (a
partial sum, zeros elsewhere) or writes it; the entry read gets the gradient, as JAX's slice gives it even for a
clamped position (a masked lookup's ``x[ids]`` would give none)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def read(x: Tensor["batch", "d"], off: Tensor[()]):
    one = jax.lax.dynamic_index_in_dim(x, off, axis=1, keepdims=False)
    kept = jax.lax.dynamic_index_in_dim(jnp.tanh(x), off, 1)
    return one * 2.0, x * kept


@mesh(data=8, rules={"d": "data"})
def read_no_negative(x: Tensor["batch", "d"], off: Tensor[()]):
    return jnp.sin(jax.lax.dynamic_index_in_dim(x, off, -1, False, allow_negative_indices=False))


@mesh(batch=2, model=4, rules={"d": "model"})
def read_partial_rows(x: Tensor["batch", "d"], w: Tensor["d", "f"], off: Tensor[()]):
    h = x @ w  # a partial sum over 'model'
    return jax.lax.dynamic_index_in_dim(h, off, axis=0)


@mesh(batch=2, model=4, rules={"d": "model"})
def write(x: Tensor["batch", "d"], row: Tensor["d"], off: Tensor[()]) -> Tensor["batch", "d"]:
    y = jax.lax.dynamic_update_index_in_dim(x, row, off, axis=0)
    return jax.lax.dynamic_update_index_in_dim(y * 1.5, row[None, :] * 2.0, off - 1, 0)


@mesh(batch=2, model=4, rules={"d": "model"})
def write_column(x: Tensor["batch", "d"], col: Tensor["batch"], off: Tensor[()]) -> Tensor["batch", "d"]:
    y = jax.lax.dynamic_update_index_in_dim(x, jnp.exp(col), off, axis=1)
    return jax.lax.dynamic_update_index_in_dim(y, col * 0.0, off + 3, axis=1, allow_negative_indices=False)


@mesh(data=8, rules={"d": "data"})
def write_number(v: Tensor["d"], off: Tensor[()]) -> Tensor["d"]:
    return jax.lax.dynamic_update_index_in_dim(jnp.tanh(v), 0.0, off, 0) * v


@mesh(batch=2, model=4, rules={"d": "model"})
def mask_column(m: Tensor["batch", "d"], off: Tensor[()]):
    """A bool mask's column read and written back (its partial sum is an or: it came back int32, session 29)."""
    r = jax.lax.dynamic_index_in_dim(m, off, 1, False)
    return r, jax.lax.dynamic_update_index_in_dim(m, r, off + 1, 1), m[:, off]


def scenario(mod, pick):
    """Positions inside, at the edges, past the end and negative (int32 and int8), values and gradients."""
    rng = np.random.default_rng(93)
    x = jnp.asarray(rng.standard_normal((4, 16)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((16, 8)).astype(np.float32))
    row = jnp.asarray(rng.standard_normal((16,)).astype(np.float32))
    col = jnp.asarray(rng.standard_normal((4,)).astype(np.float32))
    out = {}
    for off in (0, 2, 3, 5, 15, 16, 40, -1, -5, -17, -100):
        for dtype in (np.int32, np.int8):
            o = jnp.asarray(np.array(off, dtype))
            key = f"{off}-{np.dtype(dtype).name}"
            out[f"read-{key}"] = pick(mod.read)(x, o)
            out[f"read_no_negative-{key}"] = pick(mod.read_no_negative)(x, o)
            out[f"read_partial_rows-{key}"] = pick(mod.read_partial_rows)(x, w, o)
            out[f"write-{key}"] = pick(mod.write)(x, row, o)
            out[f"write_column-{key}"] = pick(mod.write_column)(x, col, o)
            out[f"write_number-{key}"] = pick(mod.write_number)(row, o)
            out[f"mask_column-{key}"] = pick(mod.mask_column)(x > 0.3, o)
        o = jnp.asarray(np.array(off, np.int32))
        out[f"grad-read-{off}"] = jax.grad(lambda x: sum(jnp.sum(jnp.cos(r)) for r in pick(mod.read)(x, o)))(x)
        out[f"grad-read_no_negative-{off}"] = jax.grad(lambda x: jnp.sum(pick(mod.read_no_negative)(x, o)))(x)
        out[f"grad-read_partial_rows-{off}"] = jax.grad(
            lambda x, w: jnp.sum(pick(mod.read_partial_rows)(x, w, o) ** 2), argnums=(0, 1))(x, w)
        out[f"grad-write-{off}"] = jax.grad(lambda x, r: jnp.sum(jnp.sin(pick(mod.write)(x, r, o))),
                                            argnums=(0, 1))(x, row)
        out[f"grad-write_number-{off}"] = jax.grad(lambda v: jnp.sum(pick(mod.write_number)(v, o) ** 2))(row)
        out[f"grad-write_column-{off}"] = jax.grad(lambda x, c: jnp.sum(pick(mod.write_column)(x, c, o) ** 2),
                                                   argnums=(0, 1))(x, col)
    return out


def inputs():
    return {}
