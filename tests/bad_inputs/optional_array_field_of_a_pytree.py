# Bad input: an optional array field of a NamedTuple parameter (optional arrays are read as parameters).
# expect: AnnotationError at 11:13 naming is an optional array
from typing import Annotated, NamedTuple, Optional

import jax
from meshify import mesh


class Block(NamedTuple):
    w: Annotated[jax.Array, "d", "f"]
    skip_w: Optional[Annotated[jax.Array, "d", "f"]] = None


@mesh(batch=2, model=4, rules={"f": "model"})
def f(p: Block, x: Annotated[jax.Array, "batch", "d"]):
    return x @ p.w
