"""A module array whose dims a module-level hint names (W: Tensor["d", "e"] = ...), used by a helper
that two @mesh functions call on different meshes and rules: a whole array with those dims, sliced
where a version needs it split (was refused: "cannot infer the dims of 'W'")."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

W: Tensor["d", "e"] = jnp.arange(32.0).reshape(8, 4) / 10
def proj(x):
    return x @ W

@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "e"]:
    return proj(x)

@mesh(data=2, model=4, rules={"e": "model", "batch": "data"})
def g(x: Tensor["batch", "d"]) -> Tensor["batch", "e"]:
    return proj(x)
def inputs():
    a = (np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32),)
    return {"f": a, "g": a}
