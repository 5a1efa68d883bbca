# Fuzz mismatch found by tests/fuzz on the 8 mesh.
# mismatch: f (converted path): output: float32[3] != reference bfloat16[3]
# Found by: python tests/fuzz/run.py --seed 71 --only 1305
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_9c52ca16
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def gate(x0, x1):
    return (jnp.tanh(x0) * jax.nn.sigmoid(x1))


@mesh(data=8, model=1, rules={'batch': 'data'})
def g(x0: Tensor["batch"], x1: Tensor["batch"], x2: Tensor["batch"]) -> Tensor["batch"]:
    v0 = gate(x0, x0)
    v1: Tensor["batch"] = jax.numpy.einsum("l,l,l->l", v0, x1, x2)
    return v1


@mesh(model=8, rules={'batch': 'model', 'seq': 'model', 'd_model': 'model', 'd_ff': None})
def f(x0: Tensor["batch"], x1: Tensor["batch"], x2: Tensor["batch"], x3: Tensor["batch"], x4: Tensor["d_ff", "batch"]) -> Tensor["d_ff"]:
    v0 = g(x1, x2, x3)
    v1 = jax.numpy.einsum("f,hf->h", v0, x4)
    v2 = jnp.full_like(v1, jnp.mean(v0))
    return v2


FUZZ = {'mesh': '8',
 'sizes': {'batch': 16, 'seq': 8, 'd_model': 8, 'd_ff': 3},
 'args': [{'name': 'x0',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'x1',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'x2',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 0.25,
           'dtype': 'bfloat16'},
          {'name': 'x3',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'x4',
           'dims': ['d_ff', 'batch'],
           'kind': 'float',
           'high': 0,
           'std': 0.25,
           'dtype': 'bfloat16'}],
 'grad': False,
 'seed': 71001518,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '8',
              'sizes': {'batch': 16, 'seq': 8, 'd_model': 8, 'd_ff': 3},
              'args': [{'name': 'x0',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'},
                       {'name': 'x1',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'},
                       {'name': 'x2',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.25,
                        'dtype': 'bfloat16'},
                       {'name': 'x3',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'},
                       {'name': 'x4',
                        'dims': ['d_ff', 'batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.25,
                        'dtype': 'bfloat16'}],
              'grad': False},
             {'name': 'g',
              'mesh': '8x1',
              'sizes': {'batch': 16},
              'args': [{'name': 'x0',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'},
                       {'name': 'x1',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.25,
                        'dtype': 'bfloat16'},
                       {'name': 'x2',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'}],
              'grad': False}],
 'precision': 'bfloat16',
 'triggers': [['jnp.full_like',
               ['jnp.full_like(v1, jnp.mean(v0))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims']]],
 'expect': 'accepted'}
