"""bfloat16 sums over a split dim of ordinary values (reassociation only: within bfloat16's tolerance)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> tuple[Tensor["batch"], Tensor["batch", "e"]]:
    return jnp.sum(x, axis=1), x @ w


def inputs():
    rng = np.random.default_rng(51)
    return rng.standard_normal((4, 64)).astype(jnp.bfloat16), rng.standard_normal((64, 3)).astype(jnp.bfloat16)
