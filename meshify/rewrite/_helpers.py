"""Calls into helper functions of the same module, specialised per layout.

A ``@mesh`` function that calls ``attention(x, p)`` hands the helper its arguments'
layouts; the helper's body is rewritten for exactly those layouts into a version with a
short name (``attention__v1``, ``attention__v2``, numbered in order of first use), emitted
once after the helper and called from every site with that layout; one comment block above
a helper's versions maps each name to its layouts (``_emit.place_versions``).  The helper's
own hints, where present, are checked against what the caller passes.  Recursion is an error.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from functools import lru_cache

import libcst as cst

from meshify.annotate._types import Layout, consulted, note_consulted
from meshify.rewrite._collectives import axes_text
from meshify.rewrite._values import (
    Array,
    FunctionRef,
    LambdaRef,
    LocalRef,
    Opaque,
    Static,
    StructValue,
    TupleValue,
    Value,
)

__all__ = ["Specialization", "Specializations", "module_names", "signature_of", "version_name"]


@dataclass(slots=True)
class Specialization:
    """One helper rewritten for one tuple of argument layouts."""

    helper: str
    name: str
    node: cst.FunctionDef
    result: Value
    records: list = field(default_factory=list)
    uses: list[str] = field(default_factory=list)  # versions this one calls, transitively
    index_params: frozenset[str] = frozenset()  # parameters used as indices (integers), transitively
    key_params: frozenset[str] = frozenset()  # parameters used as jax.random keys, transitively
    static_reads: frozenset[tuple[str, str]] = frozenset()  # attributes read off the caller's statics
    pinned_reads: tuple = ()  # ((param, attr), dims) of those a hint pins
    dtype: tuple[str, ...] | None = None  # the result's dtype carriers, in the helper's names (_dtypes)
    dtypes: object = None  # the version's Dtypes, to map those carriers into a caller's names
    widened: bool = False  # returns a partial sum accumulated in float32
    globals_read: frozenset[str] = frozenset()  # module variables it reads, transitively
    alias: bool = False  # the same code as an earlier version of the helper: emitted once, under its name
    layouts: str = ""  # its arguments' layouts, as the comment block above the versions names them
    returns: str = ""  # its result's layout, likewise
    origin: str = ""  # the file and line of a helper of another module (``layers.py:12``), else ""
    items: tuple | None = None  # returns a tuple: each item's (carriers, widened) in the helper's names (_dtypes)
    code: tuple | None = None  # its node's _code_of, once a later version has compared with it (_version_code)
    consulted: frozenset[str] = frozenset()  # the dims whose rules its rewrite read, transitively
    fed: tuple = ()  # per record, the result items its value feeds (None: all); see _interp.result_items_fed
    #: A custom_jvp/custom_vjp helper's rule versions (the jvp rule; fwd and bwd), emitted after it, with what
    #: they call: the names to list after this one's.
    companions: tuple[str, ...] = ()
    #: Where its result holds an array or None known only when traced (_mappings.maybe_none_paths).
    maybe_results: frozenset[tuple] = frozenset()


@dataclass(slots=True)
class Specializations:
    """Every helper version a module needs, by (helper, signature), in creation order."""

    versions: dict[tuple, Specialization] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    #: Whether versions with the same code are merged (what a file holds); plan, which only costs the
    #: records, turns it off (writing each version out was a quarter of its rewrite time).
    merge_twins: bool = True
    #: Plan's versions across the layouts it tries: (helper, arguments, mesh, ...) -> each version made
    #: so far with the rules it read (dim -> candidates).  A version depends on the rules only through
    #: what it read of them (every read goes through ``Rules.candidates``, which notes it), so another
    #: layout whose rules agree on those dims has the same version.  None: not shared (a file's rewrite).
    shared: dict[tuple, list[tuple[tuple, Specialization]]] | None = None
    #: ``soft__v1.defjvp(_soft_jvp__v1)`` / ``clip__v1.defvjp(fwd__v1, bwd__v1)``: each custom rule's
    #: registration, with the module statement it follows in a file (the user's own registration).
    registrations: list[tuple[cst.CSTNode, cst.SimpleStatementLine]] = field(default_factory=list)
    #: Helpers whose own def stays in a file though nothing calls it (a custom rule's def: the user's
    #: registration names it).
    kept: set[str] = field(default_factory=set)

    def of_helper(self, helper: str) -> list[Specialization]:
        """Every version of ``helper``, aliases included, in creation order (the comment block)."""
        return [s for s in self.versions.values() if s.helper == helper]

    def by_helper(self, helper: str) -> list[Specialization]:
        """The versions of ``helper`` to emit, in creation order (one per distinct body)."""
        return [s for s in self.of_helper(helper) if not s.alias]

    def by_name(self, name: str) -> Specialization:
        return next(s for s in self.versions.values() if s.name == name)

    def restricted_to(self, names: Collection[str]) -> Specializations:
        """The versions named in ``names`` (what the emitted code calls) and their custom rules'
        registrations; the others are left out of a file."""
        return Specializations({k: s for k, s in self.versions.items() if s.name in names}, set(self.names),
                               self.merge_twins, None, [r for r in self.registrations if registered(r[1]) in names],
                               set(self.kept))


def registered(statement: cst.SimpleStatementLine) -> str:
    """The version a custom rule's registration is for: ``soft__v1`` of ``soft__v1.defjvp(...)``."""
    return statement.body[0].value.func.value.value  # type: ignore[attr-defined]


def signature_of(value: Value) -> object:
    """A hashable summary of what a specialisation depends on: dims, splits, partial axes."""
    if isinstance(value, Array):
        return ("array", value.layout.dims, value.layout.axes, tuple(sorted(value.layout.partial)))
    if isinstance(value, TupleValue):
        return ("tuple", tuple(signature_of(v) for v in value.items))
    if isinstance(value, StructValue):
        # (the kind: a dict of one key "*" is not a dict of keys known only when traced, whose "*" stands for all)
        return ("struct", value.cls, value.kind, tuple((k, signature_of(v)) for k, v in value.fields))
    if isinstance(value, Opaque):
        return ("opaque", value.shape)
    # A static the helper can read (axis=1, a dim's size) may change its layouts: part of the key.
    literal = value.literal if value.known else None
    try:
        hash(literal)
    except TypeError:
        literal = repr(literal)
    return ("static", value.known, literal, value.size_of, value.shape_of, value.product_of, value.param)


