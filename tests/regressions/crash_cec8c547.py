# Fuzz crash found by tests/fuzz on the 2x4 mesh.
# crash: calling f (converted path) raised: ValueError: jax.lax.psum can only accept axis_name which corresponds to one of varying, unreduced, reduced or invarying state of the input. Got input type: float32[]{V:data}, axes: ('data', 'model') and input state: {'invarying', 'varying'} [meshify/runtime/ops.py:329 in mean]
# Found by: python tests/fuzz/run.py --seed 83 --only 333
# Rerun: python -m pytest tests/test_regressions.py -k crash_cec8c547
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={'batch': 'model', 'seq': 'data'})
def f(x0: Tensor["batch", "seq", "d_model"], x1: Tensor["seq", "d_model"]) -> Tensor[()]:
    v0 = jnp.mean(x0, axis=None, where=x1 > -1.0)
    v1 = jnp.tanh(v0)
    v2 = jnp.tanh(v1)
    return v2


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 12, 'seq': 4, 'd_model': 6},
 'args': [{'name': 'x0',
           'dims': ['batch', 'seq', 'd_model'],
           'kind': 'float',
           'high': 0,
           'std': 1.0},
          {'name': 'x1', 'dims': ['seq', 'd_model'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': True,
 'seed': 83000582,
 'provoked': '',
 'expect': 'accepted'}
