# Fuzz crash found by tests/fuzz on the 1x8 mesh.
# [a * b for a, b in zip(s, s[1:])] of partial sums: the comprehension's targets were hoisted for their psum
# before the statement, where they are not bound (KeyError inside meshify); now reduced where read.
# crash: convert_source raised: KeyError: 'a' [meshify/rewrite/_interp.py:2105 in _materialise]
# Found by: python tests/fuzz/run.py --seed 4301 --only 619
# Rerun: python -m pytest tests/test_regressions.py -k crash_partial_comprehension_target_9b8c8ddc
import functools

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@functools.partial(jax.jit, static_argnums=1)
def per_count(x0, k):
    return (x0 * (2.0 / x0.shape[0]) - jnp.sum(x0, axis=0) / x0.shape[0]) * k


@mesh(model=8)
def g(x0: Tensor["batch"]) -> Tensor["batch"]:
    v0 = per_count(x0, 0.5)
    return v0


@mesh(data=1, model=8, rules={'batch': 'data', 'h': 'model', 'c': None, 'seq': 'model', 'seq_r': 'model', 'd': 'data'})
def f(x0: Tensor["batch", "h", "w", "c"], x1: Tensor["seq", "batch"], x2: Tensor["per_group", "c"], x3: Tensor["kw", "seq", "d"]):
    v0 = jnp.roll(x0, (1, 3), axis=(2, 1))
    v1 = jax.numpy.einsum("hudy,zh->dyz", v0, x1)
    v2 = jnp.cos(v1)
    v3: Tensor["w", "c", "seq_r"] = v2
    v4 = jnp.matmul(x2, v3)
    v5 = -v4
    v6: Tensor["c", "d", "w"] = jax.lax.conv_general_dilated(v2, x3, (1,), "SAME", None, None, ("HNC", "HIO", "NCH"))
    v7 = jax.lax.top_k(v1, 1, axis=1)[1].astype(jnp.float32).mean(axis=1) * 0.1
    v8: Tensor["d", "w"] = jnp.eye(2, 8)
    v9 = v6 * v8
    v10: Tensor["c", "d", "w2"] = jax.lax.reduce_window(v9, -jnp.inf, jax.lax.max, (1, 1, 3), (1, 1, 3), ((0, 0), (0, 0), (0, 1)))
    v11s = [jnp.mean(x0), jnp.mean(x0 * x0)]
    return v10, [a * b for a, b in zip(v11s, v11s[1:])]


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 2,
           'h': 16,
           'w': 8,
           'c': 2,
           'seq': 24,
           'groups': 2,
           'per_group': 12,
           'seq_r': 24,
           'w1': 16,
           'd': 2,
           'kw': 3,
           'w2': 3},
 'args': [{'name': 'x0', 'dims': ['batch', 'h', 'w', 'c'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['seq', 'batch'], 'kind': 'float', 'high': 0, 'std': 0.7071},
          {'name': 'x2', 'dims': ['per_group', 'c'], 'kind': 'float', 'high': 0, 'std': 0.7071},
          {'name': 'x3', 'dims': ['kw', 'seq', 'd'], 'kind': 'float', 'high': 0, 'std': 0.1179}],
 'grad': False,
 'seed': 4301013522,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '1x8',
              'sizes': {'batch': 2,
                        'h': 16,
                        'w': 8,
                        'c': 2,
                        'seq': 24,
                        'groups': 2,
                        'per_group': 12,
                        'seq_r': 24,
                        'w1': 16,
                        'd': 2,
                        'kw': 3,
                        'w2': 3},
              'args': [{'name': 'x0',
                        'dims': ['batch', 'h', 'w', 'c'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x1',
                        'dims': ['seq', 'batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.7071},
                       {'name': 'x2',
                        'dims': ['per_group', 'c'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.7071},
                       {'name': 'x3',
                        'dims': ['kw', 'seq', 'd'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.1179}],
              'grad': False},
             {'name': 'g',
              'mesh': '8',
              'sizes': {'batch': 2},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': False}],
 'triggers': [['shared helper under @functools.partial(jax.jit, static_argnums=1)',
               ['@functools.partial(jax.jit, static_argnums=1)',
                'def per_count(',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']],
              ['an array of literal shape',
               ['jnp.eye(2, 8)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']]],
 'expect': 'accepted'}
