"""Generated lines wrapped at a width (120), the way a formatter would wrap them.

After this pass no line meshify wrote is longer than the width where it can be split: code is split
at the brackets of its last call, subscript or tuple that leaves a short enough head (the contents on
one indented line when they fit, else one item per line with a trailing comma), recursively;
``# meshify:`` comments are split between words, never inside a quoted name, a bracketed list or a
call, nor next to an operator (a comment never stops mid-expression).  Lines the source already had
stay byte-identical, as does everything inside a string.  Wrapping only moves line breaks inside
brackets: the wrapped module parses to the same AST as before, which is checked.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

__all__ = ["WIDTH", "wrap_lines"]

#: The longest line meshify writes where it can be split.
WIDTH = 120

_IDENTIFIER = re.compile(r"\w")
_OPERATOR = set("+-*/@%<>=!&|^~")


def wrap_lines(text: str, source: str, width: int = WIDTH) -> str:
    """``text`` with each long line meshify wrote wrapped at ``width``; ``source``'s own lines kept."""
    lines = text.splitlines(keepends=True)
    long_rows = [i for i, line in enumerate(lines) if len(line.rstrip("\r\n")) > width]
    if not long_rows:
        return text
    kept, in_strings = set(source.splitlines()), _inside_strings(text)
    for i in long_rows:
        line = lines[i].rstrip("\r\n")
        if line in kept or i in in_strings:
            continue
        wrapped = _comment(line, width) if line.lstrip().startswith("#") else _code(line, width)
        lines[i] = "".join(part + "\n" for part in wrapped)
    wrapped_text = "".join(lines)
    if ast.dump(ast.parse(text)) != ast.dump(ast.parse(wrapped_text)):
        raise AssertionError("meshify bug: wrapping long lines changed the program")
    return wrapped_text


def _inside_strings(text: str) -> set[int]:
    """The (0-based) rows a multi-line string starts on, runs through or ends on: never wrapped
    (from Python 3.12 an f-string is several tokens, from FSTRING_START to FSTRING_END)."""
    rows: set[int] = set()
    opened: list[int] = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == _FSTRING_START:
            opened.append(token.start[0])
            continue
        first = opened.pop() if token.type == _FSTRING_END else token.start[0]
        if token.type in (tokenize.STRING, _FSTRING_END) and first != token.end[0]:
            rows.update(range(first - 1, token.end[0]))
    return rows


_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)


# -- code ---------------------------------------------------------------------------------------------


def _code(line: str, width: int) -> list[str]:
    """``line`` split at the brackets of one of its outermost complete groups, pieces wrapped again."""
    if len(line) <= width:
        return [line]
    scanned = _scan(line)
    if scanned is None:
        return [line]
    pairs, comment_at = scanned
    end = len(line) if comment_at is None else comment_at
    groups = [(o, c) for o, c in _outermost(pairs) if c < end and line[o + 1:c].strip()]
    if not groups:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    fitting = [(o, c) for o, c in reversed(groups) if o + 1 <= width and len(indent + line[c:]) <= width]
    open_, close = fitting[0] if fitting else groups[-1]
    head, body, tail = line[: open_ + 1], line[open_ + 1: close].strip(), indent + line[close:]
    return [*_code(head, width), *_body(body, indent + "    ", width), *_code(tail, width)]


def _body(body: str, indent: str, width: int) -> list[str]:
    """A group's contents: on one line when they fit, else one item per line (trailing comma where
    Python reads the group the same with it: two items or more, not a comprehension)."""
    if len(indent + body) <= width:
        return [indent + body]
    items = _items(body)
    if len(items) == 1:
        return _code(indent + body, width)
    return [wrapped for item in items for wrapped in _code(f"{indent}{item},", width)]


def _items(body: str) -> list[str]:
    """``body`` split at its top-level commas, except a lambda's parameters and a comprehension."""
    cuts, depth, in_lambda, k = [], 0, False, 0
    while k < len(body):
        ch = body[k]
        if ch in "'\"":
            k = _string_end(body, k)
            if k < 0:
                return [body]
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and _keyword(body, k, "for"):
            return [body]
        elif depth == 0 and _keyword(body, k, "lambda"):
            in_lambda = True
        elif depth == 0 and ch == ":":
            in_lambda = False
        elif depth == 0 and ch == "," and not in_lambda:
            cuts.append(k)
        k += 1
    parts = [body[a + 1: b].strip() for a, b in zip([-1, *cuts], [*cuts, len(body)])]
    return [p for p in parts if p]


def _keyword(text: str, k: int, word: str) -> bool:
    end = k + len(word)
    return (text.startswith(word, k) and (k == 0 or not _IDENTIFIER.match(text[k - 1]))
            and (end == len(text) or not _IDENTIFIER.match(text[end])))


