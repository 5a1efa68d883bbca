"""Functions defined inside the function being rewritten: ``def body(carry, x): ...``.

A nested ``def`` is a closure: it reads the enclosing function's names when it runs, which
is where it is called (``f(y)``) or where a loop traces it (``jax.lax.scan(body, ...)``).
So it is rewritten there, like a helper, for the layouts of that use: its parameters bound
to the values passed, every other name read as the enclosing function holds it at that
point (the mask, a split weight, the config).  The ``def`` statement itself is emitted in
place, rewritten; a def whose uses need different layouts is emitted once per layout
(``f__v1``, ``f__v2``), each use calling its own.  A nested def meshify cannot follow (used as
a value, rebinding an enclosing name with ``nonlocal``, recursive) is an error at its place.

After this pass every ``def`` statement of a rewritten function is either unused (emitted
as written: it never runs) or replaced by its versions, every use names its version, and
each version's collectives carry their ``# meshify:`` comments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from meshify.annotate._types import Layout
from meshify.errors import UnsupportedError
from meshify.rewrite._templates import comment_line
from meshify.rewrite._values import Opaque, Static, Value

__all__ = ["LocalDef", "bound_function", "call_local", "define", "emit_defs", "local_def", "refuse_value", "walk_local"]

#: Decorators a nested def keeps: they change how JAX runs it, not what it computes.
_KEPT_DECORATORS = frozenset({"jax.jit", "jax.checkpoint", "jax.remat", "jax.named_call", "jax.named_scope"})


@dataclass(eq=False, slots=True)
class LocalDef:
    """One ``def`` statement of the function being rewritten, as it ran.

    ``defaults`` are the values of its parameters' defaults (evaluated when the def ran, as
    Python does); ``uses`` maps each use (a call, a loop) to the version it needs and the
    Name node that calls it there (renamed when the def has several versions).
    """

    node: cst.FunctionDef
    defaults: dict[str, Value]
    default_nodes: dict[str, cst.BaseExpression]
    #: Each default's dtype carriers, in the enclosing function's names as the def ran (see _dtypes).
    default_dtypes: dict[str, tuple[str, ...] | None]
    uses: dict[cst.CSTNode, tuple[cst.FunctionDef, dict[str, Value]]] = field(default_factory=dict)
    #: Every Name node a use was emitted with, and its use (a use walked again gets a new node).
    names: list[tuple[cst.Name, cst.CSTNode]] = field(default_factory=list)
    active: bool = False
    #: Where it is passed to a helper as a value (``residual(h, block)``): that argument names the def
    #: itself, so it must end with one version.
    passed: cst.CSTNode | None = None
    #: ``act = functools.partial(f, *bound, **kw)`` (or ``f if flag else g``): that expression; ``node`` is
    #: then the def it stands for with as many parameters as the use at hand passes (:meth:`shape`).
    partial: cst.Call | cst.IfExp | None = None
    #: ``partial`` is a wrapper of a function (``jax.checkpoint(f, ...)``), called as it would be in place.
    wrapper: bool = False
    #: The name the def is emitted under where a later ``f = jax.checkpoint(f, ...)`` (or a partial of ``f``)
    #: rebinds its name: that statement's def calls this one by it (``f`` would be itself).
    renamed: str | None = None

    @property
    def name(self) -> str:
        return self.node.name.value

    def shape(self, count: int, keywords=()) -> None:
        """For a partial, ``node`` becomes the def it stands for when called with ``count`` positional
        arguments and ``keywords``: ``def act(partial_arg0, ..., partial_bound0=b0, ..., k=v, *, extra):
        return f(partial_bound0, ..., partial_arg0, ..., k=k, extra=extra)`` (the bound arguments are the
        defaults, read where the partial was made, as it read them)."""
        if self.partial is None:
            return
        self.node = _partial_def(self.node.name, self.partial, count, keywords, self.node.leading_lines,
                                 self.wrapper)


def _partial_parts(call: cst.Call) -> tuple[list[cst.Arg], list[cst.Arg]]:
    return [a for a in call.args[1:] if a.keyword is None], [a for a in call.args[1:] if a.keyword is not None]


def _partial_def(name: cst.Name, call: cst.Call | cst.IfExp, count: int, keywords, leading_lines,
                 wrapper: bool = False) -> cst.FunctionDef:
    if isinstance(call, cst.IfExp) or wrapper:
        # act = f if flag else g: def act(...): return f(...) if flag else g(...)
        # ck = jax.checkpoint(f, ...): def ck(...): return jax.checkpoint(f, ...)(...)
        params = [cst.Param(cst.Name(f"partial_arg{i}")) for i in range(count)]
        tight = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
        args = [*(cst.Arg(cst.Name(f"partial_arg{i}")) for i in range(count)),
                *(cst.Arg(cst.Name(k), keyword=cst.Name(k), equal=tight) for k in keywords)]
        value = cst.Call(call, args) if wrapper else \
            call.with_changes(body=cst.Call(call.body, args), orelse=cst.Call(call.orelse, args))  # type: ignore[union-attr]
        return cst.FunctionDef(name, cst.Parameters(params, kwonly_params=[cst.Param(cst.Name(k)) for k in keywords],
                                                    star_arg=cst.ParamStar() if keywords else cst.MaybeSentinel.DEFAULT),
                               cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(value)])]),
                               leading_lines=leading_lines)
    bound, given = _partial_parts(call)
    fixed = [a.keyword.value for a in given]  # type: ignore[union-attr]
    extra = [k for k in keywords if k not in fixed]
    tight = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    params = [*(cst.Param(cst.Name(f"partial_arg{i}")) for i in range(count)),
              *(cst.Param(cst.Name(f"partial_bound{i}"), default=a.value, equal=tight) for i, a in enumerate(bound)),
              *(cst.Param(cst.Name(k), default=a.value, equal=tight) for k, a in zip(fixed, given))]
    args = [*(cst.Arg(cst.Name(f"partial_bound{i}")) for i in range(len(bound))),
            *(cst.Arg(cst.Name(f"partial_arg{i}")) for i in range(count)),
            *(cst.Arg(cst.Name(k), keyword=cst.Name(k), equal=tight) for k in (*fixed, *extra))]
    body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(cst.Call(call.args[0].value, args))])])
    return cst.FunctionDef(name, cst.Parameters(params, kwonly_params=[cst.Param(cst.Name(k)) for k in extra],
                                                star_arg=cst.ParamStar() if extra else cst.MaybeSentinel.DEFAULT),
                           body, leading_lines=leading_lines)


def _refs(rw, node: cst.IfExp) -> bool:
    """Whether each branch of ``f if flag else g`` (a flag meshify does not read) names a function it can
    call: a def of the module or a jax function (``jax.nn.gelu if cfg.gelu else jax.nn.relu``)."""
    from meshify.rewrite._helpers import function_ref

    shadowed = set(rw.env) | set(rw.free) | set(rw.ctx.enclosing_names(rw.fn))
    return all(function_ref(rw.ctx, b, shadowed) is not None if not isinstance(b, cst.IfExp) else _refs(rw, b)
               for b in (node.body, node.orelse))


def bound_function(rw, stmt: cst.SimpleStatementLine) -> cst.BaseStatement | None:
    """``f = lambda x: ...``, ``act = functools.partial(g, ...)`` or ``ck = jax.checkpoint(g, ...)`` in the
    function: a nested def of that name (rewritten at each use, as a ``def`` is); the lambda is written
    out as the def it stands for, a partial or wrapper stays as written where nothing calls it.  None:
    not such a statement."""
    from meshify.rewrite._bodies import is_partial

    small = stmt.body[0] if len(stmt.body) == 1 else None
    if not isinstance(small, cst.Assign) or len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
        return None
    from meshify.rewrite._evaluate import chosen

    name, value = small.targets[0].target, chosen(rw, small.value)
    if isinstance(value, cst.Lambda):
        fn = cst.FunctionDef(name, value.params, cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(value.body)])]),
                             leading_lines=stmt.leading_lines)
        rw.ctx.anchors[fn] = stmt
        return define(rw, fn)
    if isinstance(value, cst.IfExp) and not _refs(rw, value):
        return None
    wrapper = wrapped_function(rw, value)
    if not isinstance(value, cst.IfExp) and not is_partial(rw, value) and not wrapper:
        return None
    assert isinstance(value, cst.Call | cst.IfExp)
    value = _rebinding_own_name(rw, name.value, value)
    template = _partial_def(name, value, 0, (), stmt.leading_lines, wrapper)
    rw.ctx.anchors[template] = stmt
    defaults, nodes, carriers = {}, {}, {}
    for param in template.params.params:
        defaults[param.name.value], nodes[param.name.value] = _default(rw, template, param)
        carriers[param.name.value] = rw.dtypes.of(param.default)
    local = LocalDef(template, defaults, nodes, carriers, partial=value, wrapper=wrapper)
    rw.env[name.value] = Static.of(local)
    rw.dtypes.bind(name.value, None, rw.env[name.value])
    rw.local_defs[stmt] = local
    return stmt


def _rebinding_own_name(rw, name: str, value: cst.BaseExpression) -> cst.BaseExpression:
    """``body = jax.checkpoint(body, ...)`` (``f = functools.partial(f, ...)``): the def the name held is emitted
    under a name of its own (``body__inner``), which the wrapper calls; else the def made for this statement,
    named ``body`` too, would call itself.  ``value`` with its function so renamed (as it is, otherwise)."""
    if not isinstance(value, cst.Call) or not value.args or value.args[0].keyword is not None:
        return value
    first = value.args[0].value
    old = local_def(rw, name) if isinstance(first, cst.Name) and first.value == name else None
    if old is None:
        return value
    if old.renamed is None:
        taken = _taken_names(rw)
        old.renamed = next(n for n in (f"{name}__inner{i or ''}" for i in range(100)) if n not in taken)
    rw.env[old.renamed] = Static.of(old)
    return value.with_changes(args=[value.args[0].with_changes(value=cst.Name(old.renamed)), *value.args[1:]])


def wrapped_function(rw, node: cst.BaseExpression) -> bool:
    """``jax.checkpoint(f, ...)``, ``jax.remat(f)``, ``jax.jit(f)``: a function under a wrapper that
    leaves what it computes as it is, held in a name (``ck = jax.checkpoint(block)``) and called as
    the wrapper would be called in place (``jax.checkpoint(block)(h, w)``)."""
    from meshify.rewrite._bodies import BODY_WRAPPERS

    return isinstance(node, cst.Call) and bool(node.args) and not any(a.star for a in node.args) \
        and node.args[0].keyword is None and bool(rw.ctx.qualified_names(node.func) & BODY_WRAPPERS)


def local_def(rw, name: str) -> LocalDef | None:
    """The nested def ``name`` refers to where ``rw`` reads it, or None."""
    value = rw.env[name] if name in rw.env else rw.free.get(name)
    if isinstance(value, Static) and isinstance(value.literal, LocalDef):
        return value.literal
    return None


def refuse_value(rw, node: cst.CSTNode, local: LocalDef) -> Exception:
    """A nested def read as a value (returned, stored, passed to a function): meshify could not
    see where it runs, and so could not rewrite its body for the layouts it meets there."""
    return rw.error(UnsupportedError, node,
                    f"the nested function {local.name}() is used as a value here, so meshify cannot tell the "
                    "layouts it will run on",
                    f"call it directly ({local.name}(...), jax.vmap({local.name})(...), "
                    f"jax.checkpoint({local.name})(...)), pass it as the body of jax.lax.scan/fori_loop/cond, "
                    f"or define {local.name}() at module level (helpers are specialised per layout)")


def define(rw, stmt: cst.FunctionDef) -> cst.FunctionDef:
    """A ``def`` statement: checked and bound; its body is rewritten at each use."""
    name = stmt.name.value
    if stmt.asynchronous is not None:
        raise rw.error(UnsupportedError, stmt, f"'async def {name}' inside a @mesh function", "make it a plain def")
    p = stmt.params
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            raise rw.error(UnsupportedError, star, f"*args/**kwargs in the nested function {name}()",
                           "give each argument its own parameter")
    for decorator in stmt.decorators:
        _check_decorator(rw, stmt, decorator)
    _refuse_nonlocal(rw, stmt)
    defaults, nodes = {}, {}
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        if param.default is not None:
            defaults[param.name.value], nodes[param.name.value] = _default(rw, stmt, param)
    carriers = {name: rw.dtypes.of(q.default) for q in (*p.posonly_params, *p.params, *p.kwonly_params)
                if q.default is not None for name in [q.name.value]}
    local = LocalDef(stmt, defaults, nodes, carriers)
    rw.env[name] = Static.of(local)
    rw.dtypes.bind(name, None, rw.env[name])
    rw.local_defs[stmt] = local
    return stmt


def _check_decorator(rw, stmt: cst.FunctionDef, decorator: cst.Decorator) -> None:
    target = decorator.decorator
    names = rw.ctx.qualified_names(target.func if isinstance(target, cst.Call) else target)
    if isinstance(target, cst.Call) and names & {"functools.partial"} and target.args:
        names = rw.ctx.qualified_names(target.args[0].value)
    if names & _KEPT_DECORATORS:
        return
    text = rw.ctx.code(target)
    raise rw.error(UnsupportedError, decorator,
                   f"the nested function {stmt.name.value}() is decorated with @{text}, which meshify cannot "
                   "carry through the rewrite of its body", "remove the decorator, or apply it outside the @mesh "
                   "function (meshify keeps @jax.jit and @jax.checkpoint)")


def _refuse_nonlocal(rw, stmt: cst.FunctionDef) -> None:
    """``nonlocal``/``global`` in a nested def rebinds a name of another scope: refused."""
    found: list[cst.CSTNode] = []

    class _Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is stmt

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            found.append(node)

        def visit_Global(self, node: cst.Global) -> None:
            found.append(node)

    stmt.visit(_Find())
    if found:
        kind = "nonlocal" if isinstance(found[0], cst.Nonlocal) else "global"
        raise rw.error(UnsupportedError, found[0],
                       f"'{kind}' in the nested function {stmt.name.value}(): it rebinds a variable of the enclosing "
                       "function, whose layout meshify tracks statement by statement",
                       f"return the new value from {stmt.name.value}() and assign it in the enclosing function "
                       "(x = step(x))")


def _default(rw, stmt: cst.FunctionDef, param: cst.Param) -> tuple[Value, cst.BaseExpression]:
    """A default's value, read when the def runs (``def f(y, w=w)`` captures ``w`` now)."""
    from meshify.rewrite._interp import _Restart

    assert param.default is not None
    from meshify.rewrite._helpers import function_ref

    ref = function_ref(rw.ctx, param.default, set(rw.env) | set(rw.free) | set(rw.ctx.enclosing_names(rw.fn)))
    if ref is not None:  # def block(h, act=jax.nn.silu) / act=ACT["gelu"]: what act(h) calls
        return Static.of(ref), param.default
    try:
        op = rw.expr(param.default)
    except _Restart:
        op = None
    if op is None or (not isinstance(op.value, Static) and op.node is not op.original):
        raise rw.error(UnsupportedError, param.default,
                       f"the default of {param.name.value!r} in {stmt.name.value}() needs a collective",
                       "compute it into a name before the def, and use that name as the default")
    return op.value, op.node


