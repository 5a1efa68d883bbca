"""How deeply a module nests, measured before libcst parses it.

libcst's parser, its code generator and meshify's passes recurse once per nested node,
one to three Python frames each; a long enough ``a + a + ... + a`` exhausts Python's
recursion limit (or crashes libcst's native parser).  After :func:`check_nesting` no
libcst node of the module lies deeper than :data:`MAX_NESTING`, which keeps every pass
well inside the default limit of 1000 frames, wherever the rewrite is called from.

Depth is counted on CPython's ast (ten times cheaper than walking the libcst tree), with
the levels libcst adds on top of it: ``f(x)`` is Call -> Arg -> Name there, ``a and b
and c`` two nested BooleanOperations, ``"a" "b" "c"`` two nested ConcatenatedStrings.
The count is an upper bound of libcst's depth.
"""

from __future__ import annotations

import ast
import io
import tokenize

from meshify.errors import SourceError, SourceSpan

__all__ = ["MAX_NESTING", "check_nesting", "too_deep_for_python"]

#: The deepest libcst node a module may hold.  A libcst visitor takes up to 3.5 frames a level
#: (``visit``, ``_visit_and_replace_children``, ``visit_sequence``, ``visit_iterable``) and may
#: start at the bottom of the interpreter's own recursion (2 frames a level) to place an error,
#: so a rewrite needs at most about 600 frames, leaving 400 to whoever calls it.
MAX_NESTING = 100

_FIX = "split it into several statements: y = a + b + c, then y = y + d + e, ..."


def check_nesting(tree: ast.Module, source: str, path: str) -> None:
    """Raises a :class:`SourceError` at the outermost expression of the deepest path, if too deep."""
    lines = _Lines(source)
    deepest, root, root_depth = 0, tree, 0
    stack: list[tuple[ast.AST, int, ast.AST | None, int, bool]] = [(tree, 0, None, 0, False)]
    pop, push, rules = stack.pop, stack.append, _RULES
    while stack:
        node, depth, outer, outer_depth, in_fstring = pop()
        if outer is None and isinstance(node, ast.expr | ast.pattern):
            outer, outer_depth = node, depth  # the expression the message points at
        rule = rules.get(type(node), 0)
        bottom = depth + (rule if type(rule) is int else rule(node, lines, in_fstring))  # the node's deepest level
        if bottom > deepest:
            deepest, root, root_depth = bottom, outer or node, outer_depth if outer is not None else depth
        in_fstring = in_fstring or type(node) is ast.JoinedStr
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.expr_context):  # Load, Store, Del: leaves libcst has no node for
                push((child, bottom + 1, outer, outer_depth, in_fstring))
    if deepest > MAX_NESTING:
        kind = "expression" if isinstance(root, ast.expr | ast.pattern) else "statement"
        raise SourceError(f"this {kind} nests {deepest - root_depth + 1} levels deep ({deepest} counting the code "
                          f"around it); meshify follows at most {MAX_NESTING}", span=_span(path, lines.data, root),
                          fix=_FIX)


class _Lines:
    """The source's lines as UTF-8 (ast's columns count bytes), split on first need."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._data: list[bytes] | None = None

    @property
    def data(self) -> list[bytes]:
        if self._data is None:
            self._data = self.source.encode("utf-8").splitlines(keepends=True)
        return self._data


def _string(node: ast.AST, lines: _Lines, in_fstring: bool) -> int:
    """Implicit concatenation: one ConcatenatedString per literal after the first, nested."""
    if in_fstring or type(node) is ast.Constant and not isinstance(node.value, str | bytes):
        return 0
    return _pieces(node, lines.data) - 1


def _rules() -> dict[type, object]:
    """Levels libcst has for an ast node beyond the ast's one: a number, or a function of the node."""
    rules: dict[type, object] = {cls: 1 for cls in _subclasses(ast.pattern)}  # MatchSequenceElement, ...
    rules.update({cls: 2 for cls in _subclasses(ast.stmt)})  # SimpleStatementLine or IndentedBlock, Else
    rules.update({
        ast.Call: 1, ast.List: 1, ast.Tuple: 1, ast.Set: 1, ast.Dict: 1, ast.Compare: 1,  # Arg, Element, ...
        ast.Subscript: 2,  # SubscriptElement, Index or Slice
        ast.Lambda: 1, ast.arg: 1,  # Param, Annotation
        ast.Assign: 3, ast.AnnAssign: 3,  # + AssignTarget, Annotation
        ast.Constant: _string, ast.JoinedStr: _string,
        ast.BoolOp: lambda node, lines, in_fstring: len(node.values) - 2,  # nested BooleanOperations
        ast.alias: lambda node, lines, in_fstring: node.name.count("."),  # a.b.c: an Attribute chain
        ast.ImportFrom: lambda node, lines, in_fstring: 3 + (node.module or "").count("."),
    })
    for comprehension in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
        rules[comprehension] = lambda node, lines, in_fstring: len(node.generators)  # nested CompFor, CompIf
    return rules


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


_RULES = _rules()


def _pieces(node: ast.AST, lines: list[bytes]) -> int:
    """How many string literals a str/bytes constant or f-string is written as (``"a" "b"``: 2)."""
    if not (isinstance(node, ast.JoinedStr) or isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)):
        return 1
    text = _segment(lines, node)
    quotes = text.count(b'"') + text.count(b"'")
    if quotes <= 16:  # at least two quotes a literal
        return max(1, quotes // 2)
    kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_START", tokenize.STRING)}
    try:
        code = "(\n" + text.decode("utf-8", errors="replace") + "\n)"
        return max(1, sum(t.type in kinds for t in tokenize.generate_tokens(io.StringIO(code).readline)))
    except (tokenize.TokenError, SyntaxError):
        return max(1, quotes // 2)


def _segment(lines: list[bytes], node: ast.AST) -> bytes:
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    if first == last:
        return lines[first][node.col_offset:node.end_col_offset] if first < len(lines) else b""
    return lines[first][node.col_offset:] + b"".join(lines[first + 1:last]) + lines[last][:node.end_col_offset]


def _span(path: str, lines: list[bytes], node: ast.AST) -> SourceSpan:
    line = lines[node.lineno - 1] if node.lineno <= len(lines) else b""
    text = line.decode("utf-8", errors="replace").rstrip("\r\n")
    col = len(line[:node.col_offset].decode("utf-8", errors="replace")) + 1
    end = len(line[:node.end_col_offset].decode("utf-8", errors="replace")) + 1 \
        if node.end_lineno == node.lineno and node.end_col_offset is not None else len(text) + 1
    return SourceSpan(path, node.lineno, col, text, max(1, end - col))


def too_deep_for_python(source: str, path: str, what: str) -> SourceError:
    """CPython's own parser or compiler gave up (RecursionError, MemoryError): point at the busiest line."""
    line = _busiest_line(source)
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return SourceError(f"{path} nests too deeply for Python's {what}", fix=_FIX,
                       span=SourceSpan(path, line, len(text) - len(text.lstrip()) + 1, text, max(1, len(text.strip()))))


def _busiest_line(source: str) -> int:
    """The first line of the logical line with the most tokens."""
    counts: dict[int, int] = {}
    start = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                continue
            start = tok.start[0] if start is None else start
            counts[start] = counts.get(start, 0) + 1
            if tok.type == tokenize.NEWLINE:
                start = None
    except (tokenize.TokenError, SyntaxError):
        pass
    return max(counts, key=lambda k: counts[k]) if counts else 1
