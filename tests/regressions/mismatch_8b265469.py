# Fuzz mismatch found by tests/fuzz on the 8 mesh.
# mismatch: f (converted path): output: bfloat16[] != reference float32[]
# Found by: python tests/fuzz/run.py --seed 2041 --only 2277
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_8b265469
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(model=8, rules={'batch': 'model'})
def f(x0: Tensor["batch"], x1: Tensor["batch"]) -> Tensor[()]:
    v0: Tensor["batch"] = jnp.arange(24) / 24
    v1: Tensor["batch"] = x0 + v0
    v2 = es("t,t,t->t", v0, v0, v1)
    v3: Tensor["batch"] = jnp.negative(v2)
    v3 *= x1
    v4 = jnp.sum(v3 * v3)
    return v4


FUZZ = {'mesh': '8',
 'sizes': {'batch': 24},
 'args': [{'name': 'x0',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'x1',
           'dims': ['batch'],
           'kind': 'steps',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'}],
 'grad': True,
 'seed': 2041008400,
 'provoked': '',
 'precision': 'bfloat16',
 'triggers': [['an array of literal shape',
               ['jnp.arange(24) / 24',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'accepted'}
