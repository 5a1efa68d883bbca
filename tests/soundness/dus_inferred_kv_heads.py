"""A KV cache written by ``dynamic_update_slice`` with the new keys reshaped in place
(``(x @ wk).reshape(B, T, KV, D)``: dims meshify names itself, ``KV?`` the major part of the split
kv_features), into a cache hinted ``[batch, max_len, kv_heads, head_dim]`` with kv_heads split the same way:
the inferred dim lines up with kv_heads (its size checked when traced); gradients through x and wk.  Before,
"dynamic_update_slice writes part of split dim 'kv_heads' ... the update's dim there is 'KV?'"."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

KV, D = 4, 2


@mesh(batch=2, model=4, rules={"kv_features": "model", "kv_heads": "model"})
def f(x: Tensor["batch", "length", "d_model"], wk: Tensor["d_model", "kv_features"],
      cache: Tensor["batch", "max_len", "kv_heads", "head_dim"], pos: Tensor[()]
      ) -> Tensor["batch", "max_len", "kv_heads", "head_dim"]:
    B, T, _ = x.shape
    k = (x @ wk).reshape(B, T, KV, D)
    return jax.lax.dynamic_update_slice(cache, k, (0, pos, 0, 0))


def inputs():
    rng = np.random.default_rng(309)
    return (rng.standard_normal((4, 1, 6)).astype(np.float32), rng.standard_normal((6, 8)).astype(np.float32),
            rng.standard_normal((4, 5, 4, 2)).astype(np.float32), np.int32(3))
