# Fuzz mismatch found by tests/fuzz on the 2x2x2 mesh.
# mismatch: f2 (converted path): d/dx0: 2 of 256 values differ (max abs error 1.09, reference magnitude 1); first at (0, 0, 2, 2): np.float64(0.22129923105239868) != reference np.float64(0.0)
# Found by: python tests/fuzz/run.py --seed 71 --only 1883
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_0428dcbc
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def first_minus_second(xs):
    return xs[0] - xs[1] * 0.5


@mesh(data=2, model=2, pipe=2, rules={'batch': None, 'h': 'pipe', 'w': ('data', 'model'), 'c': None, 'd': None})
def f(x0: Tensor["batch", "c", "h", "w"], x1: Tensor["batch", "c", "h", "w"], x2: Tensor["batch", "c", "h", "w"], x3: Tensor["batch", "c", "h", "w"], x4: Tensor["batch", "c", "h", "w"], x5: Tensor["d", "kw", "c", "kh"]) -> Tensor[()]:
    v0: Tensor["batch", "c", "h", "w"] = x0.astype('float32')
    v1 = first_minus_second((v0, x1, x2))
    v2 = jnp.multiply(v1, x3)
    v3 = jax.nn.elu(v2)
    v4 = jnp.multiply(x4, v1)
    v5: Tensor["w", "d", "batch", "h"] = jax.lax.conv_general_dilated(v4, x5, (1, 1), "SAME", None, None, dimension_numbers=("NCHW", "OWIH", "WCNH"))
    v6 = jnp.mean(v5, axis=-3, where=v5 > 0)
    v7 = jnp.max(v6)
    return v7


@mesh(data=2, model=2, pipe=2, rules={'batch': None, 'h': 'pipe', 'w': ('data', 'model'), 'c': None, 'd': None})
def f2(x0: Tensor["batch", "c", "h", "w"], x1: Tensor["batch", "c", "h", "w"], x2: Tensor["batch", "c", "h", "w"], x3: Tensor["batch", "c", "h", "w"], x4: Tensor["batch", "c", "h", "w"], x5: Tensor["d", "kw", "c", "kh"]) -> Tensor[()]:
    v0: Tensor["batch", "c", "h", "w"] = x0.astype('float32')
    v1 = first_minus_second((v0, x1, x2))
    v2 = jnp.multiply(v1, x3)
    v3 = jax.nn.elu(v2)
    v4 = jnp.multiply(x4, v1)
    v5: Tensor["w", "d", "batch", "h"] = jax.lax.conv_general_dilated(v4, x5, (1, 1), "SAME", None, None, dimension_numbers=("NCHW", "OWIH", "WCNH"))
    v6 = jnp.mean(v5, axis=-3, where=v5 > 0)
    v7 = jnp.max(v6)
    return v7


FUZZ = {'mesh': '2x2x2',
 'sizes': {'batch': 2, 'h': 8, 'w': 8, 'c': 2, 'd': 4, 'kh': 1, 'kw': 1},
 'args': [{'name': 'x0', 'dims': ['batch', 'c', 'h', 'w'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch', 'c', 'h', 'w'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x2', 'dims': ['batch', 'c', 'h', 'w'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x3', 'dims': ['batch', 'c', 'h', 'w'], 'kind': 'steps', 'high': 0, 'std': 1.0},
          {'name': 'x4', 'dims': ['batch', 'c', 'h', 'w'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x5',
           'dims': ['d', 'kw', 'c', 'kh'],
           'kind': 'float',
           'high': 0,
           'std': 0.7071}],
 'grad': True,
 'seed': 71002096,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '2x2x2',
              'sizes': {'batch': 2, 'h': 8, 'w': 8, 'c': 2, 'd': 4, 'kh': 1, 'kw': 1},
              'args': [{'name': 'x0',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x1',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x2',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x3',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'steps',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x4',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x5',
                        'dims': ['d', 'kw', 'c', 'kh'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.7071}],
              'grad': True},
             {'name': 'f2',
              'mesh': '2x2x2',
              'sizes': {'batch': 2, 'h': 8, 'w': 8, 'c': 2, 'd': 4, 'kh': 1, 'kw': 1},
              'args': [{'name': 'x0',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x1',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x2',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x3',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'steps',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x4',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x5',
                        'dims': ['d', 'kw', 'c', 'kh'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.7071}],
              'grad': True}],
 'triggers': [['astype',
               ["x0.astype('float32')",
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims']],
              ['a helper taking a tuple',
               ['first_minus_second((v0, x1, x2))',
                'def first_minus_second(',
                'return xs[0] - xs[1] * 0.5',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims']],
              ['jnp.mean with where', ['jnp.mean(v5, axis=-3, where=v5 > 0)']]],
 'expect': 'accepted'}
