"""jax.lax.fori_loop indexing stacked layers w[i] whose 'layer' dim the rules map to two mesh axes
whose sizes multiply to 1 (rules={"layer": ("pipe", "stage")} on pipe=1, stage=1), and a weight dim
'd' mapped to a size-1 axis beside a split one: the dims stay whole, so indexing them is local
(refused before as "indexing split dim 'layer'")."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=8, pipe=1, stage=1, rules={"batch": "data", "layer": ("pipe", "stage"), "d": ["stage", "data"]})
def f(x: Tensor["batch", "d"], w: Tensor["layer", "d", "d"], b: Tensor["layer", "d"]) -> Tensor["batch", "d"]:
    def body(i, h):
        return jax.nn.relu(h @ w[i] + b[i]) + h

    return jax.lax.fori_loop(0, w.shape[0], body, x)


def inputs():
    r = np.random.default_rng(1)
    return (r.standard_normal((16, 8)).astype(np.float32), (0.3 * r.standard_normal((3, 8, 8))).astype(np.float32),
            r.standard_normal((3, 8)).astype(np.float32))
