# Fuzz crash found by tests/fuzz on the 8 mesh.
# zip(s, s[1:]) in a comprehension was counted by its first list (2 rows, out_specs of 2) where Python
# yields as many as the shortest (1): a pytree structure error at call time; now the shortest.
# crash: calling f (converted path) raised: ValueError: pytree structure error: different lengths of tuple at key path [meshify/runtime/_bind.py:717 in program]
# Found by: python tests/fuzz/run.py --seed 4301 --only 336
# Rerun: python -m pytest tests/test_regressions.py -k crash_zip_shorter_second_list_8f3e63fa
import jax
import jax.numpy as jnp
import optax
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=1, model=8, rules={'batch': 'model', 'stacked': 'data'})
def g(x0: Tensor["batch"], x1: Tensor["batch"]) -> Tensor["batch", "stacked"]:
    v0: Tensor["batch", "stacked"] = jnp.stack((x0, x1), axis=1)
    return v0


@mesh(model=8, rules={'batch': 'model', 'seq': 'model', 'batch_cat': 'model'})
def f(x0: Tensor["seq", "d_model"], x1: Tensor["batch"], x2: Tensor["batch"]):
    v0 = g(x1, x2)
    v1 = sum((v0, v0))
    v2 = (v0 > 0.1).astype(jnp.float32)
    v2 = optax.sigmoid_binary_cross_entropy(v0, v2)
    v3 = v2 / 16
    v4 = jnp.maximum(v3, 0.0)
    v5: Tensor["batch_cat", "stacked"] = jnp.concatenate((v3, v0, v3), axis=0)
    v6s = [None] * 2
    v6s[0] = jnp.mean(x0)
    v6s[1] = jnp.mean(x0 * x0)
    return v5, [a * b for a, b in zip(v6s, v6s[1:])]


FUZZ = {'mesh': '8',
 'sizes': {'batch': 16, 'stacked': 2, 'seq': 16, 'd_model': 3, 'batch_cat': 48},
 'args': [{'name': 'x0', 'dims': ['seq', 'd_model'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x2', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 4301013239,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '8',
              'sizes': {'batch': 16, 'stacked': 2, 'seq': 16, 'd_model': 3, 'batch_cat': 48},
              'args': [{'name': 'x0',
                        'dims': ['seq', 'd_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x2', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': False},
             {'name': 'g',
              'mesh': '1x8',
              'sizes': {'batch': 16, 'stacked': 2},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': False}],
 'triggers': [['builtin sum of a list',
               ['sum((v0, v0))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']]],
 'expect': 'accepted'}
