"""The op corpus, part two: Transformer ops (issue 3) and real-model code (issue 8).

Like ``ops_cases.py``: plain single-device functions with ``Tensor`` hints, each its own
reference, swept by ``tests/test_model_ops.py`` over meshes and rule sets through
``@mesh`` and through converted files.  Beyond float arrays, a case's ``args`` gives
integer ids (:class:`Ids`), PRNG keys (:class:`Key`), bfloat16 activations
(:class:`Floats`) and static arguments (:class:`Static`); parameters hinted with a
NamedTuple class get an instance of it; ``support`` lists the classes and helper
functions the generated module needs (written before the function, in that order).

Generated modules start with ``harness.HEADER``: the imports below are the only globals
a case may use, besides its support.  Rules name the mesh axes ``data`` and ``model``;
on the one-axis mesh ``8`` (axis ``model``) mentions of ``data`` are dropped.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import jax.numpy as xp  # noqa: F401  (generated modules import it: harness.HEADER)
import numpy as np  # noqa: F401
from jax import nn  # noqa: F401
from jax.nn import relu  # noqa: F401
from jax.nn import softmax as sm  # noqa: F401
from jax.numpy import einsum as es  # noqa: F401
from jax.numpy import maximum  # noqa: F401
from jax.numpy import sum as jsum  # noqa: F401

from meshify import Tensor

from .harness import Floats, Ids, Key, Static, case

#: Rule sets, by name.  Each case lists the ones that exercise it.
RULES: dict[str, dict[str, object]] = {
    # Megatron: heads (and the fused head dim), d_ff and the vocabulary over 'model'; batch over 'data'.
    "tp": {"batch": "data", "heads": "model", "d_qkv": "model", "d_ff": "model", "vocab": "model"},
    # The model dim over 'model': norms reduce a split dim, projections leave partial sums.
    "dm": {"batch": "data", "d_model": "model"},
    # The sequence over 'model' (context parallelism): masks and positions must be global.
    "len": {"batch": "data", "length": "model", "kv_length": "model"},
    # Only the queries' sequence over 'model', the keys' whole.
    "qlen": {"batch": "data", "length": "model"},
    # Heads over both axes (8 shards), nothing else split.
    "heads2": {"heads": ("data", "model"), "d_qkv": ("data", "model")},
    # The vocabulary over both axes, the batch whole.
    "vocab2": {"vocab": ("data", "model")},
    # The model dim over both axes: partial over two axes at once.
    "dm2": {"d_model": ("data", "model")},
    # The batch over both axes (data parallelism on 8 devices).
    "flat": {"batch": ("data", "model")},
    # Axes listed against mesh order.
    "rev": {"heads": ("model", "data"), "d_qkv": ("model", "data"), "d_ff": ("model", "data"),
            "vocab": ("model", "data")},
    # Nothing split: the rewrite must be the identity.
    "none": {},
}

#: The meshes the issues name.  A few central cases add the one-axis mesh ``8``; random
#: draws add ``8x1``.
MESHES = ("1x8", "2x4", "4x2")

TOKENS = {"ids": Ids("vocab")}
#: Stacked weights indexed by a fori_loop's traced counter must be jax arrays.
ON_DEVICE = {"w1": Floats(on_device=True), "w2": Floats(on_device=True)}


# -- support: parameter classes and helpers -------------------------------------------------------


class Norm(NamedTuple):
    scale: Tensor["d_model"]
    bias: Tensor["d_model"]


class Mlp(NamedTuple):
    w1: Tensor["d_model", "d_ff"]
    w2: Tensor["d_ff", "d_model"]


class Layer(NamedTuple):
    norm: Norm
    mlp: Mlp


class Stack(NamedTuple):
    scale: Tensor["layers", "d_model"]
    w1: Tensor["layers", "d_model", "d_ff"]
    b1: Tensor["layers", "d_ff"]
    w2: Tensor["layers", "d_ff", "d_model"]


def layer_norm(v, p):
    mu = v.mean(-1, keepdims=True)
    var = ((v - mu) ** 2).mean(-1, keepdims=True)
    return (v - mu) * jax.lax.rsqrt(var + 1e-5) * p.scale + p.bias


def rms_norm(v, scale, eps=1e-6):
    return v * jax.lax.rsqrt(jnp.mean(v * v, axis=-1, keepdims=True) + eps) * scale


def mlp(v, w1, w2):
    return jnp.einsum("...f,fd->...d", jax.nn.gelu(jnp.einsum("...d,df->...f", v, w1)), w2)


def scan_layer(h, p):
    y = jax.nn.gelu(jnp.einsum("bld,df->blf", rms_norm(h, p.scale), p.w1) + p.b1)
    return h + jnp.einsum("blf,fd->bld", y, p.w2), None


def dropout(v, key, rate, train):
    if not train:
        return v
    keep = jax.random.bernoulli(key, 1.0 - rate, v.shape)
    return jnp.where(keep, v / (1.0 - rate), 0.0)


# -- reshape named by a hint ------------------------------------------------------------------------


@case("tp", "len", "heads2", grad=True, meshes=MESHES)
def reshape_split_literal(x: Tensor["batch", "length", "d_qkv"]) -> Tensor["batch", "heads", "length", "d_head"]:
    # Literal sizes become per-shard sizes: 16 // batch shards, 8 // head shards, ...
    h: Tensor["batch", "length", "heads", "d_head"] = x.reshape(16, 24, 8, 4)
    return jnp.tanh(h).transpose(0, 2, 1, 3)


@case("dm", "tp", grad=True, meshes=MESHES)
def reshape_sizes_from_shape(x: Tensor["batch", "length", "d_model"],
                             w: Tensor["d_model", "d_qkv"]) -> Tensor["batch", "length", "d_qkv"]:
    # Under "dm" the reshaped value is a partial sum; sizes come from x.shape and -1.
    b, l, _ = x.shape
    y = jnp.einsum("bld,de->ble", x, w)
    h: Tensor["batch", "length", "heads", "d_head"] = y.reshape(b, l, w.shape[1] // 4, -1)
    z: Tensor["batch", "length", "d_qkv"] = jax.nn.relu(h).reshape(b, l, -1)
    return z


@case("tp", "len", grad=True, meshes=MESHES)
def reshape_function_form(x: Tensor["batch", "length", "d_qkv"]) -> Tensor["batch", "length", "heads", "d_head"]:
    h: Tensor["batch", "length", "heads", "d_head"] = jnp.reshape(x, (x.shape[0], x.shape[1], 8, -1))
    return h * 2.0


@case("tp", "len", grad=True, meshes=MESHES)
def reshape_merge_heads(o: Tensor["batch", "length", "heads", "d_head"],
                        w: Tensor["d_qkv", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    # Heads split: the merged dim is split like its major part, and the product is partial.
    b, l, h, k = o.shape
    z: Tensor["batch", "length", "d_qkv"] = o.reshape(b, l, h * k)
    return z @ w


# -- transpose, swapaxes, .T, moveaxis ----------------------------------------------------------------


@case("tp", "len", grad=True, meshes=MESHES)
def transpose_with_axes(x: Tensor["batch", "length", "heads", "d_head"]) -> Tensor["batch", "heads", "length", "d_head"]:
    a = jnp.transpose(x, (0, 2, 1, 3))
    b = x.transpose(0, 2, 1, 3)
    c = x.transpose((0, 2, 1, 3))
    d = jnp.transpose(x, axes=(0, -2, -3, -1))
    return a + 2.0 * b - c * d


@case("len", "dm", grad=True, meshes=MESHES)
def transpose_reverses(x: Tensor["batch", "length", "d_model"]) -> Tensor["d_model", "length", "batch"]:
    return jnp.transpose(x) + x.transpose() * 0.5 - x.T


@case("tp", "len", grad=True, meshes=MESHES)
def swapaxes_moveaxis(x: Tensor["batch", "length", "heads", "d_head"]) -> Tensor["batch", "heads", "length", "d_head"]:
    a = jnp.swapaxes(x, 1, 2)
    b = x.swapaxes(-3, -2)
    c = jnp.moveaxis(x, 2, 1)
    d = jnp.moveaxis(x, (1, 2), (2, 1))
    e = jnp.moveaxis(jnp.moveaxis(x, -1, 0), 0, -1)
    return a + b * c - d + jnp.swapaxes(e, 1, 2)


@case("dm", "dm2", grad=True, meshes=MESHES)
def transpose_of_partial(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["d_ff", "batch"]:
    # Under "dm" both products are partial sums: transposing carries the pending reduction.
    y = (x @ w).T
    z = jnp.swapaxes(x @ w, 0, 1)
    return y + jnp.tanh(z) + jnp.moveaxis(x @ w, 0, 1)


@case("tp", "dm", grad=True, meshes=MESHES)
def transposed_table(x: Tensor["batch", "length", "d_model"],
                     emb: Tensor["vocab", "d_model"]) -> Tensor["batch", "length", "vocab"]:
    # A tied unembedding: the embedding table, transposed.
    return x @ emb.T


# -- concatenate and stack on unsplit dims --------------------------------------------------------------


@case("tp", "len", grad=True, meshes=MESHES)
def concat_head_dim(q: Tensor["batch", "length", "heads", "d_head"],
                    k: Tensor["batch", "length", "heads", "d_head"]) -> Tensor["batch", "length", "heads", "d_head"]:
    # d_head is never split: joining along it is local; so are slices of it.
    both = jnp.concatenate([q, k], axis=-1)
    rotated = jnp.concatenate((-both[..., 6:], both[..., :6]), axis=3)
    return both[..., :4] * both[..., 4:] + rotated[:, :, :, 2:6]


@case("tp", "dm", grad=True, meshes=MESHES)
def concat_sequences(a: Tensor["batch", "length", "d_model"],
                     b: Tensor["batch", "kv_length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    # Joined along the (unsplit) sequence: the result keeps the first operand's dim names.
    return jnp.tanh(jnp.concatenate([a, b * 2.0], axis=1))


@case("dm", "tp", grad=True, meshes=MESHES)
def stack_and_reduce(x: Tensor["batch", "length", "d_model"], w1: Tensor["d_model", "d_ff"],
                     w2: Tensor["d_model", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    # Under "dm" the stacked products are partial sums: stack and sum carry them.
    s = jnp.stack([x @ w1, x @ w2], axis=0).sum(0)
    m = jnp.stack([jnp.tanh(x @ w1), x @ w2], axis=-1).max(-1)
    return s + m


@case("tp", "len", grad=True, meshes=MESHES)
def stack_named_by_hint(a: Tensor["batch", "length", "d_model"],
                        b: Tensor["batch", "length", "d_model"]) -> Tensor["qkv", "batch", "length", "d_model"]:
    s: Tensor["qkv", "batch", "length", "d_model"] = jnp.stack([a, b, a * b])
    return s


# -- arrays built from dim sizes: positions and masks are global -----------------------------------------


@case("len", "dm", grad=True, meshes=MESHES)
def sinusoid_positions(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    pos = jnp.arange(x.shape[1], dtype=jnp.float32)[:, None]
    freq = jnp.exp(-jnp.arange(x.shape[2], dtype=jnp.float32) / x.shape[2])[None, :]
    even = jnp.arange(x.shape[2]) % 2 == 0
    return x + jnp.where(even, jnp.sin(pos * freq), jnp.cos(pos * freq))


@case("len", "dm", grad=True, meshes=MESHES)
def filled_from_sizes(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    b, l, d = x.shape
    z = jnp.zeros((b, l, d))
    o = jnp.ones(x.shape, dtype=jnp.float32)
    f = jnp.full((x.shape[1], x.shape[2]), 0.5)
    n = jnp.zeros_like(x) + jnp.ones_like(x) * 2.0 + jnp.full_like(x, 0.25)
    valid = jnp.arange(l) < 10
    ramp = jnp.arange(d, dtype=jnp.float32) / d
    return (x * o + z + f + n) * valid[:, None] + ramp


@case("len", "tp", grad=True, meshes=MESHES)
def causal_mask_from_aranges(q: Tensor["batch", "length", "heads", "d_head"],
                             k: Tensor["batch", "kv_length", "heads", "d_head"],
                             v: Tensor["batch", "kv_length", "heads", "d_head"]) -> Tensor["batch", "length", "heads", "d_head"]:
    # Under "len" both sequences are split: each device compares global positions.
    i = jnp.arange(q.shape[1])
    j = jnp.arange(k.shape[1])
    mask = i[:, None] >= j[None, :]
    band = jnp.abs(i[:, None] - j[None, :]) <= 6
    scores = jnp.einsum("blhd,bmhd->bhlm", q, k) / jnp.sqrt(q.shape[-1])
    probs = jax.nn.softmax(jnp.where(mask & band, scores, -1e9), axis=-1)
    return jnp.einsum("bhlm,bmhd->blhd", probs, v)


@case("qlen", "tp", grad=True, meshes=MESHES)
def causal_mask_triu_bias(q: Tensor["batch", "length", "heads", "d_head"],
                          k: Tensor["batch", "kv_length", "heads", "d_head"]) -> Tensor["batch", "heads", "length", "kv_length"]:
    bias = jnp.triu(jnp.full((q.shape[1], k.shape[1]), -1e9), k=1)
    keep = jnp.tril(jnp.ones((q.shape[1], k.shape[1])), -2)
    scores = jnp.einsum("blhd,bmhd->bhlm", q, k) * keep + bias
    return jax.nn.log_softmax(scores, axis=-1)


@case("len", "tp", grad=True, meshes=MESHES)
def positions_pinned_split(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    # A hint slices the global arange: each shard holds its global positions.
    pos: Tensor["length"] = jnp.arange(x.shape[1])
    later = (pos[:, None] >= jnp.arange(x.shape[1])[None, :]).sum(-1)
    return x * later[:, None] + pos[:, None] * 0.01


# -- basic indexing -------------------------------------------------------------------------------------


@case("tp", "len", grad=True, meshes=MESHES)
def index_unsplit_dims(x: Tensor["batch", "length", "heads", "d_head"]) -> Tensor["batch", "length", "heads"]:
    a = x[..., 0]
    b = x[:, :, :, 1:3].sum(-1)
    c = x[..., ::2].max(-1)
    d = x[:, :, :, -1]
    return a + b * c - d


@case("dm", "dm2", grad=True, meshes=MESHES)
def index_new_axes(x: Tensor["batch", "length", "d_model"], g: Tensor["d_model"]) -> Tensor["batch", "length", "d_model"]:
    first = x[:, 0][:, None]
    head = x[:, :1, :]
    return x * g[None, None, :] + first * head + g[None][0] - x[:, None][:, 0]


@case("dm2", "heads2", grad=True, meshes=MESHES)
def index_batch_row(x: Tensor["batch", "length", "d_model"]) -> Tensor["length", "d_model"]:
    # The batch is whole under these rules: an int and a slice on it.
    return x[0] * x[-1] + x[2:5].sum(0)


@case("dm", "dm2", grad=True, meshes=MESHES)
def index_partial(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    # Indexing a partial sum keeps the pending reduction.
    h = (x @ w)[:, None, :]
    return h[:, 0] * 2.0 + (x @ w)[..., ::-1]


# -- lookups on a split table ------------------------------------------------------------------------


@case("tp", "vocab2", "dm", grad=True, args=TOKENS, meshes=MESHES)
def embedding_lookup(ids: Tensor["batch", "length"], emb: Tensor["vocab", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    return emb[ids]


@case("tp", "dm", grad=True, args=TOKENS, meshes=MESHES)
def embedding_then_layers(ids: Tensor["batch", "length"], emb: Tensor["vocab", "d_model"],
                          pos: Tensor["length", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    # The lookup's pending psum rides through scaling, then meets a whole addend.
    x = emb[ids] * 2.0 + pos
    return jnp.tanh(x) @ w


@case("tp", "rev", grad=True, args=TOKENS, meshes=MESHES)
def take_axis0(ids: Tensor["batch", "length"], emb: Tensor["vocab", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    first = jnp.take(emb, ids[:, 0], axis=0)
    return jnp.take(emb, ids, axis=0) - first[:, None, :]


@case("tp", "vocab2", grad=True, args={"targets": Ids("vocab")}, meshes=MESHES)
def take_along_vocab(logits: Tensor["batch", "length", "vocab"],
                     targets: Tensor["batch", "length"]) -> Tensor["batch", "length"]:
    return jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]


@case("len", "dm", grad=True, args={"idx": Ids("length")}, meshes=MESHES)
def take_along_length(x: Tensor["batch", "length", "d_model"],
                      idx: Tensor["batch", "kv_length", "d_model"]) -> Tensor["batch", "kv_length", "d_model"]:
    # Gathering positions along a split sequence: a masked local pick plus a psum.
    return jnp.take_along_axis(x, idx, axis=1)


@case("tp", "rev", grad=True, args={"labels": Ids("vocab")}, meshes=MESHES)
def one_hot_split_depth(labels: Tensor["batch", "length"],
                        logits: Tensor["batch", "length", "vocab"]) -> Tensor["batch", "length"]:
    onehot = jax.nn.one_hot(labels, logits.shape[-1])
    return jnp.sum(onehot * jax.nn.log_softmax(logits, axis=-1), axis=-1)


@case("tp", "dm", grad=True, args=TOKENS, meshes=MESHES)
def one_hot_embedding(ids: Tensor["batch", "length"], emb: Tensor["vocab", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    return jnp.einsum("blv,vd->bld", jax.nn.one_hot(ids, emb.shape[0], dtype=jnp.float32), emb)


# -- norms over a split model dim --------------------------------------------------------------------------


@case("dm", "dm2", grad=True, meshes=(*MESHES, "8"))
def layer_norm_split(x: Tensor["batch", "length", "d_model"], scale: Tensor["d_model"],
                     bias: Tensor["d_model"]) -> Tensor["batch", "length", "d_model"]:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * scale + bias


@case("dm", "dm2", grad=True, meshes=(*MESHES, "8"))
def rms_norm_split(x: Tensor["batch", "length", "d_model"], scale: Tensor["d_model"]) -> Tensor["batch", "length", "d_model"]:
    return x * jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + 1e-6) * scale


@case("tp", "dm", grad=True, meshes=MESHES)
def norm_of_partial(x: Tensor["batch", "d_ff"], w: Tensor["d_ff", "d_model"],
                    scale: Tensor["d_model"]) -> Tensor["batch", "d_model"]:
    # A projection's output normalised over d_model: a partial sum under "tp", split under "dm".
    y = x @ w
    var = jnp.mean(y * y, axis=-1, keepdims=True) - jnp.mean(y, axis=-1, keepdims=True) ** 2
    return (y - y.mean(-1, keepdims=True)) / jnp.sqrt(var + 1e-5) * scale


# -- attention with heads split ---------------------------------------------------------------------------


@case("tp", "len", "dm", grad=True, meshes=(*MESHES, "8"))
def multi_head_attention(x: Tensor["batch", "length", "d_model"], wq: Tensor["d_model", "heads", "d_head"],
                         wk: Tensor["d_model", "heads", "d_head"], wv: Tensor["d_model", "heads", "d_head"],
                         wo: Tensor["heads", "d_head", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    q = jnp.einsum("bld,dhk->blhk", x, wq)
    k = jnp.einsum("bld,dhk->blhk", x, wk)
    v = jnp.einsum("bld,dhk->blhk", x, wv)
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) * q.shape[-1] ** -0.5
    causal = jnp.tril(jnp.ones((x.shape[1], x.shape[1]), dtype=bool))
    probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    out = jnp.einsum("bhqs,bshk->bqhk", probs, v)
    return jnp.einsum("bqhk,hkd->bqd", out, wo)


@case("tp", "heads2", grad=True, meshes=MESHES)
def attention_fused_projections(x: Tensor["batch", "length", "d_model"], wqkv: Tensor["d_model", "qkv", "heads", "d_head"],
                                wo: Tensor["d_qkv", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    # Stacked q/k/v indexed by int, heads moved with swapaxes, merged back by a reshape.
    b, l, _ = x.shape
    qkv = jnp.einsum("bld,dthk->tbhlk", x, wqkv)
    q, k, v = qkv[0], qkv[1], qkv[2]
    probs = jax.nn.softmax(q @ jnp.swapaxes(k, -1, -2) / jnp.sqrt(q.shape[-1]), axis=-1)
    o = jnp.swapaxes(probs @ v, 1, 2)
    merged: Tensor["batch", "length", "d_qkv"] = o.reshape(b, l, -1)
    return merged @ wo


# -- vocab-parallel cross-entropy ------------------------------------------------------------------


@case("tp", "vocab2", "dm", grad=True, args={"ids": Ids("vocab"), "targets": Ids("vocab")},
      meshes=MESHES)
def vocab_parallel_cross_entropy(ids: Tensor["batch", "length"], targets: Tensor["batch", "length"],
                                 emb: Tensor["vocab", "d_model"], unemb: Tensor["d_model", "vocab"]) -> Tensor[()]:
    x = emb[ids]
    logits = jnp.einsum("bld,dv->blv", jnp.tanh(x), unemb)
    picked = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - picked)


@case("tp", "vocab2", grad=True, args={"ids": Ids("vocab"), "targets": Ids("vocab")}, meshes=MESHES)
def tied_one_hot_cross_entropy(ids: Tensor["batch", "length"], targets: Tensor["batch", "length"],
                               emb: Tensor["vocab", "d_model"]) -> Tensor[()]:
    logits = jnp.einsum("bld,vd->blv", jnp.take(emb, ids, axis=0), emb)
    labels = jax.nn.one_hot(targets, logits.shape[-1])
    return -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(logits, axis=-1), axis=-1))


# -- mixed precision: bf16 activations, f32 parameters ----------------------------------------------


@case("tp", "dm", grad=True, args={"x": Floats("bfloat16")}, precision="bfloat16", meshes=MESHES)
def mixed_precision_block(x: Tensor["batch", "length", "d_model"], w1: Tensor["d_model", "d_ff"],
                          w2: Tensor["d_ff", "d_model"], scale: Tensor["d_model"]) -> Tensor["batch", "length", "d_model"]:
    # Products in bf16 (collectives in bf16), the norm in f32, the result back in bf16.
    h = jax.nn.gelu(jnp.einsum("bld,df->blf", x, w1.astype(x.dtype)))
    y = jnp.einsum("blf,fd->bld", h, w2.astype(jnp.bfloat16)).astype(jnp.float32)
    return (y * jax.lax.rsqrt(jnp.mean(y * y, -1, keepdims=True) + 1e-6) * scale).astype(x.dtype)


@case("tp", "len", grad=True, args={"x": Floats("bfloat16")}, precision="bfloat16", meshes=MESHES)
def mixed_precision_logits(x: Tensor["batch", "length", "d_model"],
                           unemb: Tensor["d_model", "vocab"]) -> Tensor["batch", "length", "vocab"]:
    # bf16 logits, f32 softmax statistics.
    logits = jnp.einsum("bld,dv->blv", x, unemb.astype(jnp.bfloat16))
    return jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)


# -- helpers, pytrees, loops, static flags -----------------------------------------------------------


@case("tp", "len", grad=True, support=(rms_norm, mlp), meshes=MESHES)
def helpers_at_two_layouts(x: Tensor["batch", "length", "d_model"], scale: Tensor["d_model"],
                           w1: Tensor["d_model", "d_ff"], w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    # rms_norm and mlp run on x, then on its [length, batch, d_model] transpose: two versions each.
    h = x + mlp(rms_norm(x, scale), w1, w2)
    t = jnp.swapaxes(h, 0, 1)
    return h + jnp.swapaxes(mlp(rms_norm(t, scale, eps=1e-5), w1, w2), 0, 1)


@case("tp", "dm", grad=True, support=(Norm, Mlp, Layer, layer_norm), meshes=MESHES)
def pytree_params(x: Tensor["batch", "length", "d_model"], p: Layer) -> Tensor["batch", "length", "d_model"]:
    h = layer_norm(x, p.norm)
    return x + jnp.einsum("blf,fd->bld", jax.nn.gelu(jnp.einsum("bld,df->blf", h, p.mlp.w1)), p.mlp.w2)


@case("tp", "dm", grad=True, support=(Stack, rms_norm, scan_layer), meshes=MESHES)
def scan_over_layers(x: Tensor["batch", "length", "d_model"], params: Stack) -> Tensor["batch", "length", "d_model"]:
    h, _ = jax.lax.scan(scan_layer, x, params)
    return h


@case("dm", "tp", grad=True, meshes=MESHES)
def scan_lambda_collects(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
                         w2: Tensor["layers", "d_ff", "d_model"]) -> tuple[Tensor["batch", "d_model"], Tensor["layers", "batch"]]:
    h, norms = jax.lax.scan(lambda h, p: (h + jnp.tanh(h @ p[0]) @ p[1], jnp.sum(h * h, axis=-1)), x, (w1, w2))
    return h, norms


@case("tp", "dm", grad=True, args=ON_DEVICE, meshes=MESHES)
def fori_loop_layers(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
                     w2: Tensor["layers", "d_ff", "d_model"]) -> Tensor["batch", "d_model"]:
    return jax.lax.fori_loop(0, w1.shape[0], lambda i, h: h + jnp.tanh(h @ w1[i]) @ w2[i], x)


@case("dm", "flat", grad=True, args=ON_DEVICE, support=(mlp,), meshes=MESHES)
def fori_loop_literal_bounds(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
                             w2: Tensor["layers", "d_ff", "d_model"]) -> Tensor["batch", "d_model"]:
    return jax.lax.fori_loop(0, 3, lambda i, h: h + mlp(h, w1[i], w2[i]) * 0.5, x)


@case("tp", "dm", grad=True, meshes=MESHES)
def python_for_layers(x: Tensor["batch", "length", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
                      w2: Tensor["layers", "d_ff", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    for i in range(w1.shape[0]):
        x = x + jnp.einsum("blf,fd->bld", jax.nn.relu(jnp.einsum("bld,df->blf", x, w1[i])), w2[i])
    return x


@case("dm", "tp", grad=True, support=(rms_norm, mlp), meshes=MESHES)
def python_for_helpers(x: Tensor["batch", "length", "d_model"], scale: Tensor["d_model"],
                       w1: Tensor["d_model", "d_ff"], w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    for _ in range(3):
        x = x + mlp(rms_norm(x, scale), w1, w2) * 0.5
    return x


@case("tp", "dm", grad=True, args={"use_bias": Static(True), "act": Static("gelu")}, meshes=MESHES)
def static_flags(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], b: Tensor["d_ff"], use_bias: bool,
                 act: str) -> Tensor["batch", "d_ff"]:
    h = jnp.tanh(x @ w)
    if use_bias:
        h = h + b
    if act == "gelu":
        h = jax.nn.gelu(h)
    elif act == "relu":
        h = jax.nn.relu(h)
    else:
        h = -h
    return h


@case("dm", "flat", grad=True, args={"use_bias": Static(False), "act": Static("tanh")}, meshes=MESHES)
def static_flags_other_branches(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], b: Tensor["d_ff"],
                                use_bias: bool, act: str) -> Tensor["batch", "d_ff"]:
    h = jnp.tanh(x @ w)
    if use_bias:
        h = h + b
    if act == "gelu":
        h = jax.nn.gelu(h)
    else:
        h = jnp.tanh(h) * b
    return h


# -- randomness, split ---------------------------------------------------------------------------------


@case("len", "tp", args={"key": Key(0)}, exact=True, meshes=(*MESHES, "8x1"))
def random_draws(x: Tensor["batch", "length", "d_model"],
                 key: Tensor[()]) -> tuple[Tensor["batch", "length", "d_model"], Tensor["batch", "length"]]:
    # Drawn for the global shape: bit-identical to one device, whatever the layout.  (Only
    # the draws themselves: arithmetic on them may fuse differently even on one device.)
    k1, k2 = jax.random.split(key)
    noise = jax.random.normal(k1, x.shape)
    keep = jax.random.bernoulli(k2, 0.8, (x.shape[0], x.shape[1]))
    return noise, keep


@case("dm", "len", grad=True, args={"key": Key(1), "train": Static(True)}, support=(dropout,), meshes=MESHES)
def dropout_train(x: Tensor["batch", "length", "d_model"], w: Tensor["d_model", "d_ff"], key: Tensor[()],
                  train: bool) -> Tensor["batch", "length", "d_ff"]:
    k1, k2 = jax.random.split(key)
    h = dropout(jnp.einsum("bld,df->blf", x, w), k1, 0.25, train)
    return dropout(jnp.tanh(h), k2, 0.5, train)


@case("tp", "dm", grad=True, args={"key": Key(2), "train": Static(False)}, support=(dropout,), meshes=MESHES)
def dropout_eval(x: Tensor["batch", "length", "d_model"], w: Tensor["d_model", "d_ff"], key: Tensor[()],
                 train: bool) -> Tensor["batch", "length", "d_ff"]:
    return dropout(jnp.einsum("bld,df->blf", x, w), key, 0.25, train)


@case("len", "flat", grad=True, meshes=MESHES)
def split_sections(x: Tensor["batch", "length", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    a, b, c = jnp.split(x, 3, axis=-1)
    return a * jax.nn.sigmoid(b) + c


@case("dm", "tp", grad=True, meshes=MESHES)
def split_indices_and_glu(x: Tensor["batch", "length", "d_model"],
                          w: Tensor["d_model", "kv_length"]) -> Tensor["batch", "length", "kv_length"]:
    # Under "dm" the split value is a partial sum; under "tp" the sequence is whole.
    first, middle, last = jnp.split(x, [8, 16], axis=1)
    gate, up = jnp.split(x @ w, 2, axis=-1)
    glu = jax.nn.silu(gate) * up
    return jnp.concatenate([first + last, middle, first], axis=1) @ w + jnp.concatenate([glu, glu], axis=-1)
