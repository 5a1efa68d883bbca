"""Pytree classes for ``pytree_classes_imported.py``: a TypedDict of weights, a NamedTuple of blocks holding
another NamedTuple (which the importing module never names)."""
from typing import NamedTuple, TypedDict

from meshify import Tensor


class Ffn(TypedDict):
    w1: Tensor["d_model", "d_ff"]
    w2: Tensor["d_ff", "d_model"]


class Block(NamedTuple):
    ffn: Ffn
    scale: Tensor["d_model"]


class Params(NamedTuple):
    blocks: tuple[Block, ...]
    head: Tensor["d_model", "vocab"]
