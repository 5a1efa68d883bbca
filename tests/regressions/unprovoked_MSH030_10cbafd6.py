# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: /tmp/meshify-fuzz-7c1v9tlb/fuzz_10cbafd6_107.py:12:54: error[MSH030]: jax.numpy.any(where=x3 > -1.0) beside an array of dims ['seq', 'd_model']
# Found by: python tests/fuzz/run.py --seed 6311 --only 436
# An unprovoked rejection, now supported (where= of the trailing dims broadcast in jnp.any)
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH030_10cbafd6
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(model=8)
def f(x0: Tensor["batch"], ids1: Tensor["seq", "d_model"], x2: Tensor["seq", "d_model"], x3: Tensor["d_model"]) -> Tensor["d_model"]:
    v0 = x0[ids1]
    v1 = v0.at[1:].multiply(0.5)
    v2 = jnp.where(jnp.any(x2 > -1.5, axis=-2, where=x3 > -1.0), 1.0, -1.0)
    v3 = jnp.tanh(v2)
    v4 = jnp.tanh(v3)
    return v4


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2, 'seq': 2, 'd_model': 2},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids1', 'dims': ['seq', 'd_model'], 'kind': 'ids', 'high': 2, 'std': 1.0},
          {'name': 'x2', 'dims': ['seq', 'd_model'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x3', 'dims': ['d_model'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 6311019369,
 'provoked': '',
 'triggers': [['an update along a split dim', ['v0.at[1:].multiply(0.5)', 'split dim']]],
 'expect': 'accepted'}