def _bind(rw, local: LocalDef, call, where: cst.CSTNode) -> dict[str, Value]:
    """The nested def's parameters bound to a call's operands, then to their defaults."""
    local.shape(len(call.args), tuple(call.kwargs))
    p = local.node.params
    positional = [*p.posonly_params, *p.params]
    if len(call.args) > len(positional):
        raise rw.error(UnsupportedError, where, f"{local.name}() takes {len(positional)} positional arguments "
                       f"but {len(call.args)} were given", f"pass {local.name}() one value per parameter")
    bound = {param.name.value: _passed(rw, operand) for param, operand in zip(positional, call.args)}
    known = {q.name.value for q in (*positional, *p.kwonly_params)}
    for name, operand in call.kwargs.items():
        if name not in known:
            raise rw.error(UnsupportedError, where, f"{local.name}() has no parameter {name!r}",
                           f"its parameters are {', '.join(sorted(known))}")
        bound[name] = _passed(rw, operand)
    for param in (*positional, *p.kwonly_params):
        name = param.name.value
        if name not in bound:
            if name not in local.defaults:
                raise rw.error(UnsupportedError, where, f"{local.name}() is missing argument {name!r}",
                               f"pass {name!r}, or give it a default")
            bound[name] = local.defaults[name]
    return {q.name.value: bound[q.name.value] for q in (*positional, *p.kwonly_params)}


