"""Emission: the rewritten function's decorator, helper versions, the module's imports and header.

After this pass the module imports only what it imported before (minus meshify's
decorator) plus ``jax`` and ``meshify.runtime``; each ``@mesh`` decorator is replaced by
``@mr.sharded(...)`` spelling out the mesh, every argument's dims and PartitionSpec, and
the output specs; each helper's versions follow its def under one comment block that maps
each version's name to its layouts; only the versions the emitted code calls are written, and a
helper's own def is kept only while something other than the versions still uses it.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import PurePath

import libcst as cst

from meshify.annotate._types import Layout
from meshify.rewrite._helpers import Specialization, Specializations, registered
from meshify.rewrite._interp import EachLayouts, FunctionPlan, NumberOrLayout, OutByStatics
from meshify.rewrite._templates import comment_line

__all__ = ["Decorators", "called_versions", "fix_imports", "header_lines", "place_versions", "sharded_decorator_text"]


def _specs(layouts, mr: str) -> str:
    """out_specs for a result's layouts: one, a tuple of them, a dict of them (nested as the result is)."""
    if isinstance(layouts, EachLayouts):  # a list of each call's length: every item's specs
        return f"{mr}.Each({_specs(next(iter(layouts.values())), mr)})"
    if isinstance(layouts, dict) and getattr(layouts, "meta", False):  # a dataclass with static fields
        return f"{mr}.Fields({layouts.cls}, {{" + ", ".join(f"{json.dumps(k)}: {_specs(l, mr)}"
                                                          for k, l in layouts.items()) + "})"
    if isinstance(layouts, dict) and hasattr(layouts, "cls"):  # a NamedTuple of the module: Out(logits=P(...))
        return f"{layouts.cls}(" + ", ".join(f"{k}={_specs(l, mr)}" for k, l in layouts.items()) + ")"
    if isinstance(layouts, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_specs(l, mr)}" for k, l in layouts.items()) + "}"
    if isinstance(layouts, tuple):
        return "(" + ", ".join(_specs(l, mr) for l in layouts) + ("," if len(layouts) == 1 else "") + ")"
    if isinstance(layouts, NumberOrLayout):  # a Python number or an array: P() where it is a number
        return f"{mr}.NumberOr({_spec(layouts, mr)})"
    return _spec(layouts, mr)


def _by_statics(out: OutByStatics, mr: str) -> str:
    """``lambda flag: (specs) if flag else specs``: out_specs the runtime chooses per call by the static
    parameters the function's ``if`` statements test before its returns."""
    lines = [f"        {_specs(layouts, mr)} if {' and '.join(tests)} else" for tests, layouts in out.cases]
    return (f"lambda {', '.join(out.params)}: (\n" + "\n".join(lines) + f"\n        {_specs(out.otherwise, mr)}\n    )")


def _spec(layout: Layout, mr: str) -> str:
    entries = []
    for axes in layout.axes:
        if not axes:
            entries.append("None")
        elif len(axes) == 1:
            entries.append(f'"{axes[0]}"')
        else:
            entries.append("(" + ", ".join(f'"{a}"' for a in axes) + ")")
    return f"{mr}.P(" + ", ".join(entries) + ")"


def _dims(dims: tuple[str, ...]) -> str:
    if len(dims) == 1:
        return f'("{dims[0]}",)'
    return "(" + ", ".join(f'"{d}"' for d in dims) + ")"


_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)@__meshify_decorator_(?P<n>\d+)__$", re.M)


class Decorators:
    """``@mr.sharded(...)`` decorators, emitted as text.

    The CST holds a one-name placeholder decorator per function; :meth:`splice` puts the
    formatted text in after rendering, indented like the placeholder.  Parsing each
    decorator back into a CST cost more than the rest of the rewrite.
    """

    def __init__(self) -> None:
        self.texts: list[str] = []

    def add(self, plan: FunctionPlan, mr: str) -> cst.Decorator:
        self.texts.append(sharded_decorator_text(plan, mr))
        return cst.Decorator(decorator=cst.Name(f"__meshify_decorator_{len(self.texts) - 1}__"))

    def splice(self, code: str) -> str:
        def fill(match: re.Match) -> str:
            indent = match.group("indent")
            text = self.texts[int(match.group("n"))]
            return indent + "@" + text.replace("\n", "\n" + indent)

        return _PLACEHOLDER.sub(fill, code)


