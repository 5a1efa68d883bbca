"""GPT-2-like layers under jax.lax.scan with a nested body def (not a lambda) that closes over a
causal mask, the config and a nested layer-norm def; heads and the MLP's hidden dim split."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    eps: float = 1e-5


CFG = Config()

@mesh(batch=2, model=4, rules={"heads": "model", "ff": "model"})
def f(x: Tensor["batch", "seq", "d"], wq: Tensor["layer", "d", "heads", "dh"],
      wk: Tensor["layer", "d", "heads", "dh"], wv: Tensor["layer", "d", "heads", "dh"],
      wo: Tensor["layer", "heads", "dh", "d"], w1: Tensor["layer", "d", "ff"],
      w2: Tensor["layer", "ff", "d"], cfg: Config = CFG) -> Tensor["batch", "seq", "d"]:
    n = x.shape[1]
    mask: Tensor["seq", "key"] = jnp.tril(jnp.ones((n, n), dtype=bool))

    def layer_norm(h):
        mu = jnp.mean(h, axis=-1, keepdims=True)
        var = jnp.mean((h - mu) ** 2, axis=-1, keepdims=True)
        return (h - mu) / jnp.sqrt(var + cfg.eps)

    def block(h, layer):
        q_w, k_w, v_w, o_w, up, down = layer
        hn = layer_norm(h)
        q = jnp.einsum("bsd,dhe->bhse", hn, q_w)
        k: Tensor["batch", "heads", "key", "dh"] = jnp.einsum("btd,dhe->bhte", hn, k_w)
        v: Tensor["batch", "heads", "key", "dh"] = jnp.einsum("btd,dhe->bhte", hn, v_w)
        scores = jnp.einsum("bhse,bhte->bhst", q, k) / np.sqrt(q.shape[-1])
        scores = jnp.where(mask, scores, -1e9)
        att = jnp.einsum("bhst,bhte->bhse", jax.nn.softmax(scores, axis=-1), v)
        h = h + jnp.einsum("bhse,hed->bsd", att, o_w)
        h = h + jax.nn.gelu(layer_norm(h) @ up) @ down
        return h, None

    out, _ = jax.lax.scan(block, x, (wq, wk, wv, wo, w1, w2))
    return layer_norm(out)


def inputs():
    rng = np.random.default_rng(1401)
    L, B, S, D, H, E, F = 2, 4, 6, 8, 4, 2, 16
    x = rng.standard_normal((B, S, D)).astype(np.float32)
    ws = [rng.standard_normal(s).astype(np.float32) * 0.3 for s in
          [(L, D, H, E), (L, D, H, E), (L, D, H, E), (L, H, E, D), (L, D, F), (L, F, D)]]
    return (x, *ws)
