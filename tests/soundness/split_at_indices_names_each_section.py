"""jnp.split at indices of a dim meshify named itself: DeepSeek-V2's latent up-projection
``kv = (c @ wkv_b).reshape(B, L, H, nope + v)``, ``k_nope, v = jnp.split(kv, [cfg.nope], axis=-1)``, then
``v``'s heads merged back by ``reshape(B, L, -1)`` and projected by ``wo`` hinted ``v_features``, with the
heads split.  Each section is named as the slice it is (``kv_b_1?[nope:]?``); before, both kept the dim's
own inferred name, so the reshape merged ``v``'s heads back into ``kv_b`` (twice its size) and ``@ wo`` was
refused ("letter 'k' is dim 'kv_b' in one operand and 'v_features'").  Also literal indices, and the
sections joined back by jnp.concatenate."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    heads: int = 8
    nope: int = 4
    v: int = 2


@mesh(data=2, model=4, rules={"batch": "data", "kv_b": "model", "v_features": "model"})
def f(c: Tensor["batch", "length", "kv_lora"], wkv_b: Tensor["kv_lora", "kv_b"], wo: Tensor["v_features", "d_model"],
      cfg: Config = Config()):
    B, L, _ = c.shape
    kv = (c @ wkv_b).reshape(B, L, cfg.heads, cfg.nope + cfg.v)
    k_nope, v = jnp.split(kv, [cfg.nope], axis=-1)
    first, rest = jnp.split(kv, [1], axis=-1)
    joined = jnp.concatenate([first, rest], axis=-1)
    scores = jnp.einsum("bshd,bthd->bhst", k_nope, k_nope)
    out = jnp.einsum("bhst,bthd->bshd", scores, v).reshape(B, L, -1) @ wo
    return out, jnp.sum(joined * kv, axis=-1)


def inputs():
    rng = np.random.default_rng(5)
    return (rng.standard_normal((4, 8, 16)).astype(np.float32), 0.3 * rng.standard_normal((16, 48)).astype(np.float32),
            rng.standard_normal((16, 32)).astype(np.float32))
