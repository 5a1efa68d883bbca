# Fuzz crash found by tests/fuzz on the 2x2x2 mesh.
# crash: calling f (converted path) raised: ValueError: jax.lax.psum can only accept axis_name which corresponds to one of varying, unreduced, reduced or invarying state of the input. Got input type: float32[]{V:data}, axes: ('data', 'model', 'pipe') and input state: {'varying', 'invarying'} [meshify/runtime/ops.py:168 in psum]
# Found by: python tests/fuzz/run.py --seed 89 --only 496
# Rerun: python -m pytest tests/test_regressions.py -k crash_745eb3d1
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=2, model=2, pipe=2, rules={'h': ('model', 'pipe'), 'w': 'data', 'c': None, 'w_c': 'pipe', 'w1': 'data'})
def f(x0: Tensor["batch", "h", "w", "c"], x1: Tensor["c"], x2: Tensor["c", "seq"], x3: Tensor["h", "c"], x4: Tensor["w1"]) -> Tensor[()]:
    v0 = jnp.clip(x0, -x1 * x1, 1.0)
    v1 = jnp.transpose(v0, (2, 3, 1, 0))
    v2 = jnp.argsort(v1, axis=3).astype(v1.dtype) * 0.1
    v3 = jax.numpy.einsum("jmvn,mi", v2, x2)
    v4 = jnp.tensordot(v3, x3, axes=([-1], [0]))
    v5: Tensor["w1", "c", "h", "batch"] = v2[:-2]
    v6 = jnp.einsum("ftul,f->ftul", v5, x4)
    v7: Tensor["w1", "c", "h", "batch"] = v6 + jnp.linspace(-1.0, 1.0, 2)
    v8 = jnp.sum(v7 * v7)
    return v8


FUZZ = {'mesh': '2x2x2',
 'sizes': {'batch': 2, 'h': 32, 'w': 8, 'c': 4, 'w_c': 32, 'seq': 4, 'w1': 6},
 'args': [{'name': 'x0', 'dims': ['batch', 'h', 'w', 'c'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['c'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x2', 'dims': ['c', 'seq'], 'kind': 'float', 'high': 0, 'std': 0.5},
          {'name': 'x3', 'dims': ['h', 'c'], 'kind': 'steps', 'high': 0, 'std': 0.1768},
          {'name': 'x4', 'dims': ['w1'], 'kind': 'float', 'high': 0, 'std': 0.4082}],
 'grad': True,
 'seed': 89000763,
 'provoked': '',
 'triggers': [['an op along a split dim',
               ['jnp.argsort(v1, axis=3).astype(v1.dtype) * 0.1', 'along split dim']],
              ['an array of literal shape',
               ['jnp.linspace(-1.0, 1.0, 2)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'accepted'}
