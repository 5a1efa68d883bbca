"""Hints named once at module level, as jaxtyping-style code writes them: ``Logits = Annotated[jax.Array,
"batch", "vocab"]``, a ``TypeAlias``, an alias of an alias, ``Tensor[...]`` aliases, an alias for ids, a struct's field and a return hint (a tuple alias) by alias.  Before, the
parameter was taken for a static Python value ("has no Tensor hint")."""
from typing import Annotated, NamedTuple, TypeAlias

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

Logits = Annotated[jax.Array, "batch", "vocab"]
Scores: TypeAlias = Logits
Hidden = Annotated[jax.Array, "batch", "d_model"]
Ids = Tensor["batch"]
Weight = Tensor["d_model", "vocab"]
Out = tuple[Tensor["batch"], Annotated[jax.Array, ()]]


class Head(NamedTuple):
    w: Weight


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(h: Hidden, head: Head, ids: Ids, bias: Scores) -> Out:
    logits: Logits = h @ head.w + bias
    lse = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, ids[:, None], axis=-1)[:, 0]
    return lse - picked, jnp.mean(lse)


def inputs():
    rng = np.random.default_rng(4)
    return (rng.standard_normal((4, 8)).astype(np.float32), Head(rng.standard_normal((8, 16)).astype(np.float32)),
            np.array([0, 3, 15, 7], np.int32), rng.standard_normal((4, 16)).astype(np.float32))
