"""LRU on a 2x4 mesh: lru_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class LRULayer(NamedTuple):
    norm_scale: Annotated[jax.Array, "d_model"]
    norm_bias: Annotated[jax.Array, "d_model"]
    nu_log: Annotated[jax.Array, "d_hidden"]
    gamma_log: Annotated[jax.Array, "d_hidden"]
    B: Annotated[jax.Array, "d_hidden", "d_model"]
    C: Annotated[jax.Array, "d_model", "states"]
    D: Annotated[jax.Array, "d_model"]
    glu_w: Annotated[jax.Array, "d_model", "glu"]
    glu_b: Annotated[jax.Array, "glu"]


class LRUModel(NamedTuple):
    embedding: Annotated[jax.Array, "vocab", "d_model"]
    layers: list[LRULayer]
    head_w: Annotated[jax.Array, "d_model", "classes"]
    head_b: Annotated[jax.Array, "classes"]


class Config(NamedTuple):
    bidirectional: bool = True
    eps: float = 1e-5


DEFAULT_CONFIG = Config()


def binary_operator_diag(element_i, element_j):
    """Composition of two steps of the diagonal recurrence h_t = a_t * h_{t-1} + b_t."""
    a_i, bu_i = element_i
    a_j, bu_j = element_j
    return a_j * a_i, a_j * bu_i + bu_j


def forward(p: LRULayer, input_sequence, bidirectional):
    """One sequence [length, d_model] through the recurrence (the LRU paper's code, with a real Lambda)."""
    Lambda = jnp.exp(-jnp.exp(p.nu_log))
    B_norm = p.B * jnp.expand_dims(jnp.exp(p.gamma_log), axis=-1)
    Lambda_elements = jnp.repeat(Lambda[None, ...], input_sequence.shape[0], axis=0)
    Bu_elements = jax.vmap(lambda u: B_norm @ u)(input_sequence)
    elements = (Lambda_elements, Bu_elements)
    _, inner_states = jax.lax.associative_scan(binary_operator_diag, elements)
    if bidirectional:
        _, backward_states = jax.lax.associative_scan(binary_operator_diag, elements, reverse=True)
        inner_states = jnp.concatenate((inner_states, backward_states), axis=-1)
    y = jax.vmap(lambda x, u: p.C @ x + p.D * u)(inner_states, input_sequence)
    return y


def layer_norm(x, scale, bias, eps):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * scale + bias


def block(p: LRULayer, x, cfg: Config):
    """Pre-norm residual block: LRU over each sequence of the batch, GELU, a GLU channel mixer."""
    skip = x
    x = layer_norm(x, p.norm_scale, p.norm_bias, cfg.eps)
    x = jax.vmap(forward, in_axes=(None, 0, None))(p, x, cfg.bidirectional)
    x = jax.nn.gelu(x)
    x = x @ p.glu_w + p.glu_b
    x = x[..., : x.shape[-1] // 2] * jax.nn.sigmoid(x[..., x.shape[-1] // 2 :])
    return skip + x


@mesh(batch=2, model=4, rules={"d_hidden": "model", "states": "model"})
def lru(params: LRUModel, tokens: Annotated[jax.Array, "batch", "length"], cfg: Config = DEFAULT_CONFIG) -> Annotated[jax.Array, "batch", "classes"]:
    """Sequence classification logits: embedded tokens, LRU blocks, mean pooling over time, a linear head."""
    x = params.embedding[tokens]
    for p in params.layers:
        x = block(p, x, cfg)
    x = jnp.mean(x, axis=1)
    return x @ params.head_w + params.head_b
