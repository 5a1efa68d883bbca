import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4)
def regather(x: Tensor["batch", "model"]) -> Tensor["batch", "d"]:
    # Renaming the split dim to an unmapped one gathers it.
    y: Tensor["batch", "d"] = jnp.tanh(x)
    return y * 2.0


@mesh(batch=2, model=4, rules={"rows": "model"})
def move_axis(x: Tensor["rows", "cols"]) -> Tensor["cols", "rows"]:
    return x.T


@mesh(model=4, rules={"i": "model", "k": "model"})
def one_axis_two_dims(a: Tensor["i", "j"], b: Tensor["j", "k"]) -> Tensor["i"]:
    # 'model' splits i in a and k in b: the product cannot keep both, so one side is gathered.
    c = jnp.einsum("ij,jk->ik", a, b)
    return jnp.sum(c, axis=1)
