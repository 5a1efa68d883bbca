# Bad input: jnp.repeat with per-element repeats (an array) and no total_repeat_length (traced: no length).
# expect: UnsupportedError at 10:37 naming total_repeat_length=nodes.shape[0]
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"hidden": "model"})
def f(nodes: Tensor["nodes", "hidden"], n_node: Tensor["graphs"]):
    ids = jnp.repeat(jnp.arange(4), n_node)
    return jax.ops.segment_sum(nodes, ids, 4)
