# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: /tmp/meshify-fuzz-zedvuttz/fuzz_a4ebd0d7_163.py:22:27: error[MSH030]: Lambda over the pytree 'p' (its keys or items) is not modelled
# Found by: python tests/fuzz/run.py --seed 5301 --only 1575
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k lambda_parameter_named_like_a_struct_parameter_a4ebd0d7
import functools
import operator
import typing

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


class P0(typing.NamedTuple):
    x0: Tensor["batch"]
    x1: Tensor["batch", "seq"]


@mesh(model=8, rules={'seq': 'model'})
def f(p: P0, x2: Tensor["seq"]) -> Tensor["seq"]:
    v0 = jnp.tanh(p.x0)
    v1 = jnp.matmul(v0, p.x1)
    v2 = v1 + jnp.full(v1.shape, jnp.sum(p.x0))
    v3 = functools.reduce(lambda p, q: p + q, [v2 * i for i in range(3)]) - x2
    v4 = jnp.tanh(v3 / 16)
    return v4


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2, 'seq': 8},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 0.7071},
          {'name': 'x2', 'dims': ['seq'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 5301017478,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '8',
              'sizes': {'batch': 2, 'seq': 8},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x1',
                        'dims': ['batch', 'seq'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.7071},
                       {'name': 'x2', 'dims': ['seq'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': False,
              'struct': ['p', 'namedtuple', 'P0', ['x0', 'x1']]}],
 'triggers': [['jnp.full',
               ['jnp.full(v1.shape, jnp.sum(x0))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']]],
 'expect': 'accepted'}
