"""Qualified names from a module's imports, in one cheap pass.

``jnp.einsum`` -> ``jax.numpy.einsum`` after ``import jax.numpy as jnp``; ``es`` ->
``jax.numpy.einsum`` after ``from jax.numpy import einsum as es``.  A name that is both
imported and rebound by other code (``jnp = numpy``) resolves to nothing and is
reported as shadowed, so that an op is never matched by a guess.  This replaces
libcst's scope-based QualifiedNameProvider, which cost about a second per 600 lines.
"""

from __future__ import annotations

import libcst as cst

__all__ = ["ImportTable", "dotted_name", "read_again"]


def dotted_name(node: cst.CSTNode) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def read_again(node: cst.CSTNode, keys: bool = True) -> bool:
    """Whether reading ``node`` again runs nothing and gives the same value: a name, an attribute chain
    (``cfg.x.shape``) and, with ``keys``, literal subscripts (``params["layers"]``, ``blocks[0].w``)."""
    while isinstance(node, cst.Attribute | cst.Subscript):
        if isinstance(node, cst.Subscript) and not (
                keys and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
                and isinstance(node.slice[0].slice.value, cst.SimpleString | cst.Integer)):
            return False
        node = node.value
    return isinstance(node, cst.Name)


class ImportTable:
    """Local name -> imported qualified name, and where else each name is bound.

    Walks statements only (imports, assignments, defs, loops, withs): expressions never
    bind module names in the code meshify accepts, and skipping them keeps this cheap.
    """

    def __init__(self, module: cst.Module) -> None:
        self.imports: dict[str, str] = {}
        self.rebound: dict[str, cst.CSTNode] = {}
        #: Modules whose every name the module imports (``from layers import *``): names meshify cannot resolve.
        self.star_imports: list[str] = []
        self._statements(module.body)
        self.shadowed = {name: node for name, node in self.rebound.items() if name in self.imports}

    def bound(self, name: str) -> bool:
        return name in self.imports or name in self.rebound

    def qualified(self, node: cst.CSTNode) -> set[str]:
        dotted = dotted_name(node)
        if dotted is None:
            return set()
        root, _, rest = dotted.partition(".")
        if root in self.shadowed:
            return set()
        if root in self.imports:
            base = self.imports[root]
            return {f"{base}.{rest}" if rest else base}
        return {dotted}

    # -- the walk ------------------------------------------------------------------------

    def _statements(self, body) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self._small(small)
            elif isinstance(stmt, cst.FunctionDef):
                self._bind(stmt.name)
                p = stmt.params
                for param in (*p.posonly_params, *p.params, *p.kwonly_params):
                    self._bind(param.name)
                for star in (p.star_arg, p.star_kwarg):
                    if isinstance(star, cst.Param):
                        self._bind(star.name)
                self._block(stmt.body)
            elif isinstance(stmt, cst.ClassDef):
                self._bind(stmt.name)
                self._block(stmt.body)
            elif isinstance(stmt, cst.For):
                self._bind(stmt.target)
                self._block(stmt.body)
                self._block(stmt.orelse)
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    if item.asname is not None:
                        self._bind(item.asname.name)
                self._block(stmt.body)
            elif isinstance(stmt, cst.If):
                self._block(stmt.body)
                self._block(stmt.orelse)
            elif isinstance(stmt, cst.While):
                self._block(stmt.body)
                self._block(stmt.orelse)
            elif isinstance(stmt, cst.Try):
                self._block(stmt.body)
                for handler in stmt.handlers:
                    if handler.name is not None:
                        self._bind(handler.name.name)
                    self._block(handler.body)
                self._block(stmt.orelse)
                self._block(stmt.finalbody)

    def _block(self, block) -> None:
        if block is None:
            return
        if isinstance(block, cst.Else | cst.Finally):
            block = block.body
        if isinstance(block, cst.If):  # elif
            self._statements([block])
            return
        body = block.body
        self._statements(body if isinstance(block, cst.IndentedBlock) else [cst.SimpleStatementLine(body)])

    def _small(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Import):
            for alias in small.names:
                name = dotted_name(alias.name) or ""
                if alias.asname is not None:
                    self.imports[alias.asname.name.value] = name  # type: ignore[union-attr]
                else:
                    root = name.split(".")[0]
                    self.imports[root] = root
        elif isinstance(small, cst.ImportFrom):
            if isinstance(small.names, cst.ImportStar):
                self.star_imports.append("." * len(small.relative) + (dotted_name(small.module) or "")
                                         if small.module is not None else "." * len(small.relative))
                return
            if small.relative or small.module is None:
                return
            module = dotted_name(small.module)
            for alias in small.names:
                name = dotted_name(alias.name)
                local = alias.asname.name.value if alias.asname is not None else name  # type: ignore[union-attr]
                self.imports[local] = f"{module}.{name}"
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                self._bind(target.target)
        elif isinstance(small, cst.AnnAssign | cst.AugAssign):
            self._bind(small.target)

    def _bind(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.rebound.setdefault(target.value, target)
        elif isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)
