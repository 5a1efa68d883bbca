"""Helpers imported from other modules of the same package, found by reading files, never importing them.

``from .layers import mlp``, ``from pkg.layers import mlp as m``, ``from . import layers`` +
``layers.mlp(...)`` and ``import pkg.layers as L`` + ``L.mlp(...)`` name a ``def`` in a ``.py`` file
of the caller's package (or of its folder, for a module outside a package).  The file is found
from the importing file's path and the package structure (``__init__.py`` files), parsed into a
:class:`ModuleContext` of its own (positions and qualified names are that file's), and re-exports
(``from .ops import mlp`` in ``layers/__init__.py``) are followed.  An import of something that is
not a file of the tree (``jax``, ``numpy``) is none of this module's business.

After this module, a helper's version from another module reads only names the caller's file
binds: each module-level name of the helper's module that the version reads is carried into the
caller's file as an import (``from .layers import EPS``, ``import jax.numpy as jnp``), under a
prefixed name where the caller binds the same name to something else (``layers_EPS``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import BuiltinScope, GlobalScope, MetadataWrapper, ScopeProvider

from meshify.errors import UnsupportedError
from meshify.rewrite._names import dotted_name

__all__ = ["ImportRef", "carry_class", "carry_names", "import_refs", "resolve_call", "resolve_class"]


@dataclass(frozen=True, slots=True)
class ImportRef:
    """What an import binds a local name to: ``from {'.' * level}{module} import {name}``, or the
    module itself (``name`` None: ``import module as local``; ``binds_root``: ``import a.b`` binds ``a``)."""

    level: int
    module: str
    name: str | None
    binds_root: bool = False


def import_refs(module: cst.Module) -> dict[str, ImportRef]:
    """Local name -> what the module's top-level imports bind it to (relative imports included)."""
    refs: dict[str, ImportRef] = {}
    for stmt in module.body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = dotted_name(alias.name) or ""
                    if alias.asname is not None:
                        refs[alias.asname.name.value] = ImportRef(0, dotted, None)  # type: ignore[union-attr]
                    else:
                        refs[dotted.split(".")[0]] = ImportRef(0, dotted, None, binds_root=True)
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                level = len(small.relative)
                source = dotted_name(small.module) if small.module is not None else ""
                for alias in small.names:
                    name = dotted_name(alias.name) or ""
                    local = alias.asname.name.value if alias.asname is not None else name  # type: ignore[union-attr]
                    refs[local] = ImportRef(level, source or "", name)
    return refs


# -- finding files ------------------------------------------------------------------------------


def _package_parts(path: str) -> tuple[str, list[str]]:
    """The folder a module's top package sits in, and its dotted name's parts (``pkg``, ``layers``)."""
    folder = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    return folder, parts


def _module_file(folder: str, parts: list[str]) -> str | None:
    """``folder/a/b.py`` or ``folder/a/b/__init__.py`` (``folder/__init__.py`` for no parts)."""
    base = os.path.join(folder, *parts)
    candidates = [base + ".py"] if parts else []
    return next((c for c in [*candidates, os.path.join(base, "__init__.py")] if os.path.isfile(c)), None)


def find_module(importer: str, level: int, module: str) -> str | None:
    """The file ``import``-ing ``module`` (``level`` dots) from ``importer`` names, if it is in the tree:
    relative to the importer's package, or (absolute) below the folder of its top package or its own."""
    parts = module.split(".") if module else []
    if level:
        folder = os.path.dirname(os.path.abspath(importer))
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        return _module_file(folder, parts)
    top, _ = _package_parts(importer)
    folder = os.path.dirname(os.path.abspath(importer))
    named = [os.path.dirname(d) for d in _ancestors(folder) if parts and os.path.basename(d) == parts[0]]
    bases = dict.fromkeys((top, folder, *named))  # tests.soundness.x from tests/soundness/: a folder named tests
    return next((found for base in bases if (found := _module_file(base, parts)) is not None), None)


def _ancestors(folder: str) -> list[str]:
    found = [folder]
    while os.path.dirname(found[-1]) != found[-1]:
        found.append(os.path.dirname(found[-1]))
    return found


def spelling(importer: str, target: str, spelled: dict[str, str]) -> str:
    """How ``importer`` imports the module in file ``target``: relative within one package
    (``.layers``, ``..ops``), else by the absolute name an import reached it by (``spelled``), else
    absolute from the folder of the target's top package."""
    top, own = _package_parts(importer)
    target_top, theirs = _package_parts(target)
    package = own if os.path.basename(importer) == "__init__.py" else own[:-1]
    if package and top == target_top and theirs[:1] == package[:1]:
        common = 0
        while common < min(len(package), len(theirs)) and package[common] == theirs[common]:
            common += 1
        return "." * (len(package) - common + 1) + ".".join(theirs[common:])
    return spelled.get(os.path.abspath(target), ".".join(theirs))


