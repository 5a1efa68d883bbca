"""Where a call-time error points: the decorator, one parameter of a function's ``def``, or the
statement whose runtime call refused the sizes it was traced with.

Read with :mod:`linecache` from the file the function came from (no libcst, no parsing),
so that a ``CallError`` prints ``path:line:col``, the source line and a caret like every
rewrite-time error.  Functions without a readable source (``exec``'d code) get no place.
"""

from __future__ import annotations

import difflib
import inspect
import linecache
import re
import traceback
from collections.abc import Callable
from types import TracebackType

from meshify.errors import SourceSpan

__all__ = ["call_site_span", "statement_span"]


def call_site_span(fn: Callable, param: str | None = None) -> SourceSpan | None:
    """The span of ``param`` in ``fn``'s parameter list, else of its first decorator line."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    path, first = code.co_filename, code.co_firstlineno
    linecache.checkcache(path)
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


def statement_span(tb: TracebackType | None, program: Callable, origin: Callable) -> SourceSpan | None:
    """The statement of ``origin`` (the function as the user wrote it) that was running in ``program``
    (its generated per-device code; a statement calling a helper where the error came from the helper)
    when the traceback ``tb`` was raised: for a converted file its own line (the file the user runs); for
    the decorator's generated code (no file) the user's line it came from, found by aligning the two
    functions' lines (comments left out).  None where no frame of ``program`` is on the traceback, or
    its lines cannot be read."""
    code = getattr(program, "__code__", None)
    if code is None:
        return None
    walked = list(traceback.walk_tb(tb))
    at = [k for k, (f, _) in enumerate(walked) if f.f_code is code]
    if not at:
        return None
    path, line = walked[at[-1]][0].f_code.co_filename, walked[at[-1]][1]
    generated = linecache.getlines(path)
    if not 0 < line <= len(generated):
        return None
    converted = origin is program or getattr(origin, "__code__", None) is None or origin.__code__.co_filename == path
    # (raised inside a helper's version, gqa__v1, written beside the function: the helper's own statement)
    inner = [(f, n) for f, n in walked[at[-1] + 1:] if f.f_code.co_filename == path
             and _VERSION.search(f.f_code.co_name) and 0 < n <= len(generated)]
    if inner:
        frame, number = inner[-1]
        if converted:
            return _line_span(path, number, generated[number - 1])
        helper = inspect.unwrap(origin.__globals__.get(_VERSION.sub(r"\1", frame.f_code.co_name), None) or origin)
        if getattr(helper, "__code__", None) is not None and helper is not origin:
            mapped = _aligned(generated, number, helper, frame.f_code.co_name)
            if mapped is not None:
                return mapped
    if converted:
        return _line_span(path, line, generated[line - 1])
    return _aligned(generated, line, origin)


def _line_span(path: str, line: int, text: str) -> SourceSpan:
    col = len(text) - len(text.lstrip()) + 1
    return SourceSpan(path, line, col, text, max(1, len(text.strip())))


def _aligned(generated: list[str], line: int, origin: Callable, name: str | None = None) -> SourceSpan | None:
    """The line of ``origin``'s def that generated line ``line`` stands for: both functions' code lines
    (comments and blank lines left out) aligned by :class:`difflib.SequenceMatcher`; a rewritten line
    maps to its place in the block of the user's lines it replaced.  ``name``: the generated def's name
    where it is not the user's (a helper's version, ``gqa__v1``)."""
    code = origin.__code__
    path, first = code.co_filename, code.co_firstlineno
    linecache.checkcache(path)
    lines = linecache.getlines(path)
    if not 0 < first <= len(lines):
        return None
    start = next((i + 1 for i in range(first - 1, len(lines)) if _is_def(lines[i], code.co_name)), None)
    if start is None:
        return None
    theirs = _code_lines(lines, start)
    ours = _code_lines(generated, _def_start(generated, line, name or code.co_name))
    where = next((k for k, (n, _) in enumerate(ours) if n >= line), None)
    if not theirs or where is None:
        return None
    # (a helper's version is called by its version's name, second__v1(x): read as the user's second(x), so that
    # the call lines up with its own line, not with a like line elsewhere)
    matcher = difflib.SequenceMatcher(None, [_VERSION.sub(r"\1", t) for _, t in ours], [t for _, t in theirs],
                                      autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i1 <= where < i2 or (tag == "insert" and i1 == where):
            j = j1 + min(where - i1, max(j2 - j1 - 1, 0)) if tag != "insert" else j1
            j = min(j, len(theirs) - 1)
            number = theirs[j][0]
            return _line_span(path, number, lines[number - 1])
    return None


_VERSION = re.compile(r"(\w)__v\d+\b")


def _def_start(lines: list[str], line: int, name: str) -> int:
    """The line (1-based) of the ``def name`` enclosing generated line ``line`` (its first line if none)."""
    for i in range(line - 1, -1, -1):
        if _is_def(lines[i], name):
            return i + 1
    return 1


def _is_def(text: str, name: str) -> bool:
    return re.match(rf"\s*(async\s+)?def\s+{name}\b", text) is not None


def _code_lines(lines: list[str], first: int) -> list[tuple[int, str]]:
    """``(line number, stripped text)`` of the function whose ``def`` is line ``first``: its signature and
    body up to the next line indented no deeper than its ``def``, comments and blank lines left out."""
    start = first - 1
    if start >= len(lines):
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    out = []
    for i in range(start, len(lines)):
        text = lines[i]
        stripped = text.strip()
        if i > start and stripped and len(text) - len(text.lstrip()) <= indent and not stripped.startswith(")"):
            break
        if stripped and not stripped.startswith("#"):
            out.append((i + 1, stripped))
    return out
