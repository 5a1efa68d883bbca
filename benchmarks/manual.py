"""The ``manual`` variants: what an expert writes by hand with ``jax.shard_map``.

Megatron-style tensor parallelism: column-parallel first matmuls (heads, d_ff split),
row-parallel second matmuls with one all-reduce each, a vocab-parallel embedding
(masked local lookup + all-reduce) and a vocab-parallel cross-entropy that never
gathers the logits (max, sum of exp and the picked logit reduced over 'model').
Gradients come from ``jax.grad`` through ``shard_map`` (``check_vma=True``), as an
expert would take them.  Each builder takes the mesh and returns a global callable
with the same signature as the single-device function in ``benchmarks/cases.py``.

Every builder also takes ``comm``: :data:`LAX` (the real collectives) or :data:`FLOOR`,
which makes each collective the identity and returns the per-device function.  The floor computes
wrong numbers on purpose: it is the same per-device arithmetic with no communication at
all, so its step time is what no partitioning of this math can beat on this machine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

__all__ = ["FLOOR", "LAX", "Comm", "ffn", "block", "fsdp_tp", "vocab_ce", "dp_mlp", "lm_loss"]


@dataclass(frozen=True)
class Comm:
    """The collectives a manual program uses."""

    psum: Callable
    pmax: Callable
    pmean: Callable
    all_gather: Callable  # (x, axis_name, axis): tiled


def _none(x, axis_name):
    return x


def _gather(x, axis_name, axis):
    """A weight gathered for its use beside activations split over ``axis_name`` (FSDP): varying, so
    its transpose reduce-scatters the gradient."""
    return jax.lax.all_gather(x, axis_name, axis=axis, tiled=True)


def _copies(x, axis_name, axis):
    """The floor's gather: the same shape, no communication."""
    return jnp.concatenate([x] * jax.lax.axis_size(axis_name), axis=axis)


LAX = Comm(jax.lax.psum, jax.lax.pmax, jax.lax.pmean, _gather)
FLOOR = Comm(_none, _none, _none, _copies)


def _shard(mesh: Mesh, in_specs: tuple, out_specs: P, comm: Comm):
    """The builder's shard_map; with :data:`FLOOR`, the per-device function itself, which the
    caller wraps whole (with its gradient or optimizer step) in one shard_map, so that not
    even the transpose of a replicated input adds a collective."""
    if comm is FLOOR:
        return lambda local: local
    return lambda local: jax.shard_map(local, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=True)


def ffn(mesh: Mesh, comm: Comm = LAX):
    @_shard(mesh, (P("batch"), P(None, "model"), P("model"), P("model", None)), P("batch"), comm)
    def local(x, w1, b1, w2):
        h = jax.nn.gelu(jnp.einsum("bld,df->blf", x, w1) + b1)  # column-parallel: no communication
        return x + comm.psum(jnp.einsum("blf,fd->bld", h, w2), "model")  # row-parallel: one all-reduce

    return local


def _attention(x, norm, wq, wk, wv, wo):
    """Pre-norm causal self-attention on this device's heads; returns a partial sum over 'model'."""
    return _causal_attention(x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * norm, wq, wk, wv, wo)


def _causal_attention(h, wq, wk, wv, wo):
    """Causal self-attention of the normalised ``h`` on this device's heads; a partial sum over 'model'."""
    length = h.shape[1]
    causal = jnp.tril(jnp.ones((length, length), dtype=bool))
    q, k, v = (jnp.einsum("bld,dhk->blhk", h, w) for w in (wq, wk, wv))
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1])
    probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    return jnp.einsum("bhqs,bshk,hkd->bqd", probs, v, wo)


def _layer_norm_ffn(x, norm, w1, w2):
    """Layer norm + GELU feed-forward on this device's d_ff block; a partial sum over 'model'."""
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    h = (x - mu) / jnp.sqrt(var + 1e-5) * norm
    return jnp.einsum("blf,fd->bld", jax.nn.gelu(jnp.einsum("bld,df->blf", h, w1)), w2)


def block(mesh: Mesh, comm: Comm = LAX):
    heads, ff_in, ff_out = P(None, "model", None), P(None, "model"), P("model", None)
    specs = (P("batch"), P(), heads, heads, heads, P("model", None, None), P(), ff_in, ff_out)

    @_shard(mesh, specs, P("batch"), comm)
    def local(x, norm1, wq, wk, wv, wo, norm2, w1, w2):
        x = x + comm.psum(_attention(x, norm1, wq, wk, wv, wo), "model")
        return x + comm.psum(_layer_norm_ffn(x, norm2, w1, w2), "model")

    return local


def _layer_norm(x, scale, bias):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * scale + bias


def _gpt2_block(x, layer, comm: Comm):
    """One GPT-2 block on this device's batch block, heads and d_ff block (FSDP x TP): each weight's
    d_model block is gathered over 'data' right before its use; one all-reduce over 'model' after
    attention and one after the feed-forward."""
    ln1_scale, ln1_bias, wq, wk, wv, wo, ln2_scale, ln2_bias, w1, b1, w2, b2 = layer
    g = comm.all_gather
    h = _layer_norm(x, g(ln1_scale, "data", 0), g(ln1_bias, "data", 0))
    wq, wk, wv = (g(w, "data", 0) for w in (wq, wk, wv))
    x = x + comm.psum(_causal_attention(h, wq, wk, wv, g(wo, "data", 2)), "model")
    h = _layer_norm(x, g(ln2_scale, "data", 0), g(ln2_bias, "data", 0))
    ffn = jnp.einsum("blf,fd->bld", jax.nn.gelu(jnp.einsum("bld,df->blf", h, g(w1, "data", 0)) + b1), g(w2, "data", 1))
    return x + comm.psum(ffn, "model") + g(b2, "data", 0)


