"""GPT-2 on a 2x4 mesh: gpt2_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class Config(NamedTuple):
    heads: int = 8
    eps: float = 1e-5


DEFAULT_CONFIG = Config()


class LayerNorm(NamedTuple):
    scale: Annotated[jax.Array, "d_model"]
    bias: Annotated[jax.Array, "d_model"]


class Block(NamedTuple):
    ln1: LayerNorm
    w_qkv: Annotated[jax.Array, "d_model", "qkv", "heads", "d_head"]
    w_out: Annotated[jax.Array, "heads", "d_head", "d_model"]
    ln2: LayerNorm
    w_fc: Annotated[jax.Array, "d_model", "d_ff"]
    b_fc: Annotated[jax.Array, "d_ff"]
    w_proj: Annotated[jax.Array, "d_ff", "d_model"]
    b_proj: Annotated[jax.Array, "d_model"]


class GPT2(NamedTuple):
    wte: Annotated[jax.Array, "vocab", "d_model"]
    wpe: Annotated[jax.Array, "positions", "d_model"]
    blocks: tuple[Block, ...]
    ln_f: LayerNorm


def layer_norm(x, p, eps):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * p.scale + p.bias


def causal_attention(x, p, cfg):
    qkv = jnp.einsum("btd,dshk->sbthk", x, p.w_qkv)
    q, k, v = qkv[0], qkv[1], qkv[2]
    t = x.shape[1]
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1]).astype(x.dtype)
    mask = jnp.tril(jnp.ones((t, t), dtype=bool))
    probs = jax.nn.softmax(jnp.where(mask, scores, jnp.finfo(x.dtype).min), axis=-1)
    return jnp.einsum("bhqs,bshk,hkd->bqd", probs, v, p.w_out)


def mlp(x, p):
    return jax.nn.gelu(x @ p.w_fc + p.b_fc) @ p.w_proj + p.b_proj


@mesh(batch=2, model=4, rules={"heads": "model", "d_ff": "model", "vocab": "model"})
def gpt2(params: GPT2, tokens: Annotated[jax.Array, "batch", "length"], cfg: Config = DEFAULT_CONFIG) -> Annotated[jax.Array, "batch", "length", "vocab"]:
    """Next-token logits of ``tokens``; the head is tied to the token embedding."""
    x = params.wte[tokens] + params.wpe[: tokens.shape[1]]
    stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *params.blocks)

    def body(h, block):
        h = h + causal_attention(layer_norm(h, block.ln1, cfg.eps), block, cfg)
        h = h + mlp(layer_norm(h, block.ln2, cfg.eps), block)
        return h, None

    x, _ = jax.lax.scan(body, x, stacked)
    x = layer_norm(x, params.ln_f, cfg.eps)
    return x @ params.wte.T
