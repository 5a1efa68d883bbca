"""A helper's own return hint ``tuple[Tensor[...], Tensor[...]]`` (or ``list[Tensor[...]]``, or a tuple with an
item hinted by another type) pins each hinted item to the layout the rules give its dims, as a hint on one array
does (float16 operands summed in float32, as the reference's): ``pair`` completes its partial sum ``h`` before
returning, ``via_call`` converts the items of a call's tuple, ``second`` leaves its unhinted item as it is.
Before, such a hint was ignored (silently: items with other dims than the hint names passed)."""
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = True


def inner(x, w):
    h = x @ w
    return h, jnp.tanh(h)


def pair(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> tuple[Tensor["batch", "d_ff"],
                                                                                 Tensor["batch", "d_ff"]]:
    h = x @ w
    return h, h * 2


def listed(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> list[Tensor["batch", "d_ff"]]:
    h = x @ w
    return [h, jax.nn.relu(h)]


def via_call(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> tuple[Tensor["batch", "d_ff"], Any]:
    return inner(x, w)


def second(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> tuple[Any, Tensor["batch", "d_ff"]]:
    h = x @ w
    return h * 3, h


@mesh(batch=2, model=4, rules={"d_model": "model"})
def f(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    a, b = pair(x, w)
    c, d = listed(x, w)
    e, g = via_call(x, w)
    k, m = second(x, w)
    return a + b * c + d - e * g + k + m


@mesh(batch=2, model=4, rules={"d_model": "model"})
def f16(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    a, b = pair(x, w)
    e, g = via_call(x, w)
    return a + b - e * g


def inputs():
    rng = np.random.default_rng(221)
    x, w = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
    return {"f": (x, w), "f16": (x.astype(np.float16), w.astype(np.float16))}
