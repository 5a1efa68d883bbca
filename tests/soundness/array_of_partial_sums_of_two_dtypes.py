"""``jnp.stack([jnp.sum(x), jnp.sum(y)])`` with ``x`` bfloat16 and ``y`` float32, both sums partial: one device
rounds the bfloat16 sum to bfloat16 before promoting it to float32; one psum of the stacked float32 shares cannot
(it casts the whole array back to the promoted dtype only).  Before, the bfloat16 item silently kept float32
precision (``jnp.stack``; ``jnp.array`` was refused); now the call is refused (MSH050, from ``mr.joined_dtype``),
where the items would need completing one by one before the join."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_ff"], y: Tensor["batch", "d_ff"]):
    return jnp.stack([jnp.sum(x), jnp.sum(y)]), jnp.array([jnp.sum(x * x), jnp.sum(y)])


def inputs():
    x = np.random.default_rng(98).standard_normal((8, 16))
    return (x.astype(jnp.bfloat16), x.astype(np.float32))
