# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: (calling f (converted path)) /tmp/meshify-fuzz-9etgvjuy/fuzz_6f2e6263_29_sharded.py:32:13: error[MSH050]: cannot split axis 2 of a [3, 1, 1] array over mesh axis 'model': its size 1 is not a multiple of the 8 devices
# Found by: python tests/fuzz/run.py --seed 190 --only 947
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH050_6f2e6263
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(model=8, rules={'seq': 'model'})
def f(x0: Tensor["batch", "seq"], ids1: Tensor["batch"], ids2: Tensor["d_model", "d_ff"], x3: Tensor["heads", "d_ff"]) -> Tensor["d_ff", "seq"]:
    v0 = jnp.moveaxis(x0, 0, 0)
    v1 = v0[jnp.arange(v0.shape[0]), ids1]
    v2 = v0[ids2]
    v3 = jnp.matmul(x3, v2)
    v4r = jnp.argmax(v2 > jnp.arange(v2.shape[0]).reshape((-1, 1, 1)) * 0.1, axis=0)
    v4 = 1.0 / (v4r + 1)
    v5 = jnp.tanh(v4)
    return v5


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2, 'seq': 8, 'd_model': 3, 'd_ff': 8, 'heads': 4},
 'args': [{'name': 'x0', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids1', 'dims': ['batch'], 'kind': 'ids', 'high': 8, 'std': 1.0},
          {'name': 'ids2', 'dims': ['d_model', 'd_ff'], 'kind': 'ids', 'high': 2, 'std': 1.0},
          {'name': 'x3', 'dims': ['heads', 'd_ff'], 'kind': 'float', 'high': 0, 'std': 0.3536}],
 'grad': False,
 'seed': 190001517,
 'provoked': '',
 'expect': 'accepted'}
