"""A parsed module and what every pass asks of it: positions, qualified names, errors."""

from __future__ import annotations

import ast
import builtins
import codecs
import math
import operator
import os
import re
from collections.abc import Mapping
from functools import cached_property

import libcst as cst
from libcst._position import CodePosition, CodeRange
from libcst.metadata import MetadataWrapper, PositionProvider

from meshify.errors import MeshifyError, SourceError, SourceSpan
from meshify.rewrite._names import ImportTable, dotted_name
from meshify.rewrite._nesting import check_nesting, too_deep_for_python

__all__ = ["ModuleContext", "parse_context", "parse_module"]

_BUILTINS = frozenset(dir(builtins))
#: ``math`` functions and constants a config field may be computed with (``1 / math.sqrt(64)``).
_MATH = frozenset({"sqrt", "log", "log2", "log10", "exp", "pi", "e", "inf", "floor", "ceil", "tanh", "cos", "sin"})
_NO_VALUE = object()  # a NamedTuple field without a default
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _arithmetic(node: ast.expr, names: Mapping[str, object]) -> object:
    """The value of an expression :meth:`ModuleContext._literal` checked: numbers, ``names``, ``math.<name>``
    and calls of math functions, with arithmetic operators (read node by node: no eval)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.Attribute):
        return getattr(math, node.attr)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_arithmetic(node.left, names), _arithmetic(node.right, names))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_arithmetic(node.operand, names))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return getattr(math, node.func.attr)(*(_arithmetic(a, names) for a in node.args))
    raise ValueError(ast.dump(node))
#: Packages whose module-level names are functions, modules, dtypes and constants, never arrays a
#: @mesh function could mistake for a scalar.
_STATIC_MODULES = frozenset({"jax", "jaxlib", "numpy", "math", "functools", "typing", "dataclasses", "meshify",
                             "optax", "operator", "itertools", "collections", "einops"})


def _function_names(fn: cst.FunctionDef) -> set[str]:
    """Parameters and names assigned in ``fn``'s own body (not in functions nested in it)."""
    p = fn.params
    names = {param.name.value for param in (*p.posonly_params, *p.params, *p.kwonly_params)}
    names |= {star.name.value for star in (p.star_arg, p.star_kwarg) if isinstance(star, cst.Param)}
    return names | bound_names(fn.body)


