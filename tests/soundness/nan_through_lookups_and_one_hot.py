"""NaN and inf in a table read by ids along a split vocab: ``take_along_axis``, ``jnp.take``, ``x[ids]``,
``jax.nn.one_hot`` times the logits summed over the vocab, and ``logsumexp`` beside them.  A NaN in the entry
an id picks must come out NaN; a NaN in an entry no id picks must not leak into the rows of other devices'
blocks (a masked lookup that multiplies by a 0/1 mask would spread it), and ``inf`` likewise.

Both sides run under ``jax.jit``: XLA rewrites ``x * one_hot(...)`` into a select on one device too, so the
jitted single-device program drops ``NaN * 0`` where the eager one keeps it; meshify's program is always
compiled, and it must equal the compiled single-device program (found by an attack in session 30, where the
eager ``.reference`` gave NaN and meshify, like ``jax.jit(.reference)``, a number)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def picks(logits: Tensor["batch", "vocab"], ids: Tensor["batch"]):
    chosen = jnp.take_along_axis(logits, ids[:, None], axis=1)[:, 0]
    hot = jnp.sum(logits * jax.nn.one_hot(ids, logits.shape[1], dtype=logits.dtype), axis=1)
    rows = logits[jnp.arange(logits.shape[0]), ids]
    return chosen, hot, rows, jax.nn.logsumexp(logits, axis=1) - chosen


@mesh(model=8, rules={"vocab": "model", "batch": None})
def table(emb: Tensor["vocab", "d"], ids: Tensor["batch"]):
    return jnp.take(emb, ids, axis=0), emb[ids].sum(axis=1), jnp.take(emb, ids, axis=0, mode="fill", fill_value=-1.0)


def _logits():
    rng = np.random.default_rng(11)
    logits = rng.standard_normal((8, 256)).astype(np.float32)
    logits[3, 7] = np.nan     # row 3 picks 127 (another device's block): must stay finite in chosen/rows
    logits[1, 5] = np.nan     # row 1 picks 5: NaN everywhere
    logits[2, 200] = np.inf   # row 2 picks 100
    logits[6, 64] = -np.inf   # row 6 picks -128 (= 128)
    return logits


def _ids():
    return np.array([0, 5, 100, 127, -1, -100, -128, 64], np.int32)


def inputs():
    return {}


def scenario(mod, pick):
    logits, ids = jnp.asarray(_logits()), jnp.asarray(_ids())
    emb = np.random.default_rng(12).standard_normal((256, 16)).astype(np.float32)
    emb[7, 3] = np.nan
    emb[255, 0] = np.inf
    emb = jnp.asarray(emb)
    table_ids = jnp.asarray(np.array([7, 1, 255, 300, -1, 0, 8, 128], np.int32))
    out = [jax.jit(pick(mod.picks))(logits, ids), jax.jit(pick(mod.table))(emb, table_ids)]
    out.append(jax.jit(jax.grad(lambda x: jnp.nansum(pick(mod.picks)(x, ids)[0])))(logits))
    return out
