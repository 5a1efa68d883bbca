# Fuzz crash (the take_along_axis form of crash_lookup_in_partial_table.py): the array is a
# partial sum over 'model' and the index splits another dim over 'model', so the result
# would have been split and partial over one axis (ValueError inside convert_source).
# Fixed in meshify/rewrite/_ops_shape.py: the array is reduced first over those axes.
import jax
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(model=4, rules={"d": "model", "r": "model"})
def f(x: Tensor["b", "k", "d"], w: Tensor["d"], idx: Tensor["r", "j"]) -> Tensor[()]:
    a = jnp.einsum("bkd,d->bk", x, w)
    picked = jnp.take_along_axis(a, idx, axis=1)
    return jnp.sum(picked * picked)


FUZZ = {'mesh': '8',
 'sizes': {'b': 8, 'k': 6, 'd': 8, 'r': 8, 'j': 3},
 'args': [{'name': 'x', 'dims': ['b', 'k', 'd'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'w', 'dims': ['d'], 'kind': 'float', 'high': 0, 'std': 0.35},
          {'name': 'idx', 'dims': ['r', 'j'], 'kind': 'ids', 'high': 6, 'std': 1.0}],
 'grad': True,
 'seed': 44,
 'provoked': '',
 'expect': 'accepted'}
