"""A list appended to in a loop whose items would have two layouts (the loop's body is rewritten once, so
every item must have one): refused, naming both.  Here the list holds ``x`` (whole along d_model) and the body
appends ``x @ w1[i]`` (d_ff split)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"]):
    hs = [x[:, :2]]
    for i in range(w1.shape[0]):
        hs.append((x @ w1[i])[:, :2])
    return jnp.stack(hs).sum(0)


def inputs():
    rng = np.random.default_rng(442)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32)
