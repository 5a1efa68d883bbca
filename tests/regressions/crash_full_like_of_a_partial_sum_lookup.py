# Fuzz crash found by tests/fuzz on the 8 mesh (the grown generator: literal-shape constructors).
# Found by: python tests/fuzz/run.py --seed 14 --only 573 (shrunk by run.py)
# Calling the converted f raises JAX's ValueError "shard_map ... was given out_specs which require
# replication which can't be statically inferred" (meshify/runtime/_bind.py __call__): x0[ids1] in a
# table split over 'model' is a pending partial sum (masked local lookup), and the generated
# jnp.full_like(v0, 0.5) inherits v0's varying-over-'model' type, so the replicated out_specs fail
# shard_map's check.  (The decorator path, rewritten in-process, runs the same program without error.)
# Fixed in meshify/rewrite/rules/constructors.py (_like).
# Rerun: python -m pytest tests/test_regressions.py -k crash_full_like_of_a_partial_sum_lookup
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


@mesh(model=8, rules={'batch': 'model'})
def f(x0: Tensor["batch", "seq"], ids1: Tensor["d_model", "d_ff"]) -> Tensor["d_model", "d_ff", "seq"]:
    v0 = x0[ids1]
    v1 = jnp.full_like(v0, 0.5)
    return v1


FUZZ = {'mesh': '8',
 'sizes': {'batch': 8, 'seq': 2, 'd_model': 2, 'd_ff': 2},
 'args': [{'name': 'x0', 'dims': ['batch', 'seq'], 'kind': 'float', 'high': 0, 'std': 1.0},
          {'name': 'ids1', 'dims': ['d_model', 'd_ff'], 'kind': 'ids', 'high': 8, 'std': 1.0}],
 'grad': False,
 'seed': 14000615,
 'provoked': '',
 'expect': 'accepted'}