def fsdp_tp(mesh: Mesh, comm: Comm = LAX, regather: bool = True):
    """Stacked GPT-2 blocks run by ``jax.lax.scan`` under FSDP over 'data' x TP over 'model': the
    activations split on the batch, every weight's d_model split over 'data' too and gathered one
    layer at a time, in the scan body, right before its use (so JAX's transpose reduce-scatters
    each gradient back to its weight's layout).

    ``regather`` (default, as meshify's ``@mesh(regather=True)``): the backward pass gathers the
    weights again instead of keeping the forward pass's gathered copies (ZeRO-3's trade of bytes for
    memory), see :func:`_regathering`; False keeps them (``@mesh(regather=False)``)."""
    vec, proj = P(None, "data"), P(None, "data", "model", None)
    specs = (P("data"), vec, vec, proj, proj, proj, P(None, "model", None, "data"), vec, vec,
             P(None, "data", "model"), P(None, "model"), P(None, "model", "data"), vec)

    def body(h, layer):
        return _gpt2_block(h, layer, comm), None

    def local(x, *layers):
        x, _ = jax.lax.scan(_regathering(body) if regather else body, x, layers)
        return x

    return _shard(mesh, specs, P("data"), comm)(local)


def _regathering(local):
    """``local`` under ``jax.checkpoint`` with a policy that saves every residual but the result of
    an all_gather: the backward pass recomputes those from the saved blocks, gathering again
    (written out here, not ``mr.regathering``: the hand-written program uses no meshify).
    (A name policy, ``save_anything_except_these_names``, would not do: the unnamed all_gather
    result under the name stays saveable.)"""
    return jax.checkpoint(local, policy=lambda primitive, *_, **__: primitive.name != "all_gather")


def _vocab_start(vocab_local: int):
    return jax.lax.axis_index("model") * vocab_local


def _embed(table, ids, comm: Comm):
    """Vocab-parallel embedding: look up the ids in this device's rows, zeros elsewhere, all-reduce."""
    local = ids - _vocab_start(table.shape[0])
    mine = (local >= 0) & (local < table.shape[0])
    rows = jnp.where(mine[..., None], table[jnp.where(mine, local, 0)], 0.0)
    return comm.psum(rows, "model")


def _cross_entropy(logits, targets, comm: Comm):
    """Vocab-parallel cross-entropy per token; ``logits`` holds this device's vocab block."""
    top = comm.pmax(jax.lax.stop_gradient(logits.max(-1)), "model")  # for stability only
    sum_exp = comm.psum(jnp.exp(logits - top[..., None]).sum(-1), "model")
    local = targets - _vocab_start(logits.shape[-1])
    mine = (local >= 0) & (local < logits.shape[-1])
    picked = jnp.take_along_axis(logits, jnp.where(mine, local, 0)[..., None], axis=-1)[..., 0]
    picked = comm.psum(jnp.where(mine, picked, 0.0), "model")
    return jnp.log(sum_exp) + top - picked


def vocab_ce(mesh: Mesh, comm: Comm = LAX):
    @_shard(mesh, (P("batch"), P("batch"), P("model", None), P(None, "model")), P(), comm)
    def local(tokens, targets, embed, unembed):
        x = _embed(embed, tokens, comm)
        logits = jnp.einsum("bld,dv->blv", jnp.tanh(x), unembed)
        return comm.pmean(_cross_entropy(logits, targets, comm).mean(), "batch")

    return local


def dp_mlp(mesh: Mesh, comm: Comm = LAX):
    @_shard(mesh, (P("batch"), P(), P(), P()), P("batch"), comm)
    def local(x, w1, b1, w2):
        return jax.nn.relu(x @ w1 + b1) @ w2

    return local


def lm_loss(mesh: Mesh, comm: Comm = LAX):
    """``examples/transformer_lm.py``'s loss: Megatron layers, tied vocab-parallel embedding."""
    rep2, heads, ff_in, ff_out = P(), P(None, None, "model", None), P(None, None, "model"), P(None, "model", None)
    specs = (P("batch"), P("batch"), P("model", None), rep2, heads, heads, heads, P(None, "model", None, None),
             rep2, ff_in, ff_out, P())

    @_shard(mesh, specs, P(), comm)
    def local(tokens, targets, embed, norm1, wq, wk, wv, wo, norm2, w1, w2, norm_f):
        x = _embed(embed, tokens, comm)
        for i in range(wq.shape[0]):
            x = x + comm.psum(_attention(x, norm1[i], wq[i], wk[i], wv[i], wo[i]), "model")
            x = x + comm.psum(_layer_norm_ffn(x, norm2[i], w1[i], w2[i]), "model")
        h = x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * norm_f
        logits = jnp.einsum("bld,vd->blv", h, embed)
        return comm.pmean(_cross_entropy(logits, targets, comm).mean(), "batch")

    def loss(tokens, targets, embed, norm1, wq, wk, wv, wo, norm2, w1, w2, norm_f):  # keywords, as optax steps call it
        return local(tokens, targets, embed, norm1, wq, wk, wv, wo, norm2, w1, w2, norm_f)

    return loss
