"""jax.vmap of a nested def over a non-leading dim with in_axes=(1, None): each column of a
head-split activation attended against a shared (closed-over) weight; out_axes=1 puts the mapped
dim back in place."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(x: Tensor["batch", "heads", "d"], w: Tensor["d", "e"], bias: Tensor["e"]) -> Tensor["batch", "heads", "e"]:
    def per_head(rows, b):
        return jax.nn.softmax(rows @ w + b, axis=-1)

    return jax.vmap(per_head, in_axes=(1, None), out_axes=1)(x, bias)


def inputs():
    rng = np.random.default_rng(1411)
    return (rng.standard_normal((4, 8, 6)).astype(np.float32), rng.standard_normal((6, 5)).astype(np.float32),
            rng.standard_normal((5,)).astype(np.float32))
