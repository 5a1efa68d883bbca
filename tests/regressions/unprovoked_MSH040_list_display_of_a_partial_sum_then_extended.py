# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: /tmp/meshify-fuzz-qgd3hw7b/fuzz_a9c1586a_37.py:17:5: error[MSH040]: 'v2_all2' gains items in this loop whose layouts differ (or loses them): the body is rewritten once, so every item must have one layout
# Found by: python tests/fuzz/run.py --seed 55 --only 661
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH040_list_display_of_a_partial_sum_then_extended
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def stats(x0):
    return jnp.mean(x0, axis=0), jnp.max(x0, axis=0)


@mesh(model=8, rules={'batch': 'model'})
def g(x0: Tensor["batch"], x1: Tensor[()]) -> Tensor[()]:
    v0, v1 = stats(x0)
    v2 = x0.mean(axis=-1)
    v2_all2 = [v2]
    for _ in range(3):
        v2 = v2 * 0.5 + jnp.sin(x1)
        v2_all2 += [v2]
    v3 = jnp.stack(v2_all2).sum(0)
    return v3


@mesh(model=8)
def f(x0: Tensor["batch"]) -> Tensor["batch"]:
    v0 = jnp.tanh(x0)
    v1 = jnp.tanh(v0)
    return v1


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 55000826,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '8',
              'sizes': {'batch': 2},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': False},
             {'name': 'g',
              'mesh': '8',
              'sizes': {'batch': 16},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'steps', 'high': 0, 'std': 1.0},
                       {'name': 'x1', 'dims': [], 'kind': 'float', 'high': 0, 'std': 0.5}],
              'grad': True}],
 'expect': 'accepted'}
