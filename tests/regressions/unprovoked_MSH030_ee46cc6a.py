# Fuzz rejected found by tests/fuzz on the 8 mesh.
# rejected: /tmp/meshify-fuzz-ztn29_kv/fuzz_ee46cc6a_8.py:28:83: error[MSH030]: jax.tree.leaves of 'v5m', whose leaf .a is a Python value meshify does not know
# Found by: python tests/fuzz/run.py --seed 181 --only 18
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k unprovoked_MSH030_ee46cc6a
import typing

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def row_mean(x0):
    return jnp.mean(x0, axis=-1)


class Pair(typing.NamedTuple):
    a: jax.Array
    b: jax.Array


@mesh(model=8)
def f(x0: Tensor["batch", "seq"], x1: Tensor["batch", "d_model", "seq"]) -> Tensor[()]:
    v0: Tensor["batch", "seq"] = x0 + jnp.full((8, 2), jnp.max(x0))
    v1 = row_mean(v0)
    v2 = jax.nn.softmax(v1, -1)
    v3 = es("re,rve->ev", v0, x1, precision=jax.lax.Precision.HIGHEST)
    v4: Tensor["d_model", "seq"] = v3.T
    v5p = Pair(a=v3, b=v2)
    v5m = jax.tree_util.tree_map_with_path(lambda path, q: "b" not in jax.tree_util.keystr(path), v5p)
    v5 = sum(jnp.sum(q * q) for q, k in zip(jax.tree.leaves(v5p), jax.tree.leaves(v5m)) if k) / 16
    v6 = jnp.tanh(v5)
    v7 = jnp.tanh(v6)
    v8 = jnp.tanh(v7)
    return v8


FUZZ = {'mesh': '8',
 'sizes': {'batch': 8, 'seq': 2, 'd_model': 8},
 'args': [{'name': 'x0', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1',
           'dims': ['batch', 'd_model', 'seq'],
           'kind': 'float',
           'high': 0,
           'std': 0.25}],
 'grad': True,
 'seed': 181000561,
 'provoked': '',
 'triggers': [['jnp.full',
               ['jnp.full((8, 2), jnp.max(x0))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['einsum with precision',
               ['es("re,rve->ev", v0, x1, precision=jax.lax.Precision.HIGHEST)']]],
 'expect': 'accepted'}
