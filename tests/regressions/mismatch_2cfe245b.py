# Fuzz mismatch found by tests/fuzz on the 2x2x2 mesh.
# mismatch: f (converted path): output: float32[] != reference bfloat16[]
# Found by: python tests/fuzz/run.py --seed 71 --only 318
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_2cfe245b
# Fixed in meshify/rewrite/_interp.py (_return_items) and _dtypes.py: a helper's returned tuple keeps
# each item's dtype carriers and float32 accumulation, so the caller's psum of v1 casts it back (like=x0).
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def helper(x0, x1, x2):
    v0: Tensor["model", "batch"] = x0 / (jnp.abs(x0.sum(axis=(0, 1), keepdims=True)) + 1.0)
    v1 = es("ih,ih->", x0, v0)
    v2 = x1 @ v0
    v3 = jax.numpy.einsum("uz,uoza->uoa", v2, x2)
    v4 = jnp.where(v3 > 0, v3, 0.1 * v3)
    v5 = v4.astype(jnp.float32)
    return v0, v1


@mesh(data=2, model=2, pipe=2, rules={'seq': None, 'd_model': 'data'})
def f(x0: Tensor["model", "batch"], x1: Tensor["pipe", "model"], x2: Tensor["pipe", "seq", "batch", "d_model"], ids3: Tensor["pipe", "batch"]) -> Tensor[()]:
    v0, v1 = helper(x0, x1, x2)
    v6: Tensor["pipe", "batch"] = jnp.take_along_axis(v0, ids3, axis=-2)
    return jnp.abs(v1)


FUZZ = {'mesh': '2x2x2',
 'sizes': {'model': 4, 'batch': 6, 'pipe': 2, 'seq': 3, 'd_model': 6},
 'args': [{'name': 'x0',
           'dims': ['model', 'batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'},
          {'name': 'x1',
           'dims': ['pipe', 'model'],
           'kind': 'float',
           'high': 0,
           'std': 0.5,
           'dtype': 'bfloat16'},
          {'name': 'x2',
           'dims': ['pipe', 'seq', 'batch', 'd_model'],
           'kind': 'float',
           'high': 0,
           'std': 0.2887,
           'dtype': 'bfloat16'},
          {'name': 'ids3', 'dims': ['pipe', 'batch'], 'kind': 'ids', 'high': 4, 'std': 1.0}],
 'grad': True,
 'seed': 71000531,
 'provoked': '',
 'precision': 'bfloat16',
 'expect': 'accepted'}