def _outermost(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The bracket pairs no other complete pair of the line contains, left to right."""
    ordered = sorted(pairs)
    found: list[tuple[int, int]] = []
    for o, c in ordered:
        if not found or o > found[-1][1]:
            found.append((o, c))
    return found


def _scan(line: str) -> tuple[list[tuple[int, int]], int | None] | None:
    """The bracket pairs complete within ``line`` and where its comment starts; None where a string
    runs on past the line's end (a multi-line string: left as it is)."""
    stack: list[int] = []
    pairs: list[tuple[int, int]] = []
    k = 0
    while k < len(line):
        ch = line[k]
        if ch == "#":
            return pairs, k
        if ch in "'\"":
            k = _string_end(line, k)
            if k < 0:
                return None
            continue
        if ch in "([{":
            stack.append(k)
        elif ch in ")]}" and stack:
            pairs.append((stack.pop(), k))
        k += 1
    return pairs, None


def _string_end(line: str, k: int) -> int:
    """Just past the string literal starting at ``line[k]`` (a quote); -1 where it does not end."""
    quote = line[k] * 3 if line.startswith(line[k] * 3, k) else line[k]
    j = k + len(quote)
    while j < len(line):
        if line[j] == "\\":
            j += 2
        elif line.startswith(quote, j):
            return j + len(quote)
        else:
            j += 1
    return -1


# -- comments -----------------------------------------------------------------------------------------


def _comment(line: str, width: int) -> list[str]:
    """A long comment split between words; continuation lines indented under its text.  A layout's
    ``[...]`` is split only where the comment cannot fit otherwise (a very long dim name)."""
    hashes = line.index("#")
    marker = re.match(r"#( meshify:)? *", line[hashes:])
    start = hashes + (marker.end() if marker else 1)
    cont = line[:hashes] + "#" + " " * (start - hashes - 1 + 4)
    for loose in (False, True):
        lines = _fill(line[:start], cont, _comment_words(line[start:], loose), width)
        if max(map(len, lines)) <= width:
            break
    return lines


def _fill(first: str, cont: str, words: list[str], width: int) -> list[str]:
    """``words`` filled into lines of at most ``width``; a full line breaks after its last clause
    (a word ending in ``;`` or ``:``) where that keeps it two thirds full, so that a clause is not
    left with one word on the next line."""
    lines: list[list[str]] = [[]]

    def length(ws: list[str], row: int) -> int:
        return len(first if row == 0 else cont) + len(" ".join(ws))

    for word in words:
        row, line = len(lines) - 1, lines[-1]
        if line and length([*line, word], row) > width:
            cut = max((i + 1 for i, w in enumerate(line[:-1]) if w.endswith((";", ":"))), default=0)
            if cut and length(line[:cut], row) >= width * 2 // 3 and length([*line[cut:], word], row + 1) <= width:
                lines[-1:] = [line[:cut], line[cut:]]
            else:
                lines.append([])
        lines[-1].append(word)
    return [(first if row == 0 else cont) + " ".join(ws) for row, ws in enumerate(lines)]


def _comment_words(text: str, loose: bool) -> list[str]:
    """``text`` cut at the spaces a line may break at: outside quotes and code brackets (a call's
    or subscript's parentheses, any ``[...]`` or ``{...}``; ``loose``: a ``[...]`` after a space is
    prose), not beside an operator, and not between ``name:`` and the ``[...]`` layout it names."""
    words, current, depth, stack, quote = [], "", 0, [], ""
    for k, ch in enumerate(text):
        prev = text[k - 1] if k else " "
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"" and (prev in " ([{,=" or k == 0):
            quote = ch
        elif ch in "([{":
            attached = _IDENTIFIER.match(prev) is not None or prev in ")]"
            code = attached or ch == "{" or (ch == "[" and not loose)
            stack.append(code)
            depth += code
        elif ch in ")]}" and stack:
            depth -= stack.pop()
        elif ch == " " and not depth and current and _breakable(current, text[k + 1:]):
            words.append(current)
            current = ""
            continue
        current += ch
    return [*words, current] if current else words or [""]


def _breakable(before: str, after: str) -> bool:
    """Whether a comment may break between two words: not beside an operator (``->`` of a version's
    mapping may start a line), nor inside ``name: [layout]`` or ``partial over 'axis'``."""
    last = before.rsplit(" ", 1)[-1]
    following = after.split(" ", 1)[0]
    if not following or set(last) <= _OPERATOR or (set(following) <= _OPERATOR and following != "->"):
        return False
    return not ((last.endswith(":") and following.startswith("[")) or following in ("partial", "over")
                or last == "over")
