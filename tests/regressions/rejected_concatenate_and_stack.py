# Found while writing the bad-input corpus: jnp.concatenate and jnp.stack of a list literal of
# arrays were always rejected ("List over array 'x' is not supported"), although _ops_shape.py
# has rules for them: the call's arguments were evaluated first, and a list literal holding
# arrays was refused as an opaque construct.  Fixed in meshify/rewrite/_ops.py (list literals
# evaluate like tuples) and _ops_shape.py (the rule reuses the evaluated elements).
import jax
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"batch": "data", "d": "model", "seq2": None})
def f(x: Tensor["batch", "seq", "d"], y: Tensor["batch", "seq", "d"]) -> Tensor[()]:
    both: Tensor["batch", "seq2", "d"] = jnp.concatenate([x, jnp.tanh(y)], axis=1)
    pair: Tensor["two", "batch", "seq", "d"] = jnp.stack([x * 2, y], axis=0)
    return jnp.sum(both * both) + jnp.mean(pair)


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 4, 'seq': 3, 'seq2': 6, 'd': 8, 'two': 2},
 'args': [{'name': 'x', 'dims': ['batch', 'seq', 'd'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'y', 'dims': ['batch', 'seq', 'd'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': True,
 'seed': 3,
 'provoked': '',
 'expect': 'accepted'}
