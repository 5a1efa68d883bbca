"""BERT, single device: token, token-type and learned position embeddings, a padding mask, a list of layers, a pooler."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class BertConfig(NamedTuple):
    num_attention_heads: int = 8
    layer_norm_eps: float = 1e-12


DEFAULT_CONFIG = BertConfig()


class LayerNorm(NamedTuple):
    gamma: jax.Array
    beta: jax.Array


class Layer(NamedTuple):
    query_w: jax.Array
    query_b: jax.Array
    key_w: jax.Array
    key_b: jax.Array
    value_w: jax.Array
    value_b: jax.Array
    attn_out_w: jax.Array
    attn_out_b: jax.Array
    attn_ln: LayerNorm
    intermediate_w: jax.Array
    intermediate_b: jax.Array
    output_w: jax.Array
    output_b: jax.Array
    output_ln: LayerNorm


class Bert(NamedTuple):
    word_embeddings: jax.Array
    position_embeddings: jax.Array
    token_type_embeddings: jax.Array
    embeddings_ln: LayerNorm
    layers: list[Layer]
    pooler_w: jax.Array
    pooler_b: jax.Array
    classifier_w: jax.Array
    classifier_b: jax.Array


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


def bert(params: Bert, input_ids: jax.Array, token_type_ids: jax.Array, attention_mask: jax.Array, config: BertConfig = DEFAULT_CONFIG) -> jax.Array:
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
