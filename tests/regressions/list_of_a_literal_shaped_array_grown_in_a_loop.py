# Fuzz (seed 113): a list starting with jnp.full((8,), c) (an array of literal shape, whole) grown in a loop
# by whole arrays of the same rank: one whole value (was an unprovoked MSH040, pre-existing at f0fdcdc).
# (v2 hinted by hand: meshify cannot name the dims of jnp.full((8,), c), the generator's literal-shape gap.)
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@jax.custom_jvp
def soft_clip(x):
    return 2.0 * jnp.tanh(x / 2.0)


@soft_clip.defjvp
def _soft_clip_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return soft_clip(x), 0.5 * t


@mesh(model=8, rules={'batch': 'model', 'seq': 'model'})
def f(x0: Tensor["batch"], x1: Tensor[()], x2: Tensor["batch"]) -> Tensor[()]:
    v0 = x0 + jnp.full(x0.shape, 2.0)
    v1 = jnp.full((8,), jnp.mean(v0))
    v1_all2 = [v1]
    for _ in range(2):
        v1 = v1 * 0.5 + jnp.sin(x1)
        v1_all2 += [v1]
    del v1_all2[0]
    v2: Tensor["batch"] = jnp.stack(v1_all2, axis=-1).mean(-1) * 2
    v3 = v2 * 0.0625
    v4 = soft_clip(v3)
    v5 = jnp.einsum("n,n->", v4, x2)
    v6 = jnp.tanh(v5)
    return v6


FUZZ = {'mesh': '8',
 'sizes': {'batch': 8, 'seq': 16},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'x1', 'dims': [], 'kind': 'float', 'high': 0, 'std': 0.5},
          {'name': 'x2', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 0.3536}],
 'grad': True,
 'seed': 113001097,
 'provoked': '',
 'triggers': [['jnp.full',
               ['jnp.full(x0.shape, 2.0)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['jnp.full',
               ['jnp.full((8,), jnp.mean(v0))',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']],
              ['soft_clip: a helper with a custom derivative',
               ['soft_clip(',
                'return 2.0 * jnp.tanh(x / 2.0)',
                '(x,), (t,) = primals, tangents',
                'return soft_clip(x), 0.5 * t',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer']]],
 'expect': 'accepted'}