def version_name(helper: str, taken: Collection[str]) -> str:
    """``helper__v1``, ``helper__v2``, ...: the first such name not in ``taken``.

    Short and stable: versions are numbered per helper in order of first use, so a version added
    for another helper renames nothing; the comment block above the versions spells out the
    layouts each name stands for.  ``taken`` holds every identifier of the module, so that a
    version never shadows a user's name (nor a user's name a version).
    """
    n = 1
    while f"{helper}__v{n}" in taken:
        n += 1
    return f"{helper}__v{n}"


@lru_cache(maxsize=8)
def module_names(text: str) -> frozenset[str]:
    """Every identifier-like word of a module's text (comments and strings too: a superset of the
    names it binds or reads, which is what a new name must avoid)."""
    return frozenset(re.findall(r"[^\W\d]\w*", text))


def imported_helper(rw, func: cst.BaseExpression):
    """``(module, def)`` of a helper another module of the package defines that ``func`` names
    (``from .layers import mlp``; see ``_imports``), else None."""
    from meshify.rewrite._imports import resolve_call

    shadowed = set(rw.env) | set(rw.free) | set(rw.ctx.enclosing_names(rw.fn))
    return resolve_call(rw.ctx, func, shadowed)


def call_helper(rw, call, fn: cst.FunctionDef, home=None,
                blind: bool = False, owner: str | None = None) -> tuple[Value, cst.BaseExpression]:
    """Rewrites ``helper(args)`` into a call of the helper's version for these layouts.

    ``home``: the module that defines ``fn`` where it is not the caller's (an imported helper): the
    version is rewritten in that module's names, which are carried into the root's file (_imports).
    ``blind``: a loop body's version, whose caller cannot name its result's dtype (a partial sum
    accumulated in float32 is completed before it returns).
    ``owner``: the class of a method called on the caller's ``self`` (``self.norm(x)``, its receiver the
    call's first argument); its versions are functions of the module, after the class."""
    from meshify.errors import MeshifyError, UnsupportedError
    from meshify.rewrite._interp import FunctionRewriter, result_items_fed
    from meshify.rewrite._mappings import maybe_none, with_maybe_none

    home = home or rw.ctx
    name = fn.name.value
    label = f"{owner}.{name}" if owner is not None else name if home is home.root else f"{home.label}.{name}"
    if label in rw.stack:
        cycle = " -> ".join((*rw.stack[rw.stack.index(label):], label))
        raise rw.error(UnsupportedError, call.node, f"recursive call {cycle}",
                       "meshify specialises helpers per call and cannot recurse; unroll it, or use jax.lax.scan")
    if owner is None and (name in home.assignments or name in home.imports.imports):
        raise rw.error(UnsupportedError, call.node, f"{name!r} is a def and is also rebound at module level, so "
                       f"meshify cannot tell which function {name}() calls", "give the def and the rebinding "
                       "different names")
    call, replaced = _complete_widened(rw, call, fn)
    bound = _bind_arguments(rw, call, fn, home)
    _static_for_hint(rw, call, fn, home)
    passed = _passed_dtypes(rw, call, fn)
    unknown = frozenset(p for p, v in bound.items() if not isinstance(v, Static) and passed.get(p) is None)
    lead = _vmapped(rw, call, fn, home, bound)
    if lead is not None:  # @jax.vmap: the body sees one row of every argument
        bound = {p: _row(v) for p, v in bound.items()}
    from meshify.rewrite import _cotangents

    passed_nodes = _argument_nodes(call, fn)
    # (an argument that is an array or None, known only when traced: the version keeps both branches of an
    # ``if`` on it, so it is not the version of an array)
    maybe = frozenset(p for p, v in bound.items() if maybe_none(rw, v))
    # (a Python number or an array, known only when traced: read in the version only where both give one result)
    numbers = frozenset(p for p, v in bound.items() if any(v is n for n in rw.ctx.root.maybe_numbers))
    arguments = (tuple((p, signature_of(v)) for p, v in bound.items()), unknown, blind, lead,
                 _cotangents.key(rw, passed_nodes), maybe, numbers)
    key = (label, home.path, _context_key(rw), *arguments)
    registry: Specializations = rw.ctx.specializations
    spec = registry.versions.get(key)
    if spec is None and registry.shared is not None:
        spec = _shared_version(rw, registry.shared.get((label, home.path, _context_key(rw, rules=False), *arguments)))
        if spec is not None:
            registry.versions[key] = spec
    if spec is not None:
        note_consulted(spec.consulted)  # what this caller's rewrite reads through it
    else:
        sub = FunctionRewriter(home, fn, rw.mesh, rw.rules, stack=rw.stack, sizes=rw.sizes, declared=rw.declared,
                               assume_defaults=rw.assume_defaults, unknown_dtypes=unknown,
                               reduce_dtype=rw.reduce_dtype, regather=rw.regather)
        sub.stack = (*rw.stack, label)
        sub.blind_caller = blind
        sub.maybe_none_params = maybe
        sub.maybe_number_params = numbers
        _cotangents.enter(rw, sub, fn, passed_nodes, free=False)
        with consulted() as read:
            try:
                node, result = sub.run_helper(bound)
            except MeshifyError:
                if not _computes_from_statics(rw, call, fn, home, bound, lead, owner):
                    raise
                # a function of Python values alone (Swin's attention mask built in numpy from the image's
                # sizes): the same value on every device, as on one; called as written, its result whole
                return Opaque(), call.node
        custom = _custom_kind(home, fn)
        node = node.with_changes(decorators=_kept_decorators(rw, call, fn, home, vmapped=lead is not None,
                                                             custom=custom is not None, method=owner is not None))
        if lead is not None:  # the rows' results stacked again along the mapped dim; its records likewise
            _refuse_unnamed_rows(rw, call, fn, result, lead)
            result = _with_lead(result, lead)
            sub.records[:] = [replace(r, layout=_lead_layout(r.layout, lead)) for r in sub.records]
        others = registry.by_helper(label)
        # (a custom rule's version has its own rules: never merged with another layout's)
        code = _code_of(node) if others and registry.merge_twins and custom is None else None
        twin = next((s for s in others if _version_code(s) == code), None) if code is not None else None
        # identical code for other layouts: one version, under the earlier one's name
        # (a dunder method's version drops the leading underscores: called from a method, __call____v1 would
        # be name-mangled to _Model__call____v1)
        base = name.lstrip("_") or "method" if owner is not None else name
        vname = twin.name if twin is not None else version_name(base, _taken(home, registry))
        node = node.with_changes(name=cst.Name(vname), leading_lines=[])
        node, globals_read = _carried(home, node, frozenset(sub.globals_read), registry, twin)
        params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
        stars = {s.name.value for s in (fn.params.star_arg, fn.params.star_kwarg) if isinstance(s, cst.Param)}
        # (*args/**kwargs, or one item of them: ``ids[0]``)
        indices = frozenset(n for n in sub.index_names if n in params or n.split("[")[0] in stars)
        spec = Specialization(label, vname, node, result, list(sub.records), list(dict.fromkeys(sub.uses)),
                              indices, frozenset(sub.key_names & params),
                              frozenset(sub.static_reads), tuple(sub.pinned_reads.items()), sub.return_dtype,
                              sub.dtypes, sub.returns_widened, globals_read, twin is not None,
                              (f"rows of {lead[0]} (jax.vmap): " if lead else "") + layouts_text(bound),
                              returns_text(result), _origin(home, fn),
                              items=sub.return_items, code=code if home is home.root else None,
                              consulted=frozenset(read), fed=result_items_fed(fn, sub.records, home),
                              maybe_results=sub.maybe_results)
        registry.versions[key] = spec
        registry.names.add(vname)
        if custom is not None:  # its jvp rule, or its fwd and bwd, rewritten for these layouts
            spec.companions = _custom_rules(rw, call, fn, home, spec, bound, custom)
        if registry.shared is not None:
            registry.shared.setdefault((label, home.path, _context_key(rw, rules=False), *arguments), []).append(
                (tuple((d, rw.rules.unnoted(d)) for d in sorted(read)), spec))
    _mark_arguments(rw, call, fn, spec)
    rw.uses.extend([*spec.uses, spec.name, *spec.companions])
    rw.static_reads |= spec.static_reads
    rw.globals_read |= spec.globals_read
    rw.pinned_reads.update(spec.pinned_reads)
    rw.carried_records(spec.records, spec.name, [o.original for o in (*call.args, *call.kwargs.values())],
                       _argument_nodes(call, fn) if home is home.root else None, call=call.node, items=spec.fed)
    rw.dtypes.calls[call.node] = spec.dtypes.in_caller(spec.dtype, passed)
    if spec.widened:
        rw.dtypes.widened.add(call.node)
    if spec.items is not None:  # a, b = helper(...): each name takes its item's dtype and widened-ness
        rw.dtypes.call_items[call.node] = tuple((spec.dtypes.in_caller(c, passed), w) for c, w in spec.items)
    return with_maybe_none(rw, spec.result, spec.maybe_results), call.rebuild(replaced).with_changes(
        func=cst.Name(spec.name))


