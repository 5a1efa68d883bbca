"""``Tensor[...]``: the named-dims type hint.

meshify reads these hints from source text; at run time ``Tensor["batch", "d"]``
evaluates to a small descriptive object so that annotated modules import fine.

Type checkers and linters cannot accept this spelling: to each of them the strings in a
hint's subscript are forward references, names to look up (ruff: ``F821 undefined name
'batch'``). Code that is checked spells the same hint ``Annotated[jax.Array, "batch", "d"]``
(``typing.Annotated``), whose metadata are plain values to every checker and whose type is
``jax.Array``; the rewriter reads both (``meshify/rewrite/_hints.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Tensor", "TensorHint"]


@dataclass(frozen=True, slots=True)
class TensorHint:
    """What ``Tensor[...]`` evaluates to: the named dims, in order."""

    dims: tuple[str, ...]
    #: ``Tensor["d"] | None``: None or an array, decided per call.
    optional: bool = False

    def __repr__(self) -> str:
        text = "Tensor[" + ", ".join(repr(d) for d in self.dims) + "]" if self.dims else "Tensor[()]"
        return text + " | None" if self.optional else text

    def __or__(self, other: object) -> TensorHint:
        """``Tensor["d"] | None`` evaluates (a module without ``from __future__ import annotations``)."""
        if other is not None:
            return NotImplemented
        return TensorHint(self.dims, optional=True)

    __ror__ = __or__


class _TensorMeta(type):
    def __getitem__(cls, dims: object) -> TensorHint:
        if dims == ():
            return TensorHint(())
        if not isinstance(dims, tuple):
            dims = (dims,)
        for dim in dims:
            if not isinstance(dim, str):
                raise TypeError(f"Tensor[...] dims must be strings, got {dim!r}")
        return TensorHint(dims)


class Tensor(metaclass=_TensorMeta):
    """An array with named dims: ``Tensor["batch", "d_model"]``; ``Tensor[()]`` is a scalar.

    For type-checked code: ``Annotated[jax.Array, "batch", "d_model"]``, ``Annotated[jax.Array, ()]``.
    """

    def __init__(self) -> None:
        raise TypeError("Tensor is a type hint: write Tensor['batch', 'd_model']")
