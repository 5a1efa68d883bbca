# Bad input: a dict returned under a TypedDict return hint without one of its keys.
# expect: LayoutError at 15:12 naming missing ['v']
from typing import TypedDict

from meshify import Tensor, mesh


class Cache(TypedDict):
    k: Tensor["batch", "heads"]
    v: Tensor["batch", "heads"]


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(cache: Cache, k: Tensor["batch", "heads"]) -> Cache:
    return {"k": cache["k"] + k}
