# Bad input: a Python loop whose body leaves x split otherwise each time it is entered (a permutation by a
# module table, then a mean over the split batch); the error names x and the hint inside the loop that settles it.
# expect: UnsupportedError at 13:5 naming leaves 'x' in another layout
import jax.numpy as jnp
import numpy as np
from meshify import Tensor, mesh

PERMS = [np.random.RandomState(i).permutation(8) for i in range(3)]


@mesh(data=2, model=4, rules={"batch": "data", "feat": "model"})
def f(x: Tensor["batch", "feat"]):
    for i in range(3):
        x = x - jnp.mean(x, axis=0, keepdims=True)
        perm: Tensor["feat"] = PERMS[i]
        x = x[:, perm]
    return x
