"""jax.lax.scan over stacked layers whose 'layer' dim the rules map to a mesh axis of size 1
(@mesh(data=8, model=1, rules={"layer": "model"})): an axis of size 1 splits nothing, so every
device holds every layer and the scan runs as written (refused before: "scan over dim 'layer',
which is split over ('model',)")."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=8, model=1, rules={"batch": "data", "layer": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["layer", "d", "d"]) -> Tensor["batch", "d"]:
    def body(h, wl):
        return jnp.tanh(h @ wl), None

    h, _ = jax.lax.scan(body, x, w)
    return h


def inputs():
    r = np.random.default_rng(0)
    return r.standard_normal((16, 4)).astype(np.float32), (0.5 * r.standard_normal((3, 4, 4))).astype(np.float32)