def _computes_from_statics(rw, call, fn: cst.FunctionDef, home, bound: dict, lead, owner) -> bool:
    """Whether a helper meshify could not rewrite may be called as written: a module-level ``def`` of the
    caller's file without decorators, every argument a Python value (no array, no function), so that it
    computes the same value on every device as on one device."""
    return (home is rw.ctx and owner is None and lead is None and not fn.decorators
            and all(isinstance(v, Static) for v in bound.values())
            and all(isinstance(o.value, Static) for o in (*call.args, *call.kwargs.values())))


def _argument_nodes(call, fn: cst.FunctionDef) -> dict[str, cst.CSTNode | None]:
    """Each parameter of ``fn`` -> the caller's node passed for it (None: its default, or ``*args``/``**kwargs``:
    no one node of the caller's is its value)."""
    p = fn.params
    out: dict[str, cst.CSTNode | None] = {q.name.value: None for q in (*p.posonly_params, *p.params, *p.kwonly_params)}
    out.update((s.name.value, None) for s in (p.star_arg, p.star_kwarg) if isinstance(s, cst.Param))
    positional = [q.name.value for q in (*p.posonly_params, *p.params)]
    for name, operand in (*zip(positional, call.args), *call.kwargs.items()):
        if name in out:
            out[name] = operand.original
    return out


def _taken(home, registry: Specializations) -> set[str]:
    """The names a new version must not take: every word of the root's file and of the helper's
    module, the versions so far and the names carried from other modules."""
    root = home.root
    return set(registry.names | module_names(root.text) | module_names(home.text)) | set(root.carried)


def _carried(home, node: cst.FunctionDef, globals_read: frozenset[str], registry: Specializations,
             twin) -> tuple[cst.FunctionDef, frozenset[str]]:
    """A version of another module's helper with the names it reads carried into the root's file (renamed
    where the root binds them otherwise); the module variables it reads, by their names there."""
    from meshify.rewrite._imports import carry_names

    if home is home.root:
        return node, globals_read
    node, renames, statements = carry_names(home, node, registry.names | home.root.bound_names | set(home.root.carried))
    home.root.carried.update(statements)
    return node, frozenset(renames.get(n, n) for n in globals_read)


def _origin(home, fn: cst.FunctionDef) -> str:
    """``layers.py:12``: where another module's helper is defined, relative to the root's folder."""
    import os

    if home is home.root:
        return ""
    where = os.path.relpath(os.path.abspath(home.path), os.path.dirname(os.path.abspath(home.root.path)))
    return f"{where.replace(os.sep, '/')}:{home.line(fn)}"


def _version_code(spec: Specialization) -> tuple[str, ...]:
    """``spec``'s :func:`_code_of`, written out once (each new version of its helper compares with it)."""
    if spec.code is None:
        spec.code = _code_of(spec.node)
    return spec.code


