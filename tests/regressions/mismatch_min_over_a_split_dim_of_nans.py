# Fuzz mismatch found by tests/fuzz on the 2x4 mesh.
# mismatch: f (converted path): output: NaN positions differ (0 NaNs, reference 5); first at (0, 1): np.float64(inf) != reference np.float64(nan)
# Found by: python tests/fuzz/run.py --seed 14 --only 543 (the grown generator: out-of-range take ids give NaN)
# Fixed in meshify/runtime/ops.py (_reduce): an all-reduce max/min drops NaNs where jnp.max keeps them;
# a second pmax carries whether any device saw one.
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_min_over_a_split_dim_of_nans
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=1, model=8, rules={'seq': 'model', 'd_model': 'data'})
def g(x0: Tensor["batch", "model"], x1: Tensor["batch", "model"], ids2: Tensor["d_model", "d_ff"]) -> Tensor["d_model", "d_ff", "model"]:
    v0 = x0 + x1
    v1 = jnp.take(x0, ids2, axis=0)
    return v1


@mesh(data=2, model=4, rules={'d_ff': 'data'})
def f(x0: Tensor["batch"], x1: Tensor["batch", "model"], x2: Tensor["batch", "model"], ids3: Tensor["d_model", "d_ff"]) -> Tensor["d_model", "d_ff"]:
    v0 = g(x1, x2, ids3)
    v1 = jnp.min(v0, -1)
    return jnp.maximum(v1, 0.0)


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 3, 'model': 8, 'seq': 8, 'd_model': 2, 'd_ff': 4},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch', 'model'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x2', 'dims': ['batch', 'model'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids3',
           'dims': ['d_model', 'd_ff'],
           'kind': 'ids',
           'high': 6,
           'std': 1.0,
           'low': -6}],
 'grad': False,
 'seed': 14000585,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '2x4',
              'sizes': {'batch': 3, 'model': 8, 'seq': 8, 'd_model': 2, 'd_ff': 4},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x1',
                        'dims': ['batch', 'model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x2',
                        'dims': ['batch', 'model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'ids3',
                        'dims': ['d_model', 'd_ff'],
                        'kind': 'ids',
                        'high': 6,
                        'std': 1.0,
                        'low': -6}],
              'grad': False},
             {'name': 'g',
              'mesh': '1x8',
              'sizes': {'batch': 3, 'model': 8, 'seq': 8, 'd_model': 2, 'd_ff': 4},
              'args': [{'name': 'x0',
                        'dims': ['batch', 'model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x1',
                        'dims': ['batch', 'model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'ids2',
                        'dims': ['d_model', 'd_ff'],
                        'kind': 'ids',
                        'high': 6,
                        'std': 1.0,
                        'low': -6}],
              'grad': False}],
 'expect': 'accepted'}
