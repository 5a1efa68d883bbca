"""``jax.tree.map`` of one function over leaves that need different rewritten code: a rollout batch (a NamedTuple
and a dict of arrays of different ranks, one split over 'model' too) cut into minibatches by
``x.reshape(n, B // n, *x.shape[1:])``, and a scale whose partial-sum handling differs per leaf.  Each leaf gets its
own version of the function (``mr.tree_map_each``, keyed by the leaf's path; a dict's keys in any order).
Before, "the function of jax.tree.map(...) needs other code for 'mb.score' than for 'mb.ids'" (the PPO attack)."""
from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Rollout(NamedTuple):
    obs: Tensor["batch", "length", "d"]
    score: Tensor["batch"]


class Extra(TypedDict):
    b: Tensor["batch", "k"]
    a: Tensor["batch", "k"]


class Bias(TypedDict):
    b: Tensor["d"]


@mesh(batch=2, model=4, rules={"d": "model"})
def minibatches(r: Rollout, extra: Extra):
    B = r.score.shape[0]
    mbs = jax.tree.map(lambda x: x.reshape(2, B // 2, *x.shape[1:]), r)
    ex = jax.tree.map(lambda x: jnp.tanh(x.reshape(2, B // 2, *x.shape[1:])), extra)
    return mbs.obs.sum(axis=(1, 2, 3)) + mbs.score.sum(axis=1) + ex["b"].sum(axis=(1, 2)) * ex["a"].mean(axis=(1, 2))


@mesh(batch=8)
def scaled(p: Bias, x: Tensor["batch", "d"]):
    g = {"w": x.sum(axis=0), "b": p["b"] * 2.0}
    out = jax.tree.map(lambda t: jnp.sin(t) * 0.5, g)
    return out["w"] + out["b"]


def inputs():
    rng = np.random.default_rng(61)
    r = Rollout(rng.standard_normal((8, 3, 4)).astype(np.float32), rng.standard_normal(8).astype(np.float32))
    extra = {"b": rng.standard_normal((8, 2)).astype(np.float32), "a": rng.standard_normal((8, 2)).astype(np.float32)}
    p = {"b": rng.standard_normal(4).astype(np.float32)}
    return {"minibatches": (r, extra), "scaled": (p, rng.standard_normal((16, 4)).astype(np.float32))}
