# Fuzz mismatch found by tests/fuzz on the 1x8 mesh.
# mismatch: f (decorator path), call 2: output: 1 of 1 values differ (max abs error 0.00342, reference magnitude 6.75); first at (): np.float64(6.747618198394775) != reference np.float64(6.751035690307617)
# Found by: python tests/fuzz/run.py --seed 2044 --only 37
# Fixed: a nested def reading a module constant (C0, an axis) did not key the program on it, so after
# C0 was rebound the decorator path ran the old trace; now it traces again, and the converted file refuses
# the call as it does for any int constant it read (MSH050, the trigger).
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_9febf79e
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh

C0 = 0


@mesh(data=1, model=8, rules={'seq': 'model', 'd_ff': 'data'})
def g(x0: Tensor["batch", "seq"], ids1: Tensor["d_model", "d_ff"]) -> Tensor["d_model", "d_ff"]:
    v0 = jax.nn.softmax(x0, axis=1)
    v1 = jnp.take(jnp.linspace(-1.0, 1.0, 16), ids1)
    return v1


@mesh(data=1, model=8, rules={'batch': 'data', 'seq': 'model', 'd_model': None, 'heads': 'model'})
def f(x0: Tensor["heads"], x1: Tensor["batch", "seq"], ids2: Tensor["d_model", "d_ff"], x3: Tensor["d_model", "d_ff"], x4: Tensor["d_ff"], x5: Tensor["d_model"], x6: Tensor["d_model"]) -> Tensor[()]:
    v0 = g(x1, ids2)
    v1 = jax.nn.elu(v0)
    v2 = v0.transpose(1, 0)
    v3: Tensor["d_model", "d_ff", "stacked"] = jnp.stack([v1, x3], axis=2)
    def helper(v0, x4, x5, x6):
        v4 = v0 * jnp.sum(jnp.tanh(v0), axis=C0, keepdims=True)
        v5: Tensor["d_model", "d_ff"] = v4 / 32
        v6: Tensor["d_model"] = v5 @ x4
        v7: Tensor["d_model_cat"] = jnp.concatenate((v6, x5, x6), 0)
        v8: Tensor[()] = jnp.sum(v7 * v7)
        return v8
    v8 = helper(v0, x4, x5, x6)
    return v8


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 4,
           'seq': 16,
           'd_model': 3,
           'd_ff': 2,
           'heads': 24,
           'stacked': 2,
           'd_model_cat': 9},
 'args': [{'name': 'x0', 'dims': ['heads'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids2', 'dims': ['d_model', 'd_ff'], 'kind': 'ids', 'high': 16, 'std': 1.0},
          {'name': 'x3', 'dims': ['d_model', 'd_ff'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x4', 'dims': ['d_ff'], 'kind': 'float', 'high': 0, 'std': 0.7071},
          {'name': 'x5', 'dims': ['d_model'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x6', 'dims': ['d_model'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': True,
 'seed': 2044006169,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '1x8',
              'sizes': {'batch': 4,
                        'seq': 16,
                        'd_model': 3,
                        'd_ff': 2,
                        'heads': 24,
                        'stacked': 2,
                        'd_model_cat': 9},
              'args': [{'name': 'x0', 'dims': ['heads'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x1',
                        'dims': ['batch', 'seq'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'ids2',
                        'dims': ['d_model', 'd_ff'],
                        'kind': 'ids',
                        'high': 16,
                        'std': 1.0},
                       {'name': 'x3',
                        'dims': ['d_model', 'd_ff'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x4', 'dims': ['d_ff'], 'kind': 'float', 'high': 0, 'std': 0.7071},
                       {'name': 'x5', 'dims': ['d_model'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x6', 'dims': ['d_model'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': True},
             {'name': 'g',
              'mesh': '1x8',
              'sizes': {'batch': 4, 'seq': 16, 'd_model': 3, 'd_ff': 2},
              'args': [{'name': 'x0',
                        'dims': ['batch', 'seq'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'ids1',
                        'dims': ['d_model', 'd_ff'],
                        'kind': 'ids',
                        'high': 16,
                        'std': 1.0}],
              'grad': False}],
 'triggers': [['a converted file refuses a call after an int constant it read is rebound',
               ["module constant 'C0'"]]],
 'rebinds': [['C0', '0', '1']],
 'expect': 'rejected'}
