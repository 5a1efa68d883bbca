# Fuzz crash found by tests/fuzz on the 8 mesh.
# crash: calling f (converted path) raised: TypeError: scan body function carry input and carry output must have equal types, but they differ: [meshify/runtime/_bind.py:409 in local]
# Found by: python tests/fuzz/run.py --seed 71 --only 1464
# Rerun: python -m pytest tests/test_regressions.py -k crash_b0e21615
import functools

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@functools.partial(jax.jit, static_argnums=(1,))
def stats(x0, k):
    return jnp.mean(x0, axis=0), jnp.max(x0, axis=0)


@mesh(model=8, rules={'batch': None})
def g(x0: Tensor["batch"]) -> Tensor[()]:
    v0, v1 = stats(x0, 0.5)
    v2 = -v0
    return v2


@mesh(model=8, rules={'batch': 'model'})
def f(x0: Tensor["batch"]) -> Tensor[()]:
    v0, v1 = stats(x0, 1.0)
    v2 = jax.nn.leaky_relu(v1)
    v3 = jnp.abs(v2)
    v4: Tensor[()] = jnp.maximum(v3, 0.0)
    v5 = jax.lax.fori_loop(0, 1, lambda i, h: jnp.tanh(h * v0), v4)
    v6 = jnp.tanh(v5)
    v7 = jnp.tanh(v6)
    v8 = jnp.tanh(v7)
    return v8


FUZZ = {'mesh': '8',
 'sizes': {'batch': 8},
 'args': [{'name': 'x0',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'float16'}],
 'grad': True,
 'seed': 71001677,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '8',
              'sizes': {'batch': 8},
              'args': [{'name': 'x0',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'float16'}],
              'grad': True},
             {'name': 'g',
              'mesh': '8',
              'sizes': {'batch': 4},
              'args': [{'name': 'x0',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'float16'}],
              'grad': True}],
 'precision': 'float16',
 'triggers': [['shared helper under @functools.partial(jax.jit, static_argnums=(1,))',
               ['@functools.partial(jax.jit, static_argnums=(1,))',
                'def stats(',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims']]],
 'expect': 'accepted'}
