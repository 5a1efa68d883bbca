# Bad input: a generation scan whose carry enters whole and leaves as a vocab-parallel lookup (a partial sum).
# expect: LayoutError at 15:28 naming returns its carry as a partial sum
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(h0: Tensor["batch", "d_model"], embed: Tensor["vocab", "d_model"]):
    def step(h, _):
        tok = jnp.argmax(h @ embed.T, -1)
        h = embed[tok]
        return h, tok

    h, toks = jax.lax.scan(step, h0, None, length=3)
    return h, toks.T
