"""Module constants as the rewrite takes them: Python literals, compared by value and type."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["is_literal", "same_literal"]


def is_literal(value: Any) -> bool:
    """A value ``ast.literal_eval`` could have produced from a module's source (numbers, strings, bools,
    None, and tuples and lists of them): one the rewrite can take in place of the source's."""
    if value is None or isinstance(value, bool | int | float | complex | str | bytes):
        return True
    return isinstance(value, tuple | list) and all(is_literal(v) for v in value)  # a config NamedTuple's too


def same_literal(value: Any, assumed: Any) -> bool:
    """Whether a module constant still holds the literal the rewrite took: equal and of the same type
    (``1``, ``1.0`` and ``True`` are equal, but a float axis is an error where an int is not); NaN is NaN.
    A config ``NamedTuple`` (``CFG = Config()``) is the same where its class's name, fields and values are."""
    if _config(value) and _config(assumed):  # CFG = Config(...): the rewrite's copy is another class of that name
        return type(value).__name__ == type(assumed).__name__ and value._fields == assumed._fields \
            and all(same_literal(v, a) for v, a in zip(value, assumed))
    if type(value) is not type(assumed):
        return False
    if isinstance(value, tuple | list):
        return len(value) == len(assumed) and all(same_literal(v, a) for v, a in zip(value, assumed))
    if isinstance(value, float) and math.isnan(value):
        return math.isnan(assumed)
    try:
        return bool(value == assumed)
    except Exception:  # noqa: BLE001 - an object whose == raises is not the literal the rewrite took
        return False


def _config(value: Any) -> bool:
    return isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple)
