"""The rewrite pipeline, top to bottom.

1. parse (``_context.parse_module``): syntax and encoding errors become SourceError;
2. find ``@mesh`` functions and read their mesh and rules (``_hints``);
3. per function, infer dims and layouts and plan collectives (``_interp`` + ``_evaluate`` + ``rules``),
   which also fences unsupported constructs with positioned errors;
4. emit: the ``@mr.sharded(...)`` decorator (``_emit``);
5. fix imports and add the generated-file header (``_emit``).
"""

from __future__ import annotations

import inspect
import itertools
import linecache
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from meshify.annotate._types import MeshSpec, Rules
from meshify.errors import AnnotationError, LayoutError, MeshifyError, SourceError, SourceSpan, UnsupportedError
from meshify.rewrite._context import ModuleContext, parse_context
from meshify.rewrite._emit import Decorators, called_versions, fix_imports, header_lines, place_versions
from meshify.rewrite._emit import _versions as emitted_versions
from meshify.rewrite._helpers import Specializations
from meshify.rewrite._hints import MESH_NAMES, mesh_decorator, read_mesh_decorator, read_mesh_dims
from meshify.rewrite._interp import FunctionPlan, FunctionRewriter, _names_read
from meshify.rewrite._optional import none_patterns
from meshify.rewrite._templates import comment_line
from meshify.rewrite._wrap import WIDTH, wrap_lines

#: The error code of a module without @mesh functions (directory walks skip such files).
NO_MESH_FUNCTIONS = "MSH002"

__all__ = ["find_mesh_functions", "NO_MESH_FUNCTIONS", "Converted", "GeneratedFunction", "convert_source", "mesh_functions", "rewrite_function"]


@dataclass(frozen=True, slots=True)
class Converted:
    """A converted module: its text and one plan per ``@mesh`` function."""

    text: str
    plans: tuple[FunctionPlan, ...]


@dataclass(frozen=True, slots=True)
class GeneratedFunction:
    """One function rewritten for the decorator path."""

    source: str
    plan: FunctionPlan
    mr: str
    filename: str


def mesh_functions(ctx: ModuleContext) -> list[tuple[cst.FunctionDef, cst.Decorator]]:
    """Every ``@mesh`` function of the module (top level, in classes, or nested), in source order."""
    return ctx.mesh_functions


def find_mesh_functions(ctx: ModuleContext) -> list[tuple[cst.FunctionDef, cst.Decorator]]:
    found: list[tuple[cst.FunctionDef, cst.Decorator]] = []

    def walk(body) -> None:
        for stmt in body:
            if isinstance(stmt, cst.FunctionDef):
                decorator = mesh_decorator(ctx, stmt) if stmt.decorators else None
                if decorator is not None:
                    _fence(ctx, stmt)
                    found.append((stmt, decorator))
                walk(_body(stmt))
            elif isinstance(stmt, cst.ClassDef | cst.If | cst.With | cst.Try):
                walk(_body(stmt))

    walk(ctx.module.body)
    return found


_METHOD_WRAPPERS = ("staticmethod", "classmethod", "property")


def _fence(ctx: ModuleContext, fn: cst.FunctionDef) -> None:
    """Refuses what no @mesh function can be: a coroutine, or a function decorated twice."""
    if fn.asynchronous is not None:
        raise ctx.error(UnsupportedError, fn.asynchronous, f"@mesh on 'async def {fn.name.value}'",
                        "make it a plain def: JAX traces the function synchronously")
    ours = [d for d in fn.decorators
            if ctx.qualified_names(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) & MESH_NAMES]
    if len(ours) > 1:
        raise ctx.error(AnnotationError, ours[1], f"{fn.name.value}() has {len(ours)} @mesh decorators",
                        "keep one @mesh(...) naming the mesh and its rules")
    below = fn.decorators[fn.decorators.index(ours[0]) + 1:] if ours else []
    for d in below:
        name = d.decorator.value if isinstance(d.decorator, cst.Name) else ""
        if name in _METHOD_WRAPPERS and not ctx.imports.bound(name):
            raise ctx.error(AnnotationError, d, f"@{name} below @mesh(...) on {fn.name.value}()",
                            f"put @{name} above @mesh(...): @mesh must decorate the def itself")


def _body(stmt) -> list:
    block = stmt.body
    return list(block.body) if isinstance(block, cst.IndentedBlock) else []


