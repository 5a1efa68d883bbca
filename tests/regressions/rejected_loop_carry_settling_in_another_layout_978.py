# Found by the fuzzer (python tests/fuzz/run.py --seed 5 --only 978) once it generated loops:
# a scan carry that the body returns in another layout of the same dims was rejected ("the
# scan carry changes layout in the loop body").  The carry now enters the loop in the layout
# the body returns it in (here a psum_scatter of a partial sum), and the body is walked again
# (meshify/rewrite/_ops_control.py, _enter_as).
# Rerun: python -m pytest tests/test_regressions.py -k rejected_loop_carry_settling_in_another_layout_978
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=1, model=8, rules="seq:data;d_model:data")
def f(x0: Tensor["batch", "seq"], x1: Tensor["d_model", "batch"], x2: Tensor["batch", "d_model"], x3: Tensor["layer", "seq"], x4: Tensor["seq"], ids5: Tensor["d_model"]) -> Tensor[()]:
    v0 = jnp.matmul(x1, x0)
    v1 = jnp.matmul(x2, v0)
    v2, v3 = jax.lax.scan(lambda h, w: (jnp.tanh(h * w), h), v1, x3)
    v4 = jnp.tanh(v3)
    v5 = v4 @ x4
    v6 = jax.nn.log_softmax(v5, axis=-2)
    v7 = jax.nn.log_softmax(v6)
    v8 = v7[ids5]
    v9: Tensor["d_model", "batch"] = jax.nn.log_softmax(v8, axis=0)
    return v9.mean()


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 6, 'seq': 4, 'd_model': 6, 'layer': 3},
 'args': [{'name': 'x0', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['d_model', 'batch'], 'kind': 'float', 'high': 0, 'std': 0.4082},
          {'name': 'x2', 'dims': ['batch', 'd_model'], 'kind': 'float', 'high': 0, 'std': 0.4082},
          {'name': 'x3', 'dims': ['layer', 'seq'], 'kind': 'float', 'high': 0, 'std': 0.5},
          {'name': 'x4', 'dims': ['seq'], 'kind': 'steps', 'high': 0, 'std': 0.5},
          {'name': 'ids5', 'dims': ['d_model'], 'kind': 'ids', 'high': 3, 'std': 1.0}],
 'grad': True,
 'seed': 5000993,
 'provoked': '',
 'expect': 'accepted'}
