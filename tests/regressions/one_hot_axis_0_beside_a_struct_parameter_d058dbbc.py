# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: /tmp/meshify-fuzz-zedvuttz/fuzz_d058dbbc_347.py:19:51: error[MSH030]: one_hot(axis=...)
# Found by: python tests/fuzz/run.py --seed 5301 --only 2700
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k one_hot_axis_0_beside_a_struct_parameter_d058dbbc
import typing

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


class P0(typing.NamedTuple):
    x0: Tensor["batch", "seq", "d_model"]
    x1: Tensor["d_ff", "seq", "batch"]


@mesh(model=8, rules={'d_model': 'model'})
def f(p: P0, ids2: Tensor["d_ff"]) -> Tensor["d_ff", "seq", "d_model"]:
    v0 = jnp.tanh(p.x0)
    v1: Tensor["d_ff", "batch", "seq", "d_model"] = es("baz,tab->tbaz", v0, p.x1)
    v2 = jax.nn.one_hot(ids2, p.x0.shape[0], axis=0)
    v3 = jnp.einsum("ab,acd->bcd", v2, p.x0)
    return v3


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2, 'seq': 2, 'd_model': 8, 'd_ff': 2},
 'args': [{'name': 'x0',
           'dims': ['batch', 'seq', 'd_model'],
           'kind': 'float',
           'high': 0,
           'std': 1.0},
          {'name': 'x1', 'dims': ['d_ff', 'seq', 'batch'], 'kind': 'float', 'high': 0, 'std': 0.5},
          {'name': 'ids2', 'dims': ['d_ff'], 'kind': 'ids', 'high': 2, 'std': 1.0}],
 'grad': False,
 'seed': 5301018603,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '8',
              'sizes': {'batch': 2, 'seq': 2, 'd_model': 8, 'd_ff': 2},
              'args': [{'name': 'x0',
                        'dims': ['batch', 'seq', 'd_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x1',
                        'dims': ['d_ff', 'seq', 'batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.5},
                       {'name': 'ids2', 'dims': ['d_ff'], 'kind': 'ids', 'high': 2, 'std': 1.0}],
              'grad': False,
              'struct': ['p', 'namedtuple', 'P0', ['x0', 'x1']]}],
 'triggers': [['one_hot without a hint',
               ['jax.nn.one_hot(ids2, x0.shape[0], axis=0)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']],
              ['one_hot with axis', ['jax.nn.one_hot(ids2, x0.shape[0], axis=0)']]],
 'expect': 'accepted'}
