"""Where a call-time error points: the decorator, or one parameter of a function's ``def``.

Read with :mod:`linecache` from the file the function came from (no libcst, no parsing),
so that a ``CallError`` prints ``path:line:col``, the source line and a caret like every
rewrite-time error.  Functions without a readable source (``exec``'d code) get no place.
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Callable

from meshify.errors import SourceSpan

__all__ = ["call_site_span"]


def call_site_span(fn: Callable, param: str | None = None) -> SourceSpan | None:
    """The span of ``param`` in ``fn``'s parameter list, else of its first decorator line."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    path, first = code.co_filename, code.co_firstlineno
    lines = linecache.getlines(path)
    if not 0 < first <= len(lines):
        return None
    if param is not None:
        found = _param_position(lines, first, code.co_name, param)
        if found is not None:
            line, col = found
            return SourceSpan(path, line, col, lines[line - 1], len(param))
    text = lines[first - 1]
    col = len(text) - len(text.lstrip()) + 1
    return SourceSpan(path, first, col, text, max(1, len(text.strip())))


def _param_position(lines: list[str], first: int, name: str, param: str) -> tuple[int, int] | None:
    """(line, column) of ``param`` between ``def name(`` and the end of the signature."""
    start = next((i for i in range(first - 1, len(lines)) if re.match(rf"\s*(async\s+)?def\s+{name}\b", lines[i])),
                 None)
    if start is None:
        return None
    pattern = re.compile(rf"(?<![\w.]){re.escape(param)}\s*[:,=)]")
    for i in range(start, min(start + 50, len(lines))):
        text = lines[i]
        offset = text.index("(") + 1 if i == start and "(" in text else 0
        match = pattern.search(text, offset)
        if match:
            return i + 1, match.start() + 1
        if text.rstrip().endswith(":") and ")" in text:
            return None
    return None
