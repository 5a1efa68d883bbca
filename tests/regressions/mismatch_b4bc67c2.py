# Fuzz mismatch found by tests/fuzz on the 2x4 mesh.
# mismatch: f (converted path): output: float16[] != reference float32[]
# Found by: python tests/fuzz/run.py --seed 2041 --only 935
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_b4bc67c2
import jax
import jax.numpy as jnp
import numpy as np
from jax.numpy import einsum as es

from meshify import Tensor, mesh

G0 = jnp.asarray(np.random.default_rng(20719).standard_normal((4, 4)) * 0.5, dtype=jnp.float16)


@mesh(data=2, model=4, rules={'batch': 'model', 'batch_cat': None, 'seq': 'data'})
def f(x0: Tensor["batch"]) -> Tensor[()]:
    v0: Tensor["batch_cat"] = jnp.hstack((x0, x0))
    v1 = x0 - x0.mean(axis=0, keepdims=True)
    v2 = v1.astype(float)
    v3: Tensor["batch", "seq"] = G0
    v4 = v2 @ v3
    v5 = sum([v1, x0])
    v6: Tensor[()] = jnp.sum(v4, None)
    v7 = jnp.tanh(v6)
    v8 = jnp.tanh(v7)
    v9 = jnp.tanh(v8)
    return v9


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 4, 'batch_cat': 8, 'seq': 4},
 'args': [{'name': 'x0',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'float16'}],
 'grad': True,
 'seed': 2041007058,
 'provoked': '',
 'precision': 'float16',
 'triggers': [['jnp.hstack', ['jnp.hstack((x0, x0))']],
              ['astype',
               ['v1.astype(float)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['builtin sum of a list',
               ['sum([v1, x0])',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'accepted'}