def _neutral_origin(value: Value) -> Value:
    """A partial sum passed to a helper, its origin said from inside the helper: the version is shared by
    every call with these layouts, whatever made the sum partial in each caller (a comment naming one
    caller's reason would be wrong for the others)."""
    if isinstance(value, Array) and value.layout.partial:
        return Array(value.layout, "from the caller")
    if isinstance(value, TupleValue) and any(isinstance(v, Array) and v.layout.partial for v in value.items):
        return TupleValue(tuple(Array(v.layout, "from the caller")
                                if isinstance(v, Array) and v.layout.partial else v for v in value.items))
    return value


def _code_of(fn: cst.FunctionDef) -> tuple[str, ...]:
    """What two versions of a helper must share to read the same: body, parameters, decorators."""
    module = cst.Module([])
    return (module.code_for_node(fn.body), module.code_for_node(fn.params),
            *(module.code_for_node(d) for d in fn.decorators))


def _complete_widened(rw, call, fn: cst.FunctionDef):
    """A partial sum accumulated in float32 passed to a helper is completed first: the helper could
    not name the dtype to cast it back to.  Returns the call with those arguments whole, and their
    converted nodes by position (for ``Call.rebuild``)."""
    from dataclasses import replace as _replace

    from meshify.rewrite._mappings import maybe_none_paths, with_maybe_none
    from meshify.rewrite._values import Array, Operand

    replaced: dict = {}
    args, kwargs = list(call.args), dict(call.kwargs)
    for i, operand in [*enumerate(call.args), *((k, v) for k, v in call.kwargs.items())]:
        value = operand.value
        purpose = f"{fn.name.value}() (a float32-accumulated partial sum is completed before a helper call)"
        if isinstance(value, TupleValue):  # (x @ w, y), or a name of such a tuple: its items completed
            done = rw.complete_widened(operand, purpose)
            if done is operand:
                continue
            node = done.node
        elif not (isinstance(value, Array) and value.layout.partial
                  and rw.dtypes.contains_widened(operand.original)):
            continue
        else:
            whole = value.layout.with_partial(())
            node = rw.convert(operand, whole, purpose)
            done = Operand(Array(whole, value.origin), operand.original, node)
        replaced[call.position(operand)] = node
        # (an array or None known only when traced stays one: the helper keeps both branches of an if on it)
        done = Operand(with_maybe_none(rw, done.value, maybe_none_paths(rw, value)), done.original, done.node)
        if isinstance(i, int):
            args[i] = done
        else:
            kwargs[i] = done
    if not replaced:
        return call, replaced
    return _replace(call, args=tuple(args), kwargs=kwargs), replaced


def _passed_dtypes(rw, call, fn: cst.FunctionDef) -> dict:
    """Helper parameter -> the dtype carriers of the caller's argument (see :mod:`_dtypes`)."""
    positional = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    passed = {**dict(zip(positional, call.args)), **call.kwargs}
    dtypes = {param: rw.dtypes.of(operand.original) for param, operand in passed.items()}
    for param, operand in passed.items():  # a tuple or list passed: xs[0], xs[-1] each have their item's
        items = rw.dtypes.items_of(operand.original, operand.value)
        for i, (c, _) in enumerate(items or ()):
            dtypes[f"{param}[{i}]"] = dtypes[f"{param}[-{len(items) - i}]"] = c  # type: ignore[arg-type]
    named = {*positional, *(p.name.value for p in fn.params.kwonly_params)}
    # *args and **kwargs: the carriers of every item passed there (the items' dtypes promote as theirs do)
    for star, operands in ((fn.params.star_arg, call.args[len(positional):]),
                           (fn.params.star_kwarg, [o for k, o in call.kwargs.items() if k not in named])):
        if isinstance(star, cst.Param):
            name = star.name.value
            carriers = [rw.dtypes.of(o.original) for o in operands]
            dtypes[name] = None if any(c is None for c in carriers) else \
                tuple(dict.fromkeys(n for c in carriers for n in c))  # type: ignore[union-attr]
            if star is fn.params.star_arg:  # xs[0], xs[-1]: each item's own
                for i, c in enumerate(carriers):
                    dtypes[f"{name}[{i}]"] = dtypes[f"{name}[-{len(carriers) - i}]"] = c
            else:  # kw["bias"]
                for k, c in zip([k for k in call.kwargs if k not in named], carriers):
                    dtypes[f"{name}[{k!r}]"] = dtypes[f'{name}["{k}"]'] = c
    return dtypes


def _context_key(rw, rules: bool = True) -> tuple:
    """What a version depends on beyond its arguments: the caller's mesh, rules and dim sizes
    (two @mesh functions of one module on different meshes never share a version); without the
    rules, for :attr:`Specializations.shared`."""
    return (rw.mesh, repr(rw.rules) if rules else None, tuple(sorted(rw.sizes.items())), rw.assume_defaults,
            rw.reduce_dtype, rw.regather)


def _shared_version(rw, made: list[tuple[tuple, Specialization]] | None) -> Specialization | None:
    """The version made for another layout whose rules agree with ``rw``'s on every dim it read."""
    for read, spec in made or ():
        if all(rw.rules.unnoted(d) == c for d, c in read):
            return spec
    return None


def _mark_arguments(rw, call, fn: cst.FunctionDef, spec: Specialization) -> None:
    """The caller's names passed where the helper wants indices or keys are indices or keys too
    (so that ``meshify verify`` feeds the caller's parameters integers and keys)."""
    p = fn.params
    positional = [q.name.value for q in (*p.posonly_params, *p.params)]
    passed = {**dict(zip(positional, call.args)), **call.kwargs}
    named = {*positional, *(q.name.value for q in p.kwonly_params)}
    for param, operand in passed.items():
        if param in spec.index_params:
            rw.mark_index(operand)
        if param in spec.key_params and isinstance(operand.original, cst.Name):
            rw.key_names.add(operand.original.value)
    # what *args / **kwargs take: each item used as an index (``ids[0]``), or all where the whole is
    if isinstance(p.star_arg, cst.Param):
        star, items = p.star_arg.name.value, call.args[len(positional):]
        for i, operand in enumerate(items):
            if {star, f"{star}[{i}]", f"{star}[-{len(items) - i}]"} & spec.index_params:
                rw.mark_index(operand)
    if isinstance(p.star_kwarg, cst.Param):
        star = p.star_kwarg.name.value
        for key, operand in call.kwargs.items():
            if key not in named and {star, f"{star}[{key!r}]"} & spec.index_params:
                rw.mark_index(operand)


