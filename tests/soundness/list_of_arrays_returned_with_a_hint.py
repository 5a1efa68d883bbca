"""A return hint naming a list or tuple of arrays of one layout, as code returning every layer's hidden
states spells it: ``-> list[Tensor[...]]``, ``-> tuple[Annotated[jax.Array, ...], ...]``, ``-> Sequence[...]``;
the list built by appends in a loop, ``tuple(...)`` of a generator, a list comprehension; the items' dims
checked against the hint."""

from collections.abc import Sequence
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def hidden(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d"], ...]) -> list[Tensor["batch", "d"]]:
    hs = []
    for w in ws:
        x = jnp.tanh(x @ w)
        hs.append(x)
    return hs


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def mlp_outs(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d_ff"], ...], vs: tuple[Tensor["d_ff", "d"], ...]
             ) -> tuple[Annotated[jax.Array, "batch", "d"], ...]:
    return tuple(jax.nn.relu(x @ w) @ v for w, v in zip(ws, vs))


@mesh(batch=8)
def heads(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d_ff"], ...]) -> Sequence[Tensor["batch", "d_ff"]]:
    return [jnp.tanh(x @ w) for w in ws]


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 8)).astype(np.float32)
    ws = tuple((rng.normal(size=(8, 8)) * 0.3).astype(np.float32) for _ in range(3))
    vs = tuple((rng.normal(size=(8, 16)) * 0.3).astype(np.float32) for _ in range(2))
    us = tuple((rng.normal(size=(16, 8)) * 0.3).astype(np.float32) for _ in range(2))
    return {"hidden": (x, ws), "mlp_outs": (x, vs, us), "heads": (x, vs)}
