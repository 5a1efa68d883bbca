"""``obj.method`` for a ``@mesh`` method (decorator path) or a converted one (``Sharded``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["BoundMethod"]


class BoundMethod:
    """A ``@mesh`` method bound to ``obj``, passed as its first argument.

    ``self`` has no Tensor hint, so it is static like any such parameter: the program is
    built and compiled once per instance (per hash, for hashable objects), reading the
    attributes it uses then; an unhashable instance is rebuilt on every call.  Arrays a
    method shards are its parameters; an array attribute it uses is a whole copy on every
    device.  ``place``, ``lower`` and ``reference`` are bound too; every other attribute is
    the function's.
    """

    def __init__(self, function: Any, instance: Any) -> None:
        self.__func__ = function
        self.__self__ = instance

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__func__(self.__self__, *args, **kwargs)

    @property
    def reference(self) -> Callable[..., Any]:
        """The untouched single-device method, bound to the same instance."""
        return functools.partial(self.__func__.reference, self.__self__)

    def place(self, *args: Any, **kwargs: Any) -> Any:
        return self.__func__.place(self.__self__, *args, **kwargs)

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        return self.__func__.lower(self.__self__, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # sharded, source, plan, explain, mesh_spec, ...
        return getattr(self.__func__, name)

    def __repr__(self) -> str:
        return f"<bound {self.__func__!r} of {self.__self__!r}>"
