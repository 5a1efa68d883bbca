# Fuzz mismatch found by tests/fuzz on the 2x4 mesh.
# mismatch: f (decorator path), call 2: output: 8 of 8 values differ (max abs error 1.72, reference magnitude 3.63); first at (0, 0, 0): np.float64(0.6814708113670349) != reference np.float64(-0.01823151670396328)
# Found by: python tests/fuzz/run.py --seed 77 --only 42
# Fixed in the commit adding this file: the decorator path rewrites f for C0's new value (matches);
# the converted file, written for C0 = 0, refuses the second call (rejected, provoked).
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_constant_axis_rebound_1335c265
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh

C0 = 0


@mesh(data=2, model=4, rules={'seq_hi': 'data'})
def f(x0: Tensor["batch", "seq"]) -> Tensor["batch", "seq_hi", "seq_lo"]:
    v0: Tensor["batch", "seq_hi", "seq_lo"] = x0.reshape(2, 2, 2)
    v1 = v0 * jnp.sum(jnp.tanh(v0), axis=C0, keepdims=True)
    return v1


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 2, 'seq': 4, 'seq_hi': 2, 'seq_lo': 2},
 'args': [{'name': 'x0', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 77000273,
 'provoked': '',
 'triggers': [['a converted file refuses a call after an int constant it read is rebound',
               ["module constant 'C0'"]]],
 'rebinds': [['C0', '0', '1']],
 'expect': 'rejected'}