# -- resolving a call ---------------------------------------------------------------------------


def resolve_call(ctx, func: cst.BaseExpression, shadowed: set[str]):
    """``(ModuleContext, def)`` of the helper another module of the tree defines that ``func`` names
    (``mlp``, ``layers.mlp``, ``L.mlp``), or None when ``func`` names no such import.

    ``shadowed``: names bound in the calling function, which hide the module's imports.
    A name imported from a module of the tree that binds no such function is a positioned error."""
    dotted = dotted_name(func)
    if dotted is None:
        return None
    root, *attrs = dotted.split(".")
    ref = ctx.import_refs.get(root) if root not in shadowed else None
    if ref is None:
        return None
    if ref.binds_root:  # import pkg.layers: pkg.layers.mlp names module pkg.layers, then mlp
        depth = len(ref.module.split("."))
        ref = ImportRef(0, ".".join([root, *attrs[:depth - 1]]), None)
        attrs = attrs[depth - 1:]
    return _follow(ctx, ctx, ref, attrs, func, set())


def resolve_class(ctx, node: cst.BaseExpression):
    """``(ModuleContext, class)`` that a hint naming a class imported from another module of the tree names
    (``Params`` of ``from .types import Params``, ``T.Params`` of ``from . import types as T``), or None."""
    dotted = dotted_name(node)
    if dotted is None:
        return None
    root, *attrs = dotted.split(".")
    ref = ctx.import_refs.get(root)
    if ref is None:
        return None
    if ref.binds_root:
        depth = len(ref.module.split("."))
        ref = ImportRef(0, ".".join([root, *attrs[:depth - 1]]), None)
        attrs = attrs[depth - 1:]
    return _follow(ctx, ctx, ref, attrs, node, set(), kind="class")


def carry_class(home, name: str) -> str:
    """The name the root module's code calls class ``name`` of module ``home`` by: its own where it binds it the
    same way, else a name carried in by an import (``from .types import Block``; prefixed where taken)."""
    root = home.root
    if home is root or _binds_same(root, home, name):
        return name
    local = root.carried_as.get((home.path, name))
    if local is None:
        taken = root.bound_names | set(root.carried)
        local = _fresh(f"{home.label}_{name}", taken) if name in taken else name
        root.carried_as[(home.path, name)] = local
    statement = _statement(home, name)
    assert statement is not None, name
    root.carried[local] = _tidy(statement.format(alias=local))
    return local


def _follow(caller, ctx, ref: ImportRef, attrs: list[str], node: cst.CSTNode, seen: set, kind: str = "function"):
    """Follows ``ref`` (and then ``attrs``) from ``ctx``'s file to a def, or None if it leaves the tree.
    ``from . import layers`` names a submodule where the package binds no ``layers`` itself."""
    if (ctx.path, ref) in seen:
        raise caller.error(UnsupportedError, node, f"the imports of {caller.code(node)!r} go round in a cycle",
                           "import the helper from the module that defines it")
    seen.add((ctx.path, ref))
    path = find_module(ctx.path, ref.level, ref.module)
    if path is not None and not ref.level:
        caller.root.spelled.setdefault(os.path.abspath(path), ref.module)
    if ref.name is not None:
        home = caller.imported(path) if path is not None else None
        if home is None or not home.binds(ref.name):
            dotted = ".".join(filter(None, [ref.module, ref.name]))
            submodule = find_module(ctx.path, ref.level, dotted)
            if submodule is not None:
                if not ref.level:
                    caller.root.spelled.setdefault(os.path.abspath(submodule), dotted)
                return _lookup(caller, caller.imported(submodule), attrs, node, seen, kind)
    if path is None:
        if ref.level:
            if kind == "class":
                return None
            raise caller.error(UnsupportedError, node, f"{caller.code(node)!r} is imported from "
                               f"{'.' * ref.level}{ref.module}, which is no file of this package",
                               "fix the import, or define the helper in this module")
        return None
    names = [ref.name] + attrs if ref.name is not None else attrs
    return _lookup(caller, caller.imported(path), names, node, seen, kind)


def _lookup(caller, home, names: list[str], node: cst.CSTNode, seen: set, kind: str = "function"):
    """``names[0]`` in module ``home`` (then the rest of the attribute path): a def (``kind`` "function") or a
    class (``kind`` "class")."""
    if not names:
        return None  # the module itself, called: not a helper
    name, rest = names[0], names[1:]
    defined = home.functions if kind == "function" else home.classes
    if name in defined and not rest:
        return home, defined[name]
    ref = home.import_refs.get(name)
    if ref is not None:
        return _follow(caller, home, ref, rest, node, seen, kind) if not ref.binds_root else None
    submodule = _module_file(os.path.dirname(home.path), [name]) \
        if os.path.basename(home.path) == "__init__.py" else None
    if submodule is not None:
        return _lookup(caller, caller.imported(submodule), rest, node, seen, kind)
    if home.binds(name) or kind == "class":
        return None  # a class, a constant: not a helper call (a hint: not a class meshify reads)
    raise caller.error(UnsupportedError, node, f"{caller.code(node)!r} names {name!r} in {_shown(caller, home)}, "
                       f"which defines no such function", f"define {name}() at the top level of "
                       f"{_shown(caller, home)}, or fix the import")


