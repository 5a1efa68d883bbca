# Bad input: jnp.take(mode=...) on a split table.
# expect: UnsupportedError at 10:44 naming mode=
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules={"vocab": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["b"]) -> Tensor["b", "d"]:
    return jnp.take(emb, ids, axis=0, mode="clip")
