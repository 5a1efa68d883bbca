# Fuzz rejected found by tests/fuzz on the 1x8 mesh.
# rejected: /tmp/meshify-fuzz-t0dqdawx/fuzz_bdb3ae12_129.py:38:5: error[MSH030]: cannot tell the dtype of 'v9', a partial sum: meshify forms it in float32 where its operands are float16/bfloat16 and casts it back after the psum, which needs the dtype the code gives it (whatever the inputs' dtypes are)
# Found by: python tests/fuzz/run.py --seed 24 --only 1542
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH030_bdb3ae12
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


ACT_FN = jnp.tanh


def first_minus_second(xs):
    return xs[0] - xs[1] * 0.5


@mesh(model=8, rules={'d_model': 'model'})
def g(x0: Tensor["batch", "seq", "d_model"]) -> Tensor["batch", "seq", "d_model"]:
    v0 = x0.astype(jnp.float32)
    v1: Tensor["batch", "seq", "d_model"] = jnp.tanh(v0)
    v2 = v1 * jnp.arange(8) / 8
    v3 = v2 * jnp.zeros((8,)) + 0.5
    return v3


@mesh(data=1, model=8, rules={'d_model': 'model', 'd_ff': None, 'd_ff_sec': 'data'})
def f(x0: Tensor["d_model", "d_ff"], x1: Tensor["batch", "seq", "d_model"], x2: Tensor["seq", "d_model", "d_ff"], x3: Tensor["d_model"], x4: Tensor["seq", "d_ff", "d_model"], x5: Tensor["heads", "d_model"]) -> Tensor["heads", "d_ff"]:
    v0 = g(x1)
    v1: Tensor["seq"] = jax.numpy.einsum("id,cid->c", x0, x2)
    v2 = jax.lax.dynamic_update_slice_in_dim(x0, jax.lax.dynamic_slice_in_dim(x0, 0, 1, axis=1) * 0.5, jnp.int32(1), axis=1)
    v3 = v2 + jnp.full_like(v2, -1.0)
    v4 = es("ok,o", x0, x3)
    v5 = ACT_FN(v4)
    v6 = jnp.einsum("f,ufv->fuv", v5, x4, preferred_element_type=jnp.float32)
    v3_acc7 = 0.0
    for v3_part7 in jnp.array_split(v3, 3, axis=-1): v3_acc7 = v3_acc7 + v3_part7
    v7: Tensor["d_model", "d_ff_sec"] = v3_acc7 * 0.5
    v8 = x5 @ v2
    v9 = first_minus_second([v8, v8])
    return v9


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 2, 'seq': 2, 'd_model': 8, 'd_ff': 6, 'd_ff_sec': 2, 'heads': 8},
 'args': [{'name': 'x0', 'dims': ['d_model', 'd_ff'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1',
           'dims': ['batch', 'seq', 'd_model'],
           'kind': 'float',
           'high': 0,
           'std': 1.0},
          {'name': 'x2',
           'dims': ['seq', 'd_model', 'd_ff'],
           'kind': 'float',
           'high': 0,
           'std': 0.1443},
          {'name': 'x3', 'dims': ['d_model'], 'kind': 'float', 'high': 0, 'std': 0.3536},
          {'name': 'x4',
           'dims': ['seq', 'd_ff', 'd_model'],
           'kind': 'float',
           'high': 0,
           'std': 0.4082},
          {'name': 'x5', 'dims': ['heads', 'd_model'], 'kind': 'float', 'high': 0, 'std': 0.3536}],
 'grad': False,
 'seed': 24001614,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '1x8',
              'sizes': {'batch': 2, 'seq': 2, 'd_model': 8, 'd_ff': 6, 'd_ff_sec': 2, 'heads': 8},
              'args': [{'name': 'x0',
                        'dims': ['d_model', 'd_ff'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x1',
                        'dims': ['batch', 'seq', 'd_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x2',
                        'dims': ['seq', 'd_model', 'd_ff'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.1443},
                       {'name': 'x3',
                        'dims': ['d_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.3536},
                       {'name': 'x4',
                        'dims': ['seq', 'd_ff', 'd_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.4082},
                       {'name': 'x5',
                        'dims': ['heads', 'd_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.3536}],
              'grad': False},
             {'name': 'g',
              'mesh': '8',
              'sizes': {'batch': 2, 'seq': 2, 'd_model': 8},
              'args': [{'name': 'x0',
                        'dims': ['batch', 'seq', 'd_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0}],
              'grad': False}],
 'triggers': [['astype',
               ['x0.astype(jnp.float32)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['an array of literal shape',
               ['jnp.arange(8) / 8',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['an array of literal shape',
               ['jnp.zeros((8,)) + 0.5',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['an update along a split dim',
               ['jax.lax.dynamic_update_slice_in_dim(x0, jax.lax.dynamic_slice_in_dim(x0, 0, 1, '
                'axis=1) * 0.5, jnp.int32(1), axis=1)',
                'split dim']],
              ['jnp.full_like',
               ['jnp.full_like(v2, -1.0)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['a function a module-level name holds, on a whole array',
               ['ACT_FN(v4)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['einsum with preferred_element_type',
               ['jnp.einsum("f,ufv->fuv", v5, x4, preferred_element_type=jnp.float32)']],
              ["sections split over another mesh's axes",
               ['does not split into', 'must split into']],
              ['a helper taking a tuple',
               ['first_minus_second([v8, v8])',
                'def first_minus_second(',
                'return xs[0] - xs[1] * 0.5',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'accepted'}
