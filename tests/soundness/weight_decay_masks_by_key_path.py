"""Weight-decay masks and frozen parameters as optax-era code writes them: ``jax.tree_util.tree_map_with_path``
over hinted parameters (a NamedTuple, a dict), the lambda reading the key path (``path[-1].name``,
``path[-1].key``, ``jax.tree_util.keystr(path)``) or the leaf's rank; the mask's Python bools then filter a
comprehension over ``zip(jax.tree.leaves(params), jax.tree.leaves(mask))``, unrolled leaf by leaf; a mapped
function whose code differs per leaf (a sum over a split dim of one leaf only) runs each leaf's own version.
Before, "jax.tree_util.tree_map_with_path has no meshify rule" and "a Python loop over a tuple whose items have
different layouts" (session-24 note)."""
from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class P(NamedTuple):
    w1: Tensor["d", "f"]
    b1: Tensor["f"]
    w2: Tensor["f", "d"]


@mesh(batch=2, model=4, rules={"f": "model"})
def by_name(params: P, x: Tensor["batch", "d"]):
    mask = jax.tree_util.tree_map_with_path(lambda path, p: path[-1].name != "b1", params)
    y = jnp.maximum(x @ params.w1 + params.b1, 0) @ params.w2
    penalty = sum(jnp.sum(p ** 2) for p, m in zip(jax.tree.leaves(params), jax.tree.leaves(mask)) if m)
    frozen = jax.tree_util.tree_map_with_path(
        lambda path, p: jax.lax.stop_gradient(p) if "w2" in jax.tree_util.keystr(path) else p, params)
    return jnp.mean((jnp.maximum(x @ frozen.w1 + frozen.b1, 0) @ frozen.w2 - y) ** 2) + jnp.mean(y ** 2) \
        + 1e-3 * penalty


class W(TypedDict):
    w: Tensor["d", "f"]


@mesh(batch=2, model=4, rules={"f": "model"})
def by_rank(params: W, b: Tensor["f"], x: Tensor["batch", "d"]):
    tree = {"w": params["w"], "b": b}
    decay = jax.tree_util.tree_map_with_path(lambda path, p: p.ndim > 1 and path[0].key != "b", tree)
    sums = jax.tree_util.tree_map_with_path(lambda path, p: jnp.sum(p, axis=0), tree)
    l2 = sum(jnp.vdot(p, p) for p, m in zip(jax.tree.leaves(tree), jax.tree.leaves(decay)) if m)
    return jnp.tanh(x @ params["w"] + b) * 0.5 + l2 + jnp.sum(sums["w"] * sums["b"])


def inputs():
    rng = np.random.default_rng(62)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {"by_name": (P(f32(4, 8), f32(8), f32(8, 4)), f32(4, 4)),
            "by_rank": ({"w": f32(4, 8)}, f32(8), f32(4, 4))}
