"""The user-facing annotations: ``Tensor[...]`` hints, ``@mesh(...)``, and their value types."""

from meshify.annotate._decorator import MeshFunction, mesh
from meshify.annotate._tensor import Tensor, TensorHint
from meshify.annotate._types import BROADCAST, Layout, MeshSpec, Rules

__all__ = ["Tensor", "TensorHint", "mesh", "MeshFunction", "MeshSpec", "Rules", "Layout", "BROADCAST"]
