# Fuzz rejected found by tests/fuzz on the 2x4 mesh.
# rejected: (calling f (converted path)) /tmp/meshify-fuzz-jvup45za/fuzz_d3e49e92_120_sharded.py:28:5: error[MSH050]: an array of 4 entries along dim 'batch_cat', split over 2 devices: this call's arguments do not tell 'batch_cat''s size, so meshify cannot check that the two broadcast as on one device
# Found by: python tests/fuzz/run.py --seed 4401 --only 147
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k literal_fill_beside_a_made_dim_d3e49e92
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={'batch_cat': 'data'})
def f(x0: Tensor["batch"], x1: Tensor["batch"]) -> Tensor["batch_cat"]:
    v0: Tensor["batch_cat"] = jnp.concatenate([x0, x1], axis=0)
    v1 = v0 + jnp.full((4,), jnp.sum(v0))
    return v1


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 2, 'batch_cat': 4},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 4401013350,
 'provoked': '',
 'triggers': [['jnp.full',
               ['jnp.full((4,), jnp.sum(v0))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']]],
 'expect': 'accepted'}
