"""A module table named by a module-level hint (TABLE: Tensor["vocab", "d"] = ...) looked up by ids,
in a helper two @mesh functions call: vocab split, and vocab and ids both over 'model' (was refused:
"cannot infer the dims of 'TABLE'")."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

GRAD = False
TABLE: Tensor["vocab", "d"] = jnp.arange(64.0).reshape(16, 4)
def look(ids):
    return TABLE[ids]

@mesh(model=8, rules={"vocab": "model"})
def f(ids: Tensor["batch"]) -> Tensor["batch", "d"]:
    return look(ids)

@mesh(model=8, rules={"vocab": "model", "batch": "model"})
def g(ids: Tensor["batch"]) -> Tensor["batch", "d"]:
    return look(ids)
def inputs():
    a = (np.array([-1, 3, 15, 50, 0, 7, -9, 2], np.int32),)
    return {"f": a, "g": a}