def _passed(rw, operand) -> Value:
    """An argument's value, a function meshify can call (``block(h, jax.nn.gelu)``) as its reference."""
    from meshify.rewrite._helpers import function_ref

    value = operand.value
    if isinstance(value, Static | Opaque) and not getattr(value, "known", False):
        ref = function_ref(rw.ctx, operand.original, set(rw.env) | set(rw.free) | set(rw.ctx.enclosing_names(rw.fn)))
        if ref is not None:
            return Static.of(ref)
    return value


def call_local(rw, local: LocalDef, call) -> tuple[Value, cst.BaseExpression]:
    """``f(args)`` of a nested def: its body rewritten for these arguments, the call kept."""
    from meshify.rewrite._helpers import _complete_widened
    from meshify.rewrite._mappings import with_maybe_none

    call, replaced = _complete_widened(rw, call, local.node)
    bound = _bind(rw, local, call, call.node)
    positional = [q.name.value for q in (*local.node.params.posonly_params, *local.node.params.params)]
    passed = {**dict(zip(positional, call.args)), **call.kwargs}
    carriers = {param: rw.dtypes.of(operand.original) for param, operand in passed.items()}
    for param in bound:
        if param not in passed:  # a default: the carriers it had where the def ran
            carriers[param] = local.default_dtypes.get(param)
    result, sub, name = walk_local(rw, local, bound, call.node, carriers,
                                   passed={p: o.original for p, o in passed.items()})
    for param, operand in passed.items():
        if param in sub.index_names:
            rw.mark_index(operand)
        if param in sub.key_names and isinstance(operand.original, cst.Name):
            rw.key_names.add(operand.original.value)
    rw.dtypes.calls[call.node] = sub.dtypes.in_caller(sub.return_dtype, carriers)
    if sub.returns_widened:
        rw.dtypes.widened.add(call.node)
    if sub.return_items is not None:  # a, b = local(...): each name takes its item's dtype and widened-ness
        rw.dtypes.call_items[call.node] = tuple((sub.dtypes.in_caller(c, carriers), w) for c, w in sub.return_items)
    return with_maybe_none(rw, result, sub.maybe_results), call.rebuild(replaced).with_changes(func=name)


