# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: /tmp/meshify-fuzz-0oih3qor/fuzz_d9833eb7_115.py:29:38: error[MSH040]: the branches of this conditional expression have different layouts
# Fixed: tanh = jnp.tanh on a whole value: unknown dims, so the conditional expression's branches differed (c13a7bf)
# Found by: python tests/fuzz/run.py --seed 3610 --only 83
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_held_alias_on_a_whole_value_in_a_branch_d9833eb7
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


stop_gradient = jax.lax.stop_gradient
sin = jnp.sin
tanh = jnp.tanh


def helper_inner(v1):
    v2 = stop_gradient(v1)
    return v2


def helper(v1):
    v2 = helper_inner(v1)
    v3 = sin(v2)
    return v3


@mesh(model=8)
def f(x0: Tensor["batch"]) -> Tensor[()]:
    v0 = jax.nn.relu(x0)
    v1m = None
    if v0.shape[0] > 1: v1m = tanh(v0) * 0.5
    v1: Tensor[()] = jnp.mean(v0) + (0.0 if v1m is None else jnp.sum(v1m) / 2)
    v3 = helper(v1)
    return v3


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': True,
 'seed': 3610010913,
 'provoked': '',
 'expect': 'accepted'}
