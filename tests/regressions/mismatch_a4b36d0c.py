# Fuzz mismatch found by tests/fuzz on the 4x2 mesh.
# mismatch: f (decorator path), call 1: output: float32[4] != reference bfloat16[4] (beyond any rounding)
# Found by: python tests/fuzz/run.py --seed 6301 --only 254
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_a4b36d0c
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh

C0 = 2.0


@mesh(data=4, model=2, rules={'batch': 'data', 'seq': None, 'stacked1': 'model', 'd_model': 'data'})
def f(x0: Tensor["batch"], x1: Tensor["batch"], x2: Tensor["batch"], ids3: Tensor["batch"], x4: Tensor["seq", "batch"], x5: Tensor["batch"], x6: Tensor["d_model", "stacked1"]) -> Tensor["d_model_sec"]:
    v0 = jnp.divide(x0, (1.0 + x1 * x1))
    v1 = jax.nn.gelu(v0)
    v2: Tensor["batch", "stacked"] = jnp.stack((v1, x2, v0), axis=1)
    v3: Tensor["batch"] = jnp.take_along_axis(v0, ids3, axis=0)
    v4: Tensor["seq"] = jnp.matmul(x4, v3)
    v5: Tensor["stacked1", "batch"] = jnp.vstack([v3, x5])
    v6 = jnp.einsum("sc,ts->t", v5, x6)
    v6_acc7 = 0.0
    for v6_part7 in jnp.split(v6, 2, axis=0): v6_acc7 = v6_acc7 + v6_part7
    v7: Tensor["d_model_sec"] = v6_acc7 * 0.5
    v8 = jnp.maximum(v7, C0)
    return v8


FUZZ = {'mesh': '4x2',
 'sizes': {'batch': 8, 'stacked': 3, 'seq': 3, 'stacked1': 2, 'd_model': 8, 'd_model_sec': 4},
 'args': [{'name': 'x0',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'x1',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'x2',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'ids3', 'dims': ['batch'], 'kind': 'ids', 'high': 8, 'std': 1.0},
          {'name': 'x4',
           'dims': ['seq', 'batch'],
           'kind': 'float',
           'high': 0,
           'std': 0.3536,
           'dtype': 'bfloat16'},
          {'name': 'x5',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'x6',
           'dims': ['d_model', 'stacked1'],
           'kind': 'float',
           'high': 0,
           'std': 0.7071,
           'dtype': 'bfloat16'}],
 'grad': False,
 'seed': 6301019157,
 'provoked': '',
 'precision': 'bfloat16',
 'triggers': [['jnp.vstack', ['jnp.vstack([v3, x5])']],
              ["sections split over another mesh's axes",
               ['does not split into', 'must split into']]],
 'rebinds': [['C0', '2.0', '0.25']],
 'expect': 'accepted'}
