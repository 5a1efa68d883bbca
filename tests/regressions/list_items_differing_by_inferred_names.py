# Fuzz (seed 103): a list appended to in a loop whose first item has an inferred dim (seq?) and the loop
# appends the same dim under the user's name (seq): one layout, the user's names (was an unprovoked MSH040).
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


def normalize(x0):
    return jax.nn.softmax(x0, axis=-1)


@mesh(model=8, rules={'seq': 'model'})
def f(x0: Tensor["batch", "seq"], x1: Tensor["seq", "d_model"], x2: Tensor["seq"], x3: Tensor["seq"]) -> Tensor["batch", "seq"]:
    v0 = jnp.tanh(x0)
    v1 = jax.jit(normalize)(v0)
    v2 = x0 @ x1
    v3: Tensor[()] = es("ai,ai", v2, v2)
    v4: Tensor["batch", "seq"] = jnp.divide(x0, (jnp.abs(x2) + 1.0))
    v5 = jnp.concatenate([x0[..., ::2] * jnp.cos(jnp.arange(0, x0.shape[-1], 2) * 0.05) - x0[..., 1::2] * jnp.sin(jnp.arange(0, x0.shape[-1], 2) * 0.05), x0[..., 1::2] * jnp.cos(jnp.arange(0, x0.shape[-1], 2) * 0.05) + x0[..., ::2] * jnp.sin(jnp.arange(0, x0.shape[-1], 2) * 0.05)], axis=-1)
    v5_all6 = [v5]
    for _ in range(1):
        v5 = v5 * 0.5 + jnp.sin(x3)
        v5_all6.append(v5)
    v6 = jnp.stack(v5_all6).sum(0)
    v7 = jnp.tanh(v6)
    v8 = jnp.tanh(v7)
    return v8


FUZZ = {'mesh': '8',
 'sizes': {'batch': 2, 'seq': 16, 'd_model': 8},
 'args': [{'name': 'x0', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': ['seq', 'd_model'], 'kind': 'float', 'high': 0, 'std': 0.3536},
          {'name': 'x2', 'dims': ['seq'], 'kind': 'steps', 'high': 0, 'std': 1.0},
          {'name': 'x3', 'dims': ['seq'], 'kind': 'float', 'high': 0, 'std': 0.5}],
 'grad': False,
 'seed': 103003083,
 'provoked': '',
 'triggers': [['jax.jit(normalize)(...) at the call site',
               ['jax.jit(normalize)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['a strided slice along a split dim',
               ['jnp.concatenate([x0[..., ::2] * jnp.cos(jnp.arange(0, x0.shape[-1], 2) * 0.05) - '
                'x0[..., 1::2] * jnp.sin(jnp.arange(0, x0.shape[-1], 2) * 0.05), x0[..., 1::2] * '
                'jnp.cos(jnp.arange(0, x0.shape[-1], 2) * 0.05) + x0[..., ::2] * '
                'jnp.sin(jnp.arange(0, x0.shape[-1], 2) * 0.05)], axis=-1)',
                'the slice [::2]',
                '::2]']]],
 'expect': 'accepted'}