def bound_names(node: cst.CSTNode) -> set[str]:
    """The names a statement or block binds (assignments, loop targets, defs and classes), not counting
    those bound inside functions nested in it."""
    names: set[str] = set()

    class _Gather(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            names.add(node.name.value)
            return False  # its own scope

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            names.add(node.name.value)
            return False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            names.update(_bound_names(node.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            names.update(_bound_names(node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            names.update(_bound_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            names.update(_bound_names(node.target))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            names.update(_bound_names(node.target))

    node.visit(_Gather())
    return names


def _enclosing_names(module: cst.Module) -> dict[cst.FunctionDef, frozenset[str]]:
    """Every nested function -> the names the functions around it bind."""
    out: dict[cst.FunctionDef, frozenset[str]] = {}

    class _Walk(cst.CSTVisitor):
        def __init__(self) -> None:
            self.stack: list[set[str]] = []

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if self.stack:
                out[node] = frozenset(set().union(*self.stack))
            self.stack.append(_function_names(node))

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.stack.pop()

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self.stack.append(set())  # a class body's names are not visible to its methods

        def leave_ClassDef(self, node: cst.ClassDef) -> None:
            self.stack.pop()

    module.visit(_Walk())
    return out


def _unpacked(target: cst.BaseExpression, value: cst.BaseExpression | None) -> dict[str, cst.BaseExpression]:
    """``HEADS, KV_HEADS = 8, 4``: each name of a tuple target bound to the literal's item at its place."""
    if not (isinstance(target, cst.Tuple | cst.List) and isinstance(value, cst.Tuple | cst.List)
            and len(target.elements) == len(value.elements)
            and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements))):
        return {}
    return {t.value.value: v.value for t, v in zip(target.elements, value.elements) if isinstance(t.value, cst.Name)}


def _roots_read(node: cst.CSTNode) -> set[str]:
    """The names an expression reads (an attribute path's root; not keywords' names)."""
    found: set[str] = set()

    class _Roots(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)
            return False

        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

    node.visit(_Roots())
    return found


def _locally_bound(module: cst.Module) -> set[str]:
    """Every name a def, lambda or comprehension of ``module`` binds (parameters, assignment and loop
    targets, ``with ... as``, ``except ... as``, ``:=``)."""
    names: set[str] = set()

    class _Bindings(cst.CSTVisitor):
        def __init__(self) -> None:
            self.depth = 0

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.depth += 1

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.depth -= 1

        def visit_Param(self, node: cst.Param) -> None:
            names.add(node.name.value)

        def visit_CompFor(self, node: cst.CompFor) -> None:
            names.update(_bound_names(node.target))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            names.update(_bound_names(node.target))

        def visit_Assign(self, node: cst.Assign) -> None:
            if self.depth:
                for t in node.targets:
                    names.update(_bound_names(t.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if self.depth:
                names.update(_bound_names(node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if self.depth:
                names.update(_bound_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            if self.depth:
                names.update(_bound_names(node.target))

        def visit_AsName(self, node: cst.AsName) -> None:
            if self.depth:
                names.update(_bound_names(node.name))

        def visit_Import(self, node: cst.Import) -> None:
            if self.depth:
                for alias in node.names:
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    names.add((dotted_name(bound) or "").split(".")[0])

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if self.depth and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    names.add((dotted_name(bound) or "").split(".")[0])

    module.visit(_Bindings())
    return names


def _bound_names(target: cst.CSTNode) -> list[str]:
    """The names an assignment target binds (``a``, ``a, (b, c)``, ``*rest``)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, cst.Tuple | cst.List):
        return [n for e in target.elements for n in _bound_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return []


def parse_module(source: str | bytes, path: str) -> cst.Module:
    """Parses ``source``; unreadable or invalid input becomes a :class:`SourceError`.

    A UTF-8 byte-order mark is dropped, as CPython does; code nested too deeply for
    libcst and meshify's passes is refused at its place (``_nesting``).
    """
    return _parse(source, path)[0]


def _parse(source: str | bytes, path: str) -> tuple[cst.Module, ast.Module]:
    """libcst's tree and CPython's (which measured the nesting; statement lines reuse it)."""
    source = source_text(source, path)
    if not source.strip():
        first = source.splitlines()[0] if source.splitlines() else ""
        raise SourceError(f"{path} is empty", span=SourceSpan(path, 1, 1, first + "\n"),
                          fix="give it at least one @mesh function")
    if "\x00" in source:
        raise SourceError(f"{path} contains a null byte", span=_char_span(path, source, source.index("\x00")),
                          fix="remove the null byte; the file must be Python source text")
    try:  # CPython's parser first: it names a syntax error and its place more precisely than libcst
        tree = compile(source, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as py:
        raise _syntax_error(path, source, py.lineno or 1, py.offset or 1, py.msg) from None
    except (RecursionError, MemoryError):  # MemoryError: the parser's own stack overflowed
        raise too_deep_for_python(source, path, "parser") from None
    check_nesting(tree, source, path)
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as e:
        raise _syntax_error(path, source, e.raw_line, e.raw_column + 1,
                            str(e.message).strip().splitlines()[0]) from None
    try:  # what only the compiler sees: def f(x, x), 'return' outside a function, a stray nonlocal...
        compile(tree, path, "exec", dont_inherit=True)  # compiles, never runs
    except SyntaxError as py:
        raise _syntax_error(path, source, py.lineno or 1, py.offset or 1, py.msg) from None
    except (RecursionError, MemoryError):
        raise too_deep_for_python(source, path, "compiler") from None
    return module, tree


def source_text(source: str | bytes, path: str) -> str:
    """``source`` as text: UTF-8 without its byte-order mark, else a :class:`SourceError` at the bad byte."""
    if isinstance(source, str):
        return source.removeprefix("\ufeff")
    source = source.removeprefix(codecs.BOM_UTF8)
    try:
        return source.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SourceError(f"{path} is not UTF-8 text (byte {e.start}: {source[e.start:e.start + 1]!r})",
                          span=_byte_span(path, source, e.start), fix="save the file as UTF-8") from None


def _syntax_error(path: str, source: str, line: int, col: int, headline: str) -> SourceError:
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    col = min(max(col, 1), len(text) + 1)
    return SourceError(f"syntax error: {headline}", span=SourceSpan(path, line, col, text),
                       fix="fix the syntax; the file must be valid Python 3")


def _byte_span(path: str, data: bytes, offset: int) -> SourceSpan:
    """The line and column of byte ``offset``, with that line decoded as far as it can be."""
    start = data.rfind(b"\n", 0, offset) + 1
    end = data.find(b"\n", offset)
    line = data[start:end if end >= 0 else len(data)].decode("utf-8", errors="replace")
    col = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    return SourceSpan(path, data.count(b"\n", 0, offset) + 1, col, line)


def _char_span(path: str, text: str, offset: int) -> SourceSpan:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    line = text[start:end if end >= 0 else len(text)].replace("\x00", "\N{SYMBOL FOR NULL}")
    return SourceSpan(path, text.count("\n", 0, offset) + 1, offset - start + 1, line)


def parse_context(source: str | bytes, path: str) -> ModuleContext:
    """Parses ``source`` into a :class:`ModuleContext` (see :func:`parse_module` for errors)."""
    text = source_text(source, path)
    module, tree = _parse(text, path)
    return ModuleContext(module, path, code=text, tree=tree)


class ModuleContext:
    """One module under rewrite: metadata looked up by *original* node."""

    def __init__(self, module: cst.Module, path: str, line_offset: int = 0, code: str | None = None,
                 tree: ast.Module | None = None) -> None:
        self.module = module
        self._tree = tree  # CPython's parse of the same text, if the caller has one
        self.path = path
        self.line_offset = line_offset
        # The text the module was parsed from (rendering it again costs about as much as parsing).
        self.text: str = code if code is not None else module.code
        self.lines = self.text.splitlines()
        self.positions = _LazyPositions(module)
        #: Nodes meshify wrote for the user's (a def standing for ``f = lambda ...``) -> the node they stand for.
        self.anchors: dict[cst.CSTNode, cst.CSTNode] = {}
        #: The statement being rewritten: where an error about a node meshify made (with no place of its
        #: own, as an ``.at[...]`` update's parts) points.
        self.current: cst.CSTNode | None = None
        self._code: dict[int, tuple[cst.CSTNode, str]] = {}
        self.mr = "meshify_rt" if self.imports.bound("mr") else "mr"
        #: The module whose file the rewrite writes: itself, or the module importing this one's helpers.
        self.root: ModuleContext = self
        #: Values a Python number or an array, known only when traced (``m if m is not None else 1.0``), by
        #: identity, for every function of the rewrite (a nested def's too): read only where
        #: :func:`~meshify.rewrite._evaluate.number_or_array_read` allows.
        self.maybe_numbers: list[object] = []
        self._imported: dict[str, ModuleContext] = {}
        #: (file, name) of a name carried from another module -> its name here; what imports each (_imports).
        self.carried_as: dict[tuple[str, str], str] = {}
        self.carried: dict[str, str] = {}
        #: Module constants whose value the decorator path found rebound from outside (``mod.AXIS = 0``):
        #: read in place of the literal the source assigns (see MeshFunction._current_constants).
        self.overrides: dict[str, object] = {}
        #: Dims a reshape split -> the dim they came from (the helpers share it): merging them back names
        #: the result as the user did (rules/shapes.py reads it, the interpreter records it).
        self.reshape_origins: dict[tuple[str, ...], str] = {}
        #: An inferred dim (``heads?``) -> a dim it was lined up with (in a contraction or a broadcast),
        #: which JAX checks has its size: explain sizes the inferred dim by it.
        self.dim_aliases: dict[str, str] = {}
        #: An inferred dim a reshape made -> its size in terms of other dims' (``("//", ("dim", "h"), ("int", 4))``
        #: for ``H // ws``; ``("rest", dims, others)`` for a -1): explain sizes it from the sizes it is given.
        self.size_recipes: dict[str, tuple] = {}
        #: An inferred dim -> every dim it was lined up with (JAX checked each has its size).
        self.lined_up: dict[str, set[str]] = {}
        #: File -> the absolute name an import of this module's (or of the modules it follows) reached it by.
        self.spelled: dict[str, str] = {}
        #: The aliases of other modules' functions (``dot = jnp.dot``) read since the walk of the function being
        #: rewritten began: its program checks, at each call, that the module still binds them so.
        self.aliases_read: set[str] = set()

    def imported(self, path: str) -> ModuleContext:
        """The module in file ``path``, whose helpers this one's @mesh functions call: parsed once per
        root, rewritten into the root's file (its versions share the root's registry and runtime name)."""
        root = self.root
        key = os.path.abspath(path)
        if key == os.path.abspath(root.path):
            return root
        if key not in root._imported:
            try:
                with open(key, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise SourceError(f"cannot read {path} ({e.strerror})", fix="check the file's permissions") from None
            found = parse_context(data, path) if data.strip() else ModuleContext(cst.parse_module(""), path)
            found.root, found.mr = root, root.mr
            root._imported[key] = found
        return root._imported[key]

    def imports_current(self) -> bool:
        """Whether every module whose helpers were followed still holds the text they were rewritten from
        (a cached module must not keep the versions of a helper edited since)."""
        for path, found in self._imported.items():
            try:
                with open(path, "rb") as f:
                    if source_text(f.read(), path) != found.text:
                        return False
            except (OSError, SourceError):
                return False
        return True

    @property
    def label(self) -> str:
        """The module's short name (``layers``; a package's folder name for its ``__init__.py``)."""
        stem = os.path.splitext(os.path.basename(self.path))[0]
        return os.path.basename(os.path.dirname(os.path.abspath(self.path))) if stem == "__init__" else stem

    @cached_property
    def import_refs(self) -> dict:
        """Local name -> what the module's top-level imports bind it to, relative imports included."""
        from meshify.rewrite._imports import import_refs

        return import_refs(self.module)

    @cached_property
    def bound_names(self) -> set[str]:
        """Every name the module binds at its top level, the builtins it may read and the runtime's name:
        what a name carried in from another module must not take (grown by the carried names)."""
        return {*self.functions, *self.classes, *self.assignments, *self.import_refs, *self.imports.rebound,
                *_BUILTINS, self.mr}

    def binds(self, name: str) -> bool:
        """Whether the module binds ``name`` at its top level (a def, a class, an assignment, an import)."""
        return name in self.functions or name in self.classes or name in self.assignments \
            or name in self.import_refs

    @cached_property
    def mesh_functions(self) -> list[tuple[cst.FunctionDef, cst.Decorator]]:
        from meshify.rewrite._driver import find_mesh_functions

        return find_mesh_functions(self)

    @cached_property
    def functions(self) -> dict[str, cst.FunctionDef]:
        """The module's top-level functions by name: the helpers a @mesh function may call."""
        return {stmt.name.value: stmt for stmt in self.module.body if isinstance(stmt, cst.FunctionDef)}

    @cached_property
    def branch_bound(self) -> frozenset[str]:
        """Names an ``if``, loop, ``with`` or ``try`` at the module's top level binds: which value they hold is
        known only when the module runs (``if USE_TANH: act = jnp.tanh``)."""
        names: set[str] = set()
        for stmt in self.module.body:
            if not isinstance(stmt, cst.SimpleStatementLine | cst.FunctionDef | cst.ClassDef):
                table = ImportTable(cst.Module(body=[stmt]))
                names.update(table.imports, table.rebound)
        return frozenset(names)

    @property
    def callable_aliases(self) -> dict[str, str]:
        """Module names whose last top-level binding is another module's function, spelled out (``dot =
        jnp.dot``, ``mm = dot``) -> its qualified name: a call of the name is a call of that function, with its
        rule.  A name some block, loop or ``global`` statement also binds is not one (which binding holds is
        known only when the module runs), nor is one a function binds as a parameter or a local anywhere in
        the module (there, the name is another value), nor one rebound from outside (``overrides``)."""
        return self._aliases[0]

    @property
    def held_aliases(self) -> frozenset[str]:
        """Names whose last binding is an elementwise jax function (``act = jax.nn.gelu``, after a ``def act``
        too): called as the function the name holds when traced (``mr.elementwise(act)``), so that one rebound
        from outside (``mod.act = jax.nn.relu``) is followed."""
        return self._aliases[1]

    @property
    def shadowed_aliases(self) -> dict[str, str]:
        """Aliases of non-elementwise functions (``total = jnp.sum``) that some function also binds as a
        parameter or a local: an alias only where no enclosing scope binds the name (``_evaluate._call``)."""
        return self._aliases[2]

    def forget_aliases(self) -> None:
        """After ``overrides`` change: the aliases are read again without the names rebound from outside."""
        for name in ("_aliases", "partial_aliases"):
            self.__dict__.pop(name, None)

    @cached_property
    def _aliases(self) -> tuple[dict[str, str], frozenset[str], dict[str, str]]:
        last: dict[str, str | None] = {}  # name -> the qualified name it was last bound to (None: anything else)
        nested = self.branch_bound
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef | cst.ClassDef):
                last[stmt.name.value] = None
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Import | cst.ImportFrom):
                        names = [] if isinstance(small.names, cst.ImportStar) else small.names
                        for alias in names:
                            bound = alias.asname.name if alias.asname is not None else alias.name
                            last[(dotted_name(bound) or "").split(".")[0]] = None
                    elif isinstance(small, cst.Assign | cst.AnnAssign | cst.AugAssign):
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) \
                            else [small.target]
                        target = dotted_name(small.value) if isinstance(small, cst.Assign) and len(targets) == 1 \
                            and isinstance(targets[0], cst.Name) and isinstance(small.value, cst.Name | cst.Attribute) \
                            else None
                        if target is not None:
                            root, _, rest = target.partition(".")
                            if last.get(root) is not None:  # mm = dot, dot an alias itself
                                target = f"{last[root]}.{rest}" if rest else last[root]
                            elif root in self.imports.imports and root not in self.imports.shadowed and rest:
                                target = f"{self.imports.imports[root]}.{rest}"
                            else:
                                target = None
                        for t in targets:
                            for name in _bound_names(t):
                                last[name] = target if isinstance(t, cst.Name) else None
        local = _locally_bound(self.module) if any(t is not None for t in last.values()) else set()
        from meshify._unary import UNARY

        found = {name: target for name, target in last.items()
                 if target is not None and name not in nested and name not in self.declared_global
                 and name not in self.overrides and self.root is self}
        shadowed = {name: target for name, target in found.items() if name in local and target not in UNARY}
        found = {name: target for name, target in found.items() if name not in local}
        held = frozenset(name for name, target in found.items() if target in UNARY)
        return {name: target for name, target in found.items() if name not in held}, held, shadowed

    @cached_property
    def partial_aliases(self) -> dict[str, cst.Call]:
        """Module names bound once to a ``functools.partial`` of another module's function (``einsum =
        partial(jnp.einsum, precision="highest")``) -> that call: a call of the name is the function called
        with the partial's arguments and its own.  As for :attr:`callable_aliases`, not a name a function, a
        top-level block or a ``global`` statement binds too; the partial's arguments read only imports and
        module constants no function rebinds."""
        from meshify._unary import UNARY

        found: dict[str, cst.Call] = {}
        local: set[str] | None = None
        for name, value in self.assignments.items():
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name | cst.Attribute)
                    and self.qualified_names(value.func) & {"functools.partial"} and value.args
                    and value.args[0].keyword is None and not value.args[0].star
                    and isinstance(value.args[0].value, cst.Name | cst.Attribute)):
                continue
            target = dotted_name(value.args[0].value) or ""
            if target.split(".")[0] not in self.imports.imports or not self.qualified_names(value.args[0].value) \
                    or self.qualified_names(value.args[0].value) & UNARY.keys():
                continue  # (gelu = partial(jax.nn.gelu, approximate=False): called as the function it holds)
            if name in self.functions or name in self.classes or name in self.imports.imports \
                    or name in self.branch_bound or name in self.declared_global or name in self.overrides \
                    or self.root is not self:
                continue
            local = _locally_bound(self.module) if local is None else local
            reads = _roots_read(value) - {"None", "True", "False"}  # (keepdims=False, axis=None: constants)
            if name in local or any(r in local or r in self.declared_global or not (
                    r in self.imports.imports or r in self.literal_constants) for r in reads) \
                    or any(a.star for a in value.args):
                continue
            found[name] = value
        return found

    @cached_property
    def classes(self) -> dict[str, cst.ClassDef]:
        """The module's top-level classes by name: the pytree types hints may name."""
        return {stmt.name.value: stmt for stmt in self.module.body if isinstance(stmt, cst.ClassDef)}

    @cached_property
    def owners(self) -> dict[cst.FunctionDef, cst.ClassDef]:
        """Each method of a top-level class -> its class: a method's ``self.norm(x)`` calls a plain method
        of the same class (see ``_evaluate.own_method``)."""
        return {stmt: cls for cls in self.classes.values() if isinstance(cls.body, cst.IndentedBlock)
                for stmt in cls.body.body if isinstance(stmt, cst.FunctionDef)}

    @cached_property
    def assignments(self) -> dict[str, cst.BaseExpression | None]:
        """Module-level names bound by assignment: ``NAME = value`` (the last one), or None where the
        value cannot be read off (``W, S = init()``, an augmented or repeated binding)."""
        found: dict[str, cst.BaseExpression | None] = {}
        for stmt in self.module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                    [small.target] if isinstance(small, cst.AnnAssign | cst.AugAssign) else []
                value = small.value if isinstance(small, cst.Assign | cst.AnnAssign) else None
                for target in targets:
                    items = _unpacked(target, value)
                    for name in _bound_names(target):
                        item = value if isinstance(target, cst.Name) else items.get(name)
                        found[name] = item if name not in found else None
        return found

    def config_value(self, node: cst.BaseExpression) -> tuple | None:
        """The value of a config the module spells out, for explain's default mode: ``Config()`` or
        ``Config(layers=4)`` of a ``NamedTuple`` class of the module whose fields have literal defaults
        (the arguments literals too), or a module name bound once to such a call (``DEFAULT_CONFIG``).
        A named tuple of the same fields and values (immutable, so the same wherever it is read); None
        for anything else."""
        import collections

        if isinstance(node, cst.Name) and node.value not in self.declared_global:
            bound = self.assignments.get(node.value)
            node = bound if bound is not None else node
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)):
            return None
        cls = self.classes.get(node.func.value)
        if cls is None or not any("typing.NamedTuple" in self.qualified_names(b.value) for b in cls.bases):
            return None
        fields: dict[str, object] = {}
        try:  # a default or an argument that is no literal (dtype=jnp.float32): not a config explain reads
            for stmt in cls.body.body:
                for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else []:
                    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        fields[small.target.value] = self._literal(small.value) if small.value is not None \
                            else _NO_VALUE
            values = dict(fields)
            names = list(fields)
            for i, arg in enumerate(node.args):
                if arg.star or (arg.keyword is None and i >= len(names)):
                    return None
                values[arg.keyword.value if arg.keyword is not None else names[i]] = self._literal(arg.value)
        except ValueError:
            return None
        if set(values) != set(names) or any(v is _NO_VALUE for v in values.values()):
            return None
        return collections.namedtuple(cls.name.value, names)(**values)  # type: ignore[misc]

    def _literal(self, node: cst.BaseExpression | None, names: Mapping[str, object] | None = None) -> object:
        """A config field's value: a literal, or arithmetic of literals and ``math`` (``1 / math.sqrt(64)``,
        ``2 * 2``) where the module imports ``math`` as ``math``, and of ``names`` (numbers: module constants
        bound before); ValueError for anything else."""
        names = {k: v for k, v in (names or {}).items() if type(v) in (int, float)}
        text = self.code(node)  # type: ignore[arg-type]
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            raise ValueError(node) from None
        allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop, ast.Call,
                   ast.Attribute, ast.Name, ast.Load)
        for n in ast.walk(tree):
            if not isinstance(n, allowed) or isinstance(n, ast.Constant) and not isinstance(n.value, int | float) \
                    or isinstance(n, ast.Name) and n.id not in names and (
                        n.id != "math" or self.imports.imports.get("math") != "math") \
                    or isinstance(n, ast.Attribute) and not (isinstance(n.value, ast.Name) and n.attr in _MATH) \
                    or isinstance(n, ast.Call) and (n.keywords or not isinstance(n.func, ast.Attribute)) \
                    or isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and not (
                        isinstance(n.right, ast.Constant) and isinstance(n.right.value, int | float)
                        and abs(n.right.value) <= 64):
                raise ValueError(node)
        try:
            return _arithmetic(tree.body, names)
        except (ArithmeticError, ValueError, TypeError, OverflowError):
            raise ValueError(node) from None

    @cached_property
    def literal_constants(self) -> dict[str, object]:
        """The module's constants as the source assigns them: a literal bound once, by no import, and
        rebound by no ``global`` statement (the values :meth:`global_value` takes, before overrides)."""
        found: dict[str, object] = {}
        for name, value in self.assignments.items():
            if value is None or name in self.imports.imports or name in self.declared_global:
                continue
            try:
                found[name] = ast.literal_eval(self.code(value))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                config = self.config_value(value)
                if config is not None:
                    found[name] = config
                    continue
                try:  # SCALE = math.sqrt(D_MODEL), HEAD_DIM = D_MODEL // N_HEADS: of the constants before it
                    found[name] = self._literal(value, found)
                except ValueError:
                    pass
        return found

    @cached_property
    def annotated_arrays(self) -> dict[str, tuple[str, ...]]:
        """Module arrays whose dims a hint names where they are bound once (``W: Tensor["d", "e"] = ...``),
        and that no function rebinds: read as whole replicated arrays with those dims, as ``w: Tensor[...]
        = W`` in a function names them (the value is the module's, the same on every device)."""
        from meshify.rewrite._hints import read_dims

        found: dict[str, tuple[str, ...]] = {}
        for stmt in self.module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                    dims = read_dims(self, small.annotation.annotation)
                    name = small.target.value
                    if dims is not None and self.assignments.get(name) is small.value \
                            and name not in self.declared_global:
                        found[name] = dims
        return found

    @cached_property
    def declared_global(self) -> frozenset[str]:
        """Names some function rebinds with a ``global`` statement: their value changes at run time,
        so the literal the module assigns proves nothing (an ``if`` or an axis must not rely on it)."""
        names: set[str] = set()

        class _Globals(cst.CSTVisitor):
            def visit_Global(self, node: cst.Global) -> None:
                names.update(n.name.value for n in node.names)

        self.module.visit(_Globals())
        return frozenset(names)

    def enclosing_names(self, fn: cst.FunctionDef) -> frozenset[str]:
        """The names the functions around a nested ``fn`` bind (parameters, locals): ``fn`` may close
        over any of them, whatever the module binds under the same name."""
        return self._enclosing.get(fn, frozenset())

    @cached_property
    def _enclosing(self) -> dict[cst.FunctionDef, frozenset[str]]:
        return _enclosing_names(self.module)

    def global_value(self, name: str, as_written: bool = False):
        """What a name the function does not bind holds, as far as the module proves.

        ``as_written``: the module's own value, not one rebound from outside since (``overrides``): what a
        helper's default ``eps=EPS`` holds, evaluated when its ``def`` ran.

        Only what is proven is static: a literal constant (``EPS = 1e-6``, ``SHAPE = (4, 8)``:
        a known value), a function or class of the module, an imported module or a name from
        jax, numpy, math, functools or typing, a builtin.  Anything else (``W = jnp.ones(...)``,
        ``W, S = init()``, an instance of a class, a name imported from elsewhere, a variable of an
        enclosing function) may be an array: opaque, a whole replicated array whose dims must be
        named before it meets a split one.  (Names of enclosing functions: see ``enclosing_names``.)
        """
        from meshify.annotate._types import Layout
        from meshify.rewrite._values import Array, Opaque, Static

        if name in self.annotated_arrays:  # W: Tensor["d", "e"] = ...: a whole array with those dims
            return Array(Layout.replicated(self.annotated_arrays[name]))
        if name in self.callable_aliases or name in self.partial_aliases:  # dot = jnp.dot: a function
            return Static()
        if name in self.assignments:
            value = self.assignments[name]
            if value is not None and name not in self.imports.imports:
                try:
                    literal = ast.literal_eval(self.code(value))
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    # CFG = Config(eps=1e-5): a NamedTuple of literals, read as one (keyed on its value);
                    # SCALE = math.sqrt(D_MODEL): a number computed from the constants before it
                    known = self.literal_constants.get(name, _NO_VALUE) if name not in self.declared_global \
                        else _NO_VALUE
                    if known is _NO_VALUE:
                        return Opaque()
                    return Static.of(known if as_written else self.overrides.get(name, known))
                if name not in self.declared_global:
                    return Static.of(literal if as_written else self.overrides.get(name, literal))
                if isinstance(literal, int | float | bool | str):
                    return Static()  # a scalar a function rebinds: its value is read at each call
            return Opaque()
        if name in self.imports.imports:
            return Static() if self.imports.imports[name].split(".")[0] in _STATIC_MODULES else Opaque()
        if name in self.functions or name in self.classes or name in _BUILTINS:
            return Static()
        return Opaque()

    @cached_property
    def specializations(self):
        """Every helper version the root's file holds (an imported module's versions go there too)."""
        from meshify.rewrite._helpers import Specializations

        return Specializations() if self.root is self else self.root.specializations

    @cached_property
    def imports(self) -> ImportTable:
        return ImportTable(self.module)

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """Qualified names of a Name/Attribute node (``jax.numpy.einsum``), from the module's imports and
        its aliases of other modules' functions (``dot = jnp.dot``: jax.numpy.dot)."""
        dotted = dotted_name(node) if self.callable_aliases else None
        root, _, rest = (dotted or "").partition(".")
        if root in self.callable_aliases:
            self.aliases_read.add(root)
            return {f"{self.callable_aliases[root]}.{rest}" if rest else self.callable_aliases[root]}
        return self.imports.qualified(node)

    def called_as(self, func: cst.BaseExpression) -> set[str]:
        """The qualified names of a called ``func``, a partial alias bound with keywords alone (``arange =
        partial(jnp.arange, device=None)``) read as its function: what syntactic checks (``jnp.arange(n)``
        names a dim) may read (a positional argument bound by the partial would shift the call's own)."""
        partial = self.partial_aliases.get(func.value) if isinstance(func, cst.Name) else None
        if partial is not None and all(a.keyword is not None for a in partial.args[1:]):
            return self.qualified_names(partial.args[0].value)
        return self.qualified_names(func)

    def alias_target(self, name: str) -> str | None:
        """What a module-level alias ``name`` stands for (``jax.numpy.dot``; a partial's function), or None."""
        if name in self.callable_aliases or name in self.shadowed_aliases:
            return self.callable_aliases.get(name) or self.shadowed_aliases[name]
        partial = self.partial_aliases.get(name)
        return next(iter(sorted(self.qualified_names(partial.args[0].value))), None) if partial is not None else None

    def shadowed(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """Where the root name of ``node`` is rebound, if it is both imported and reassigned."""
        dotted = dotted_name(node)
        return self.imports.shadowed.get(dotted.split(".")[0]) if dotted else None

    @cached_property
    def _statement_lines(self) -> dict[cst.CSTNode, int]:
        """Statement -> line, from CPython's parser (fast); libcst positions only for error spans."""
        lines: dict[cst.CSTNode, int] = {}
        try:
            tree = self._tree or ast.parse(self.text)
        except SyntaxError:  # pragma: no cover - libcst parsed it
            return lines
        self._tree = None  # not needed any more
        _pair_statements(list(self.module.body), tree.body, lines)
        return lines

    def line(self, node: cst.CSTNode) -> int:
        node = self.anchors.get(node, node)
        found = self._statement_lines.get(node)
        if found is not None:
            return found + self.line_offset
        pos = self.positions.get(node)
        return (pos.start.line if pos else 0) + self.line_offset

    def span(self, node: cst.CSTNode) -> SourceSpan:
        pos = self.positions.get(self.anchors.get(node, node))
        if pos is None and self.current is not None:
            pos = self.positions.get(self.current)
        if pos is None:
            return SourceSpan(self.path, 1 + self.line_offset, 1)
        text = self.lines[pos.start.line - 1] if pos.start.line <= len(self.lines) else ""
        width = (pos.end.column - pos.start.column) if pos.end.line == pos.start.line else len(text) - pos.start.column
        return SourceSpan(self.path, pos.start.line + self.line_offset, pos.start.column + 1, text, max(1, width))

    def error(self, cls: type[MeshifyError], node: cst.CSTNode, headline: str, fix: str = "") -> MeshifyError:
        return cls(headline, span=self.span(node), fix=_user_rules(fix))

    def code(self, node: cst.CSTNode) -> str:
        """``node``'s source text (CST nodes are immutable: each one's is written out once; the node is
        held with it so that its id is not reused)."""
        found = self._code.get(id(node))
        if found is None or found[0] is not node:
            found = self._code[id(node)] = (node, self.module.code_for_node(node))
        return found[1]


class _LazyPositions:
    """Node -> CodeRange, computed one top-level statement at a time, on first need.

    libcst's PositionProvider renders the whole module; a @mesh function only needs its
    own statement's positions, offset by the lines before it.
    """

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._known: dict[cst.CSTNode, CodeRange] = {}
        self._done: set[int] = set()
        self._offsets: list[int] | None = None

    def _line_offsets(self) -> list[int]:
        if self._offsets is None:
            line = sum(self.module.code_for_node(empty).count("\n") for empty in self.module.header)
            offsets = []
            for stmt in self.module.body:
                offsets.append(line)
                line += self.module.code_for_node(stmt).count("\n")
            self._offsets = offsets
        return self._offsets

    def resolve(self, index: int) -> None:
        """Positions of every node in the module's ``index``-th top-level statement."""
        if index in self._done:
            return
        self._done.add(index)
        stmt = self.module.body[index]
        mini = self.module.with_changes(header=[], body=[stmt], footer=[])
        offset = self._line_offsets()[index]
        for node, r in MetadataWrapper(mini, unsafe_skip_copy=True).resolve(PositionProvider).items():
            self._known[node] = CodeRange(CodePosition(r.start.line + offset, r.start.column),
                                          CodePosition(r.end.line + offset, r.end.column))

    def get(self, node: cst.CSTNode, default=None):
        if node not in self._known:
            for i in range(len(self.module.body)):  # an unusual node: look statement by statement
                self.resolve(i)
                if node in self._known:
                    break
        return self._known.get(node, default)

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self.get(node)
        if found is None:
            raise KeyError(node)
        return found


def _block_statements(block) -> list:
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    if isinstance(block, cst.SimpleStatementSuite):
        return [block]
    return []


def _pair_statements(cst_statements: list, ast_statements: list, out: dict) -> None:
    """Walks a libcst statement list beside CPython's ast of the same code, recording lines."""
    i = 0
    for stmt in cst_statements:
        if isinstance(stmt, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            smalls = list(stmt.body)
            if i < len(ast_statements):
                out[stmt] = ast_statements[i].lineno
            for small, node in zip(smalls, ast_statements[i:i + len(smalls)]):
                out[small] = node.lineno
            i += len(smalls)
            continue
        if i >= len(ast_statements):
            return
        node = ast_statements[i]
        i += 1
        out[stmt] = node.lineno
        if isinstance(stmt, cst.FunctionDef | cst.ClassDef):
            out[stmt.name] = node.lineno
            for decorator, expr in zip(stmt.decorators, node.decorator_list):
                out[decorator] = expr.lineno
        bodies = [(_block_statements(stmt.body), getattr(node, "body", []))] if hasattr(stmt, "body") else []
        orelse = getattr(stmt, "orelse", None)
        if isinstance(orelse, cst.If):
            bodies.append(([orelse], node.orelse))
        elif isinstance(orelse, cst.Else):
            bodies.append((_block_statements(orelse.body), node.orelse))
        if isinstance(stmt, cst.Try):
            for handler, ast_handler in zip(stmt.handlers, node.handlers):
                bodies.append((_block_statements(handler.body), ast_handler.body))
            if stmt.finalbody is not None:
                bodies.append((_block_statements(stmt.finalbody.body), node.finalbody))
        for cst_body, ast_body in bodies:
            _pair_statements(cst_body, ast_body, out)


def _user_rules(fix: str) -> str:
    """A fix's ``rules={...}`` naming the dims rules can name: a dim meshify named itself (``'xz?'``, the
    half of a split; ``'seq[:2]?'``, a slice) by the dim it came from (``'xz'``), which rules apply to."""
    if "?" not in fix:
        return fix
    # "map 'h_w?' to no mesh axis" with no rule to write (a merge's name: no rule reaches it): a hint naming the
    # dim where it is made does it, as no rule maps the name the hint gives
    fix = re.sub(r"map '(\w+)\?' to no mesh axis(?! \(rules)",
                 lambda m: f"make {m[1]!r} whole: name it with a hint where it is made (v: Tensor[..., "
                           f"\"{m[1]}\", ...] = ...), a dim no rule maps being whole", fix)
    return re.sub(r"rules=\{[^{}]*\}", lambda m: re.sub(r"'(\w+?)(?:\[[^\]']*\])?\?'", r"'\1'", m.group(0)), fix)