def convert_source(source: str | bytes, path: str, regenerate: str | None = None,
                   width: int | None = WIDTH) -> Converted:
    """Rewrites every ``@mesh`` function of a module; never imports or runs it.  The lines it writes
    are wrapped at ``width`` (None: one line per statement, as rule tests compare them)."""
    ctx = parse_context(source, path)
    refuse_mesh_calls(ctx)
    plans: dict[cst.FunctionDef, list[FunctionPlan]] = {}
    for fn, decorator in mesh_functions(ctx):
        mesh, rules = read_mesh_decorator(ctx, decorator)
        plans[fn] = _versions(ctx, fn, mesh, rules, read_mesh_dims(ctx, decorator))
    if not plans:
        raise SourceError(f"{path} has no @mesh functions", code=NO_MESH_FUNCTIONS,
                          span=SourceSpan(path, 1, 1, ctx.lines[0] if ctx.lines else ""),
                          fix="decorate a function with @mesh(...) from meshify (from meshify import mesh)")
    decorators = Decorators()
    module = _replace_functions(ctx, plans, decorators)
    module = fix_imports(module, ctx.mr)
    regenerate = regenerate or f"meshify convert {path}"
    module = module.with_changes(header=[*header_lines(path, regenerate), *module.header])
    text = decorators.splice(module.code)
    text = text if width is None else wrap_lines(text, ctx.text, width)
    return Converted(text, tuple(versions[0] for versions in plans.values()))


def refuse_mesh_calls(ctx: ModuleContext, tool: str = "convert") -> None:
    """Refuses ``mesh(...)(f)`` in a module being converted: it runs (rewritten when first called), but the
    converted file would hold it unconverted, its collectives out of the reviewer's sight.  (``explain``
    and ``verify``, which read the source, call it where they find no ``@mesh`` def.)"""

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            inner = node.func
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name | cst.Attribute) \
                    and ctx.qualified_names(inner.func) & MESH_NAMES:
                target = ctx.code(node.args[0].value) if node.args else "f"
                raise ctx.error(UnsupportedError, node, f"{ctx.code(node)}: meshify {tool} reads the defs "
                                "@mesh(...) decorates; a function wrapped by a call is rewritten only when it runs"
                                + (", so the converted file would not show its collectives" if tool == "convert"
                                   else ""),
                                f"write @{ctx.code(inner)} above def {target} (a second def calling {target} "
                                "keeps the plain one), or leave this module to the decorator path")

    ctx.module.visit(_Calls())


def _versions(ctx: ModuleContext, fn: cst.FunctionDef, mesh: MeshSpec, rules: Rules, sizes: dict[str, int] | None,
              free: dict | None = None) -> list[FunctionPlan]:
    """``fn`` rewritten once per combination of its optional arrays being None (``_optional``): every
    one of them an array first (the plan ``explain`` and ``verify`` show), then the others."""
    patterns = none_patterns(ctx, fn)
    ours = mesh_decorator(ctx, fn)
    if len(patterns) > 1 and ours is not None and fn.decorators.index(ours):
        above = fn.decorators[0]
        raise ctx.error(UnsupportedError, above, f"@{ctx.code(above.decorator)} above @mesh(...) on "
                        f"{fn.name.value}(), which takes optional arrays (one program per None-ness)",
                        "put @mesh(...) outermost, or wrap the function after its definition")
    try:
        return [FunctionRewriter(ctx, fn, mesh, rules, sizes=sizes, free=free, nones=nones).run()
                for nones in patterns]
    except (LayoutError, UnsupportedError) as error:
        flags = static_flags(ctx, fn)
        if not flags or len(patterns) * 2 ** len(flags) > MAX_VERSIONS:
            raise
        if ours is not None and fn.decorators.index(ours):
            above = fn.decorators[0]
            raise ctx.error(UnsupportedError, above, f"@{ctx.code(above.decorator)} above @mesh(...) on "
                            f"{fn.name.value}(), whose results change with its flags {', '.join(flags)} (meshify "
                            f"rewrites it once per value: {error.headline})",
                            "put @mesh(...) outermost, or wrap the function after its definition") from None
        plans = []
        for nones, values in itertools.product(patterns, flag_patterns(flags)):
            try:
                plans.append(FunctionRewriter(ctx, fn, mesh, rules, sizes=sizes, free=free, nones=nones,
                                              flags=values).run())
                plans[-1].fallbacks = {k: v for k, v in flag_fallbacks(ctx, fn).items() if k in values}
            except MeshifyError as second:
                if (second.headline, second.span) == (error.headline, error.span):
                    raise error from None
                # what stops the version for these flag values, the next thing the user meets (the first
                # error is often one the versions remove: a result chosen by a flag)
                given = ", ".join([*(f"{k}={v}" for k, v in values.items()), *(f"{n}=None" for n in sorted(nones))])
                kind = next(c for c in type(second).__mro__ if c.__module__ == MeshifyError.__module__)
                raise kind(f"{fn.name.value}() rewritten for {given} (once per value of its flags, as "
                           f"one program it is refused: {error.headline}): {second.headline}",
                           span=second.span, fix=second.fix, code=second.code) from None
        return plans


