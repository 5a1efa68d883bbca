# Fuzz rejected found by tests/fuzz on the 8x1 mesh.
# rejected: /tmp/meshify-fuzz-61z3hwp7/fuzz_e4c4753c_494.py:12:27: error[MSH040]: the scan carry changes layout in the loop body: static in, [batch, h/'data', w, c] out
# Found by: python tests/fuzz/run.py --seed 2043 --only 482
# Was refused at the scan (a carry entering as a constant, self.w, returned split); now the scan slices
# it on its way in and the call is refused where the cause is: self.w read without a Tensor hint (MSH050).
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH040_e4c4753c
import functools

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@functools.partial(jax.jit, static_argnums=3)
def helper(x0, x3, x4, k):
    v3, v4 = jax.lax.scan(lambda h, w: (h + 0.5 * jnp.sin(w), h), x0, x3)
    v5 = jax.numpy.einsum("lfevs,bgsf->evbg", v4, x4, precision="highest")
    v4 = v4 * k
    return v4


class Model:
    def __init__(self, w):
        self.w = w
        self.scale = 1.0

    @mesh(data=8, model=1, rules={'batch': 'model', 'h': 'data', 'seq': 'model'}, dims={"batch": 2, "h": 64, "w": 4, "c": 2, "d": 2, "kh": 1, "kw": 1})
    def f(self, x1: Tensor["d", "c", "kh", "kw"], x2: Tensor["batch", "d", "h", "w"], x3: Tensor["layer", "batch", "h", "w", "c"], x4: Tensor["d", "d_model", "c", "batch"]) -> Tensor["batch", "d", "h", "w"]:
        v0: Tensor["batch", "d", "h", "w"] = jax.lax.conv_general_dilated(self.w, x1, (1, 1), "SAME", rhs_dilation=(2, 2), dimension_numbers=("NHWC", "OIHW", "NCHW"))
        v1 = jnp.where(v0 > 0, jax.nn.log_softmax(v0, (0, 1), where=v0 > 0), 0.0)
        v2: Tensor["batch", "d", "h", "w"] = sum([v1, x2])
        v4 = helper(self.w, x3, x4, 1.0)
        v6 = v0 + jnp.full_like(v0, jnp.max(v4))
        return v6


FUZZ = {'mesh': '8x1',
 'sizes': {'batch': 2,
           'h': 64,
           'w': 4,
           'c': 2,
           'd': 2,
           'kh': 1,
           'kw': 1,
           'layer': 3,
           'seq': 6,
           'd_model': 3},
 'args': [{'name': 'x1', 'dims': ['d', 'c', 'kh', 'kw'], 'kind': 'float', 'high': 0, 'std': 0.7071},
          {'name': 'x2', 'dims': ['batch', 'd', 'h', 'w'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x3',
           'dims': ['layer', 'batch', 'h', 'w', 'c'],
           'kind': 'float',
           'high': 0,
           'std': 0.5},
          {'name': 'x4',
           'dims': ['d', 'd_model', 'c', 'batch'],
           'kind': 'float',
           'high': 0,
           'std': 0.5}],
 'grad': False,
 'seed': 2043006611,
 'provoked': '',
 'entries': [{'name': 'Model',
              'mesh': '8x1',
              'sizes': {'batch': 2,
                        'h': 64,
                        'w': 4,
                        'c': 2,
                        'd': 2,
                        'kh': 1,
                        'kw': 1,
                        'layer': 3,
                        'seq': 6,
                        'd_model': 3},
              'args': [{'name': 'x1',
                        'dims': ['d', 'c', 'kh', 'kw'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.7071},
                       {'name': 'x2',
                        'dims': ['batch', 'd', 'h', 'w'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x3',
                        'dims': ['layer', 'batch', 'h', 'w', 'c'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.5},
                       {'name': 'x4',
                        'dims': ['d', 'd_model', 'c', 'batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.5}],
              'grad': False,
              'method': 'f',
              'attr': {'name': 'w',
                       'dims': ['batch', 'h', 'w', 'c'],
                       'kind': 'float',
                       'high': 0,
                       'std': 1.0}}],
 'triggers': [['jax.nn.log_softmax with where', ['jax.nn.log_softmax(v0, (0, 1), where=v0 > 0)']],
              ['builtin sum of a list',
               ['sum([v1, x2])',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['einsum with precision',
               ['jax.numpy.einsum("lfevs,bgsf->evbg", v4, x4, precision="highest")']],
              ['jnp.full_like',
               ['jnp.full_like(v0, jnp.max(v4))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['helper under @functools.partial(jax.jit, static_argnums=3)',
               ['@functools.partial(jax.jit, static_argnums=3)',
                'def helper(',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['an array read unnamed (method)',
               ['self.w',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'rejected'}
