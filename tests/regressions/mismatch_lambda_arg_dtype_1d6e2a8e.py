# Fuzz mismatch found by tests/fuzz on the 1x8 mesh.
# mismatch: f (converted path): output: float32[] != reference float16[]
# Found by: python tests/fuzz/run.py --seed 2031 --only 1684
# Fixed: a float16 partial sum formed in a helper and passed to a lambda the caller passed in was
# psummed inside the lambda without its cast back (float32 out); it is completed in the helper first.
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_lambda_arg_dtype_1d6e2a8e
import jax
import jax.numpy as jnp
import numpy as np
from jax.numpy import einsum as es

from meshify import Tensor, mesh

G0 = jnp.asarray(np.random.default_rng(52308).standard_normal((16,)) * 1.0, dtype=jnp.float16)


def helper(v1, x3, v0, x4, act):
    v2 = jnp.einsum("s,rcs->src", v1, x3)
    v3 = jnp.einsum("omt,om,t->t", v2, v0, x4)
    v3 = act(v3)
    return v3, v2


def make_f(W):
    @mesh(data=1, model=8, rules={'batch': 'model', 'seq': 'model', 'd_model': None, 'd_ff': 'model', 'heads': ('data', 'model')})
    def f(x1: Tensor["d_model", "batch"], x2: Tensor["d_model"], x3: Tensor["d_model", "d_head", "batch"], x4: Tensor["d_head"]) -> Tensor[()]:
        x0: Tensor["batch"] = W
        v0 = jax.numpy.einsum("m,tm->mt", x0, x1)
        v1 = jnp.matmul(v0, x2)
        v3, v2 = helper(v1, x3, v0, x4, act=lambda t: jnp.tanh(t) * 0.5)
        v4: Tensor["d_head"] = jax.nn.elu(v3)
        v5 = jnp.mean(jax.nn.log_softmax(v4, axis=-1))
        return v5

    return f


f = make_f(G0)


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 16, 'seq': 24, 'd_model': 4, 'd_ff': 8, 'heads': 8, 'd_head': 3},
 'args': [{'name': 'x1',
           'dims': ['d_model', 'batch'],
           'kind': 'float',
           'high': 0,
           'std': 0.25,
           'dtype': 'float16'},
          {'name': 'x2',
           'dims': ['d_model'],
           'kind': 'float',
           'high': 0,
           'std': 0.5,
           'dtype': 'float16'},
          {'name': 'x3',
           'dims': ['d_model', 'd_head', 'batch'],
           'kind': 'float',
           'high': 0,
           'std': 0.25,
           'dtype': 'float16'},
          {'name': 'x4',
           'dims': ['d_head'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'float16'}],
 'grad': True,
 'seed': 2031007777,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '1x8',
              'sizes': {'batch': 16, 'seq': 24, 'd_model': 4, 'd_ff': 8, 'heads': 8, 'd_head': 3},
              'args': [{'name': 'x1',
                        'dims': ['d_model', 'batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.25,
                        'dtype': 'float16'},
                       {'name': 'x2',
                        'dims': ['d_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.5,
                        'dtype': 'float16'},
                       {'name': 'x3',
                        'dims': ['d_model', 'd_head', 'batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.25,
                        'dtype': 'float16'},
                       {'name': 'x4',
                        'dims': ['d_head'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'float16'}],
              'grad': True}],
 'precision': 'float16',
 'expect': 'accepted'}