#: More static flags than this would mean 2**n rewrites of one function: its error stands.
MAX_FLAGS = 3
#: The most versions of one function (optional arrays' None-ness times its flags' values) meshify writes.
MAX_VERSIONS = 32


def static_flags(ctx: ModuleContext, fn: cst.FunctionDef) -> dict[str, bool]:
    """The static parameters of ``fn`` that are flags (a ``bool`` hint, or a default of True or False), with
    their defaults (False without one), in order; empty where there are more than :data:`MAX_FLAGS`."""
    from meshify.rewrite._hints import read_dims, read_struct

    flags: dict[str, bool] = {}
    p = fn.params
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        hint = param.annotation.annotation if param.annotation is not None else None
        if hint is not None and (read_dims(ctx, hint) is not None or read_struct(ctx, hint) is not None):
            continue
        default = param.default
        literal = default.value if isinstance(default, cst.Name) and default.value in ("True", "False") else None
        boolean = isinstance(hint, cst.Name) and hint.value == "bool" and not ctx.binds("bool")
        if literal is not None or boolean or param.name.value in flag_fallbacks(ctx, fn):
            flags[param.name.value] = literal == "True"
    return flags if len(flags) <= MAX_FLAGS else {}


def flag_fallbacks(ctx: ModuleContext, fn: cst.FunctionDef) -> dict[str, str]:
    """HF's flags defaulting to None and read off the config when not given: a parameter ``p=None`` whose
    first statement reading it is ``p = p if p is not None else cfg.attr`` (``cfg`` a parameter): ``p`` ->
    ``"cfg.attr"``.  Such a flag is a flag of the value it resolves to (the runtime reads ``cfg.attr`` for a
    call passing None)."""
    p = fn.params
    params = {q.name.value: q for q in (*p.posonly_params, *p.params, *p.kwonly_params)}
    found: dict[str, str] = {}
    read: set[str] = set()
    for stmt in fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ():
        line = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        value = line.value if isinstance(line, cst.Assign) and len(line.targets) == 1 else None
        target = line.targets[0].target if value is not None else None  # type: ignore[union-attr]
        name = target.value if isinstance(target, cst.Name) else None
        param = params.get(name) if name is not None else None
        if param is not None and name not in read and isinstance(param.default, cst.Name) \
                and param.default.value == "None" and isinstance(value, cst.IfExp) \
                and ctx.code(value.body) == name and ctx.code(value.test) == f"{name} is not None" \
                and isinstance(value.orelse, cst.Attribute) and isinstance(value.orelse.value, cst.Name) \
                and value.orelse.value.value in params and value.orelse.value.value not in found:
            found[name] = ctx.code(value.orelse)
        read |= set(_names_read(stmt))
    return found


def flag_patterns(flags: dict[str, bool]) -> list[dict[str, bool]]:
    """Every combination of the flags' values, their defaults first."""
    names = list(flags)
    combos = [dict(zip(names, values)) for values in itertools.product((False, True), repeat=len(names))]
    return sorted(combos, key=lambda c: c != flags)


def _rewritten(ctx: ModuleContext, plans: list[FunctionPlan], original: cst.FunctionDef,
               decorators: Decorators, keep: bool = True) -> list[cst.FunctionDef]:
    """The rewritten function, then its versions for optional arrays being None, each under
    ``@f.variant``; ``keep``: the decorators other than @mesh stay (the converted file)."""
    ours = mesh_decorator(ctx, original)
    below = original.decorators[original.decorators.index(ours) + 1:] if ours is not None and keep else []
    main = [decorators.add(plans[0], ctx.mr) if d is ours else d for d in original.decorators] if keep \
        else [decorators.add(plans[0], ctx.mr)]
    nodes = [plans[0].node.with_changes(decorators=main)]  # type: ignore[union-attr]
    name = original.name.value
    for plan in plans[1:]:
        nones = sorted(set(plans[0].args) - set(plan.args)) + sorted(
            {g for struct in plan.args.values() if struct is not None for g in struct.optional_groups(none_only=True)})
        when = [*(f"{n}={v}" for n, v in plan.flags.items()), *(f"{n} is None" for n in nones)]
        note = comment_line(f"{name}() when {', '.join(nones)} {'is' if len(nones) == 1 else 'are'} None"
                            if nones and not plan.flags else f"{name}() when " + ", ".join(when))
        variant = cst.Decorator(decorator=cst.Attribute(cst.Name(name), cst.Name("variant")))
        nodes.append(plan.node.with_changes(  # type: ignore[union-attr]
            decorators=[variant, decorators.add(plan, ctx.mr), *below],
            leading_lines=[cst.EmptyLine(), cst.EmptyLine(), note] if keep else [note]))
    return nodes


