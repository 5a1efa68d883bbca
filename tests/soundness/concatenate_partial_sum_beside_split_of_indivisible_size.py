"""A partial sum joined to an array split along 'd' (the DLRM attack: bottom-MLP features beside pooled
embeddings, the embed dim split), 8 + 6 entries over 4 devices: the split operand gathered, the partial sum
completed, the join done whole (was bad input concatenate_partial_sum_of_indivisible_size: refused when it ran,
"6 entries, which do not split into 4 equal blocks")."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"d": "model"})
def f(a: Tensor["b", "d"], w: Tensor["d", "k"]):
    return jnp.concatenate([a, a @ w], axis=1)


def inputs():
    rng = np.random.default_rng(3610)
    return rng.standard_normal((2, 8)).astype(np.float32), rng.standard_normal((8, 6)).astype(np.float32)
