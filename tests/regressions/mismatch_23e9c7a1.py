# Fuzz mismatch found by tests/fuzz on the 2x4 mesh.
# mismatch: f (converted path): output: float32[2, 4] != reference float16[2, 4]
# Found by: python tests/fuzz/run.py --seed 2041 --only 815
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_23e9c7a1
import functools

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def scan_step0(h, w, c):
    return (jnp.tanh(h * w)) * c, None


def combine(xs):
    a, b = xs
    return a * 0.5 + jnp.tanh(b)


@mesh(data=2, model=4, rules={'seq': 'data'})
def f(x0: Tensor["batch", "model"], x1: Tensor["model", "seq"], x2: Tensor["layer", "batch", "seq"]) -> Tensor["batch", "seq"]:
    v0 = jnp.tensordot(x0, x1, axes=1)
    v1, _ = jax.lax.scan(functools.partial(scan_step0, c=1.0), jnp.zeros(v0.shape, v0.dtype) + 0.5, x2)
    v2 = combine((v0, v1))
    v3 = jnp.tanh(v2)
    v4 = jnp.tanh(v3)
    v5 = jnp.tanh(v4)
    v6 = jnp.tanh(v5)
    v7 = jnp.tanh(v6)
    v8 = jnp.tanh(v7)
    v9 = jnp.tanh(v8)
    return v9


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 2, 'model': 8, 'seq': 4, 'layer': 3},
 'args': [{'name': 'x0',
           'dims': ['batch', 'model'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'float16'},
          {'name': 'x1',
           'dims': ['model', 'seq'],
           'kind': 'float',
           'high': 0,
           'std': 0.3536,
           'dtype': 'float16'},
          {'name': 'x2',
           'dims': ['layer', 'batch', 'seq'],
           'kind': 'float',
           'high': 0,
           'std': 0.5,
           'dtype': 'float16'}],
 'grad': False,
 'seed': 2041006938,
 'provoked': '',
 'precision': 'float16',
 'triggers': [['a helper taking a tuple',
               ['combine((v0, v1))',
                'def combine(',
                'a, b = xs',
                'return a * 0.5 + jnp.tanh(b)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'accepted'}
