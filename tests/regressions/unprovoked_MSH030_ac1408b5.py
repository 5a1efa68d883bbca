# Fuzz rejected found by tests/fuzz on the 1x8 mesh.
# rejected: /tmp/meshify-fuzz-0mik565_/fuzz_ac1408b5_530.py:17:28: error[MSH030]: the default of 'act' in helper() needs a collective
# Found by: python tests/fuzz/run.py --seed 2042 --only 1049
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH030_ac1408b5
import jax
import jax.numpy as jnp
import numpy as np
from jax.numpy import einsum as es

from meshify import Tensor, mesh

G0 = jnp.asarray(np.random.default_rng(23416).standard_normal((8,)) * 1.0, dtype=jnp.bfloat16)


ACT = {"gelu": jax.nn.gelu, "tanh": jnp.tanh, "silu": jax.nn.silu}


@mesh(data=1, model=8, rules={'batch': 'data', 'stacked': 'data', 'batch_cat': 'model'})
def f(x1: Tensor["batch"], x2: Tensor["batch"], x3: Tensor["batch"], x0: Tensor["batch"] = G0):
    v0: Tensor["batch"] = jnp.nan_to_num(x0, nan=0.0, posinf=1.0)
    def helper(v0, x3, act=ACT["gelu"]):
        v1: Tensor["batch_cat"] = jnp.concatenate((v0, x3), axis=-1)
        v2 = jnp.max(v1, 0)
        v3: Tensor[()] = v2.astype(jnp.float16).astype(jnp.float32)
        v4: Tensor[()] = jax.nn.sigmoid(v3)
        v5 = jax.nn.gelu(v4)
        v5 = act(v5)
        return v5
    v5 = helper(v0, x3)
    return v5


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 8, 'stacked': 3, 'batch_cat': 16},
 'args': [{'name': 'x1',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'x2',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'x3',
           'dims': ['batch'],
           'kind': 'steps',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'}],
 'grad': True,
 'seed': 2042007175,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '1x8',
              'sizes': {'batch': 8, 'stacked': 3, 'batch_cat': 16},
              'args': [{'name': 'x1',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'},
                       {'name': 'x2',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'},
                       {'name': 'x3',
                        'dims': ['batch'],
                        'kind': 'steps',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'}],
              'grad': True}],
 'precision': 'bfloat16',
 'triggers': [['astype',
               ['v2.astype(jnp.float16).astype(jnp.float32)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['an array default argument', ['= G0']]],
 'expect': 'accepted'}
