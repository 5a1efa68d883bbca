# Fuzz rejection found by tests/fuzz on the 8 mesh (seed 402, program 99), now supported: a partial sum among the
# leaves jax.tree.unflatten fills a structure with is completed as it enters it (was refused: "jax.tree.unflatten()
# of leaf 1, a partial sum over 'model'", with a fix to complete it by hand).
# Rerun: python -m pytest tests/test_regressions.py -k partial_leaf_unflattened
import typing

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


class Pair(typing.NamedTuple):
    a: jax.Array
    b: jax.Array


@mesh(model=8)
def f(x0: Tensor["model", "batch"]) -> Tensor[()]:
    v0z = jnp.einsum("ab,Xb->aX", x0, x0)
    v0i, v0j = jnp.triu_indices(x0.shape[0])
    v0 = v0z[v0i, v0j].sum(axis=-1)
    v1 = v0 * 0.0078125
    v2: Tensor[()] = jax.lax.stop_gradient(v1)
    v3p = Pair(a=v2, b=v0)
    v3l, v3t = jax.tree.flatten(v3p)
    v3p = jax.tree.unflatten(v3t, [q * 0.5 for q in v3l])
    v3: Tensor[()] = jnp.mean(v3p.a) + jnp.mean(v3p.b)
    return v3


FUZZ = {'mesh': '8',
 'sizes': {'model': 8, 'batch': 2},
 'args': [{'name': 'x0', 'dims': ['model', 'batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': True,
 'seed': 402001305,
 'provoked': '',
 'expect': 'accepted'}
