# Fuzz mismatch found by tests/fuzz on the 8 mesh.
# mismatch: f (converted path): output: 4 of 8 values differ (max abs error 7, reference magnitude 1.47); first at (0,): np.float64(-8.0) != reference np.float64(-1.0)
# Found by: python tests/fuzz/run.py --seed 15 --only 2895
# Fixed in meshify/rewrite/rules/lookups.py: with a fill_value the table is reduced first (each device
# of a partial sum added the fill once: -8 for a fill of -1 on 8 devices).
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_fill_value_of_a_partial_table
import jax
import jax.numpy as jnp
import numpy as np
from jax.numpy import einsum as es

from meshify import Tensor, mesh

G0 = jnp.asarray(np.random.default_rng(77190).standard_normal((8, 3)) * 0.3536, dtype=jnp.float32)


@mesh(model=8, rules={'batch': 'model', 'd_model': 'model'})
def f(x0: Tensor["batch"], ids1: Tensor["d_model"]) -> Tensor["d_model"]:
    v0: Tensor["batch", "seq"] = G0
    v1 = x0 @ v0
    v2 = jnp.take_along_axis(v1, ids1, axis=0, fill_value=-1.0)
    return v2


FUZZ = {'mesh': '8',
 'sizes': {'batch': 8, 'seq': 3, 'd_model': 8},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids1', 'dims': ['d_model'], 'kind': 'ids', 'high': 6, 'std': 1.0, 'low': -6}],
 'grad': False,
 'seed': 15002940,
 'provoked': '',
 'triggers': [['take_along_axis with fill_value',
               ['jnp.take_along_axis(v1, ids1, axis=0, fill_value=-1.0)']]],
 'expect': 'accepted'}