def _static_for_hint(rw, call, fn: cst.FunctionDef, home) -> None:
    """An attribute of the caller's static parameter (``self.w``, ``cfg.table``) passed for a parameter
    the helper hints as an array: meshify reads such attributes as Python values, so the helper could
    only close over a whole copy; the error says so and how to name its dims (rather than that the
    caller "passes static")."""
    from meshify.errors import LayoutError
    from meshify.rewrite._hints import read_dims

    positional = [*fn.params.posonly_params, *fn.params.params]
    by_name = {p.name.value: p for p in (*positional, *fn.params.kwonly_params)}
    pairs = [*zip(positional, call.args), *((by_name.get(k), o) for k, o in call.kwargs.items())]
    for param, operand in pairs:
        if param is None or param.annotation is None or not isinstance(operand.value, Static):
            continue
        node = operand.original
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)):
            continue
        base = rw.env.get(node.value.value)
        if not (isinstance(base, Static) and base.param is not None):
            continue
        dims = read_dims(home, param.annotation.annotation)
        if dims is None:
            continue
        text, name = rw.ctx.code(node), param.name.value
        hint = "Tensor[" + ", ".join(repr(d).replace("'", '"') for d in dims) + "]"
        raise rw.error(LayoutError, node,
                       f"{fn.name.value}() hints {name} as [{', '.join(dims)}], but {text!r} is an attribute of "
                       f"the static parameter {base.param!r}: meshify reads it as a Python value, whose dims it "
                       f"cannot see (an array there would be closed over, a whole copy baked in)",
                       f"name its dims before the call, {node.attr.value}: {hint} = {text}, and pass "
                       f"{node.attr.value} (it is then an input, read again on every call)")


def _bind_arguments(rw, call, fn: cst.FunctionDef, home) -> dict[str, Value]:
    from meshify.errors import UnsupportedError

    params = fn.params
    star = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
    star_kw = params.star_kwarg.name.value if isinstance(params.star_kwarg, cst.Param) else None
    positional = [*params.posonly_params, *params.params]
    bound: dict[str, Value] = {}
    if len(call.args) > len(positional) and star is None:
        raise rw.error(UnsupportedError, call.node, f"{fn.name.value}() takes {len(positional)} positional "
                       f"arguments but {len(call.args)} were given", f"pass {fn.name.value}() one value per parameter")
    shadowed = set(rw.env) | set(rw.free) | set(rw.ctx.enclosing_names(rw.fn))
    named = {p.name.value for p in (*positional, *params.kwonly_params)}
    extra: list[Value] = []  # *args
    extra_kw: list[tuple[str, Value]] = []  # **kwargs
    for i, (param, operand) in enumerate([*zip([p.name.value for p in positional] + [None] * len(call.args),
                                               call.args), *call.kwargs.items()]):
        value = operand.value
        if isinstance(value, Static | Opaque) and not getattr(value, "known", False):  # mlp(x, w, jax.nn.gelu)
            ref = function_ref(rw.ctx, operand.original, shadowed)
            if ref is not None and (not ref.helper or home is rw.ctx):
                value = Static.of(ref)
        if param is None:
            extra.append(value)
        elif param not in named and i >= len(call.args):
            if star_kw is None:
                raise rw.error(UnsupportedError, call.node, f"{fn.name.value}() has no parameter {param!r}",
                               f"pass one of {', '.join(sorted(named))}")
            extra_kw.append((param, value))
        else:
            bound[param] = _neutral_origin(value)
    if star is not None:
        bound[star] = TupleValue(tuple(extra))
    if star_kw is not None:
        bound[star_kw] = StructValue("dict", tuple(extra_kw), "dict")
    for param in [*positional, *params.kwonly_params]:
        if param.name.value not in bound:
            if param.default is None:
                raise rw.error(UnsupportedError, call.node,
                               f"{fn.name.value}() is missing argument {param.name.value!r}",
                               f"pass {param.name.value!r}, or give it a default")
            bound[param.name.value] = _default(home, param)
    order = [p.name.value for p in positional] + ([star] if star else []) \
        + [p.name.value for p in params.kwonly_params] + ([star_kw] if star_kw else [])
    return {name: bound[name] for name in order}


def function_ref(ctx, node: cst.BaseExpression, shadowed: Collection[str] = ()) -> FunctionRef | None:
    """What ``node`` names where it is a function meshify can call for the helper it is passed to: a
    def of the module (``swish``), or a function with a rule (``jax.nn.gelu``, ``jnp.tanh``); else None.
    ``shadowed``: names the caller binds itself (a local named like a module def is not that def)."""
    from meshify.rewrite.rules import REGISTRY

    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value not in shadowed \
            and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return _table_entry(ctx, node.value.value, node.slice[0].slice.value, shadowed)
    if not isinstance(node, cst.Name | cst.Attribute):
        return None
    if isinstance(node, cst.Name):
        if node.value in shadowed:
            return None
        if node.value in ctx.functions and node.value not in ctx.imports.imports \
                and node.value not in ctx.assignments:
            return FunctionRef(node.value, helper=node.value, path=ctx.path)
    names = frozenset(n for n in ctx.qualified_names(node) if n in REGISTRY)
    return FunctionRef(ctx.code(node), names) if names else None


def _table_entry(ctx, table: str, key: cst.BaseExpression, shadowed: Collection[str]) -> FunctionRef | None:
    """``ACT["gelu"]``: the function a module-level dict literal holds under a literal key, if meshify can
    call it."""
    import ast

    literal = ctx.assignments.get(table)
    if not isinstance(literal, cst.Dict) or table in ctx.declared_global:
        return None
    try:
        wanted = ast.literal_eval(ctx.code(key))
        for element in literal.elements:
            if isinstance(element, cst.DictElement) and ast.literal_eval(ctx.code(element.key)) == wanted:
                return function_ref(ctx, element.value, shadowed)
    except (ValueError, SyntaxError):
        return None
    return None