def sharded_decorator_text(plan: FunctionPlan, mr: str) -> str:
    """``mr.sharded(mesh, {arg: ArgSpec(dims, spec)}, out_specs=...)`` for ``plan``."""
    mesh = ", ".join(f"{n}={s}" for n, s in zip(plan.mesh.names, plan.mesh.sizes))
    args = "".join(f'        "{name}": {_arg_spec(plan, name, struct, mr, 2)},\n'
                   for name, struct in plan.args.items())
    out = _by_statics(plan.out_layouts, mr) if isinstance(plan.out_layouts, OutByStatics) \
        else _specs(plan.out_layouts, mr)
    reads = ""
    if plan.static_reads:
        entries = ", ".join(f'"{p}": {{' + ", ".join(f'"{a}": ' + (_dims(d) if d is not None else "None")
                                                     for a, d in attrs.items()) + "}"
                            for p, attrs in plan.static_reads.items())
        reads = f"    reads={{{entries}}},\n"
    if plan.globals_read:
        reads += "    globals_read=(" + ", ".join(f'"{n}"' for n in plan.globals_read) + \
            ("," if len(plan.globals_read) == 1 else "") + "),\n"
    if plan.arrays_read:  # module variables that may hold arrays (their hints' ranks): keyed on identity
        reads += "    arrays_read={" + ", ".join(f'"{n}": {r!r}' for n, r in plan.arrays_read.items()) + "},\n"
    if plan.aliases:  # dot = jnp.dot, called by jnp.dot's rule: checked at every call to hold it still
        reads += "    aliases={" + ", ".join(f'"{n}": "{v}"' for n, v in plan.aliases.items()) + "},\n"
    if plan.decisive_values:  # the constants' values the rewrite took, checked at every call
        reads += "    constants={" + ", ".join(f'"{n}": {v!r}' for n, v in plan.decisive_values.items()) + "},\n"
    if plan.flags:  # the static flags' values this version is for (its other versions: @f.variant)
        reads += "    flags={" + ", ".join(f'"{n}": {v!r}' for n, v in plan.flags.items()) + "},\n"
    if plan.fallbacks:  # a flag passed as None: its value read off the config, as the function's first lines do
        reads += "    fallbacks={" + ", ".join(f'"{n}": "{v}"' for n, v in plan.fallbacks.items()) + "},\n"
    return (f"{mr}.sharded(\n    {mr}.MeshSpec.of({mesh}),\n    {{\n{args}    }},\n"
            f"    out_specs={out},\n{reads})")


def _arg_spec(plan: FunctionPlan, path: str, struct, mr: str, depth: int) -> str:
    """``mr.ArgSpec(dims, P(...))`` for an array, ``mr.TreeSpec(Cls, kind, {...})`` for a pytree."""
    if struct is None:
        return f"{mr}.ArgSpec({_dims(plan.params[path])}, {_spec(plan.in_layouts[path], mr)})"
    pad = "    " * (depth + 1)
    fields = "".join(f'{pad}"{name}": ' + ("None" if hint is None else _arg_spec(
        plan, f"{path}.{name}", hint if not isinstance(hint, tuple) else None, mr, depth + 1)) + ",\n"
                     for name, hint in struct.fields)
    # (the fields each call may pass as None: which are picks the version)
    optional = ", optional=(" + ", ".join(f'"{n}"' for n in struct.optional) + ",)" if struct.optional else ""
    # (its static fields: each call's values are part of the program's key)
    optional += ", meta=(" + ", ".join(f'"{n}"' for n in struct.meta) + ("," if len(struct.meta) == 1 else "") + \
        ")" if struct.meta else ""
    return f'{mr}.TreeSpec({struct.cls}, "{struct.kind}", {{\n{fields}{"    " * depth}}}{optional})'


