# Fuzz rejected found by tests/fuzz on the 2x4 mesh.
# rejected: /tmp/meshify-fuzz-ie2yhf9j/fuzz_35a013ec_94.py:18:9: error[MSH040]: v3_all5.append(...) in a loop: the list holds an array of layout [d_ff] partial over 'data' and this iteration appends an array of layout [d_ff]; the loop's body is rewritten once, so every item must have one layout
# Found by: python tests/fuzz/run.py --seed 52 --only 1164
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH040_list_display_of_a_partial_sum_then_appended
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={'batch': 'data', 'd_model': 'model'})
def f(x0: Tensor["batch"], x1: Tensor["batch"], ids2: Tensor["seq", "d_model"], x3: Tensor["batch", "d_ff"], x4: Tensor["d_ff"], x5: Tensor[()]) -> Tensor["d_ff"]:
    v0 = x0 + x1
    v1 = jnp.tanh(v0)
    v2 = x0[ids2]
    v3 = es("j,jx->x", x0, x3)
    v3 *= x4
    v3_all5 = [v3]
    for _ in range(1):
        v3 = jnp.tanh(v3 * x5)
        v3_all5.append(v3)
    v4: Tensor["d_ff"] = sum(v3_all5)
    return v4


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 2, 'data': 2, 'seq': 2, 'd_model': 12, 'd_ff': 4},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids2', 'dims': ['seq', 'd_model'], 'kind': 'ids', 'high': 2, 'std': 1.0},
          {'name': 'x3', 'dims': ['batch', 'd_ff'], 'kind': 'float', 'high': 0, 'std': 0.7071},
          {'name': 'x4', 'dims': ['d_ff'], 'kind': 'steps', 'high': 0, 'std': 1.0},
          {'name': 'x5', 'dims': [], 'kind': 'float', 'high': 0, 'std': 0.5}],
 'grad': False,
 'seed': 52001320,
 'provoked': '',
 'expect': 'accepted'}
