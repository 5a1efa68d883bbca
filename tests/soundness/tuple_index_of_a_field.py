"""``params.embedding[(tokens,)]`` (Gemma's ``Embedder.encode`` on a params NamedTuple): a tuple index of a
field holding an array, read as the indices it holds as for a name.  Was refused ("advanced indexing with an array
beside indices other than ':'").  Ids out of range and negative, a vocab split over 'model'.  Found by the zoo's
Gemma (session 19)."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Params(NamedTuple):
    embedding: Tensor["vocab", "d_model"]
    w: Tensor["d_model", "e"]


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(params: Params, ids: Tensor["batch", "length"]):
    h = params.embedding[(ids,)] * jnp.sqrt(16.0)
    return h @ params.w + params.w[(0,)]


def inputs():
    rng = np.random.default_rng(444)
    return (Params(rng.standard_normal((64, 16)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)),
            rng.integers(-70, 70, (4, 8)).astype(np.int32))