def walk_local(rw, local: LocalDef, bound: dict[str, Value], site: cst.CSTNode,
               carriers: dict[str, tuple[str, ...] | None] | None = None,
               forced: Layout | None = None, blind: bool = False,
               passed: dict[str, cst.CSTNode | None] | None = None,
               carry: tuple[str, bool] | None = None) -> tuple[Value, object, cst.Name]:
    """Rewrites ``local``'s body for ``bound`` where ``site`` uses it, in ``rw``'s scope as it is now.

    ``forced``: the layout every return converts its value to (the common layout of a cond's branches).

    Returns the result's value, the sub-rewriter (what it learnt: indices, keys, dtypes) and the
    Name the use calls (renamed when the def ends up with several versions)."""
    from meshify.rewrite._interp import FunctionRewriter

    if local.active:
        raise rw.error(UnsupportedError, site, f"recursive call of the nested function {local.name}()",
                       "meshify rewrites a nested def for each use and cannot recurse; unroll it, or use "
                       "jax.lax.scan")
    own = _own_names(local.node)
    free = {k: v for k, v in {**rw.free, **rw.env}.items() if k not in own}
    unknown = frozenset(p for p, v in bound.items()
                        if not isinstance(v, Static) and (carriers or {}).get(p, (p,)) is None)
    sub = FunctionRewriter(rw.ctx, local.node, rw.mesh, rw.rules, stack=rw.stack, sizes=rw.sizes, declared=rw.declared,
                           assume_defaults=rw.assume_defaults, free=free, unknown_dtypes=unknown,
                           reduce_dtype=rw.reduce_dtype, regather=rw.regather)
    sub.closure_dtypes = {n: _closure_carriers(rw, n, own) for n in rw.dtypes.wide_names if n in free}
    sub.closure_tuples = {n: tuple((_closure_items(c, own), w) for c, w in items)
                          for n, items in rw.dtypes.tuples.items() if n in free and any(w for _, w in items)}
    sub._forced_return = forced
    sub.blind_caller = blind
    sub.maybe_none = list(rw.maybe_none)  # (what it reads of the enclosing scope, or is passed, may be None)
    from meshify.rewrite._cotangents import enter

    enter(rw, sub, local.node, passed or {}, free=True, carry=carry)  # (passed: a call's arguments, a loop's sources)
    sub.enclosing = rw.enclosing or rw.fn
    local.active = True
    try:
        node, result = sub.run_helper(bound)
    finally:
        local.active = False
    rw.carried_records(sub.records, local.name, None)  # it reads the enclosing scope too: never merged
    rw.uses.extend(sub.uses)
    rw.static_reads |= sub.static_reads
    rw.globals_read |= sub.globals_read  # (a module constant it reads keys the enclosing program)
    rw.pinned_reads.update(sub.pinned_reads)
    rw.index_names |= {n for n in sub.index_names if n in free}
    rw.key_names |= {n for n in sub.key_names if n in free}
    node = node.with_changes(params=_with_defaults(local, node.params))
    name = cst.Name(local.name)
    local.uses[site] = (node, bound)
    local.names.append((name, site))
    return result, sub, name