def _shown(caller, home) -> str:
    return os.path.relpath(home.path, os.path.dirname(os.path.abspath(caller.root.path)))


# -- carrying a version's names into the caller's file ------------------------------------------


def _free_names(node: cst.FunctionDef) -> list[cst.Name]:
    """The Name nodes of ``node`` that read module-level names: no function or comprehension scope in
    it binds them (libcst's scope analysis)."""
    wrapper = MetadataWrapper(cst.Module(body=[node]), unsafe_skip_copy=True)
    found: list[cst.Name] = []
    for scope in set(wrapper.resolve(ScopeProvider).values()):
        for access in scope.accesses if scope is not None else ():
            local = any(not isinstance(r.scope, GlobalScope | BuiltinScope) for r in access.referents)
            if isinstance(access.node, cst.Name) and not local:
                found.append(access.node)
    return found


def carry_names(home, node: cst.FunctionDef, taken: set[str]
                ) -> tuple[cst.FunctionDef, dict[str, str], dict[str, str]]:
    """``node`` (a version of a helper of module ``home``) reading only names the caller's file binds.

    Returns the node with clashing names renamed, the renames (``{"EPS": "layers_EPS"}``) and
    ``{name in the caller's file: import statement}`` for each name to carry; a name the caller
    already binds the same way is neither renamed nor carried.  ``taken``: the names the caller's
    file already uses (grown by the names chosen here)."""
    root = home.root
    renames: dict[str, str] = {}
    carried: dict[str, str] = {}
    for name in dict.fromkeys(n.value for n in _free_names(node)):
        statement = _statement(home, name)
        if statement is None or name == node.name.value or _binds_same(root, home, name):
            continue
        local = root.carried_as.get((home.path, name))
        if local is None:
            local = _fresh(f"{home.label}_{name}", taken) if name in taken else name
            taken.add(local)
            root.carried_as[(home.path, name)] = local
        if local != name:
            renames[name] = local
        carried[local] = _tidy(statement.format(alias=local))
    if renames:
        node = _rename(node, renames)
    return node, renames, carried


def _statement(home, name: str) -> str | None:
    """The import statement (``{alias}`` for the name it binds) that gives the caller ``home``'s ``name``."""
    root = home.root
    ref = home.import_refs.get(name)
    if ref is not None and ref.level == 0:
        if ref.name is not None:
            return f"from {ref.module} import {ref.name} as {{alias}}"
        return f"import {ref.module}" if ref.binds_root and "." in ref.module else f"import {ref.module} as {{alias}}"
    if ref is not None:  # relative: respelled from the caller's file
        path = find_module(home.path, ref.level, ref.module)
        if path is None:
            return None
        source = spelling(root.path, path, root.spelled)
        return f"from {source} import {ref.name} as {{alias}}"
    if name in home.functions or name in home.classes or name in home.assignments:
        source = spelling(root.path, home.path, root.spelled)
        return f"from {source or '.'} import {name} as {{alias}}"
    return None


def _binds_same(root, home, name: str) -> bool:
    """Whether the caller's file binds ``name`` to what ``home`` does (``import jax.numpy as jnp`` in both)."""
    ours, theirs = root.import_refs.get(name), home.import_refs.get(name)
    if ours is None:
        return False
    if theirs is not None and theirs.level == 0 and ours.level == 0:
        return ours == theirs
    target = find_module(home.path, theirs.level, theirs.module) if theirs is not None else home.path
    mine = find_module(root.path, ours.level, ours.module)
    return mine is not None and mine == target and ours.name == (theirs.name if theirs is not None else name)


def _tidy(statement: str) -> str:
    """``import jax as jax`` -> ``import jax``; ``from .layers import EPS as EPS`` -> ``... import EPS``."""
    head, sep, alias = statement.rpartition(" as ")
    return head if sep and head.rsplit(" ", 1)[-1] == alias else statement


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def _rename(node: cst.FunctionDef, renames: dict[str, str]) -> cst.FunctionDef:
    targets = {id(n): renames[n.value] for n in _free_names(node) if n.value in renames}

    class _Rename(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
            new = targets.get(id(original))
            return updated if new is None else updated.with_changes(value=new)

    return node.visit(_Rename())
