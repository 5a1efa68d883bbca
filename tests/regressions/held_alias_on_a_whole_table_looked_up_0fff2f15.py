# Fuzz unprovoked rejection (MSH030) found by tests/fuzz on the 4x2 mesh.
# Found by: python tests/fuzz/run.py --seed 3611 --only 38
# Fixed (c13a7bf): softplus = jax.nn.softplus on a whole table was a value of unknown dims, refused at the lookup (MSH030)
# Rerun: python -m pytest tests/test_regressions.py -k held_alias_on_a_whole_table_looked_up_0fff2f15
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


softplus = jax.nn.softplus


@mesh(data=4, model=2, rules={'d_model': 'model', 'd_ff': 'data'})
def f(x0: Tensor["batch", "seq"], ids1: Tensor["d_model", "d_ff"]) -> Tensor["d_model", "d_ff", "seq"]:
    v0 = softplus(x0)
    v1: Tensor["d_model", "d_ff", "seq"] = v0[ids1]
    return v1


FUZZ = {'mesh': '4x2',
 'sizes': {'batch': 8, 'seq': 6, 'd_model': 4, 'd_ff': 8},
 'args': [{'name': 'x0', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids1',
           'dims': ['d_model', 'd_ff'],
           'kind': 'ids',
           'high': 16,
           'std': 1.0,
           'low': -16}],
 'grad': False,
 'seed': 3611010871,
 'provoked': '',
 'expect': 'accepted'}
