# Fuzz crash found by tests/fuzz on the 2x4 mesh.
# crash: calling f (converted path) raised: ValueError: conv_general_dilated lhs feature dimension size divided by feature_group_count must equal the rhs input feature dimension size, but 1 // 1 != 2. [meshify/runtime/_spatial.py:228 in halo_conv]
# Found by: python tests/fuzz/run.py --seed 2031 --only 2719
# Fixed: a conversion a rule asked of a module array of unknown dims (the kernel G0, whose input-feature
# dim meets the image's split batch) was silently skipped, so the kernel stayed whole (a JAX shape error
# here; with equal sizes it could have mis-aligned). Now refused, naming the array and the fix.
# Rerun: python -m pytest tests/test_regressions.py -k crash_opaque_kernel_split_5f7c79ff
import jax
import jax.numpy as jnp
import numpy as np
from jax.numpy import einsum as es

from meshify import Tensor, mesh

G0 = jnp.asarray(np.random.default_rng(84393).standard_normal((2, 2, 5, 5)) * 0.1414, dtype=jnp.float32)


@mesh(data=2, model=4, rules={'batch': 'data', 'w': 'model', 'c': None, 'w1': 'model', 'd': None})
def f(x0: Tensor["batch", "c", "h", "w"]) -> Tensor["batch", "c", "h2", "w"]:
    v0: Tensor["batch", "c", "h1", "w1"] = jax.lax.reduce_window(x0, 0.0, jax.lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "SAME", window_dilation=(1, 1, 2, 2)) / 4
    v1: Tensor["c", "d", "h1", "w1"] = jax.lax.conv_general_dilated(v0, G0, (1, 1), "SAME", None, dimension_numbers=jax.lax.ConvDimensionNumbers((1, 0, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3)))
    v2: Tensor["batch", "c", "h2", "w"] = x0[:, :, :-2]
    return v2


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 2,
           'h': 4,
           'w': 16,
           'c': 2,
           'h1': 2,
           'w1': 8,
           'd': 2,
           'kh1': 5,
           'kw1': 5,
           'h2': 2},
 'args': [{'name': 'x0', 'dims': ['batch', 'c', 'h', 'w'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 2031008812,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '2x4',
              'sizes': {'batch': 2,
                        'h': 4,
                        'w': 16,
                        'c': 2,
                        'h1': 2,
                        'w1': 8,
                        'd': 2,
                        'kh1': 5,
                        'kw1': 5,
                        'h2': 2},
              'args': [{'name': 'x0',
                        'dims': ['batch', 'c', 'h', 'w'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0}],
              'grad': False}],
 'triggers': [['an array read unnamed (global)',
               ['G0',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'rejected'}
