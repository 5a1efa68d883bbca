# Fuzz rejected found by tests/fuzz on the 1x8 mesh.
# rejected: /tmp/meshify-fuzz-qakeqv95/fuzz_5a9df881_232.py:31:21: error[MSH030]: index 'v3r' is an array whose dims meshify cannot infer
# Found by: python tests/fuzz/run.py --seed 3621 --only 232
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH030_5a9df881
import functools
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


split_impl = jnp.split
concatenate_impl = jnp.concatenate
concatenate = concatenate_impl
arange = functools.partial(jnp.arange, device=None)


class Model:
    def __init__(self, w):
        self.w = w
        self.scale = 1.0

    @mesh(data=1, model=8, rules={'batch': 'data', 'h': 'model', 'c': None, 'h_cat': None, 'batch_cat': 'data'})
    def f(self, x0: Tensor["batch", "h", "w", "c"], x1: Tensor["batch", "h", "w", "c"], x3: Tensor["h_cat", "c", "w", "batch"]):
        x2: Tensor["batch", "h_cat", "w", "c"] = self.w
        x0_acc0 = 0.0
        for x0_part0 in split(x0, 4, axis=-2): x0_acc0 = x0_acc0 + x0_part0
        v0: Tensor["batch", "h", "w_sec", "c"] = x0_acc0 * 0.5
        v1: Tensor["batch", "h_cat", "w", "c"] = concatenate((x0, x0, x1), -3)
        v2 = v1.T
        v3s = jnp.einsum("ibcz,Xibz->cX", v2, x3)
        v3r = arange(v3s.shape[0])
        v3sm = jax.nn.log_softmax(v3s, axis=-1)
        return v3sm[v3r, v3r]


split = split_impl


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 2, 'h': 32, 'w': 8, 'c': 2, 'w_sec': 2, 'h_cat': 96, 'batch_cat': 4},
 'args': [{'name': 'x0', 'dims': ['batch', 'h', 'w', 'c'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch', 'h', 'w', 'c'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x3',
           'dims': ['h_cat', 'c', 'w', 'batch'],
           'kind': 'float',
           'high': 0,
           'std': 0.1768}],
 'grad': False,
 'seed': 3621011095,
 'provoked': '',
 'entries': [{'name': 'Model',
              'mesh': '1x8',
              'sizes': {'batch': 2,
                        'h': 32,
                        'w': 8,
                        'c': 2,
                        'w_sec': 2,
                        'h_cat': 96,
                        'batch_cat': 4},
              'args': [{'name': 'x0',
                        'dims': ['batch', 'h', 'w', 'c'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x1',
                        'dims': ['batch', 'h', 'w', 'c'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x3',
                        'dims': ['h_cat', 'c', 'w', 'batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.1768}],
              'grad': False,
              'method': 'f',
              'attr': {'name': 'w',
                       'dims': ['batch', 'h_cat', 'w', 'c'],
                       'kind': 'float',
                       'high': 0,
                       'std': 1.0}}],
 'triggers': [["sections split over another mesh's axes",
               ['does not split into', 'must split into']]],
 'expect': 'accepted'}
