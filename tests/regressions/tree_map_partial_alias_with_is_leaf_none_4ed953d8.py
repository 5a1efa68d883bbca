# Fuzz unprovoked rejection (MSH030) found by tests/fuzz on the 8 mesh.
# Fixed: tree_map = functools.partial(jax.tree.map, is_leaf=None) (JAX's default) was "jax.tree.map(...) with keywords"
# Found by: python tests/fuzz/run.py --seed 3612 --only 137
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k tree_map_partial_alias_with_is_leaf_none_4ed953d8
import dataclasses
import functools
import operator
import typing

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


tree_map = functools.partial(jax.tree.map, is_leaf=None)
relu = jax.nn.relu


class Pair(typing.NamedTuple):
    a: jax.Array
    b: jax.Array


@dataclasses.dataclass
class DPair:
    a: jax.Array
    b: jax.Array


jax.tree_util.register_dataclass(DPair, data_fields=["b", "a"], meta_fields=[])


@jax.custom_vjp
def soft_tanh(x):
    return tanh(x)


def _soft_tanh_fwd(x):
    y = tanh(x)
    return y, y


def _soft_tanh_bwd(y, g):
    return (0.5 * g * (1.0 - y * y),)


soft_tanh.defvjp(_soft_tanh_fwd, _soft_tanh_bwd)


@mesh(model=8, rules="batch:model;seq:model")
def g(x0: Tensor["batch"], x1: Tensor["batch", "d_model"], x2: Tensor["d_model"]) -> Tensor["d_model"]:
    v0 = es("z,zo->o", x0, x1)
    v1 = jnp.linalg.vector_norm(v0, ord=3, axis=0)
    v0_all2 = {"first": v0}
    for i3 in range(3):
        v0 = v0 * 0.5 + sin(x2)
        v0_all2[f"k{i3}"] = v0
    v2 = sum(h * 0.5 for h in v0_all2.values())
    v3 = tanh(v2 / 16)
    return v3


@mesh(model=8, rules={'batch': 'model'})
def f(x0: Tensor["batch"], x1: Tensor["batch"], x2: Tensor["batch", "d_model"], x3: Tensor["d_model"]):
    v0: Tensor["d_model"] = g(x1, x2, x3)
    v1 = jax.nn.leaky_relu(x0)
    v2p = DPair(a=v1, b=v0)
    v2q = DPair(a=v1 * 0.5, b=v0)
    v2: Tensor[()] = jax.tree_util.tree_reduce(operator.add, tree_map(lambda q: jnp.sum(q * q), v2p)) / 10
    v3 = v2 / 16
    v4 = jnp.cos(v3)
    @functools.partial(jax.checkpoint, static_argnums=1)
    def helper(v4, k):
        v5: Tensor[()] = (v4.astype(jnp.float32) * 0.5).astype(v4.dtype)
        v6 = soft_tanh(v5)
        v6 = v6 * k
        return v6
    v6 = helper(v4, 0.5)
    v7 = jax.lax.fori_loop(0, 1, lambda i, h: h * 0.5 + sin(v4), v6)
    v8 = relu(v7)
    return v8.astype(jnp.float32)


tanh = jnp.tanh
sin = jnp.sin


FUZZ = {'mesh': '8',
 'sizes': {'batch': 8, 'seq': 8, 'd_model': 2},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x2', 'dims': ['batch', 'd_model'], 'kind': 'float', 'high': 0, 'std': 0.3536},
          {'name': 'x3', 'dims': ['d_model'], 'kind': 'float', 'high': 0, 'std': 0.5}],
 'grad': True,
 'seed': 3612010973,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '8',
              'sizes': {'batch': 8, 'seq': 8, 'd_model': 2},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x2',
                        'dims': ['batch', 'd_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.3536},
                       {'name': 'x3', 'dims': ['d_model'], 'kind': 'float', 'high': 0, 'std': 0.5}],
              'grad': True},
             {'name': 'g',
              'mesh': '8',
              'sizes': {'batch': 8, 'seq': 8, 'd_model': 2},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'steps', 'high': 0, 'std': 1.0},
                       {'name': 'x1',
                        'dims': ['batch', 'd_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.3536},
                       {'name': 'x2', 'dims': ['d_model'], 'kind': 'steps', 'high': 0, 'std': 0.5}],
              'grad': False}],
 'triggers': [['leaves of a class registered in another order',
               ['jax.tree.leaves gives the leaves']],
              ['astype',
               ['(v4.astype(jnp.float32) * 0.5).astype(v4.dtype)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']],
              ['soft_tanh: a helper with a custom derivative',
               ['soft_tanh(',
                'return tanh(x)',
                'y = tanh(x)',
                'return y, y',
                'return (0.5 * g * (1.0 - y * y),)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']],
              ['helper under @functools.partial(jax.checkpoint, static_argnums=1)',
               ['@functools.partial(jax.checkpoint, static_argnums=1)',
                'def helper(',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']]],
 'expect': 'accepted'}
