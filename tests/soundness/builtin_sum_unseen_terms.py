"""sum() of a list whose terms have different layouts (a partial sum and a whole array): the terms are
not written out, so meshify cannot convert the partial one; refusing beats adding unlike terms."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "h"]) -> Tensor["batch", "h"]:
    terms = [x @ w, jnp.tanh(x @ w)]
    return sum(terms)


def inputs():
    rng = np.random.default_rng(122)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32)
