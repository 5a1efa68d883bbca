# Fuzz mismatch found by tests/fuzz on the 1x8 mesh.
# mismatch: f (converted path): output: float32[4, 4, 8] != reference float16[4, 4, 8]
# Found by: python tests/fuzz/run.py --seed 2030 --only 319
# Fixed: a float16 partial sum entering a Python loop that needs it whole was completed before the loop
# without its cast back (float32 out); the loop-entry psum now has like=, as every other psum.
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_loop_entry_psum_dtype_eae47d34
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=1, model=8, rules={'d_model': 'model', 'd_ff': 'data'})
def f(x0: Tensor["batch", "seq", "d_model"], x1: Tensor["batch"], x2: Tensor["seq", "d_model"], x3: Tensor["batch", "d_model", "d_ff"], x4: Tensor["seq", "d_ff"]) -> Tensor["batch", "seq", "d_ff"]:
    v0 = jax.numpy.einsum("yzx,y->zx", x0, x1)
    v1 = v0 + x2
    v2 = jnp.sqrt(jnp.abs(v1) + 1.0)
    v3 = jnp.matmul(x0, x3)
    for _ in range(1):
        v3 = jnp.tanh(v3 * x4)
    v4 = jnp.tanh(v3)
    v5 = jnp.tanh(v4)
    return v5


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 4, 'seq': 4, 'd_model': 16, 'd_ff': 8},
 'args': [{'name': 'x0',
           'dims': ['batch', 'seq', 'd_model'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'float16'},
          {'name': 'x1',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 0.5,
           'dtype': 'float16'},
          {'name': 'x2',
           'dims': ['seq', 'd_model'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'float16'},
          {'name': 'x3',
           'dims': ['batch', 'd_model', 'd_ff'],
           'kind': 'float',
           'high': 0,
           'std': 0.25,
           'dtype': 'float16'},
          {'name': 'x4',
           'dims': ['seq', 'd_ff'],
           'kind': 'float',
           'high': 0,
           'std': 0.5,
           'dtype': 'float16'}],
 'grad': False,
 'seed': 2030006409,
 'provoked': '',
 'precision': 'float16',
 'expect': 'accepted'}
