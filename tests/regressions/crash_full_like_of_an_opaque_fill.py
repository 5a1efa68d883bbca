# Fuzz crash found by tests/fuzz (the grown generator: builtin sum of a tuple, jnp.full_like with a
# reduction as the fill); shrunk by hand.
# convert_source raises AttributeError "'Opaque' object has no attribute 'dims'"
# (meshify/rewrite/rules/constructors.py _like): sum((x0, x0)) is opaque to meshify, so the fill
# jnp.mean(v0) is opaque too, and the full_like rule reads .dims off it instead of refusing it.
# Fixed in meshify/rewrite/rules/constructors.py (_like).
# Rerun: python -m pytest tests/test_regressions.py -k crash_full_like_of_an_opaque_fill
import jax
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(data=1, model=8, rules={"batch": None})
def f(x0: Tensor["batch"]) -> Tensor["batch"]:
    v0 = sum((x0, x0))
    return jnp.full_like(x0, jnp.mean(v0))


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 4},
 'args': [{'name': 'x0', 'dims': ['batch'], 'kind': 'float', 'high': 0, 'std': 1.0}],
 'grad': False,
 'seed': 3,
 'provoked': '',
 'expect': 'accepted'}
