# Fuzz mismatch found by tests/fuzz on the 2x2x2 mesh.
# mismatch: g (converted path): output: float32[] != reference bfloat16[]
# Found by: python tests/fuzz/run.py --seed 177 --only 4977
# Rerun: python -m pytest tests/test_regressions.py -k mismatch_516d819a
import typing

import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def rms_norm(x0):
    return (x0 / jnp.sqrt(jnp.mean(x0 * x0, axis=-1, keepdims=True) + 1.0))


class Pair(typing.NamedTuple):
    a: jax.Array
    b: jax.Array


def helper_g(v0, x1, x2):
    v1 = jax.numpy.einsum("d,xds,x->xs", v0, x1, x2, precision=jax.lax.Precision.HIGHEST)
    return v1


@mesh(model=8, rules={'batch': 'model'})
def g(x0: Tensor["batch"], x1: Tensor["seq", "batch", "d_model"], x2: Tensor["seq"]) -> Tensor[()]:
    v0: Tensor["batch"] = rms_norm(x0)
    v1 = helper_g(v0, x1, x2)
    v2p = Pair(a=v1, b=x0)
    v2: Tensor[()] = sum(jnp.vdot(q, q) for q in jax.tree.leaves(v2p)) / 72
    return v2


@mesh(data=2, model=2, pipe=2)
def f(x0: Tensor["batch"]) -> Tensor["batch"]:
    v0 = jnp.tanh(x0)
    v1 = jnp.tanh(v0)
    return v1


FUZZ = {'mesh': '2x2x2',
 'sizes': {'batch': 2},
 'args': [{'name': 'x0',
           'dims': ['batch'],
           'kind': 'float',
           'high': 0,
           'std': 1.0,
           'dtype': 'bfloat16'}],
 'grad': False,
 'seed': 177005508,
 'provoked': '',
 'entries': [{'name': 'f',
              'mesh': '2x2x2',
              'sizes': {'batch': 2},
              'args': [{'name': 'x0',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'}],
              'grad': False},
             {'name': 'g',
              'mesh': '8',
              'sizes': {'batch': 24, 'seq': 8, 'd_model': 6},
              'args': [{'name': 'x0',
                        'dims': ['batch'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'},
                       {'name': 'x1',
                        'dims': ['seq', 'batch', 'd_model'],
                        'kind': 'float',
                        'high': 0,
                        'std': 0.2041,
                        'dtype': 'bfloat16'},
                       {'name': 'x2',
                        'dims': ['seq'],
                        'kind': 'float',
                        'high': 0,
                        'std': 1.0,
                        'dtype': 'bfloat16'}],
              'grad': True}],
 'precision': 'bfloat16',
 'triggers': [['einsum with precision',
               ['jax.numpy.einsum("d,xds,x->xs", v0, x1, x2, '
                'precision=jax.lax.Precision.HIGHEST)']]],
 'expect': 'accepted'}
