# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: /tmp/meshify-fuzz-0oih3qor/fuzz_89f5b592_196.py:22:23: error[MSH040]: cannot infer the dims of 'rsqrt(var3 + 1e-5)', used with '(v2 - mu3)' of layout [h/'model', w, d_model, seq]
# Fixed: rsqrt = jax.lax.rsqrt (an elementwise alias) called on a whole value (a keepdims mean) was a value of unknown dims
# Found by: python tests/fuzz/run.py --seed 3610 --only 140
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_held_alias_on_a_whole_keepdims_value_89f5b592
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh

C0 = 0.25


mean = jnp.mean
rsqrt = jax.lax.rsqrt
multiply = jnp.multiply


@mesh(model=8, rules={'h': 'model'})
def f(x0: Tensor["batch", "c", "h", "w"], x1: Tensor["d_model", "seq", "c"], x2: Tensor["seq"]) -> Tensor["h", "w", "d_model", "seq"]:
    v0: Tensor["batch", "c", "h", "w"] = jnp.log10(jnp.fabs(x0) + 1.0)
    v1: Tensor["batch", "c", "h", "w"] = v0.sort(axis=1, descending=True)
    v2 = jnp.einsum("dfnw,huf->nwhu", v1, x1)
    mu3 = mean(v2, axis=(0, 1, 2), keepdims=True)
    var3 = mean(jnp.square(v2 - mu3), axis=(0, 1, 2), keepdims=True)
    v3 = (v2 - mu3) * rsqrt(var3 + 1e-5)
    v4: Tensor["h", "w", "d_model", "seq"] = multiply(x2, v3)
    v5 = jnp.maximum(v4, C0)
    return v5


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2, 'h': 32, 'w': 4, 'c': 4, 'seq': 4, 'd_model': 4},
 'args': [{'name': 'x0', 'dims': ['batch', 'c', 'h', 'w'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['d_model', 'seq', 'c'], 'kind': 'float', 'high': 0, 'std': 0.5},
          {'name': 'x2', 'dims': ['seq'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 3610010970,
 'provoked': '',
 'expect': 'accepted'}
