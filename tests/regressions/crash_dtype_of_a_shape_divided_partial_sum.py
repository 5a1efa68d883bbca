# Fuzz crash found by tests/fuzz on the 8 mesh.
# crash: rejection message has no caret:
# Found by: python tests/fuzz/run.py --seed 31 --only 54
# Rerun: python -m pytest tests/test_regressions.py -k crash_dtype_of_a_shape_divided_partial_sum
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(model=8, rules={'batch': 'model'})
def f(x0: Tensor["batch"], x1: Tensor["batch", "seq"]) -> Tensor["seq"]:
    v0 = x0 @ x1
    v1 = v0 / v0.shape[0]
    return v1


FUZZ = {'mesh': '8',
 'sizes': {'batch': 8, 'seq': 2},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 0.3536}],
 'grad': False,
 'seed': 31000147,
 'provoked': '',
 'expect': 'accepted'}