def _replace_functions(ctx: ModuleContext, plans: dict[cst.FunctionDef, list[FunctionPlan]],
                       decorators: Decorators) -> cst.Module:
    """The module with each @mesh function rewritten and each helper followed by its versions.

    Top-level functions (the usual case) are swapped in the module's body directly;
    a transformer walks the tree only when some @mesh function is nested.
    """
    top = set(ctx.module.body)
    body: list[cst.BaseStatement] = []
    for stmt in ctx.module.body:
        body.extend(_rewritten(ctx, plans[stmt], stmt, decorators) if stmt in plans else [stmt])  # type: ignore[arg-type,index]
    # (only the versions something calls: one made on a walk the interpreter undid is left out)
    versions = ctx.specializations.restricted_to(called_versions(
        [*body, *(plan.node for found in plans.values() for plan in found)], ctx.specializations))
    body = _with_imported_versions(ctx, place_versions(body, versions, {fn.name.value for fn in plans}), versions)
    module = ctx.module.with_changes(body=body)
    nested = {fn: plan for fn, plan in plans.items() if fn not in top}
    if not nested:
        return module

    class _Replace(cst.CSTTransformer):
        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef
                              ) -> cst.FunctionDef | cst.FlattenSentinel[cst.FunctionDef]:
            found = nested.get(original)
            return updated if found is None else cst.FlattenSentinel(_rewritten(ctx, found, original, decorators))

    return module.visit(_Replace())


def _with_imported_versions(ctx: ModuleContext, body: list[cst.BaseStatement],
                            versions: Specializations) -> list[cst.BaseStatement]:
    """``body`` with the versions of helpers imported from other modules of the package (and the
    imports carrying the names they read) after the module's leading imports, each helper's under a
    comment naming the file and line it comes from."""
    imported = _imported_statements(ctx, versions)
    if not imported:
        return body
    at = 0
    while at < len(body) and _is_leading(body[at], at):
        at += 1
    after = body[at:]
    if after:  # two blank lines after the last version, as after any def
        blank = len(list(itertools.takewhile(lambda line: line.comment is None, after[0].leading_lines)))
        after[0] = after[0].with_changes(leading_lines=[*[cst.EmptyLine()] * max(0, 2 - blank),
                                                        *after[0].leading_lines])
    return [*body[:at], *imported, *after]


def _imported_statements(ctx: ModuleContext, versions: Specializations) -> list[cst.BaseStatement]:
    """The carried imports, then each imported helper's versions (``_emit``'s comment block, which names
    the helper as ``layers.mlp``), the first under a comment naming where the helper is defined."""
    helpers: dict[str, list] = {}
    for spec in versions.versions.values():
        if spec.origin:
            helpers.setdefault(spec.helper, []).append(spec)
    if not helpers and not ctx.carried:  # (classes of pytree hints carried in too: from .types import Block)
        return []
    statements: list[cst.BaseStatement] = [cst.parse_statement(text) for text in ctx.carried.values()]
    for helper, specs in helpers.items():
        first, *rest = emitted_versions(helper, specs, None)
        origin = comment_line(f"{helper} from {specs[0].origin}")
        statements += [first.with_changes(leading_lines=[*first.leading_lines[:2], origin, *first.leading_lines[2:]]),
                       *rest]
    return statements


