# Fuzz rejected found by tests/fuzz on the 1x8 mesh.
# rejected: /tmp/meshify-fuzz-xobhsq1p/fuzz_ba3435e5_379.py:26:14: error[MSH030]: calling local value 'act'
# Found by: python tests/fuzz/run.py --seed 2042 --only 734
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH030_ba3435e5
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def stats(x0):
    return jnp.mean(x0, axis=0), jnp.max(x0, axis=0)


@mesh(data=1, model=8, rules={'batch': None, 'seq': 'model'})
def g(x0: Tensor["batch", "seq"]) -> Tensor["seq", "stacked"]:
    v0, v1 = stats(x0)
    v2 = jax.nn.softmax(v1, axis=-1)
    v3: Tensor["stacked", "seq"] = jnp.stack((v2, v1), axis=0)
    v4: Tensor["seq", "stacked"] = jnp.swapaxes(v3, 0, 1)
    return v4


@mesh(data=1, model=8, rules={'batch_hi': 'data', 'batch_lo': 'data'})
def f(x0: Tensor["batch"]):
    v0 = jax.nn.leaky_relu(x0)
    def helper(v0, act=jax.nn.silu):
        v1 = v0 + v0
        v1 = act(v1)
        return v1
    v1 = helper(v0)
    v2: Tensor[()] = jax.nn.logsumexp(v1)
    return v2


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 8, 'batch_hi': 4, 'batch_lo': 2},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': True,
 'seed': 2042006860,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '1x8',
              'sizes': {'batch': 8, 'batch_hi': 4, 'batch_lo': 2},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': True},
             {'name': 'g',
              'mesh': '1x8',
              'sizes': {'batch': 8, 'seq': 24, 'stacked': 2},
              'args': [{'name': 'x0',
                        'dims': ['batch', 'seq'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0}],
              'grad': False}],
 'expect': 'accepted'}