def _closure_carriers(rw, name: str, own: set[str]) -> tuple[str, ...] | None:
    """The dtype carriers of a float32-accumulated partial sum the nested def reads from its
    enclosing function, if they mean the same inside the def (else None: refused at its psum)."""
    from meshify.rewrite._dtypes import _names_in

    carriers = rw.dtypes.of(cst.Name(name))
    if carriers is None or any(n in own for text in carriers for n in _names_in(text)):
        return None
    return carriers


def _closure_items(carriers: tuple[str, ...] | None, own: set[str]) -> tuple[str, ...] | None:
    """An item's carriers, of a tuple the nested def reads from its enclosing function, if they mean the
    same inside the def (else None)."""
    from meshify.rewrite._dtypes import _names_in

    if carriers is None or any(n in own for text in carriers for n in _names_in(text)):
        return None
    return carriers


def _with_defaults(local: LocalDef, params: cst.Parameters) -> cst.Parameters:
    def fill(ps):
        return [q.with_changes(default=local.default_nodes[q.name.value]) if q.name.value in local.default_nodes
                else q for q in ps]
    return params.with_changes(posonly_params=fill(params.posonly_params), params=fill(params.params),
                               kwonly_params=fill(params.kwonly_params))


def _own_names(fn: cst.FunctionDef) -> set[str]:
    """The names local to ``fn``: parameters and what its body binds."""
    from meshify.rewrite._context import _function_names

    return _function_names(fn)


