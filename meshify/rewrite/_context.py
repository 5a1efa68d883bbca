"""A parsed module and what every pass asks of it: positions, qualified names, errors."""

from __future__ import annotations

import ast
from functools import cached_property

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from meshify.errors import MeshifyError, SourceError, SourceSpan
from meshify.rewrite._names import ImportTable, dotted_name

__all__ = ["ModuleContext", "parse_module"]


def parse_module(source: str | bytes, path: str) -> cst.Module:
    """Parses ``source``; unreadable or invalid input becomes a :class:`SourceError`."""
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as e:
            raise SourceError(f"{path} is not UTF-8 text (byte {e.start}: {source[e.start:e.start + 1]!r})",
                              span=SourceSpan(path, 1, 1), fix="save the file as UTF-8") from None
    if not source.strip():
        raise SourceError(f"{path} is empty", span=SourceSpan(path, 1, 1),
                          fix="give it at least one @mesh function")
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as e:
        line, col, headline = e.raw_line, e.raw_column + 1, str(e.message).strip().splitlines()[0]
        try:  # CPython's parser names the problem and its place more precisely
            compile(source, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as py:
            line, col, headline = py.lineno or line, py.offset or col, py.msg
        lines = source.splitlines()
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        raise SourceError(f"syntax error: {headline}", span=SourceSpan(path, line, col, text),
                          fix="fix the syntax; the file must be valid Python 3") from None


class ModuleContext:
    """One module under rewrite: metadata looked up by *original* node."""

    def __init__(self, module: cst.Module, path: str, line_offset: int = 0) -> None:
        self.wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        self.module = self.wrapper.module
        self.path = path
        self.line_offset = line_offset
        self.lines = self.module.code.splitlines()
        self.positions = self.wrapper.resolve(PositionProvider)
        self.mr = "meshify_rt" if self.imports.bound("mr") else "mr"

    @cached_property
    def functions(self) -> dict[str, cst.FunctionDef]:
        """The module's top-level functions by name: the helpers a @mesh function may call."""
        return {stmt.name.value: stmt for stmt in self.module.body if isinstance(stmt, cst.FunctionDef)}

    @cached_property
    def classes(self) -> dict[str, cst.ClassDef]:
        """The module's top-level classes by name: the pytree types hints may name."""
        return {stmt.name.value: stmt for stmt in self.module.body if isinstance(stmt, cst.ClassDef)}

    @cached_property
    def specializations(self):
        from meshify.rewrite._helpers import Specializations

        return Specializations()

    @cached_property
    def imports(self) -> ImportTable:
        return ImportTable(self.module)

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """Qualified names of a Name/Attribute node (``jax.numpy.einsum``), from the module's imports."""
        return self.imports.qualified(node)

    def shadowed(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """Where the root name of ``node`` is rebound, if it is both imported and reassigned."""
        dotted = dotted_name(node)
        return self.imports.shadowed.get(dotted.split(".")[0]) if dotted else None

    def line(self, node: cst.CSTNode) -> int:
        pos = self.positions.get(node)
        return (pos.start.line if pos else 0) + self.line_offset

    def span(self, node: cst.CSTNode) -> SourceSpan:
        pos = self.positions.get(node)
        if pos is None:
            return SourceSpan(self.path, 1 + self.line_offset, 1)
        text = self.lines[pos.start.line - 1] if pos.start.line <= len(self.lines) else ""
        width = (pos.end.column - pos.start.column) if pos.end.line == pos.start.line else len(text) - pos.start.column
        return SourceSpan(self.path, pos.start.line + self.line_offset, pos.start.column + 1, text, max(1, width))

    def error(self, cls: type[MeshifyError], node: cst.CSTNode, headline: str, fix: str = "") -> MeshifyError:
        return cls(headline, span=self.span(node), fix=fix)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)
