# Bad input: an item of a dict parameter assigned in place (the caller's dict would change on one device only).
# expect: UnsupportedError at 16:5 naming cache = dict(cache)
from typing import TypedDict

from meshify import Tensor, mesh


class Cache(TypedDict):
    k: Tensor["batch", "heads"]
    v: Tensor["batch", "heads"]


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(cache: Cache, k: Tensor["batch", "heads"]) -> Cache:
    k = k * 2
    cache["k"] = k
    return cache
