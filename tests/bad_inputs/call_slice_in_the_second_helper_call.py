# Bad input: a slice too far along a split dim in the second of two helpers: pointed at in the helper.
# expect: CallError at 13:5 naming would come from devices farther than the next one
# call: x=16x8 v=8
import jax.numpy as jnp
from meshify import Tensor, mesh


def first(x, v):
    return x * 2.0, jnp.sum(v) * jnp.ones(x.shape[:1])


def second(x):
    xa: Tensor["batch", "half"] = x[:, : x.shape[-1] // 2]
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