def emit_defs(rw, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """The rewritten body with each nested def replaced by its version(s), each use renamed."""
    swaps: dict[cst.CSTNode, object] = {}
    for original, local in rw.local_defs.items():
        versions: dict[str, tuple[cst.FunctionDef, dict[str, Value]]] = {}
        codes: dict[cst.CSTNode, str] = {}
        for site, (node, bound) in local.uses.items():
            codes[site] = cst.Module(body=[node.with_changes(leading_lines=[])]).code
            versions.setdefault(codes[site], (node, bound))
        if not versions:
            continue
        if len(versions) == 1:
            swaps[original] = next(iter(versions.values()))[0]
            if local.renamed is not None:  # (f = jax.checkpoint(f): the def under its own name, its uses too)
                swaps[original] = swaps[original].with_changes(name=cst.Name(local.renamed))  # type: ignore[attr-defined]
                swaps.update((n, cst.Name(local.renamed)) for n, site in local.names)
            continue
        if local.passed is not None:
            raise rw.error(UnsupportedError, local.passed, f"{local.name}() is passed to a helper and needs other "
                           "code for another of its uses (other layouts), but the argument names one def",
                           f"pass a module-level def instead (specialised per call), or use {local.name}() with "
                           "values of one layout")
        swaps[original], renamed = _versions(rw, local, versions)
        for name, site in local.names:
            if site in codes:
                swaps[name] = cst.Name(renamed[codes[site]])
    if not swaps:
        return body
    return list(cst.Module(body=body).visit(_SwapDefs(swaps)).body)


def _taken_names(rw) -> set[str]:
    """Every name a def emitted in ``rw``'s function must not take: the module's identifiers and the names the
    function binds or reads from its enclosing scopes."""
    from meshify.rewrite._helpers import module_names

    return set(module_names(rw.ctx.text)) | set(rw.env) | set(rw.free)


def _versions(rw, local: LocalDef, versions) -> tuple[cst.FlattenSentinel, dict[str, str]]:
    from meshify.rewrite._helpers import _described, version_name

    taken = _taken_names(rw)
    out, renamed = [], {}
    for i, (code, (node, bound)) in enumerate(versions.items()):
        vname = version_name(local.name, taken)
        taken.add(vname)
        renamed[code] = vname
        described = "; ".join(f"{path}: {layout}" for p, v in bound.items() for path, layout in _described(p, v))
        lines = list(local.node.leading_lines) if i == 0 else [cst.EmptyLine(indent=False)]
        lines.append(comment_line(f"{local.name} for " + (described or "replicated arguments")))
        out.append(node.with_changes(name=cst.Name(vname), leading_lines=lines))
    return cst.FlattenSentinel(out), renamed


class _SwapDefs(cst.CSTTransformer):
    def __init__(self, swaps: dict) -> None:
        super().__init__()
        self.swaps = swaps

    def on_leave(self, original, updated):
        new = self.swaps.get(original)
        if new is None:
            return updated
        if isinstance(new, cst.FlattenSentinel):  # versions may call other nested defs' versions
            return cst.FlattenSentinel([n.visit(self) for n in new.nodes])
        return new.visit(self) if isinstance(new, cst.FunctionDef) else new
