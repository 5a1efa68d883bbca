# Found with the loop carries of scan and fori_loop: a Python for loop whose body leaves a
# variable in another layout of the same dims (here the replicated h comes out split along
# 'e', by w) was rejected ("the layout of 'h' changes across iterations of this loop").  The
# variable is now converted to that layout once, before the loop (a free local slice here),
# and the body walked again (meshify/rewrite/_interp.py, _enter_loop).
import jax
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "e"], w: Tensor["e"]) -> Tensor[()]:
    h = jnp.tanh(x @ jnp.ones((x.shape[1], x.shape[1])) * 0.1)
    for _ in range(2):
        h = jnp.sin(h * w)
    return jnp.sum(h * h)


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 4, 'e': 8},
 'args': [{'name': 'x', 'dims': ['batch', 'e'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'w', 'dims': ['e'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': True,
 'seed': 13,
 'provoked': '',
 'expect': 'accepted'}
