"""DLRM click-through model, single device: embedding bags over padded multi-hot ids, dot interactions, MLPs."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class MLP(NamedTuple):
    w1: jax.Array
    b1: jax.Array
    w2: jax.Array
    b2: jax.Array


class DLRM(NamedTuple):
    bottom: MLP
    embeddings: list[jax.Array]
    top: MLP


def mlp(p: MLP, x, final_activation=True):
    x = jax.nn.relu(x @ p.w1 + p.b1)
    x = x @ p.w2 + p.b2
    return jax.nn.relu(x) if final_activation else x


def embedding_bag(table, ids):
    """Sum pooling of each row's ids; padding ids (-1 and past the table) read zeros."""
    rows = jnp.take(table, ids, axis=0, mode="fill", fill_value=0.0)
    return rows.sum(axis=1)


def interact(dense, sparse):
    """Pairwise dot products of the dense vector and the pooled embeddings, lower triangle without the diagonal."""
    features = jnp.stack([dense] + sparse, axis=1)
    num_features = features.shape[1]
    z = jnp.einsum("bfd,bgd->bfg", features, features)
    li, lj = jnp.tril_indices(num_features, k=-1)
    return jnp.concatenate([dense, z[:, li, lj]], axis=1)


def dlrm(params: DLRM, dense_x: jax.Array, sparse_ids: jax.Array) -> jax.Array:
    """Click logits: bottom MLP on the dense features, one embedding bag per sparse feature, top MLP."""
    x = mlp(params.bottom, dense_x)
    pooled = [embedding_bag(table, sparse_ids[:, i, :]) for i, table in enumerate(params.embeddings)]
    r = interact(x, pooled)
    return jnp.squeeze(mlp(params.top, r, final_activation=False), axis=-1)