def _default(home, param: cst.Param) -> Value:
    """A helper parameter left to its default: a literal is a known static; a module-level array with
    a hint (``b=B`` after ``B: Tensor["d"] = ...``) is that whole array, with those dims, as ``B`` in the
    body would be; anything else (``b=jnp.arange(8.0)``) may be an array: opaque, never a scalar
    passed through.  ``home``: the module defining the helper, where its defaults are evaluated."""
    import ast

    from meshify.annotate._types import Layout

    default = param.default
    if isinstance(default, cst.Name) and default.value in home.annotated_arrays:
        return Array(Layout.replicated(home.annotated_arrays[default.value]))
    ref = function_ref(home, default) if default is not None else None
    if ref is not None:  # act=jax.nn.gelu
        return Static.of(ref)
    try:
        return Static.of(ast.literal_eval(home.code(default)))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    known = _constant(home, default)  # eps=EPS, eps=CFG.eps: a module constant, or a field of a config of them
    return Static.of(known) if known is not _UNKNOWN else Opaque(_built_shape(home, default))


_UNKNOWN = object()


def _constant(home, node) -> object:
    """The value a default naming a module constant reads (``EPS``, ``CFG.eps`` of ``CFG = Config()``, a
    NamedTuple of literals), where the module proves it (``ModuleContext.global_value``); else ``_UNKNOWN``."""
    from meshify.rewrite._names import dotted_name

    dotted = dotted_name(node)
    if dotted is None:
        return _UNKNOWN
    root, *attrs = dotted.split(".")
    value = home.global_value(root, as_written=True)  # (a default is evaluated when the def runs)
    if not (isinstance(value, Static) and value.known):
        return _UNKNOWN
    found = value.literal
    for attr in attrs:
        try:
            found = getattr(found, attr)
        except AttributeError:
            return _UNKNOWN
    return found if isinstance(found, int | float | bool | str | tuple | type(None)) else _UNKNOWN


#: Constructors whose result's shape a default argument spells out in literals.
_FILLED = frozenset(f"{m}.{f}" for m in ("jax.numpy", "numpy") for f in ("zeros", "ones", "empty", "full"))
_ARANGE = frozenset({"jax.numpy.arange", "numpy.arange"})


def _built_shape(home, node: cst.BaseExpression) -> tuple[int, ...] | None:
    """The shape of ``jnp.arange(8.0)`` / ``jnp.zeros((4, 8))`` / ``np.full((2, 3), 0.5)`` written with
    literals (a default argument: a whole array, which then lines up with named dims by position, as
    ``jnp.zeros((4, 8))`` in a body does); None for anything else."""
    import ast

    from meshify.rewrite.rules.constructors import arange_length

    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Name | cst.Attribute):
        return None
    names = home.qualified_names(node.func)
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    try:  # a shape, or arange's bounds (full's fill value may be anything)
        values = [ast.literal_eval(home.code(v)) for v in positional[:1 if names & _FILLED else 3]]
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if names & _FILLED and values:
        shape = values[0] if isinstance(values[0], tuple | list) else (values[0],)
        return tuple(shape) if all(type(n) is int and n >= 0 for n in shape) else None
    if names & _ARANGE and 1 <= len(values) <= 3 and all(type(v) in (int, float) for v in values):
        length = arange_length(values)
        return (length,) if length is not None else None
    return None


#: Decorators a helper version keeps as they are: they change how JAX runs (or names) the function, not
#: what it computes (``jax.jit`` may take static_argnums through functools.partial).
_KEPT_DECORATORS = frozenset({"jax.jit", "jax.checkpoint", "jax.remat", "jax.named_call", "jax.named_scope"})


def _vmap_decorator(home, fn: cst.FunctionDef) -> cst.Decorator | None:
    """``@jax.vmap`` (bare: every argument mapped along its first dim) on ``fn``, else None."""
    for decorator in fn.decorators:
        if isinstance(decorator.decorator, cst.Name | cst.Attribute) \
                and home.qualified_names(decorator.decorator) & {"jax.vmap"}:
            return decorator
    return None


def _vmapped(rw, call, fn: cst.FunctionDef, home, bound: dict[str, Value]) -> tuple[str, tuple[str, ...]] | None:
    """The dim ``@jax.vmap`` maps ``fn``'s arguments along (their first) and its mesh axes, or None where
    ``fn`` is not decorated so; every argument must be an array of that leading dim (its rows are what the
    body sees), else an error with a fix."""
    from meshify.errors import UnsupportedError

    if _vmap_decorator(home, fn) is None:
        return None
    leads = set()
    for param, value in bound.items():
        arrays = [value] if not isinstance(value, TupleValue) else list(value.items)
        for v in arrays:
            if not isinstance(v, Array) or not v.dims:
                what = "a Python value" if isinstance(v, Static) else "an array of dims meshify cannot name" \
                    if isinstance(v, Opaque) else "a scalar" if isinstance(v, Array) else "a pytree"
                raise rw.error(UnsupportedError, call.node, f"{fn.name.value}() is under @jax.vmap and its argument "
                               f"{param!r} is {what}", "pass named arrays that share their first dim (vmap maps "
                               "each along it); bind other values with functools.partial or a closure")
            leads.add((v.dims[0], v.layout.axes[0]))
    if len(leads) != 1:
        raise rw.error(UnsupportedError, call.node, f"{fn.name.value}() is under @jax.vmap, whose arguments' first "
                       f"dims differ ({', '.join(sorted(d for d, _ in leads)) or 'none'})",
                       "map arrays that share their first dim, or write the batched code without jax.vmap")
    return leads.pop()


def _row(value: Value) -> Value:
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_row(v) for v in value.items))
    if isinstance(value, Array):
        layout = value.layout
        return Array(Layout(layout.dims[1:], layout.axes[1:], layout.partial), value.origin)
    return value


def _lead_layout(layout, lead: tuple[str, tuple[str, ...]]):
    return Layout((lead[0], *layout.dims), (lead[1], *layout.axes), layout.partial)


