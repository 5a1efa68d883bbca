"""BERT on a 2x4 mesh: bert_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class BertConfig(NamedTuple):
    num_attention_heads: int = 8
    layer_norm_eps: float = 1e-12


DEFAULT_CONFIG = BertConfig()


class LayerNorm(NamedTuple):
    gamma: Annotated[jax.Array, "d_model"]
    beta: Annotated[jax.Array, "d_model"]


class Layer(NamedTuple):
    query_w: Annotated[jax.Array, "d_model", "attn_features"]
    query_b: Annotated[jax.Array, "attn_features"]
    key_w: Annotated[jax.Array, "d_model", "attn_features"]
    key_b: Annotated[jax.Array, "attn_features"]
    value_w: Annotated[jax.Array, "d_model", "attn_features"]
    value_b: Annotated[jax.Array, "attn_features"]
    attn_out_w: Annotated[jax.Array, "attn_features", "d_model"]
    attn_out_b: Annotated[jax.Array, "d_model"]
    attn_ln: LayerNorm
    intermediate_w: Annotated[jax.Array, "d_model", "d_ff"]
    intermediate_b: Annotated[jax.Array, "d_ff"]
    output_w: Annotated[jax.Array, "d_ff", "d_model"]
    output_b: Annotated[jax.Array, "d_model"]
    output_ln: LayerNorm


class Bert(NamedTuple):
    word_embeddings: Annotated[jax.Array, "vocab", "d_model"]
    position_embeddings: Annotated[jax.Array, "positions", "d_model"]
    token_type_embeddings: Annotated[jax.Array, "types", "d_model"]
    embeddings_ln: LayerNorm
    layers: list[Layer]
    pooler_w: Annotated[jax.Array, "d_model", "pooled"]
    pooler_b: Annotated[jax.Array, "pooled"]
    classifier_w: Annotated[jax.Array, "pooled", "labels"]
    classifier_b: Annotated[jax.Array, "labels"]


def layer_norm(x, ln: LayerNorm, eps):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * ln.gamma + ln.beta


def self_attention(x, mask, layer: Layer, config: BertConfig):
    batch, seq_len, _ = x.shape
    n_heads = config.num_attention_heads

    def split_heads(h):
        return h.reshape(batch, seq_len, n_heads, -1).transpose(0, 2, 1, 3)

    q = split_heads(x @ layer.query_w + layer.query_b)
    k = split_heads(x @ layer.key_w + layer.key_b)
    v = split_heads(x @ layer.value_w + layer.value_b)
    scores = q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(q.shape[-1]) + mask
    probs = jax.nn.softmax(scores, axis=-1)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq_len, -1)
    return context @ layer.attn_out_w + layer.attn_out_b


def bert_layer(x, mask, layer: Layer, config: BertConfig):
    x = layer_norm(x + self_attention(x, mask, layer, config), layer.attn_ln, config.layer_norm_eps)
    h = jax.nn.gelu(x @ layer.intermediate_w + layer.intermediate_b, approximate=False)
    return layer_norm(x + h @ layer.output_w + layer.output_b, layer.output_ln, config.layer_norm_eps)


@mesh(batch=2, model=4, rules={"attn_features": "model", "d_ff": "model"})
def bert(params: Bert, input_ids: Annotated[jax.Array, "batch", "length"], token_type_ids: Annotated[jax.Array, "batch", "length"], attention_mask: Annotated[jax.Array, "batch", "length"], config: BertConfig = DEFAULT_CONFIG) -> Annotated[jax.Array, "batch", "labels"]:
    """Sequence-classification logits from the pooled first token; ``attention_mask`` is 1 for real tokens."""
    position_ids = jnp.arange(input_ids.shape[1])[None, :]
    x = params.word_embeddings[input_ids] + params.position_embeddings[position_ids]
    x = x + params.token_type_embeddings[token_type_ids]
    x = layer_norm(x, params.embeddings_ln, config.layer_norm_eps)
    mask = (1.0 - attention_mask[:, None, None, :].astype(x.dtype)) * -1e9
    for layer in params.layers:
        x = bert_layer(x, mask, layer, config)
    pooled = jnp.tanh(x[:, 0] @ params.pooler_w + params.pooler_b)
    return pooled @ params.classifier_w + params.classifier_b
