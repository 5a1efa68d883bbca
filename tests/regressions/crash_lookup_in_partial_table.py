# Fuzz crash found by tests/fuzz (shrunk by hand from run.py --seed 7 --only 43, 8x1 mesh).
# convert_source raised ValueError "Layout: split and partial over the same axis": a lookup
# in a table that is a partial sum over 'model' (contracted 'd' split) with ids split over
# 'model' kept the partial sum on a result split over the same axis.  Fixed in
# meshify/rewrite/_ops_shape.py: the table is reduced first over the ids' split axes.
import jax
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(model=4, rules={"d": "model", "n": "model"})
def f(x: Tensor["v", "d"], w: Tensor["d"], ids: Tensor["n"]) -> Tensor["n"]:
    t = x @ w
    return t[ids]


FUZZ = {'mesh': '8',
 'sizes': {'v': 6, 'd': 8, 'n': 8},
 'args': [{'name': 'x', 'dims': ['v', 'd'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'w', 'dims': ['d'], 'kind': 'float', 'high': 0, 'std': 0.35},
          {'name': 'ids', 'dims': ['n'], 'kind': 'ids', 'high': 6, 'std': 1.0}],
 'grad': False,
 'seed': 43,
 'provoked': '',
 'expect': 'accepted'}
