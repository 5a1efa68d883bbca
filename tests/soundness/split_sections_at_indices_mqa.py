"""Multi-query attention's fused projection, ``[q | k | v]`` of other sizes (``n_head * hd``, ``hd``, ``hd``)
along a dim split over 'model': ``jnp.split(qkv, [n_head * hd, n_head * hd + hd], axis=-1)`` with the indices
computed from the config, each section split into equal blocks by ``mr.split_sections`` (chunks moved by
ppermutes); and Falcon's grouped split along an unsplit dim at indices computed from a local int
(``[n_rep, n_rep + 1]``).  Before, "sections of other sizes cannot each split evenly" and "needs a literal
number of sections" (found by the attack on fused splits, session 17); gradients through all."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Cfg(NamedTuple):
    n_head: int = 4
    hd: int = 4


@mesh(batch=2, model=4, rules={"qkv": "model"})
def f(x: Tensor["batch", "seq", "d"], w: Tensor["d", "qkv"], g: Tensor["batch", "seq", "groups", "slots", "e"],
      cfg: Cfg = Cfg()):
    B, T, _ = x.shape
    qkv = x @ w
    q, k, v = jnp.split(qkv, [cfg.n_head * cfg.hd, cfg.n_head * cfg.hd + cfg.hd], axis=-1)
    q = q.reshape(B, T, cfg.n_head, cfg.hd)
    att = jax.nn.softmax(jnp.einsum("bthd,bsd->bhts", q, k), axis=-1)
    y = jnp.einsum("bhts,bsd->bthd", att, v)
    n_rep = 2
    gq, gk, gv = jnp.split(g, [n_rep, n_rep + 1], axis=3)
    return y, jnp.sum(gq, axis=3) * gk[:, :, :, 0] + gv[:, :, :, 0]


def inputs():
    rng = np.random.default_rng(414)
    return (rng.standard_normal((4, 6, 8)).astype(np.float32), rng.standard_normal((8, 24)).astype(np.float32) * 0.3,
            rng.standard_normal((4, 6, 2, 4, 3)).astype(np.float32))
