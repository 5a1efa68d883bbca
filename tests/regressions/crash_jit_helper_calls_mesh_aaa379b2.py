# Fuzz crash found by tests/fuzz on the 8 mesh.
# crash: calling f (converted path) raised: ValueError: The context mesh AbstractMesh('model': 8, axis_types=(Manual,), device_kind=cpu, num_cores=None, platform=cpu) should match the mesh passed to shard_map Mesh('model': 8, axis_types=(Auto,)) [meshify/runtime/_bind.py:270 in <lambda>]
# Found by: python tests/fuzz/run.py --seed 2032 --only 147
# Fixed: jax.jit(helper)(x1, x2) with replicated arguments was kept as written (an unknown call of
# replicated values), and helper calls the @mesh function g, whose shard_map then ran inside f's: a JAX
# error. jax.jit at the call site is a transform now, like jax.checkpoint: helper is specialised.
# Rerun: python -m pytest tests/test_regressions.py -k crash_jit_helper_calls_mesh_aaa379b2
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh

C0 = 0.25
C1 = 0.5


def helper(x1, x2):
    v0 = g(x1)
    v1: Tensor["batch"] = jax.nn.silu(v0)
    v2 = jax.nn.logsumexp(v1, axis=-1)
    v3 = jnp.tanh(v2 / 16)
    for _ in range(1):
        v3 = jnp.tanh(v3) * 0.9
    v4: Tensor["d_model"] = x2 @ v0
    return v4


@mesh(model=8, rules={'batch': 'model', 'seq': 'model'})
def g(x0: Tensor["batch"]) -> Tensor["batch"]:
    v0 = x0 + C0
    return v0


@mesh(model=8, rules={'seq': None, 'd_ff': 'model'})
def f(x0: Tensor["d_model", "d_ff"], x1: Tensor["batch"], x2: Tensor["d_model", "batch"]) -> Tensor["d_model"]:
    v4 = jax.jit(helper)(x1, x2)
    v5: Tensor["d_model"] = -v4
    v6 = v5 * C1
    return v6


FUZZ = {'mesh': '8',
 'sizes': {'batch': 16, 'seq': 24, 'd_model': 6, 'd_ff': 24},
 'args': [{'name': 'x0', 'dims': ['d_model', 'd_ff'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x2', 'dims': ['d_model', 'batch'], 'kind': 'float', 'high': 0, 'std': 0.25}],
 'grad': False,
 'seed': 2032006243,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '8',
              'sizes': {'batch': 16, 'seq': 24, 'd_model': 6, 'd_ff': 24},
              'args': [{'name': 'x0',
                        'dims': ['d_model', 'd_ff'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0},
                       {'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x2',
                        'dims': ['d_model', 'batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.25}],
              'grad': False},
             {'name': 'g',
              'mesh': '8',
              'sizes': {'batch': 16, 'seq': 24},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': False}],
 'triggers': [['jax.jit(helper)(...) at the call site',
               ['jax.jit(helper)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'accepted'}
