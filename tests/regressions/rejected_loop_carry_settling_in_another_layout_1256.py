# Found by the fuzzer (python tests/fuzz/run.py --seed 5 --only 1256) once it generated loops:
# a scan carry that the body returns in another layout of the same dims was rejected ("the
# scan carry changes layout in the loop body").  The carry now enters the loop in the layout
# the body returns it in (here a free local slice), and the body is walked again
# (meshify/rewrite/_ops_control.py, _enter_as).
# Rerun: python -m pytest tests/test_regressions.py -k rejected_loop_carry_settling_in_another_layout_1256
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(model=8, rules={'seq': 'model'})
def f(x0: Tensor["batch"], x1: Tensor["batch"], ids2: Tensor["seq"], x3: Tensor["layer", "seq"], x4: Tensor[()], x5: Tensor["seq", "d_model"], x6: Tensor["d_model"]) -> Tensor["d_model"]:
    v0 = jnp.where(x0 > x1, x0, x1)
    v1 = jnp.take_along_axis(v0, ids2, axis=0)
    v2, v3 = jax.lax.scan(lambda h, w: (h + 0.5 * jnp.sin(w), jnp.tanh(h)), v1, x3)
    v4: Tensor["seq"] = jax.nn.logsumexp(v3, axis=-2)
    v5 = jnp.where(v4 > 0, v4, 0.1 * v4)
    for _ in range(3):
        v2 = v2 * 0.5 + jnp.sin(x4)
    v6 = v5 @ x5
    v7 = jax.nn.log_softmax(v6, axis=-1)
    v8 = jnp.subtract(v7, x6)
    return jnp.negative(v7)


FUZZ = {'mesh': '8',
 'sizes': {'batch': 6, 'seq': 16, 'layer': 3, 'd_model': 6},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids2', 'dims': ['seq'], 'kind': 'ids', 'high': 6, 'std': 1.0},
          {'name': 'x3', 'dims': ['layer', 'seq'], 'kind': 'float', 'high': 0, 'std': 0.5},
          {'name': 'x4', 'dims': [], 'kind': 'float', 'high': 0, 'std': 0.5},
          {'name': 'x5', 'dims': ['seq', 'd_model'], 'kind': 'float', 'high': 0, 'std': 0.25},
          {'name': 'x6', 'dims': ['d_model'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 5001271,
 'provoked': '',
 'expect': 'accepted'}
