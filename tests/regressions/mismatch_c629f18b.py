# Fuzz mismatch found by tests/fuzz on the 2x4 mesh.
# mismatch: f (converted path): output: bfloat16[] != reference float32[]
# Found by: python tests/fuzz/run.py --seed 2039 --only 328
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_c629f18b
import jax
import jax.numpy as jnp
import numpy as np
from jax.numpy import einsum as es

from meshify import Tensor, mesh

G0 = jnp.asarray(np.random.default_rng(3576).standard_normal((4,)) * 1.0, dtype=jnp.bfloat16)


def make_f(W):
    @mesh(data=2, model=4, rules={'batch': 'data', 'data_cat': 'data', 'seq': 'model'})
    def f(x1: Tensor["layer", "data"], x2: Tensor["data"], ids3: Tensor["layer"], x4: Tensor["seq"]) -> Tensor[()]:
        x0: Tensor["data"] = W
        v0 = jax.nn.sigmoid(x0)
        v1, _ = jax.lax.scan(lambda h, w: (h + 0.5 * jnp.sin(w), None), v0, x1)
        v2: Tensor["data_cat"] = jnp.concatenate((v1, x2, v0), axis=0)
        v3: Tensor["layer"] = v2[ids3]
        v4 = jnp.mean(v3, 0, jnp.float32, keepdims=True)
        v5 = v4 - x4
        v6 = v5.mean()
        return v6

    return f


f = make_f(G0)


FUZZ = {'mesh': '2x4',
 'sizes': {'data': 4, 'batch': 6, 'layer': 2, 'data_cat': 12, 'seq': 8},
 'args': [{'name': 'x1',
           'dims': ['layer', 'data'],
           'kind': 'float',
           'high': 0,
           'std': 0.5,
           'dtype': 'bfloat16'},
          {'name': 'x2',
           'dims': ['data'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'ids3', 'dims': ['layer'], 'kind': 'ids', 'high': 12, 'std': 1.0},
          {'name': 'x4',
           'dims': ['seq'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'}],
 'grad': True,
 'seed': 2039006445,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '2x4',
              'sizes': {'data': 4, 'batch': 6, 'layer': 2, 'data_cat': 12, 'seq': 8},
              'args': [{'name': 'x1',
                        'dims': ['layer', 'data'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.5,
                        'dtype': 'bfloat16'},
                       {'name': 'x2',
                        'dims': ['data'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'},
                       {'name': 'ids3', 'dims': ['layer'], 'kind': 'ids', 'high': 12, 'std': 1.0},
                       {'name': 'x4',
                        'dims': ['seq'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'}],
              'grad': True}],
 'precision': 'bfloat16',
 'triggers': [['jnp.mean with dtype', ['jnp.mean(v3, 0, jnp.float32, keepdims=True)']]],
 'expect': 'accepted'}
