# Fuzz mismatch found by tests/fuzz on the 1x8 mesh.
# mismatch: Model.f (converted path), call 1: output[1]: 1 of 1 values differ (max abs error 0.075, reference magnitude 1); first at (): np.float64(0.10000000149011612) != reference np.float64(0.02500000037252903) (beyond any rounding: not excused as XLA's numerics)
# Found by: python tests/fuzz/run.py --seed 5401 --only 764
# XLA's, not meshify's: under jax.jit the reference itself gives another result than op by op (XLA folds the
# product by the constant eye, its zeros +0.0 where x * 0 of a negative x is -0.0, and top_k orders -0.0 below
# +0.0); each device's block of eye is no constant, and op by op the sharded program equals the reference. The
# checker excuses a difference beyond rounding only so: expect 'xla'.
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_top_k_of_signed_zeros_eb41be3d
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def row_mean(x0):
    return jnp.mean(x0, axis=-1)


class Model:
    def __init__(self, w):
        self.w = w
        self.scale = 1.0

    @mesh(data=1, model=8, rules={'seq': 'model'})
    def f(self, ids1: Tensor["d_ff"], x2: Tensor["d_ff", "seq"]):
        x0: Tensor["batch", "seq", "d_model"] = self.w
        v0: Tensor["d_ff", "batch"] = jax.nn.one_hot(ids1, x0.shape[0])
        v1 = jnp.einsum("he,evn->hvn", v0, x0)
        v2 = row_mean(v1)
        v3 = v2 * jnp.eye(4, 8)
        v4 = jax.nn.leaky_relu(v3)
        v5 = jax.lax.top_k(v4, 1)[1].astype(jnp.float32).mean(axis=1) * 0.1
        v6 = v2 / jnp.arange(1, 1 + v2.shape[0])[:, None]
        v6_all7 = []
        for _ in range(2):
            v6 = jnp.tanh(v6 * x2)
            v6_all7 += [v6]
        v6_all7.insert(-1, v6 * 0.5)
        v7 = v6_all7[-1] * 3
        v8s = {"m": jnp.mean(v5), "q": jnp.mean(v5 * v5)}
        return v7, v8s


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 2, 'seq': 8, 'd_model': 2, 'd_ff': 4},
 'args': [{'name': 'ids1', 'dims': ['d_ff'], 'kind': 'ids', 'high': 2, 'std': 1.0},
          {'name': 'x2', 'dims': ['d_ff', 'seq'], 'kind': 'float', 'high': 0, 'std': 0.5}],
 'grad': False,
 'seed': 5401016967,
 'provoked': '',
 'entries': [{'name': 'Model',
              'mesh': '1x8',
              'sizes': {'batch': 2, 'seq': 8, 'd_model': 2, 'd_ff': 4},
              'args': [{'name': 'ids1', 'dims': ['d_ff'], 'kind': 'ids', 'high': 2, 'std': 1.0},
                       {'name': 'x2',
                        'dims': ['d_ff', 'seq'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.5}],
              'grad': False,
              'method': 'f',
              'attr': {'name': 'w',
                       'dims': ['batch', 'seq', 'd_model'],
                       'kind': 'float',
                       'high': 0,
                       'std': 1.0}}],
 'triggers': [['an array of literal shape',
               ['jnp.eye(4, 8)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']]],
 'expect': 'xla'}
