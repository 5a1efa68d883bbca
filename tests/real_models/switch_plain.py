"""Switch Transformer, single device: top-1 routing with expert capacity, dispatch and combine einsums, an aux loss."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp


class SwitchConfig(NamedTuple):
    num_heads: int = 8
    num_experts: int = 8
    capacity_factor: float = 2.0
    aux_loss_coef: float = 0.01
    eps: float = 1e-6


CONFIG = SwitchConfig()


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class SwitchLayer:
    attn_norm: jax.Array
    wq: jax.Array
    wk: jax.Array
    wv: jax.Array
    wo: jax.Array
    moe_norm: jax.Array
    router: jax.Array
    wi: jax.Array
    wo_expert: jax.Array


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class SwitchParams:
    embed: jax.Array
    pos_embed: jax.Array
    layers: list[SwitchLayer]
    final_norm: jax.Array
    lm_head: jax.Array


def rms_norm(x, scale, eps):
    return x * jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + eps) * scale


def attention(x, layer: SwitchLayer):
    q = jnp.einsum("bld,dhk->blhk", x, layer.wq)
    k = jnp.einsum("bld,dhk->blhk", x, layer.wk)
    v = jnp.einsum("bld,dhk->blhk", x, layer.wv)
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1])
    length = x.shape[1]
    causal = jnp.tril(jnp.ones((length, length), dtype=bool))
    weights = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    return jnp.einsum("bhqs,bshk,hkd->bqd", weights, v, layer.wo)


def top1_router(x, router_weights, cfg: SwitchConfig):
    """Each sequence is a group: its tokens fill each expert's ``capacity`` slots in order; the rest are dropped."""
    router_probs = jax.nn.softmax(x @ router_weights, axis=-1)
    expert_gate, expert_index = jax.lax.top_k(router_probs, 1)
    expert_mask = jax.nn.one_hot(expert_index[..., 0], cfg.num_experts)
    # load balancing: the fraction of tokens sent to each expert times its mean router probability
    tokens_per_expert = jnp.mean(expert_mask, axis=1)
    prob_per_expert = jnp.mean(router_probs, axis=1)
    aux_loss = jnp.mean(jnp.sum(tokens_per_expert * prob_per_expert, axis=-1)) * cfg.num_experts
    capacity = int(cfg.capacity_factor * x.shape[1] / cfg.num_experts)
    position_in_expert = jnp.cumsum(expert_mask, axis=1) * expert_mask
    expert_mask = expert_mask * (position_in_expert <= capacity)
    slot = jax.nn.one_hot(position_in_expert.astype(jnp.int32) - 1, capacity)
    dispatch = expert_mask[..., None] * slot
    combine = dispatch * expert_gate[..., None]
    return dispatch, combine, aux_loss


def switch_ffn(x, layer: SwitchLayer, cfg: SwitchConfig):
    dispatch, combine, aux_loss = top1_router(x, layer.router, cfg)
    expert_inputs = jnp.einsum("blec,bld->becd", dispatch, x)
    hidden = jax.nn.relu(jnp.einsum("becd,edf->becf", expert_inputs, layer.wi))
    expert_outputs = jnp.einsum("becf,efd->becd", hidden, layer.wo_expert)
    return jnp.einsum("blec,becd->bld", combine, expert_outputs), aux_loss


def switch(params: SwitchParams, tokens: jax.Array, cfg: SwitchConfig = CONFIG) -> tuple[jax.Array, jax.Array]:
    """Next-token logits of ``tokens`` and the load-balancing loss, summed over layers and scaled."""
    x = params.embed[tokens] + params.pos_embed[: tokens.shape[1]]
    total_aux_loss = jnp.zeros(())
    for layer in params.layers:
        x = x + attention(rms_norm(x, layer.attn_norm, cfg.eps), layer)
        y, aux_loss = switch_ffn(rms_norm(x, layer.moe_norm, cfg.eps), layer, cfg)
        x = x + y
        total_aux_loss += aux_loss
    logits = rms_norm(x, params.final_norm, cfg.eps) @ params.lm_head
    return logits, cfg.aux_loss_coef * total_aux_loss
