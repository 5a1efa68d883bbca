"""Mamba on a 2x4 mesh: mamba_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class ModelArgs(NamedTuple):
    d_state: int = 8
    dt_rank: int = 4
    d_conv: int = 4
    norm_eps: float = 1e-5


DEFAULT_ARGS = ModelArgs()


class MambaBlock(NamedTuple):
    norm_weight: Annotated[jax.Array, "d_model"]
    in_proj: Annotated[jax.Array, "d_model", "in_features"]
    conv1d_weight: Annotated[jax.Array, "d_conv", "1", "d_inner"]
    conv1d_bias: Annotated[jax.Array, "d_inner"]
    x_proj: Annotated[jax.Array, "d_inner", "x_features"]
    dt_proj_weight: Annotated[jax.Array, "dt_rank", "d_inner"]
    dt_proj_bias: Annotated[jax.Array, "d_inner"]
    A_log: Annotated[jax.Array, "d_inner", "d_state"]
    D: Annotated[jax.Array, "d_inner"]
    out_proj: Annotated[jax.Array, "d_inner", "d_model"]


class Mamba(NamedTuple):
    embedding: Annotated[jax.Array, "vocab", "d_model"]
    layers: list[MambaBlock]
    norm_f: Annotated[jax.Array, "d_model"]


def rms_norm(x, weight, eps):
    return x * jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + eps) * weight


def selective_scan(u, delta, A, B, C, D):
    """h_t = exp(delta_t A) h_{t-1} + delta_t B_t u_t, y_t = C_t h_t + D u_t, as a parallel prefix scan over time."""
    deltaA = jnp.exp(jnp.einsum("bld,dn->bldn", delta, A))
    deltaB_u = jnp.einsum("bld,bln,bld->bldn", delta, B, u)

    def binary_operator(e_i, e_j):
        a_i, bu_i = e_i
        a_j, bu_j = e_j
        return a_j * a_i, a_j * bu_i + bu_j

    _, hs = jax.lax.associative_scan(binary_operator, (deltaA, deltaB_u), axis=1)
    y = jnp.einsum("bldn,bln->bld", hs, C)
    return y + u * D


def ssm(x, p: MambaBlock, args: ModelArgs):
    A = -jnp.exp(p.A_log)
    x_dbl = x @ p.x_proj
    delta, B, C = jnp.split(x_dbl, [args.dt_rank, args.dt_rank + args.d_state], axis=-1)
    delta = jax.nn.softplus(delta @ p.dt_proj_weight + p.dt_proj_bias)
    return selective_scan(x, delta, A, B, C, p.D)


def mixer(x, p: MambaBlock, args: ModelArgs):
    x_and_res = x @ p.in_proj
    x, res = jnp.split(x_and_res, 2, axis=-1)
    x = jax.lax.conv_general_dilated(x, p.conv1d_weight, window_strides=(1,), padding=[(args.d_conv - 1, 0)],
                                     dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=x.shape[-1])
    x = jax.nn.silu(x + p.conv1d_bias)
    y = ssm(x, p, args)
    y = y * jax.nn.silu(res)
    return y @ p.out_proj


@mesh(batch=2, model=4, rules={"in_features": "model", "d_inner": "model"})
def mamba(params: Mamba, input_ids: Annotated[jax.Array, "batch", "length"], args: ModelArgs = DEFAULT_ARGS) -> Annotated[jax.Array, "batch", "length", "vocab"]:
    """Next-token logits (the head tied to the embedding)."""
    x = params.embedding[input_ids]
    for layer in params.layers:
        x = x + mixer(rms_norm(x, layer.norm_weight, args.norm_eps), layer, args)
    x = rms_norm(x, params.norm_f, args.norm_eps)
    return x @ params.embedding.T
