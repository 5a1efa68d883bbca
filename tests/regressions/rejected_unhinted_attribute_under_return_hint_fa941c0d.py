# Fuzz rejected found by tests/fuzz on the 8x1 mesh.
# rejected: /tmp/meshify-fuzz-ym6tt_1n/fuzz_fa941c0d_347.py:25:16: error[MSH040]: 'v1' has dims [] but the return hint says [batch]
# Found by: python tests/fuzz/run.py --seed 6204 --only 326
# (its fix now names self.w, read without a dims hint and taken for a Python value: the trigger it meets)
# Rerun: python -m pytest tests/test_regressions.py -k rejected_unhinted_attribute_under_return_hint_fa941c0d
import functools

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh

C0 = 0.5


def scan_step0(h, w, c):
    return (h * 0.5 + jnp.cos(h * w)) * c, None


class Model:
    def __init__(self, w):
        self.w = w
        self.scale = 1.0

    @mesh(data=8, model=1, rules={'batch': 'data'})
    def f(self, x1: Tensor["layer"]) -> Tensor["batch"]:
        v0, _ = jax.lax.scan(functools.partial(scan_step0, c=1.0), self.w, x1)
        v1 = jnp.maximum(v0, C0)
        return v1


FUZZ = {'mesh': '8x1',
 'sizes': {'batch': 8, 'layer': 2},
 'args': [{'name': 'x1', 'dims': ['layer'], 'kind': 'float', 'high': 0, 'std': 0.5}],
 'grad': False,
 'seed': 6204018938,
 'provoked': '',
 'entries': [{'name': 'Model',
              'mesh': '8x1',
              'sizes': {'batch': 8, 'layer': 2},
              'args': [{'name': 'x1', 'dims': ['layer'], 'kind': 'float', 'high': 0, 'std': 0.5}],
              'grad': False,
              'method': 'f',
              'attr': {'name': 'w', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}}],
 'triggers': [['an array read unnamed (method)',
               ['self.w',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']]],
 'expect': 'rejected'}
