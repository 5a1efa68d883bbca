# Bad input: a return hint naming a TypedDict whose field is a list of blocks (was broken generated code).
# expect: AnnotationError at 19:55 naming a list as long as each call's
from typing import Annotated, TypedDict

import jax
from meshify import mesh


class Blk(TypedDict):
    w: Annotated[jax.Array, "c"]


class P(TypedDict):
    a: Annotated[jax.Array, "c"]
    blocks: list[Blk]


@mesh(batch=8)
def f(p: P, x: Annotated[jax.Array, "batch", "c"]) -> P:
    return jax.tree.map(lambda t: t * x.sum(), p)