def _refuse_unnamed_rows(rw, call, fn: cst.FunctionDef, value: Value, lead: tuple[str, tuple[str, ...]]) -> None:
    """A ``@jax.vmap`` helper mapped along a split dim whose result (an item of it) has dims meshify cannot
    infer (a function without a rule, on the rows it sees whole): each device's rows differ, so it is no
    whole value; refused, naming the fix (a hint naming the row's dims)."""
    from meshify.errors import UnsupportedError

    items = value.items if isinstance(value, TupleValue) else (value,)
    if not lead[1] or not any(isinstance(v, Opaque) for v in items):
        return
    raise rw.error(UnsupportedError, call.node, f"{fn.name.value}() is under @jax.vmap along {lead[0]!r}, split "
                   f"over {axes_text(lead[1])}, and returns an array of dims meshify cannot infer: each device "
                   "holds other rows of it", f"name the dims of one row of its result: a return hint on "
                   f"{fn.name.value}() (-> Tensor[...]), or y: Tensor[...] = ... before returning y")


def _with_lead(value: Value, lead: tuple[str, tuple[str, ...]]) -> Value:
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_with_lead(v, lead) for v in value.items))
    if isinstance(value, Array):
        return Array(_lead_layout(value.layout, lead), value.origin)
    if isinstance(value, Opaque) and value.shape is None:
        return value
    raise AssertionError(f"a vmapped helper's result {value!r}")  # pragma: no cover - checked by the caller


_CUSTOM = {"jax.custom_jvp": "jvp", "jax.custom_vjp": "vjp"}


def _custom_kind(home, fn: cst.FunctionDef) -> str | None:
    """"jvp" / "vjp" for a helper under a bare ``@jax.custom_jvp`` / ``@jax.custom_vjp``, else None."""
    for decorator in fn.decorators:
        if isinstance(decorator.decorator, cst.Name | cst.Attribute):
            for name in home.qualified_names(decorator.decorator) & set(_CUSTOM):
                return _CUSTOM[name]
    return None


def _registration(home, helper: str, method: str) -> tuple[cst.CSTNode, list[cst.FunctionDef]] | None:
    """The module's ``@helper.defjvp`` def, or its ``helper.defjvp(rule)`` / ``helper.defvjp(fwd, bwd)``
    statement: (that statement, the rule defs it names), else None."""
    for stmt in home.module.body:
        if isinstance(stmt, cst.FunctionDef) and any(
                isinstance(d.decorator, cst.Attribute) and isinstance(d.decorator.value, cst.Name)
                and d.decorator.value.value == helper and d.decorator.attr.value == method for d in stmt.decorators):
            return stmt, [stmt]
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
            call = stmt.body[0].value
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
                    and isinstance(call.func.value, cst.Name) and call.func.value.value == helper \
                    and call.func.attr.value == method:
                names = [a.value.value if isinstance(a.value, cst.Name) and a.keyword is None else None
                         for a in call.args]
                defs = [home.functions.get(n) if n is not None else None for n in names]
                return (stmt, defs) if defs and all(d is not None for d in defs) else (stmt, [])
    return None


def _custom_rules(rw, call, fn: cst.FunctionDef, home, spec: Specialization, bound: dict[str, Value],
                  kind: str) -> tuple[str, ...]:
    """The versions of a custom_jvp helper's jvp rule, or of a custom_vjp helper's fwd and bwd, for the
    layouts ``spec`` was made for, and their registration on ``spec``'s version.  A tangent or cotangent
    has its primal's layout (a partial sum the rule leaves is completed: the cotangent of a whole argument
    is the whole sum); its name, and the names the rules call, in the order to emit them."""
    from meshify.errors import UnsupportedError

    name = fn.name.value
    method = "defjvp" if kind == "jvp" else "defvjp"
    p = fn.params
    params = [q.name.value for q in (*p.posonly_params, *p.params)]
    arrays = [bound.get(q) for q in params]
    if p.kwonly_params or isinstance(p.star_arg, cst.Param) or isinstance(p.star_kwarg, cst.Param) \
            or len(bound) != len(params) or not all(isinstance(v, Array) for v in arrays) \
            or not isinstance(spec.result, Array):
        raise rw.error(UnsupportedError, call.node, f"{name}() is a jax.custom_{kind} function of "
                       f"{', '.join(f'{q}: {type(v).__name__.lower()}' for q, v in zip(params, arrays))} returning "
                       f"{type(spec.result).__name__.lower()}: meshify rewrites custom rules for arrays in, one "
                       "array out", f"pass {name}() arrays only (bind other values in a closure) and return one array")
    primals = [v.layout.with_partial(()) for v in arrays]  # type: ignore[union-attr]
    if any(v.layout.partial for v in arrays) or spec.result.layout.partial:  # type: ignore[union-attr]
        raise rw.error(UnsupportedError, call.node, f"{name}(), a jax.custom_{kind} function, is passed or returns "
                       "a partial sum (its rules would see one device's part)",
                       f"complete it first: reduce before calling {name}(), and inside it before returning")
    found = _registration(home, name, method)
    if found is None or not found[1]:
        raise rw.error(UnsupportedError, call.node, f"{name}() is a jax.custom_{kind} function whose "
                       f"{name}.{method}(...) meshify cannot find among the module's statements",
                       f"register its rules at module level: {name}.{method}(...) naming module-level defs")
    anchor, rules = found
    out = spec.result.layout
    tuple_of = lambda layouts: TupleValue(tuple(Array(l) for l in layouts))
    if kind == "jvp":
        rule, = rules
        names = [q.name.value for q in (*rule.params.posonly_params, *rule.params.params)]
        if len(names) != 2:
            raise rw.error(UnsupportedError, rule, f"{rule.name.value}() is a jvp rule of {len(names)} parameters",
                           "take (primals, tangents)")
        made = [_rule_version(rw, home, rule, {names[0]: tuple_of(primals), names[1]: tuple_of(primals)},
                              (out, out), f"{name}'s jvp rule (the primal and tangent out)")]
    else:
        fwd, bwd = rules
        # (fwd takes the primal's arguments by position: its parameters may be named otherwise)
        fwd_names = [q.name.value for q in (*fwd.params.posonly_params, *fwd.params.params)]
        if len(fwd_names) != len(params) or fwd.params.kwonly_params or isinstance(fwd.params.star_arg, cst.Param):
            raise rw.error(UnsupportedError, fwd, f"{fwd.name.value}() is the fwd rule of {name}() but takes "
                           f"{len(fwd_names)} positional parameters where {name}() takes {len(params)}",
                           f"give {fwd.name.value}() the parameters of {name}(), in order")
        made = [_rule_version(rw, home, fwd, dict(zip(fwd_names, (Array(l) for l in primals))), (out, None),
                              f"{name}'s fwd (its output, then residuals)")]
        residuals = made[0][1].items[1]  # type: ignore[union-attr]
        names = [q.name.value for q in (*bwd.params.posonly_params, *bwd.params.params)]
        if len(names) != 2:
            raise rw.error(UnsupportedError, bwd, f"{bwd.name.value}() is a bwd rule of {len(names)} parameters",
                           "take (residuals, g)")
        made.append(_rule_version(rw, home, bwd, {names[0]: residuals, names[1]: Array(out)}, tuple(primals),
                                  f"{name}'s bwd (one cotangent per argument)"))
    registry: Specializations = rw.ctx.specializations
    registry.kept.update([name, *(r.name.value for r in rules)])  # (the user's registration names them)
    statement = cst.parse_statement(f"{spec.name}.{method}({', '.join(s.name for s, _ in made)})")
    registry.registrations.append((anchor, statement))  # type: ignore[arg-type]
    return tuple(dict.fromkeys(n for s, _ in made for n in (*s.uses, s.name)))


