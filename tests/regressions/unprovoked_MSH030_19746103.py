# Fuzz rejected found by tests/fuzz on the 1x8 mesh.
# rejected: /tmp/meshify-fuzz-jld0zj8v/fuzz_19746103_180.py:10:82: error[MSH030]: advanced indexing with an array beside indices other than ':'
# Found by: python tests/fuzz/run.py --seed 182 --only 4566
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH030_19746103
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@jax.checkpoint
def helper(v3, **kw):
    v4 = v3.at[jnp.arange(v3.shape[0])[:, None], kw.get("ids3")].add(jnp.tanh(v3[jnp.arange(v3.shape[0])[:, None], kw.get("ids3")]))
    v5 = v4 + jnp.full((2, 4), jnp.max(kw.get("x0")))
    v6: Tensor["batch"] = kw.get("v1") * kw.get("x4")
    v7: Tensor["stacked", "batch"] = jnp.stack((v6, kw.get("x5")), axis=0)
    v8 = jnp.einsum("xc,c->xc", v7, kw.get("x6"))
    v9 = jnp.tensordot(v8, kw.get("x7"), axes=([-1], [0]))
    v10 = jnp.mean(jax.nn.log_softmax(v9, axis=-1))
    return v10


@mesh(data=1, model=8, rules={'seq_sec': 'data', 'd_model': 'data', 'd_ff': ('model', 'data'), 'heads': 'data', 'stacked': 'data', 'vocab': ('model', 'data')})
def f(x0: Tensor["batch", "seq"], x1: Tensor["seq"], ids2: Tensor["seq"], ids3: Tensor["batch", "d_head"], x4: Tensor["batch"], x5: Tensor["batch"], x6: Tensor["batch"], x7: Tensor["batch", "vocab"]):
    v0 = x0 / 3
    v1 = jnp.matmul(v0, x1)
    v2 = jnp.take_along_axis(v1, ids2, 0)
    x0_s3_0, x0_s3_1 = jnp.split(x0, 2, axis=-1)
    v3: Tensor["batch", "seq_sec"] = x0_s3_0 - 0.5 * x0_s3_1
    v10 = helper(v3, ids3=ids3, x0=x0, v1=v1, x4=x4, x5=x5, x6=x6, x7=x7)
    return v10


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 2,
           'seq': 8,
           'seq_sec': 4,
           'd_model': 4,
           'd_ff': 16,
           'heads': 4,
           'd_head': 2,
           'stacked': 2,
           'vocab': 24},
 'args': [{'name': 'x0', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['seq'], 'kind': 'steps', 'high': 0, 'std': 0.3536},
          {'name': 'ids2', 'dims': ['seq'], 'kind': 'ids', 'high': 2, 'std': 1.0},
          {'name': 'ids3',
           'dims': ['batch', 'd_head'],
           'kind': 'ids',
           'high': 4,
           'std': 1.0,
           'low': -4},
          {'name': 'x4', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x5', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x6', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 0.7071},
          {'name': 'x7', 'dims': ['batch', 'vocab'], 'kind': 'float', 'high': 0, 'std': 0.7071}],
 'grad': True,
 'seed': 182005112,
 'provoked': '',
 'triggers': [["sections split over another mesh's axes",
               ['does not split into',
                'must split into',
                'does not split into',
                'must split into']],
              ['jnp.full',
               ['jnp.full((2, 4), jnp.max(x0))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'Opaque',
                'opaque',
                'einsum_',
                'whose dims meshify cannot infer',
                'jnp.full((2, 4), jnp.max(kw.get("x0")))',
                'placeholder',
                'cannot infer the dims']],
              ['helper under @jax.checkpoint',
               ['@jax.checkpoint',
                'def helper(',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'accepted'}