def called_versions(roots: Iterable[cst.CSTNode], versions: Specializations) -> set[str]:
    """The names of the versions the emitted code calls: named by ``roots`` (the module's statements and
    the rewritten @mesh functions), by a version so named, or by its custom rules' registration,
    transitively.  A version made on a walk the interpreter then undid (a loop body walked again once a
    carried value's layout changed) is named by nothing, and is left out."""
    nodes = {s.name: s.node for s in versions.versions.values() if not s.alias}
    registrations: dict[str, list[cst.CSTNode]] = {}
    for _, statement in versions.registrations:
        registrations.setdefault(registered(statement), []).append(statement)
    pending, called = list(roots), set()
    while pending:
        for name in (_names_used(pending.pop()) & nodes.keys()) - called:
            called.add(name)
            pending += [nodes[name], *registrations.get(name, ())]
    return called


def place_versions(body: list[cst.BaseStatement], versions: Specializations,
                   mesh_functions: set[str]) -> list[cst.BaseStatement]:
    """``body`` with each helper's versions after its def; the def itself dropped where nothing but
    @mesh functions called it (they call the versions now), its leading lines going to the versions.

    ``mesh_functions`` name the @mesh functions: rewritten in place, never dropped.
    """
    last = {stmt.name.value: i for i, stmt in enumerate(body) if isinstance(stmt, cst.FunctionDef)}
    helpers = {name for name in last if versions.by_helper(name)}
    unused = helpers - mesh_functions - versions.kept - _still_used(body, helpers - mesh_functions, versions)
    registered: dict[int, list[cst.SimpleStatementLine]] = {}  # a custom rule's registration: after the user's
    for anchor, statement in versions.registrations:
        registered.setdefault(id(anchor), []).append(statement)
    placed: list[cst.BaseStatement] = []
    for i, stmt in enumerate(body):
        placed.extend(_place_one(stmt, i, last, helpers, unused, versions))
        placed.extend(registered.get(id(stmt), ()))
    return placed


def _place_one(stmt: cst.BaseStatement, i: int, last: dict[str, int], helpers: set[str], unused: set[str],
               versions: Specializations) -> list[cst.BaseStatement]:
    """``stmt`` of the module's body with what follows it: a helper def's versions (the def dropped where
    unused), a class's methods' versions."""
    if isinstance(stmt, cst.ClassDef):  # a method's versions (self.norm(x)), after its class: the class stays
        placed: list[cst.BaseStatement] = [stmt]
        for method in (m for m in stmt.body.body if isinstance(m, cst.FunctionDef)) \
                if isinstance(stmt.body, cst.IndentedBlock) else ():
            label = f"{stmt.name.value}.{method.name.value}"
            if versions.by_helper(label):
                placed.extend(_versions(label, versions.of_helper(label), None))
        return placed
    if not (isinstance(stmt, cst.FunctionDef) and stmt.name.value in helpers and last[stmt.name.value] == i):
        return [stmt]
    name, specs = stmt.name.value, versions.of_helper(stmt.name.value)
    return [*_versions(name, specs, stmt.leading_lines)] if name in unused else [stmt, *_versions(name, specs, None)]


def _versions(helper: str, specs: list[Specialization],
              dropped: Sequence[cst.EmptyLine] | None) -> list[cst.FunctionDef]:
    """The versions of ``helper`` to emit, the first under one comment block naming every version
    and the layouts it is for (a version whose code serves several layouts is named once per layout).
    ``dropped``: the leading lines of the helper's def where it is not kept."""
    unused = "" if dropped is None else f" ({helper}() itself is unused, not kept)"
    entries = dict.fromkeys(f"  {s.name} for {s.layouts} -> {s.returns}" for s in specs)
    block = [comment_line(f"{helper} specialised for its callers' layouts{unused}:"),
             *(comment_line(entry) for entry in entries)]
    spacing = [cst.EmptyLine(), cst.EmptyLine()]
    emitted = [s.node for s in specs if not s.alias]
    first = emitted[0].with_changes(leading_lines=[*(spacing if dropped is None else dropped), *block])
    return [first, *(node.with_changes(leading_lines=spacing) for node in emitted[1:])]


def _still_used(body: list[cst.BaseStatement], originals: set[str], versions: Specializations) -> set[str]:
    """The ``originals`` (helpers' own defs) that something still names: another function of the
    module, module-level code, ``__all__``, a version, or an original kept for one of these."""
    defs = {stmt.name.value: stmt for stmt in body if isinstance(stmt, cst.FunctionDef) and stmt.name.value in originals}
    pending: list[cst.CSTNode] = [stmt for stmt in body if stmt not in defs.values()]
    pending.extend(s.node for s in versions.versions.values() if not s.alias)
    kept: set[str] = set()
    while pending:
        for name in (_names_used(pending.pop()) & originals) - kept:
            kept.add(name)
            pending.append(defs[name])
    return kept


