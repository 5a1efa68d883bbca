"""An Equinox-style GPT on a 2x4 mesh: eqx_gpt_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

import dataclasses
from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class Config(NamedTuple):
    n_heads: int = 8
    eps: float = 1e-5


CONFIG = Config()


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Linear:
    weight: Annotated[jax.Array, "d_in", "d_out"]
    bias: Annotated[jax.Array, "d_out"]

    def __call__(self, x):
        return x @ self.weight + self.bias


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class LayerNorm:
    scale: Annotated[jax.Array, "d_model"]
    bias: Annotated[jax.Array, "d_model"]

    @property
    def dim(self):
        return self.scale.shape[0]

    def __call__(self, x, eps):
        mean = x.sum(-1, keepdims=True) / self.dim
        var = ((x - mean) ** 2).sum(-1, keepdims=True) / self.dim
        return (x - mean) * jax.lax.rsqrt(var + eps) * self.scale + self.bias


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Attention:
    qkv: Annotated[Linear, {"d_in": "d_model", "d_out": "qkv_features"}]
    out: Annotated[Linear, {"d_in": "attn_features", "d_out": "d_model"}]

    def __call__(self, x, n_heads):
        B, T, _ = x.shape
        q, k, v = jnp.split(self.qkv(x), 3, axis=-1)
        q, k, v = (t.reshape(B, T, n_heads, -1) for t in (q, k, v))
        scores = jnp.einsum("bthd,bshd->bhts", q, k) / jnp.sqrt(q.shape[-1])
        causal = jnp.tril(jnp.ones((T, T), dtype=bool))
        scores = jnp.where(causal, scores, -jnp.inf)
        o = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(scores, axis=-1), v)
        return self.out(o.reshape(B, T, -1))


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class MLP:
    fc: Annotated[Linear, {"d_in": "d_model", "d_out": "d_ff"}]
    proj: Annotated[Linear, {"d_in": "d_ff", "d_out": "d_model"}]

    def __call__(self, x):
        return self.proj(jax.nn.gelu(self.fc(x)))


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Block:
    ln1: LayerNorm
    attn: Attention
    ln2: LayerNorm
    mlp: MLP

    def __call__(self, x, config):
        x = x + self.attn(self.ln1(x, config.eps), config.n_heads)
        return x + self.mlp(self.ln2(x, config.eps))


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Transformer:
    embed: Annotated[jax.Array, "vocab", "d_model"]
    pos: Annotated[jax.Array, "positions", "d_model"]
    blocks: list[Block]
    ln_f: LayerNorm

    def __call__(self, tokens, config):
        x = self.embed[tokens] + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x, config)
        return self.ln_f(x, config.eps) @ self.embed.T


@mesh(batch=2, model=4, rules={"qkv_features": "model", "attn_features": "model", "d_ff": "model"})
def eqx_gpt(model: Transformer, tokens: Annotated[jax.Array, "batch", "length"], config: Config = CONFIG):
    return model(tokens, config)
