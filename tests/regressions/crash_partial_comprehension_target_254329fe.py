# Fuzz crash found by tests/fuzz on the 1x8 mesh.
# [a * b for a, b in zip(s, s[1:])] of partial sums: the comprehension's targets were hoisted for their psum
# before the statement, where they are not bound (KeyError inside meshify); now reduced where read.
# crash: calling f (converted path) raised: ValueError: pytree structure error: different lengths of tuple at key path [meshify/runtime/_bind.py:717 in program]
# Found by: python tests/fuzz/run.py --seed 4301 --only 2408
# Rerun: python -m pytest tests/test_regressions.py -k crash_partial_comprehension_target_254329fe
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=1, model=8, rules={'batch': 'model', 'seq': 'data'})
def f(x0: Tensor["data"], x1: Tensor["batch", "data"], x2: Tensor["seq", "batch"], x3: Tensor["d_model", "seq"]):
    v0 = jax.nn.log_softmax(x0)
    v1 = jax.nn.log_softmax(v0, axis=None)
    v2 = jnp.where(v1 > x1, v1, x1)
    v3: Tensor["batch", "data"] = jnp.sqrt(jnp.abs(v2) + 1.0)
    v4 = jnp.mean(v3, (0, 1), keepdims=True)
    v5 = v4 - x2
    v6 = jnp.dot(x3, v5)
    v7s = [jnp.mean(v1), jnp.mean(v1 * v1)]
    return v6, [a * b for a, b in zip(v7s, v7s[1:])]


FUZZ = {'mesh': '1x8',
 'sizes': {'data': 1, 'batch': 16, 'seq': 2, 'd_model': 8},
 'args': [{'name': 'x0', 'dims': ['data'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch', 'data'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x2', 'dims': ['seq', 'batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x3', 'dims': ['d_model', 'seq'], 'kind': 'float', 'high': 0, 'std': 0.7071}],
 'grad': False,
 'seed': 4301015311,
 'provoked': '',
 'expect': 'accepted'}
