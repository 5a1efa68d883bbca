"""A module-level helper def later rebound by an assignment (an experiment switch): act = jax.nn.gelu."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def act(x):
    return jax.nn.relu(x)


act = jax.nn.gelu  # noqa: F811 - the experiment uses gelu


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return act(x @ w)


def inputs():
    rng = np.random.default_rng(169)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
