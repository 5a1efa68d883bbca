# Found while designing the fuzzer (and by it, once inputs with exact ties were added):
# gradients of max/min over a split dim differed from .reference when tied maxima sat on
# several devices in unequal numbers.  jnp.max shares the cotangent equally among all tied
# elements; the generated mr.pmax(jnp.max(x, axis=1), "model") first shared it among each
# device's own ties, then equally among devices (1/4, 1/4, 1/2 instead of 1/3 each).
# Fixed: a max/min over a split dim is emitted as mr.max/mr.min(x, axis=..., axis_name=...)
# (meshify/runtime/ops.py), whose derivative counts ties on every device.
import jax
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["b", "d"], y: Tensor["b", "d"]) -> Tensor[()]:
    return jnp.sum(jnp.max(x, axis=1)) + jnp.sum(y.min(axis=-1, keepdims=True) * 2.0)


FUZZ = {'mesh': '8',
 'sizes': {'b': 6, 'd': 16},
 'args': [{'name': 'x', 'dims': ['b', 'd'], 'kind': 'steps', 'high': 0, 'std': 1.0},
          {'name': 'y', 'dims': ['b', 'd'], 'kind': 'steps', 'high': 0, 'std': 1.0}],
 'grad': True,
 'seed': 5,
 'provoked': '',
 'expect': 'accepted'}
