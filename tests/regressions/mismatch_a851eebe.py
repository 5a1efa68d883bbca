# Fuzz mismatch found by tests/fuzz on the 8 mesh.
# mismatch: f (converted path): d/dx1: 2 of 512 values differ (max abs error 1.52, reference magnitude 1.52); first at (0, 1): np.float64(0.0) != reference np.float64(-1.5161712169647217)
# Found by: python tests/fuzz/run.py --seed 4106 --only 2534
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_a851eebe
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def row_mean(x0):
    return jnp.mean(x0, axis=-1)


@mesh(data=1, model=8, rules={'batch': 'data'})
def g(x0: Tensor["batch"]) -> Tensor[()]:
    v0 = jax.jit(row_mean)(x0)
    return jax.nn.softplus(v0)


@mesh(model=8, rules={'batch': 'model'})
def f(x0: Tensor["batch"], x1: Tensor["seq", "d_model"], ids2: Tensor["batch"]) -> Tensor[()]:
    v0 = row_mean(x0)
    v1 = jax.lax.stop_gradient(x0)
    v2 = jnp.take(x1, ids2, axis=0, mode='clip')
    v3 = v2.min(axis=0)
    v4 = jnp.sum(v3 * v3)
    return v4


FUZZ = {'mesh': '8',
 'sizes': {'batch': 8, 'seq': 256, 'd_model': 2},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['seq', 'd_model'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids2',
           'dims': ['batch'],
           'kind': 'ids',
           'high': 128,
           'std': 1.0,
           'low': -128,
           'dtype': 'int8'}],
 'grad': True,
 'seed': 4106014852,
 'provoked': '',
 'xfail': 'JAX 0.10.2: inside jax.shard_map, the gradient of jnp.take(table, ids) with int8 ids into a table of more '
          'than 127 rows is zero (the same take outside shard_map, or with int16 ids, is right); the table here is '
          'unsplit, so the take is the user\'s own, run on each device: a pure-JAX repro is in the README',
 'entries': [{'name': 'f',
              'mesh': '8',
              'sizes': {'batch': 8, 'seq': 256, 'd_model': 2},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x1',
                        'dims': ['seq', 'd_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'ids2',
                        'dims': ['batch'],
                        'kind': 'ids',
                        'high': 128,
                        'std': 1.0,
                        'low': -128,
                        'dtype': 'int8'}],
              'grad': True},
             {'name': 'g',
              'mesh': '1x8',
              'sizes': {'batch': 4},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': True}],
 'triggers': [['jax.jit(row_mean)(...) at the call site',
               ['jax.jit(row_mean)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']]],
 'expect': 'accepted'}
