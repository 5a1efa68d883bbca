# Bad input: a slice too far along a split dim in the second of two helpers (from row 1: no jnp.split section).
# expect: CallError at 13:5 naming would come from devices farther than the next one
# call: x=16x16 v=16
import jax.numpy as jnp
from meshify import Tensor, mesh


def first(x, v):
    return x * 2.0, jnp.sum(v) * jnp.ones(x.shape[:1])


def second(x):
    xa: Tensor["batch", "quarter"] = x[:, 1 : x.shape[-1] // 4 + 1]
    return xa, xa[:, 0]


@mesh(data=2, model=4, rules={"batch": "data", "feat": "model"})
def f(x: Tensor["batch", "feat"], v: Tensor["feat"]):
    total = jnp.zeros(x.shape[0])
    for _ in range(1):
        x, ld = first(x, v)
        total = total + ld
        x, ld = second(x)
        total = total + ld
        x: Tensor["batch", "feat"] = jnp.concatenate([x, x], axis=-1)
    return x, total
