# Found by the fuzzer once it generated loops: a value that is a pending partial sum (a
# contraction over a split dim) and enters a Python for loop, a jax.lax.scan or a
# jax.lax.fori_loop as its carry, with a body that needs it whole, was rejected ("the layout
# of 'h' changes across iterations of this loop"), and the fix it suggested (a hint inside
# the loop) could not help.  A psum inside the loop would sum again on every iteration, so
# meshify now psums the carry before the loop (meshify/rewrite/_interp.py, _for_statement;
# _ops_control.py, _whole) and walks the body again.
import jax
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"d": "model", "layer": None})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], stacked: Tensor["layer", "e"]) -> Tensor[()]:
    h = x @ w
    for _ in range(2):
        h = jnp.tanh(h) * 1.5
    g = jnp.tanh(x) @ w
    g, ys = jax.lax.scan(lambda c, s: (jnp.tanh(c * s), c), g, stacked)
    k = jax.lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) + 0.5, jnp.einsum("bd,de->be", x * x, w))
    return jnp.sum(h * g) + jnp.mean(ys) + jnp.sum(k)


FUZZ = {'mesh': '2x4',
 'sizes': {'batch': 4, 'd': 8, 'e': 3, 'layer': 2},
 'args': [{'name': 'x', 'dims': ['batch', 'd'], 'kind': 'float', 'high': 0, 'std': 0.5},
          {'name': 'w', 'dims': ['d', 'e'], 'kind': 'float', 'high': 0, 'std': 0.5},
          {'name': 'stacked', 'dims': ['layer', 'e'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': True,
 'seed': 7,
 'provoked': '',
 'expect': 'accepted'}
