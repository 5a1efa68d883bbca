# Fuzz (seed 137): a stack of a reshape whose sizes read one dim twice (seq_r_0?, seq_r_1?: inferred) beside the
# array it came from (seq, r): dims differing only by names meshify inferred are the user's (was an unprovoked
# MSH040, "stack of arrays with dims ... and ...").
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=1, model=8, rules={'batch': 'data', 'd_model': ('data', 'model'), 'd_ff': ('data', 'model'), 'heads': 'data', 'd_head': 'model'})
def f(x0: Tensor["batch", "seq"], ids1: Tensor["r", "d_head"], x2: Tensor["r"]) -> Tensor["stacked", "d_head", "seq", "r"]:
    v0 = jax.nn.one_hot(ids1, 8)
    v1 = v0 @ x0
    v2 = es("jkv,j->kvj", v1, x2)
    v3 = v2.reshape(v2.shape[0], v2.shape[1], v2.shape[1])
    v4 = jnp.log1p(jnp.abs(v3))
    v5 = jnp.mean(v4, 0)
    v6 = v5 + jnp.full((2, 2), jnp.mean(v2))
    v7: Tensor["stacked", "d_head", "seq", "r"] = jnp.stack((v2, v3), axis=0)
    v8 = jnp.tanh(v7)
    v9 = jnp.tanh(v8)
    v10 = jnp.tanh(v9)
    return v10


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 8,
           'seq': 2,
           'd_model': 16,
           'data': 2,
           'd_ff': 8,
           'heads': 6,
           'r': 2,
           'd_head': 24,
           'stacked': 2},
 'args': [{'name': 'x0', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids1', 'dims': ['r', 'd_head'], 'kind': 'ids', 'high': 8, 'std': 1.0},
          {'name': 'x2', 'dims': ['r'], 'kind': 'float', 'high': 0, 'std': 0.7071}],
 'grad': False,
 'seed': 137000719,
 'provoked': '',
 'triggers': [['one_hot with a literal depth',
               ['jax.nn.one_hot(ids1, 8)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['one_hot without a hint',
               ['jax.nn.one_hot(ids1, 8)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ["a reshape reading one dim's size for another",
               ['v2.reshape(v2.shape[0], v2.shape[1], v2.shape[1])',
                'is not the major (first) part',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['jnp.full',
               ['jnp.full((2, 2), jnp.mean(v2))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'accepted'}
