# Fuzz (seed 113): logsumexp(where=mask of the user's batch) beside a value whose batch dim meshify named
# itself (batch?, a rotary concatenate of two halves): the mask takes the value's layout (was an unprovoked MSH030).
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={'batch': 'data'})
def g(x0: Tensor["batch"], x1: Tensor["layer"], x2: Tensor["batch"]) -> Tensor[()]:
    step0 = lambda h, w: (h + 0.5 * jnp.sin(w), None)
    v0, _ = jax.lax.scan(step0, jnp.zeros(x0.shape, x0.dtype) + 0.5, x1)
    v1 = jnp.concatenate([v0[..., ::2] * jnp.cos(jnp.arange(0, v0.shape[-1], 2) * 0.1) - v0[..., 1::2] * jnp.sin(jnp.arange(0, v0.shape[-1], 2) * 0.1), v0[..., 1::2] * jnp.cos(jnp.arange(0, v0.shape[-1], 2) * 0.1) + v0[..., ::2] * jnp.sin(jnp.arange(0, v0.shape[-1], 2) * 0.1)], axis=-1)
    v2 = jax.nn.silu(v1)
    v3 = jax.nn.logsumexp(v2, axis=0, where=x2 > -1.0)
    return v3


class Model:
    def __init__(self, w):
        self.w = w
        self.scale = 1.0

    @mesh(model=8)
    def f(self, x1: Tensor["batch"], x2: Tensor["layer"], x3: Tensor["batch"]) -> Tensor[()]:
        x0: Tensor["batch1", "c", "h", "w"] = self.w
        v0 = g(x1, x2, x3)
        v1 = jnp.tanh(v0 / 32)
        return v1


FUZZ = {'mesh': '8',
 'sizes': {'batch': 6, 'layer': 3, 'batch1': 2, 'h': 4, 'w': 4, 'c': 2},
 'args': [{'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x2', 'dims': ['layer'], 'kind': 'float', 'high': 0, 'std': 0.5},
          {'name': 'x3', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': True,
 'seed': 113000715,
 'provoked': '',
 'entries': [{'name': 'Model',
              'mesh': '8',
              'sizes': {'batch': 6, 'layer': 3, 'batch1': 2, 'h': 4, 'w': 4, 'c': 2},
              'args': [{'name': 'x1', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x2', 'dims': ['layer'], 'kind': 'float', 'high': 0, 'std': 0.5},
                       {'name': 'x3', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': True,
              'method': 'f',
              'attr': {'name': 'w',
                       'dims': ['batch1', 'c', 'h', 'w'],
                       'kind': 'float',
                       'high': 0,
                       'std': 1.0}},
             {'name': 'g',
              'mesh': '2x4',
              'sizes': {'batch': 6, 'layer': 3},
              'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
                       {'name': 'x1', 'dims': ['layer'], 'kind': 'steps', 'high': 0, 'std': 0.5},
                       {'name': 'x2', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
              'grad': True}],
 'triggers': [['a strided slice along a split dim',
               ['jnp.concatenate([v0[..., ::2] * jnp.cos(jnp.arange(0, v0.shape[-1], 2) * 0.1) - '
                'v0[..., 1::2] * jnp.sin(jnp.arange(0, v0.shape[-1], 2) * 0.1), v0[..., 1::2] * '
                'jnp.cos(jnp.arange(0, v0.shape[-1], 2) * 0.1) + v0[..., ::2] * '
                'jnp.sin(jnp.arange(0, v0.shape[-1], 2) * 0.1)], axis=-1)',
                'the slice [::2]',
                '::2]']]],
 'expect': 'accepted'}