def _rule_version(rw, home, rule: cst.FunctionDef, bound: dict[str, Value], items: tuple, purpose: str):
    """A custom rule ``rule`` rewritten for ``bound``, its returned tuple's items in ``items``' layouts (None:
    any value); (its Specialization, its result)."""
    from meshify.rewrite._interp import FunctionRewriter

    registry: Specializations = rw.ctx.specializations
    label = rule.name.value if home is home.root else f"{home.label}.{rule.name.value}"
    sub = FunctionRewriter(home, rule, rw.mesh, rw.rules, stack=rw.stack, sizes=rw.sizes, declared=rw.declared,
                           assume_defaults=rw.assume_defaults, reduce_dtype=rw.reduce_dtype, regather=rw.regather)
    sub.stack = (*rw.stack, label)
    sub._forced_items, sub._forced_purpose = items, purpose
    node, result = sub.run_helper(bound)
    vname = version_name(rule.name.value, _taken(home, registry))
    node = node.with_changes(name=cst.Name(vname), leading_lines=[], decorators=[])
    node, _ = _carried(home, node, frozenset(sub.globals_read), registry, None)
    spec = Specialization(label, vname, node, result, [], list(dict.fromkeys(sub.uses)),
                          static_reads=frozenset(sub.static_reads), globals_read=frozenset(sub.globals_read),
                          layouts=layouts_text(bound), returns=returns_text(result), origin=_origin(home, rule))
    registry.versions[(label, home.path, "custom rule", vname)] = spec
    registry.names.add(vname)
    rw.static_reads |= spec.static_reads
    rw.globals_read |= spec.globals_read
    return spec, result


def _kept_decorators(rw, call, fn: cst.FunctionDef, home, vmapped: bool = False,
                     custom: bool = False, method: bool = False) -> list[cst.Decorator]:
    """The decorators the helper's version keeps; one that changes what the helper computes
    (``jax.custom_vjp``, ``jax.vmap``, a user's wrapper) is an error: the version would drop it.
    ``home``: the module defining ``fn``, whose imports name its decorators."""
    from meshify.errors import UnsupportedError
    from meshify.rewrite._hints import MESH_NAMES

    kept = []
    for decorator in fn.decorators:
        target = decorator.decorator
        names = home.qualified_names(target.func if isinstance(target, cst.Call) else target)
        if isinstance(target, cst.Call) and names & {"functools.partial"} and target.args:
            names = home.qualified_names(target.args[0].value)
        if names & MESH_NAMES:
            continue  # a @mesh function called from another runs on the caller's mesh
        if method and home.code(target) in ("staticmethod", "builtins.staticmethod", "property") \
                and not home.binds(home.code(target)):
            continue  # a staticmethod's version is a function of the module; a property's, called with self
        if names & _KEPT_DECORATORS or vmapped and decorator is _vmap_decorator(home, fn) \
                or custom and names & set(_CUSTOM):
            kept.append(decorator)
            continue
        text = home.code(target)
        raise rw.error(UnsupportedError, call.node,
                       f"{fn.name.value}() is decorated with @{text}, which meshify cannot carry into the version "
                       f"it specialises for these layouts (it would be dropped)",
                       f"call {fn.name.value}() outside the @mesh function, or remove @{text} (meshify keeps "
                       "@jax.jit and @jax.checkpoint)")
    return kept


def layouts_text(bound: dict[str, Value]) -> str:
    """``x: [batch/'batch', d_model]; p.w: [d_model, d_ff/'model']``: each array argument's layout."""
    return "; ".join(f"{path}: {layout}" for p, v in bound.items() for path, layout in _described(p, v)) \
        or "replicated arguments"


def returns_text(result: Value) -> str:
    """The result's layout: ``[batch/'batch', d_model]``; a tuple's or a pytree's item by item."""
    if isinstance(result, Array):
        return result.layout.describe()
    if isinstance(result, TupleValue):
        return "(" + ", ".join(returns_text(v) for v in result.items) + ("," if len(result.items) == 1 else "") + ")"
    if isinstance(result, StructValue):
        return f"{result.cls}(" + ", ".join(f"{k}={returns_text(v)}" for k, v in result.fields) + ")"
    return "[unknown dims]" if isinstance(result, Opaque) else "static"


def _described(path: str, value: Value) -> list[tuple[str, str]]:
    if isinstance(value, Array):
        return [(path, value.layout.describe())]
    if isinstance(value, StructValue):
        return [d for k, v in value.fields for d in _described(f"{path}.{k}", v)]
    if isinstance(value, TupleValue):
        return [d for i, v in enumerate(value.items) for d in _described(f"{path}[{i}]", v)]
    if isinstance(value, Static) and isinstance(value.literal, FunctionRef):  # versions differ by it
        return [(path, value.literal.text)]
    if isinstance(value, Static) and isinstance(value.literal, LambdaRef):
        return [(path, "a functools.partial" if value.literal.partial else "a lambda")]
    if isinstance(value, Static) and isinstance(value.literal, LocalRef):
        return [(path, f"{value.literal.local.name}()")]
    return []
