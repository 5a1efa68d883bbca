"""An Equinox-style GPT as pure-JAX code writes one: pytree dataclass modules with __call__, a property, submodules."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    n_heads: int = 8
    eps: float = 1e-5


CONFIG = Config()


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Linear:
    weight: jax.Array
    bias: jax.Array

    def __call__(self, x):
        return x @ self.weight + self.bias


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class LayerNorm:
    scale: jax.Array
    bias: jax.Array

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
    qkv: Linear
    out: Linear

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
    fc: Linear
    proj: Linear

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
    embed: jax.Array
    pos: jax.Array
    blocks: list[Block]
    ln_f: LayerNorm

    def __call__(self, tokens, config):
        x = self.embed[tokens] + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x, config)
        return self.ln_f(x, config.eps) @ self.embed.T


def eqx_gpt(model: Transformer, tokens, config: Config = CONFIG):
    return model(tokens, config)
