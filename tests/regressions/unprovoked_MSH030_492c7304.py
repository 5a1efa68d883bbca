# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: /tmp/meshify-fuzz-zjgmt4t_/fuzz_492c7304_70.py:11:5: error[MSH030]: cannot tell the dtype of 'v0', a partial sum accumulated in float32 for float16/bfloat16 operands, to cast it back after the psum
# Found by: python tests/fuzz/run.py --seed 2040 --only 34
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH030_492c7304
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(model=8, rules={'batch': 'model', 'seq': 'model'})
def f(x0: Tensor["batch", "seq"], x1: Tensor["d_model", "seq"]) -> Tensor["d_model", "seq"]:
    v0 = jnp.sum(x0, 0, None, keepdims=True)
    v1 = jnp.tanh(v0)
    v2 = v1 + x1
    return v2


FUZZ = {'mesh': '8',
 'sizes': {'batch': 8, 'seq': 8, 'd_model': 2},
 'args': [{'name': 'x0', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['d_model', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 2040006154,
 'provoked': '',
 'expect': 'accepted'}
