# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: /tmp/meshify-fuzz-2c2bh4_0/fuzz_f4e8bcdb_514.py:14:27: error[MSH030]: scan body 'step1'
# Found by: python tests/fuzz/run.py --seed 2039 --only 499
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH030_f4e8bcdb
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@jax.jit
def normalize(x0):
    return jax.nn.softmax(x0, axis=-1)


def helper_g(step1, v0, x1):
    v1, v2 = jax.lax.scan(step1, v0, x1)
    return v2


@mesh(data=8, model=1, rules={'layer': 'model', 'seq': ('data', 'model'), 'd_model': ('data', 'model'), 'd_ff': 'data'})
def g(x0: Tensor["batch"], x1: Tensor["layer", "batch"], ids2: Tensor["d_ff"], key3: Tensor[()]) -> Tensor["d_ff", "batch"]:
    v0 = normalize(x0)
    step1 = lambda h, w: (h * 0.5 + jnp.cos(h * w), jnp.tanh(h))
    v2 = helper_g(step1, v0, x1)
    v3 = v2[ids2]
    v4: Tensor["d_ff", "batch"] = jax.random.normal(key3, (16, 2))
    v5 = v3 - v4
    return v5


@mesh(model=8)
def f(x0: Tensor["batch"]) -> Tensor["batch"]:
    v0 = jnp.tanh(x0)
    v1 = jnp.tanh(v0)
    return v1


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 2039006616,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '8',
              'sizes': {'batch': 2},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': False},
             {'name': 'g',
              'mesh': '8x1',
              'sizes': {'batch': 2, 'layer': 2, 'seq': 24, 'd_model': 24, 'd_ff': 16},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x1',
                        'dims': ['layer', 'batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.5},
                       {'name': 'ids2', 'dims': ['d_ff'], 'kind': 'ids', 'high': 2, 'std': 1.0},
                       {'name': 'key3', 'dims': [], 'kind': 'key', 'high': 0, 'std': 1.0}],
              'grad': False}],
 'triggers': [['shared helper under @jax.jit',
               ['@jax.jit',
                'def normalize(',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['an array of literal shape',
               ['jax.random.normal(key3, (16, 2))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'accepted'}
