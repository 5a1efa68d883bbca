# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: (calling f (converted path)) /tmp/meshify-fuzz-17a7na9e/fuzz_3a37ce38_119_sharded.py:39:5: error[MSH050]: an array of 16 entries along dim 'h1', split over 8 devices: this call's arguments do not tell 'h1''s size, so meshify cannot check that the two broadcast as on one device
# Found by: python tests/fuzz/run.py --seed 4405 --only 4012
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k literal_fill_beside_a_made_dim_3a37ce38
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh

C0 = 0.5


@mesh(model=8, rules={'h': 'model', 'h1': 'model'})
def f(x0: Tensor["batch", "c", "h", "w"], x1: Tensor["w1", "w"]) -> Tensor["batch", "c_r", "h1", "w1"]:
    v0: Tensor["batch", "c", "h1", "w1"] = jax.image.resize(x0, (x0.shape[0], x0.shape[1], x0.shape[2] // 2, x0.shape[3] // 2), "nearest")
    v1: Tensor["batch", "c_r", "h1", "w1"] = v0
    v2: Tensor["batch", "c_r", "h1", "w"] = jnp.matmul(v1, x1)
    v3 = v2 + C0
    v4 = jax.nn.standardize(v3, axis=1, epsilon=0.1, algorithm="stable")
    v5 = v1 + jnp.full((2, 2, 16, 2), jnp.mean(v1))
    v6 = jnp.tanh(v5)
    v7 = jnp.tanh(v6)
    return v7


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2, 'h': 32, 'w': 4, 'c': 2, 'h1': 16, 'w1': 2, 'c_r': 2},
 'args': [{'name': 'x0', 'dims': ['batch', 'c', 'h', 'w'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['w1', 'w'], 'kind': 'float', 'high': 0, 'std': 0.7071}],
 'grad': False,
 'seed': 4405017227,
 'provoked': '',
 'triggers': [['jnp.full',
               ['jnp.full((2, 2, 16, 2), jnp.mean(v1))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']]],
 'expect': 'accepted'}