def _names_used(node: cst.CSTNode) -> set[str]:
    uses = _Uses()
    node.visit(uses)
    return uses.names


class _Uses(cst.CSTVisitor):
    """The names a node may read, and the strings an ``__all__`` assignment lists.

    Every Name counts but an attribute's, a keyword argument's and a name being bound (a def's,
    a class's, a parameter's, an assignment's or a loop's target).  A superset: a local that reads
    a name shadowing a helper keeps the helper, which is harmless.
    """

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self._bound: set[cst.Name] = set()

    def visit_Name(self, node: cst.Name) -> None:
        if node not in self._bound:
            self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bound.add(node.name)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bound.add(node.name)

    def visit_Param(self, node: cst.Param) -> None:
        self._bound.add(node.name)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def _bind(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self._bound.add(target)
        elif isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(t.target, cst.Name) and t.target.value == "__all__" for t in node.targets):
            self._exported(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == "__all__":
            self._exported(node.value)

    def _exported(self, value: cst.BaseExpression) -> None:
        for string in _strings(value):
            try:
                self.names.add(str(ast.literal_eval(string.value)))
            except (ValueError, SyntaxError):
                continue


def _strings(node: cst.CSTNode) -> list[cst.SimpleString]:
    if isinstance(node, cst.SimpleString):
        return [node]
    return [s for child in node.children for s in _strings(child)]


def header_lines(source_path: str, regenerate: str) -> list[cst.EmptyLine]:
    """The generated file's header: the source's file name and the command that regenerates it.

    Only the file name of ``source_path`` is written (it names no folder of the machine that
    converted it); ``regenerate`` is written as given (``meshify convert`` passes paths relative
    to the generated file's folder).  A line break in either is escaped.
    """
    text = [
        f"Generated by meshify from {PurePath(source_path).name}; do not edit.",
        f"Regenerate: {regenerate}",
        "Every collective below is spelled out and commented with '# meshify:'.",
    ]
    return [cst.EmptyLine(comment=cst.Comment("# " + _one_line(t))) for t in text]


_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines splits at


def _one_line(text: str) -> str:
    return "".join(repr(ch)[1:-1] if ch in _LINE_BREAKS else ch for ch in text)


_MESHIFY_PACKAGES = ("meshify", "meshify.annotate")
_RUNTIME_NAMES = {"Tensor"}


def fix_imports(module: cst.Module, mr: str) -> cst.Module:
    """Drops meshify's decorator import, points ``Tensor`` at meshify.runtime, adds jax and mr."""
    body: list[cst.BaseStatement] = []
    insert_at = 0  # after the module's leading docstring and imports: before any code that uses mr
    leading = True
    has_jax = False
    for stmt in module.body:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        is_import = isinstance(small, cst.Import | cst.ImportFrom)
        is_docstring = not body and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString
                                                                                 | cst.ConcatenatedString)
        leading = leading and (is_import or is_docstring)
        if isinstance(small, cst.ImportFrom) and _is_meshify_import(small):
            kept = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in small.names  # type: ignore[union-attr]
                    if _dotted(a.name) in _RUNTIME_NAMES]
            if not kept:
                continue
            stmt = stmt.with_changes(body=[small.with_changes(module=cst.parse_expression("meshify.runtime"),
                                                              names=kept)])
        if isinstance(small, cst.Import) and any(_dotted(a.name) == "jax" and a.asname is None for a in small.names):
            has_jax = has_jax or leading
        body.append(stmt)
        if leading:
            insert_at = len(body)
    added = [] if has_jax else [cst.parse_statement("import jax")]
    added.append(cst.parse_statement(f"import meshify.runtime as {mr}"))
    body[insert_at:insert_at] = added
    return module.with_changes(body=body)


def _is_meshify_import(node: cst.ImportFrom) -> bool:
    return (node.module is not None and not node.relative and _dotted(node.module) in _MESHIFY_PACKAGES
            and not isinstance(node.names, cst.ImportStar))


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""
