# Fuzz (seed 127): a per-row pick x[jnp.arange(n), kw["ids"]] in a **kw helper: the ids read off the kwargs
# dict as off a name (was an unprovoked MSH030, "advanced indexing with an array beside indices").
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


ACT_FN = jax.nn.relu


def helper(v1, **kw):
    v2 = jax.nn.softplus(v1)
    v3 = jnp.divide(v2, (1.0 + kw["x2"] * kw["x2"]))
    v4 = v3[jnp.arange(v3.shape[0]), kw["ids3"]]
    v5 = jnp.max(v4, 0)
    return v5


@mesh(model=8, rules={'seq': 'model'})
def f(x0: Tensor["batch"], x1: Tensor["seq", "batch"], x2: Tensor["batch", "seq"], ids3: Tensor["batch"]) -> Tensor[()]:
    v0 = jnp.dot(x1, x0)
    v1 = v0 - v0.min(axis=0, keepdims=True)
    v5 = helper(v1, x2=x2, ids3=ids3)
    v6 = ACT_FN(v5)
    return v6


FUZZ = {'mesh': '8',
 'sizes': {'batch': 6, 'seq': 24},
 'args': [{'name': 'x0',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'float16'},
          {'name': 'x1',
           'dims': ['seq', 'batch'],
           'kind': 'float',
           'high': 0,
           'std': 0.4082,
           'dtype': 'float16'},
          {'name': 'x2',
           'dims': ['batch', 'seq'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'float16'},
          {'name': 'ids3', 'dims': ['batch'], 'kind': 'ids', 'high': 24, 'std': 1.0}],
 'grad': True,
 'seed': 127000788,
 'provoked': '',
 'precision': 'float16',
 'triggers': [['a function a module-level name holds, on a whole array',
               ['ACT_FN(v5)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'whose dims meshify cannot infer',
                'cannot infer the dims',
                'einsum_',
                'opaque',
                'ACT_FN(v5)',
                'Opaque',
                'placeholder']]],
 'expect': 'accepted'}
