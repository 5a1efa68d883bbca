# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: (calling f (converted path)) /tmp/meshify-fuzz-17a7na9e/fuzz_d77cdf6a_87_sharded.py:28:9: error[MSH050]: grouped-query attention with 24 query heads in groups of 8 per kv head, split 3 per device over 'model': a device's query heads would read parts of two groups
# Found by: python tests/fuzz/run.py --seed 4405 --only 3725
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k gqa_heads_reading_two_groups_d77cdf6a
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(model=8, rules={'seq': 'model'})
def f(x0: Tensor["batch"], x1: Tensor["seq", "d_model", "batch"], x2: Tensor["batch", "d_ff", "d_model"], x3: Tensor["batch", "d_ff", "d_model"]) -> Tensor["batch", "seq", "d_model"]:
    v0 = jax.nn.softmax(x0, axis=0)
    v1: Tensor["batch", "seq", "d_model"] = es("b,udb->bud", v0, x1, preferred_element_type=jnp.float32)
    v2 = jax.nn.dot_product_attention(v1, x2.astype(v1.dtype), x3.astype(v1.dtype), is_causal=True)
    v3 = jnp.tanh(v2)
    return v3


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2, 'seq': 24, 'd_model': 8, 'd_ff': 3},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1',
           'dims': ['seq', 'd_model', 'batch'],
           'kind': 'float',
           'high': 0,
           'std': 0.7071},
          {'name': 'x2',
           'dims': ['batch', 'd_ff', 'd_model'],
           'kind': 'float',
           'high': 0,
           'std': 1.0},
          {'name': 'x3',
           'dims': ['batch', 'd_ff', 'd_model'],
           'kind': 'float',
           'high': 0,
           'std': 1.0}],
 'grad': False,
 'seed': 4405016940,
 'provoked': '',
 'triggers': [['einsum with preferred_element_type',
               ['es("b,udb->bud", v0, x1, preferred_element_type=jnp.float32)']],
              ['dot_product_attention over a split sequence or head dim',
               ['jax.nn.dot_product_attention(v1, x2.astype(v1.dtype), x3.astype(v1.dtype), '
                'is_causal=True)',
                'sequence dim',
                'head dim']]],
 'expect': 'accepted'}