def _is_leading(stmt: cst.BaseStatement, index: int) -> bool:
    """A module's docstring or one of its leading imports."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    docstring = index == 0 and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString)
    return docstring or isinstance(small, cst.Import | cst.ImportFrom)


_module_cache: dict[tuple[str, int], ModuleContext] = {}


def rebound_constants(fn: Callable, taken: dict[str, object], aliases: dict[str, str] | None = None
                      ) -> dict[str, object]:
    """The module constants of ``fn``'s module rebound from outside (``mod.AXIS = 0``) since the source
    assigned them: {} while every one the rewrite took (``taken``: name -> value) still holds it; else each
    literal constant of the module whose current value is another literal (what to rewrite with).  An alias
    the rewrite called by its function's rule (``aliases``: ``dot`` -> ``jax.numpy.dot``) holding another
    function now is one too (rewritten reading the name as the function it holds)."""
    from meshify._literals import is_literal, same_literal
    from meshify.runtime._bind import aliased, resolve_qualified

    moved = {name: fn.__globals__[name] for name, target in (aliases or {}).items()
             if name in fn.__globals__ and aliased(fn.__globals__[name]) is not resolve_qualified(target)}

    current = fn.__globals__
    if all(same_literal(current.get(name, value), value) for name, value in taken.items()) and not moved:
        return {}
    return {**{name: current[name] for name, literal in _context_for(fn).literal_constants.items()
               if name in current and not same_literal(current[name], literal) and is_literal(current[name])},
            **moved}


def _context_for(fn: Callable, fresh: bool = False) -> ModuleContext:
    try:
        filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except TypeError:
        filename = None
    if filename is None:
        raise SourceError(f"cannot find the source of {fn.__qualname__}",
                          fix="define @mesh functions in a file or notebook cell, not with exec()")
    linecache.checkcache(filename)  # the file edited and its module reloaded (a notebook): never the old text
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        raise SourceError(f"cannot read the source of {fn.__qualname__} from {filename}",
                          fix="define @mesh functions in a file or notebook cell, not with exec()")
    text = "".join(lines)
    key = (filename, hash(text))
    if fresh:
        return parse_context(text, filename)
    if key not in _module_cache or not _module_cache[key].imports_current():
        _module_cache[key] = parse_context(text, filename)
    return _module_cache[key]


def _closure_values(fn: Callable) -> dict:
    """What a live function's closure variables hold, as far as a layout depends on it: an array is a
    whole replicated array of its shape, a Python literal a known static, anything else opaque."""
    from meshify.rewrite._values import Opaque, Static

    found: dict = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # not yet bound
            continue
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            found[name] = Opaque(tuple(int(n) for n in value.shape))
        elif value is None or isinstance(value, bool | int | float | str):
            found[name] = Static.of(value)
        elif callable(value) or isinstance(value, type):
            found[name] = Static()
        else:
            found[name] = Opaque()
    return found


def rewrite_function(fn: Callable, mesh: MeshSpec, rules: Rules, sizes: dict[str, int] | None = None,
                     overrides: dict[str, object] | None = None) -> GeneratedFunction:
    """Rewrites one live function (the decorator path); ``mesh`` and ``rules`` come from the call;
    ``overrides`` are module constants rebound from outside (see :func:`rebound_constants`), read in
    place of the source's literals (in a context of their own: the module's cached one keeps the source's)."""
    ctx = _context_for(fn, fresh=bool(overrides))
    ctx.overrides = dict(overrides or {})
    ctx.forget_aliases()  # (a name rebound from outside is no alias of what the source binds it to)
    first = fn.__code__.co_firstlineno
    # mesh(...)(f), as jax.jit(f): a top-level def of no decorator, rewritten as if @mesh stood on it
    called = [node for node in ctx.functions.values() if not node.decorators and fn.__qualname__ == fn.__name__]
    for node in [*(node for node, _ in mesh_functions(ctx) or []), *called]:
        start = ctx.line(node.decorators[0] if node.decorators else node)
        def_line = ctx.line(node.name)
        if node.name.value == fn.__name__ and start <= first <= def_line:
            plans = _versions(ctx, node, mesh, rules, sizes, free=_closure_values(fn))
            decorators = Decorators()
            new = _rewritten(ctx, plans, node, decorators, keep=False)
            new[0] = new[0].with_changes(leading_lines=[])
            names = dict.fromkeys(n for plan in plans for n in plan.helpers)
            helpers = [ctx.specializations.by_name(n).node.with_changes(leading_lines=[]) for n in names]
            helpers += [statement for _, statement in ctx.specializations.registrations  # custom rules' registrations
                        if statement.body[0].value.func.value.value in names]  # type: ignore[attr-defined]
            carried = [cst.parse_statement(text) for text in ctx.carried.values()]  # from other modules' helpers
            source = decorators.splice("\n\n".join(ctx.module.code_for_node(n) for n in [*carried, *helpers, *new]))
            return GeneratedFunction(source, plans[0], ctx.mr, ctx.path)
    raise UnsupportedError(f"cannot find the @mesh definition of {fn.__qualname__} in {ctx.path}",
                           fix="apply @mesh(...) directly to a def, as the outermost decorator, or call mesh(...)(f) "
                               "on a top-level def with no decorators")
