# Fuzz unprovoked rejection (MSH040) found by tests/fuzz on the 8 mesh.
# Fixed: elu = functools.partial(jax.nn.elu, alpha=1.0) on a whole value was a value of unknown dims (branches differed)
# Found by: python tests/fuzz/run.py --seed 3613 --only 85
# An unprovoked rejection, not a failure: support the program, or refuse it where the cause is
# Rerun: python -m pytest tests/test_regressions.py -k held_partial_alias_on_a_whole_value_in_a_branch_86997986
import functools
import typing

import jax
import einops
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


my_einsum_impl = jnp.einsum
elu = functools.partial(jax.nn.elu, alpha=1.0)
logsumexp = jax.nn.logsumexp
full_like = jnp.full_like
sigmoid = jax.nn.sigmoid
tree_leaves = jax.tree.leaves


class Pair(typing.NamedTuple):
    a: jax.Array
    b: jax.Array


@mesh(model=8, rules={'batch': 'model'})
def f(x0: Tensor["batch"], x1: Tensor["batch", "seq"]) -> Tensor[()]:
    v0: Tensor["seq"] = my_einsum("g,gn->n", x0, x1)
    v1 = jnp.tanh(v0)
    v2 = elu(v1)
    v3 = logsumexp(v2)
    v4 = full_like(v2, jnp.mean(v0))
    v5m = None
    if v4.shape[0] > 2: v5m = jnp.tanh(v4) * 0.5
    v5: Tensor[()] = jnp.mean(v4) + (0.0 if v5m is None else jnp.sum(v5m) / 3)
    v6 = sigmoid(v5)
    v7p = Pair(a=v6, b=v6)
    v7: Tensor[()] = sum(jnp.sum(q) / q.size * q.ndim for q in tree_leaves(v7p))
    return v7


my_einsum = my_einsum_impl


FUZZ = {'mesh': '8',
 'sizes': {'batch': 8, 'seq': 3},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 0.3536}],
 'grad': True,
 'seed': 3613010924,
 'provoked': '',
 'triggers': [['jnp.full_like',
               ['full_like(v2, jnp.mean(v0))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']]],
 'expect': 'accepted'}
