"""Dim and layout inference over one ``@mesh`` function, planning collectives as it goes.

The walk is an abstract interpretation of the body, statement by statement: each
expression is evaluated to a :class:`Value` (dims + layout, or a static Python value)
and to its rewritten CST node.  Op rules (``rules/``, one module per family) decide what each operand must
look like; :meth:`FunctionRewriter.convert` inserts the collectives that make it so.

A deferred partial sum held in a variable is materialised by a statement of its own,
``h = mr.psum(h, "model")``, placed right before the first statement that needs
it whole; the statement is then walked again with ``h`` whole.  Every other conversion
wraps the operand inline.  After this pass: every value's layout is known, every
statement of the body is either unchanged (byte-identical) or carries a ``# meshify:``
comment for each collective inserted into it, and the return value has the layout of
the return hint.
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import libcst as cst

from meshify.annotate._types import (
    BROADCAST,
    INFERRED,
    Layout,
    MeshSpec,
    Rules,
    hint_dims,
    literal_size,
    renamed_dims,
    unify_dims,
    unsliced,
)
from meshify.errors import LayoutError, MeshifyError, UnsupportedError
from meshify.rewrite import rules as _rules  # noqa: F401  (registers every op rule)
from meshify.rewrite._bodies import run_walks
from meshify.rewrite._collectives import axes_text, collective
from meshify.rewrite._containers import (
    appending,
    closure_names,
    common_item,
    listed_items,
    listed_names,
    one_layout,
    removed,
    sequence_item,
    sequence_of,
    shares,
    stored,
)
from meshify.rewrite._context import ModuleContext, _bound_names, bound_names
from meshify.rewrite._dtypes import Carriers, Dtypes, Items, KeyedItems, like_node, merge_items
from meshify.rewrite._evaluate import (
    BranchLayouts,
    binary_operator,
    evaluate,
    is_reshape,
    none_test,
    number_or_array,
    refuse_number_or_array,
    reshape_call,
)
from meshify.rewrite._hints import (
    ITEMS,
    StructHint,
    hint_dtype,
    mesh_decorator,
    read_dims,
    read_example,
    read_helper_items,
    read_mixed_return,
    read_reduce_dtype,
    read_regather,
    read_return_dims,
    read_sequence_return,
    read_struct,
    read_struct_return,
)
from meshify.rewrite._liveness import rebound_first
from meshify.rewrite._mappings import (
    mapping_item,
    mapping_of,
    maybe_none,
    maybe_none_paths,
    maybe_pytree,
    refuse_maybe_none,
)
from meshify.rewrite._names import dotted_name, read_again
from meshify.rewrite._nested import LocalDef, bound_function, define, emit_defs, local_def, refuse_value
from meshify.rewrite._optional import optional_inner
from meshify.rewrite._plan import Step, plan_conversion, step_result
from meshify.rewrite._templates import (
    apply_step,
    axes_node,
    call_template,
    comment_line,
    int_node,
    item_node,
    psum_statement,
)
from meshify.rewrite._values import (
    Array,
    FunctionRef,
    Opaque,
    Operand,
    Static,
    StructValue,
    TracedLoop,
    TupleValue,
    UnknownLoop,
    Value,
    holds_partial,
    is_none,
)
from meshify.rewrite.rules._api import RuleContext
from meshify.rewrite.rules.contractions import OBSERVERS as CONTRACTION_OBSERVERS
from meshify.rewrite.rules.elementwise import entries_template
from meshify.rewrite.rules.shapes import merge_renamed, reshape_named

__all__ = ["OPERAND_OBSERVERS", "FunctionPlan", "FunctionRewriter", "Operand", "Record", "TracedLoop"]

#: Called as ``observe(rw, converts)`` with each op's operand conversions (the :class:`Convert` s a rule
#: asked for, None entries dropped), before they are made.  ``meshify plan`` finds there the operands
#: JAX broadcasts (``pvary``) over mesh axes they do not vary over, whose cotangents the backward pass
#: all-reduces; the rewrite itself does not use it.
OPERAND_OBSERVERS: list = []


def _inferred_to_hinted(value: Value, dims: tuple[str, ...]) -> bool:
    """Whether a helper's hint ``dims`` may take ``value`` as it is: its dims are the hint's, or names meshify chose
    (``head_dim?[::2]?`` of a rotary table built from ``jnp.arange(0, head_dim, 2)``), whole on every device, where
    they differ; the value keeps its own names (the hint asks JAX to check no size)."""
    return isinstance(value, Array) and len(value.dims) == len(dims) and any(a != b for a, b in zip(value.dims, dims)) \
        and all(a == b or (a.endswith(INFERRED) and not axes)
                for a, b, axes in zip(value.dims, dims, value.layout.axes))


@dataclass(frozen=True, slots=True)
class Record:
    """One inserted collective or local slice, for comments and ``explain``.

    ``layout`` is the layout of the value entering the collective, so that its local
    shape (and so the bytes moved) follows from the dim sizes alone.
    """

    line: int
    kind: str
    axes: tuple[str, ...]
    dim: str
    reason: str
    layout: Layout
    #: The enclosing loops' trip counts, outermost first: an int, or the dim whose size it is
    #: (wrapped in TracedLoop for loops JAX runs rather than Python unrolls).
    loops: tuple[int | str | TracedLoop | UnknownLoop | None, ...] = ()
    #: An all_gather made as varying (a weight gathered beside values split over its axes: FSDP's).
    varying: bool = False
    #: Recorded in a loop body that ``mr.regathering`` wraps (it gathers weights as FSDP's): the backward
    #: pass gathers them again.
    regathered: bool = False
    #: What the collective runs on, for ``explain`` to count one collective per distinct value as XLA's
    #: common-subexpression pass leaves it: the operand's code with the version of each name it reads
    #: (a name rebound is another value), the rule's other operands, the scope; None: never merged.
    value: tuple | None = None
    #: Per entry of ``loops``: whether the value is the same in every iteration (a Python loop that binds
    #: none of the names it reads): XLA computes it once, however often the unrolled loop asks.
    invariant: tuple[bool, ...] = ()
    #: The index of the statement of the function's body it serves (-1: none), for :func:`dead_statements`.
    statement: int = -1
    #: The dtype of the collective's operand where the code says it (a comparison's ``bool``, an integer
    #: parameter's ``int32``, an ``astype``'s); None: the function's float dtype (explain's itemsize).
    #: ``Collective.moves`` tells what its instructions move.
    dtype: str | None = None
    #: The name a psum completing a partial sum rebinds (``v = mr.psum(v, ...)`` before the statement that
    #: needs it whole): live wherever a live statement reads that name later, even if its statement is dead.
    binds: str = ""
    #: The names of the caller's ``a, b = helper(...)`` this record of the helper's feeds alone (the items of
    #: the result it computes): live only where one of them is read later (``_, aux = f(x)``, aux unread:
    #: XLA drops what computes it).  ``items``: while carried, (the call, the result items it feeds).
    feeds: tuple[str, ...] = ()
    items: tuple | None = None
    #: The item of a helper's returned tuple literal whose evaluation made it (-1: none or another).
    item: int = -1


@dataclass(frozen=True, slots=True)
class Binding:
    """A name bound to an array by a statement, with its layout (for ``explain``)."""

    line: int
    name: str
    layout: Layout


@dataclass(frozen=True)
class OutByStatics:
    """The out_specs of a function that returns other results on other paths chosen by ``if`` statements on
    static parameters: the layouts of the first case whose conditions (source text, all must hold) hold
    for a call's ``params``, else ``otherwise``."""

    params: tuple[str, ...]
    cases: tuple[tuple[tuple[str, ...], Any], ...]
    otherwise: Any


@dataclass(slots=True)
class FunctionPlan:
    """What rewriting one function produced."""

    name: str
    mesh: MeshSpec
    rules: Rules
    params: dict[str, tuple[str, ...]]
    in_layouts: dict[str, Layout]
    out_layouts: tuple[Layout, ...] | Layout | OutByStatics | None
    records: list[Record] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    node: cst.FunctionDef | None = None
    #: Parameters used as indices (lookups, one_hot): they hold integers.
    index_params: set[str] = field(default_factory=set)
    #: Parameters used as jax.random keys.
    key_params: set[str] = field(default_factory=set)
    #: Parameters used as masks (``jnp.where``'s condition, an attention ``mask=``): verify draws booleans.
    mask_params: set[str] = field(default_factory=set)
    #: Static parameter -> attribute the body reads off it (``self.w``) -> the dims a hint pins it to
    #: (``w: Tensor["d", "f"] = self.w``) or None: at call time an array there is passed in as an input.
    static_reads: dict[str, dict[str, tuple[str, ...] | None]] = field(default_factory=dict)
    #: Module variables the function and its helpers read, by name.
    globals_read: tuple[str, ...] = ()
    #: Those of them that are constants of the module (``AXIS = 1``, no ``global`` statement): the value
    #: the rewrite took (an axis, a shape, an ``if`` may depend on it), checked at every call.
    global_values: dict[str, object] = field(default_factory=dict)
    #: Those that may hold arrays (``TABLE: Tensor["n"] = ...``, ``W = jnp.ones(...)``): no value was taken for
    #: them; the program is keyed on their identity, so one rebound from outside is read by the next call.
    arrays_read: dict[str, int | None] = field(default_factory=dict)
    #: Those whose value may decide the rewrite (all but floats): a converted file refuses a call after one
    #: is rebound from outside; the decorator path rewrites the function for any of them rebound.
    decisive_values: dict[str, object] = field(default_factory=dict)
    #: Module aliases of other modules' functions the body calls by their rules -> the function's qualified name.
    aliases: dict[str, str] = field(default_factory=dict)
    #: ``@mesh(reduce_dtype=...)``: low-precision partial sums are all-reduced in it (None: float32).
    reduce_dtype: str | None = None
    #: Names of the helper versions this function calls, directly or not, in emission order.
    helpers: list[str] = field(default_factory=list)
    #: Array parameters in order; pytree ones map to their StructHint (their leaves are in ``params``
    #: as ``name.field``), plain ones to None.
    args: dict[str, StructHint | None] = field(default_factory=dict)
    #: The static flags' values this version is rewritten for (``_driver._versions``), else empty.
    flags: dict[str, bool] = field(default_factory=dict)
    #: A flag defaulting to None -> where a call passing None reads its value (``"config.output_attentions"``).
    fallbacks: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class WalkState:
    """A snapshot of the walk (:meth:`FunctionRewriter.mark`): the environment and how far each
    record, binding, use and comment list had grown, and the names learnt so far."""

    env: dict[str, Value]
    records: int
    bindings: int
    uses: int
    comments: int
    index_names: frozenset[str]
    key_names: frozenset[str]
    static_reads: frozenset[tuple[str, str]]
    pinned_reads: dict[tuple[str, str], tuple[str, ...]]
    dtypes: tuple[dict, frozenset[str]]
    own_lists: frozenset[str] = frozenset()
    results: int = 0
    jumps: tuple[int, ...] = ()


@dataclass(slots=True)
class _Jumps:
    """The ``break`` and ``continue`` statements of the Python loop being walked: the values the loop's
    names hold at each (``start``: those it entered with).  A continue's must be what the next iteration
    takes, a break's what the code after the loop reads."""

    start: dict[str, Value]
    at: list[tuple[str, cst.CSTNode, dict[str, Value]]] = field(default_factory=list)


def _jumps_out(statements) -> list[cst.CSTNode]:
    """The ``break`` and ``continue`` statements of a loop body (not of the loops or functions in it)."""
    found: list[cst.CSTNode] = []
    for stmt in statements:
        if isinstance(stmt, cst.SimpleStatementLine):
            found.extend(s for s in stmt.body if isinstance(s, cst.Break | cst.Continue))
        elif isinstance(stmt, cst.If):
            suites = [stmt.body]
            orelse = stmt.orelse
            while orelse is not None:
                suites.append(orelse.body)
                orelse = orelse.orelse if isinstance(orelse, cst.If) else None
            for suite in suites:
                if isinstance(suite, cst.IndentedBlock):
                    found.extend(_jumps_out(suite.body))
                else:
                    found.extend(s for s in suite.body if isinstance(s, cst.Break | cst.Continue))
        elif isinstance(stmt, cst.With | cst.Try) and isinstance(stmt.body, cst.IndentedBlock):
            found.extend(_jumps_out(stmt.body.body))
    return found


class _Put(cst.CSTTransformer):
    """Each read of a name of ``items`` replaced by its item's code (an unrolled comprehension's element)."""

    def __init__(self, items: dict[str, cst.BaseExpression]) -> None:
        self.items = items

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.items.get(original.value, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)  # (q.size: only the path's root is a name read)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)  # (f(q=1): a keyword is no name read)

    def visit_Lambda(self, n: cst.Lambda) -> bool:  # (lambda z: z * q reads q; lambda q: q does not)
        return not any(p.name.value in self.items for p in n.params.params)


def _returns_in(statements) -> list[cst.CSTNode]:
    """The ``return`` statements of a block (not of the functions or lambdas in it)."""
    found: list[cst.CSTNode] = []

    class _Returns(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            found.append(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    for stmt in statements:
        stmt.visit(_Returns())
    return found


def _clone(rw, node: cst.CSTNodeT, put: _Put | None = None) -> cst.CSTNodeT:
    """A copy of ``node`` (a new identity for each copy of an unrolled loop's body), each of its nodes reporting
    errors and lines where the original does; ``put``: names replaced by items (literals) in it."""
    copy = node.deep_clone()
    if put is not None:
        copy = copy.visit(put)  # type: ignore[assignment]

    def anchor(original: cst.CSTNode, cloned: cst.CSTNode) -> None:
        rw.ctx.anchors[cloned] = rw.ctx.anchors.get(original, original)
        if original in rw._anchors:
            rw._anchors[cloned] = rw._anchors[original]
        for a, b in zip(original.children, cloned.children):
            anchor(a, b)

    anchor(node, copy)
    return copy


def _items_proxy(rw, node: cst.BaseExpression, value: Value) -> cst.BaseExpression | None:
    """``for t in xs`` / ``for t in xs[1:]`` over a tuple meshify holds item by item (a helper's ``*args``):
    ``xs[1] + xs[2]``, an expression whose dtype carriers are those items' (what ``t``'s dtype is read
    from); None for any other loop."""
    from meshify.rewrite._evaluate import _literal_slice

    if not isinstance(value, TupleValue) or not value.items:
        return None
    base: cst.BaseExpression = node
    bounds: tuple[int | None, int | None, int | None] | None = (None, None, None)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        base, bounds = node.value, _literal_slice(rw, node.slice[0])
    if not isinstance(base, cst.Name) or bounds is None:
        return None
    whole = rw.env.get(base.value)
    if not isinstance(whole, TupleValue):
        return None
    indices = list(range(len(whole.items)))[slice(*bounds)]
    items = [cst.Subscript(base, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))]) for i in indices]
    proxy: cst.BaseExpression = items[0]
    for item in items[1:]:
        proxy = cst.BinaryOperation(proxy, cst.Add(), item)
    return proxy


class _Restart(Exception):
    """Raised to materialise a variable's partial sum before the current statement."""

    def __init__(self, name: str, axes: tuple[str, ...], reason: str) -> None:
        self.name, self.axes, self.reason = name, axes, reason


class _LoopEntry(Exception):
    """Raised when a Python loop's body leaves ``name`` in another ``layout`` of the same dims:
    the variable is converted to it before the loop, and the body walked again.  (A list the body
    appends to: ``layout`` is the list of its items, which it enters the loop as, with no code.)"""

    def __init__(self, name: str, layout: Layout | Value, key: str | None = None) -> None:
        #: ``key``: the value under that key of the dict of known keys ``name`` holds is converted (``d["acc"]``)
        self.name, self.layout, self.key = name, layout, key


_MAX_RESTARTS = 64
_MAX_LOOP_ENTRIES = 8  # conversions of a Python loop's variables before the body settles


#: Versions of names' values (FunctionRewriter.versions): unique across rewriters and walks.
_VERSIONS = itertools.count(1)


def _star_item(node: cst.Subscript, stars: set[str]) -> str | None:
    """``ids[0]`` / ``ids[-1]`` / ``kw["tokens"]`` of a star parameter in ``stars``, spelled ``ids[0]``,
    ``ids[-1]``, ``kw['tokens']``; else None."""
    if not (isinstance(node.value, cst.Name) and node.value.value in stars and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)):
        return None
    index = node.slice[0].slice.value
    negative = isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus)
    literal = index.expression if negative else index  # type: ignore[attr-defined]
    if isinstance(literal, cst.Integer):
        return f"{node.value.value}[{'-' if negative else ''}{int(literal.value, 0)}]"
    if isinstance(literal, cst.SimpleString) and not negative:
        return f"{node.value.value}[{literal.evaluated_value!r}]"
    return None


@functools.lru_cache(maxsize=1 << 16)  # nodes hash by identity and never change: plan rewrites one tree ~100 times
def _all_names(node: cst.CSTNode) -> list[cst.Name]:
    """Every name node in ``node`` (a read each, where ``node`` binds none)."""
    found: list[cst.Name] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n)

    node.visit(_Names())
    return found


def _names_read(node: cst.CSTNode) -> tuple[str, ...]:
    """The names an expression reads, sorted (attributes' roots included: ``p.w`` reads ``p``)."""
    found: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False  # the attribute's own name is no variable

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)
            return False  # nor is a keyword

    node.visit(_Names())
    return tuple(sorted(found))


def dead_statements(body: Sequence[cst.CSTNode], ctx: ModuleContext | None = None) -> frozenset[int]:
    """The indices of the body's statements that only bind names nothing reads later (``z = jnp.tanh(x @ w)``
    with ``z`` unused): XLA drops what they compute.  Straight-line liveness from the end; a compound
    statement, a bare expression, an ``assert`` stay (a Python loop or branch that only binds names does
    not), and every name a nested def or lambda reads is live throughout (it may run later).  With the
    module's ``ctx``, an argument a helper of the module never reads in a live statement is not read by
    the call (see :func:`unread_params`)."""
    return _dead_statements(tuple(body), ctx)[0]


def live_before(body: Sequence[cst.CSTNode], index: int, ctx: ModuleContext | None = None) -> frozenset[str]:
    """The names some live statement reads at or after statement ``index`` of ``body`` before rebinding
    them (see :func:`dead_statements`): a psum rebinding one of them there is live."""
    return _dead_statements(tuple(body), ctx)[1][index]


def _live_after(body: Sequence[cst.CSTNode], index: int, ctx: ModuleContext | None) -> frozenset[str]:
    """The names some live statement after statement ``index`` reads before rebinding them."""
    return live_before(body, index + 1, ctx) if index + 1 < len(body) else frozenset()


def result_items_fed(fn: cst.FunctionDef, records: Sequence[Record], ctx: ModuleContext) -> tuple:
    """For a helper ending ``return a, b`` (its only return): per record of its walk, the result items its
    value feeds (None: all of them, or unknown), by liveness with each item alone returned; a record of
    the return statement itself feeds the items whose text holds its operand's."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    last = body[-1] if body else None
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return)
            and isinstance(last.body[0].value, cst.Tuple)) or _returns(fn) != 1:
        return ()
    elements = last.body[0].value.elements
    if any(isinstance(e, cst.StarredElement) for e in elements):
        return ()
    dead = [_dead_statements((*body[:-1], cst.SimpleStatementLine([cst.Expr(e.value)])), ctx)[0] for e in elements]
    out: list[frozenset[int] | None] = []
    everything = frozenset(range(len(elements)))
    for r in records:
        if r.statement < 0 or r.statement >= len(body):
            fed = everything
        elif r.statement == len(body) - 1:
            fed = frozenset((r.item,)) if 0 <= r.item < len(elements) else everything
        else:
            fed = frozenset(i for i in everything if r.statement not in dead[i])
        out.append(None if fed == everything else fed)
    return tuple(out)


def _repeated_literal(node: cst.BaseExpression) -> bool:
    """``[None] * n`` (or ``n * [0.0]``): a new list, made here."""
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply) and (
        isinstance(node.left, cst.List) or isinstance(node.right, cst.List))


def _literal_keys(node: cst.Dict) -> list[str] | None:
    """The string keys of a dict display in order, those of spread dict displays included; None where a key is
    not a string literal or a spread is not a dict display."""
    keys: list[str] = []
    for e in node.elements:
        if isinstance(e, cst.StarredDictElement):
            inner = _literal_keys(e.value) if isinstance(e.value, cst.Dict) else None
            if inner is None:
                return None
            keys += inner
        elif isinstance(e.key, cst.SimpleString) and isinstance(e.key.evaluated_value, str):
            keys.append(e.key.evaluated_value)
        else:
            return None
    return keys


def _entries_are(node: cst.Dict, keys: list[str]) -> bool:
    """Whether the dict display's entries are ``keys`` in order, one each, with no spread."""
    return not any(isinstance(e, cst.StarredDictElement) for e in node.elements) and _literal_keys(node) == keys


def _repeated_nones(node: cst.BaseExpression) -> bool:
    """``[None] * n`` or ``n * [None]``."""
    if not _repeated_literal(node):
        return False
    listed = node.left if isinstance(node.left, cst.List) else node.right  # type: ignore[attr-defined]
    return bool(listed.elements) and all(isinstance(e.value, cst.Name) and e.value.value == "None"
                                         for e in listed.elements)


def _returns(fn: cst.FunctionDef) -> int:
    """How many ``return`` statements ``fn`` holds outside nested functions."""
    count = 0

    class _Returns(cst.CSTVisitor):
        def visit_Return(self, n: cst.Return) -> None:
            nonlocal count
            count += 1

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            return n is fn

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

    fn.visit(_Returns())
    return count


@functools.lru_cache(maxsize=1 << 12)
def _parsed(code: str) -> cst.BaseExpression | None:
    """``code`` parsed as an expression (None: it is not one); nodes are immutable, so shared."""
    try:
        return cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return None


class StructLayouts(dict):
    """The layouts of a returned NamedTuple's fields, by name (a dict), and its class's name: out_specs
    ``Out(logits=P(...), loss=P())``."""

    def __init__(self, cls: str, fields: dict, meta: bool = False) -> None:
        super().__init__(fields)
        self.cls = cls
        #: The class has static fields (a dataclass's meta fields): out_specs ``mr.Fields(Cls, {...})``, their
        #: values read off the result's structure when traced.
        self.meta = meta


@dataclass(frozen=True, slots=True)
class NumberOrLayout(Layout):
    """The layout of a result that is a Python number or an array known only when traced (``m if m is not None
    else 1.0``): the array's; out_specs ``mr.NumberOr(spec)``, ``P()`` where the call returns the number."""

    def describe(self) -> str:
        return f"{Layout.describe(self)} or a Python number"


class EachLayouts(dict):
    """The layouts of each item of a returned list as long as each call's (one entry, ``"*"``): out_specs
    ``mr.Each(item's specs)``, which the runtime spells out for each call's length."""


def _counted(rw, node: cst.BaseExpression
             ) -> tuple[cst.BaseExpression, Operand, list[Value], cst.BaseExpression] | None:
    """``enumerate(xs[, start])`` and ``zip(xs, ys, ...)`` as a Python loop's iterable (Python's own, not
    shadowed): the sequence whose length counts the iterations (the first) and its value, what each
    iteration binds item by item (an index is a Python int; each sequence's item as ``for t in xs`` binds it),
    and the call rewritten (each sequence's new node); None for anything else."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("enumerate", "zip")
            and node.func.value not in rw.env and not rw.ctx.binds(node.func.value)):
        return None
    enumerate_ = node.func.value == "enumerate"
    if any(a.star or (a.keyword is not None and not (enumerate_ and a.keyword.value == "start")) for a in node.args):
        return None
    sequences = [a.value for a in node.args if a.keyword is None]
    if enumerate_ and len(sequences) == 2:
        sequences = sequences[:1]  # enumerate(xs, 1): the start is a Python int
    if not sequences or (enumerate_ and len(sequences) != 1):
        return None
    parts, new = [], {}
    for sequence in sequences:
        inner = _counted(rw, sequence)  # enumerate(zip(xs, ys)): each item a tuple itself
        if inner is not None:
            parts.append((inner[0], inner[1], TupleValue(tuple(inner[2]))))
            new[id(sequence)] = inner[3]
        else:
            operand = rw.expr(sequence)
            parts.append((sequence, operand, rw._loop_item(sequence, operand)))
            new[id(sequence)] = operand.node
    items = [item for _, _, item in parts]
    call = node.with_changes(args=[a.with_changes(value=new.get(id(a.value), a.value)) for a in node.args])
    counted = parts[0][1]
    lengths = {len(o.value.items) if isinstance(o.value, TupleValue) else None for _, o, _ in parts}
    if isinstance(counted.value, TupleValue) and lengths != {len(counted.value.items)}:
        # zip(s, s[1:]) runs as often as its shortest sequence; beside one of unknown length, an unknown count
        counted = replace(counted, value=TupleValue(counted.value.items[:min(lengths)], counted.value.kind)) \
            if None not in lengths else replace(counted, value=sequence_of(parts[0][2]))
    return parts[0][0], counted, ([Static(), *items] if enumerate_ else items), call


def described_value(value: Value | None) -> str:
    """A value as a message names it: an array's layout, else what kind of value it is."""
    if isinstance(value, Array):
        return value.layout.describe()
    if isinstance(value, Opaque):
        return "an array of dims meshify cannot infer"
    if isinstance(value, Static):
        return "None" if value.known and value.literal is None else "a Python value"
    if isinstance(value, TupleValue):
        return "a tuple"
    if isinstance(value, StructValue):
        return "a list" if value.kind == "sequence" else "a dict of keys known only when traced" \
            if value.kind == "mapping" else "a pytree"
    return "nothing (unbound)" if value is None else type(value).__name__.lower()


def _kind(value: Value) -> str:
    """``value`` as a message on the branches of an if names it: a NamedTuple or dataclass by its class, a tuple
    by its items' layouts (:func:`_layouts`)."""
    if isinstance(value, StructValue) and value.kind in ("namedtuple", "dataclass"):
        return f"a {value.cls}"
    return "a dict" if isinstance(value, StructValue) and value.kind == "dict" else _layouts(value)


def _target_sources(target: cst.BaseExpression, iterable: cst.BaseExpression
                    ) -> list[tuple[str, cst.BaseExpression]]:
    """Each name a loop's target binds to a whole item of a sequence, with that sequence: ``for w in ws``,
    ``for w, v in zip(ws, vs)``, ``for i, (w, v) in enumerate(zip(ws, vs))``."""
    if isinstance(target, cst.Name):
        return [(target.value, iterable)]
    if not (isinstance(target, cst.Tuple | cst.List) and isinstance(iterable, cst.Call)
            and isinstance(iterable.func, cst.Name) and iterable.func.value in ("enumerate", "zip")):
        return []
    sequences = [a.value for a in iterable.args if a.keyword is None and not a.star]
    if iterable.func.value == "enumerate":
        if len(target.elements) != 2 or not sequences:
            return []
        return _target_sources(target.elements[1].value, sequences[0])
    if len(sequences) != len(target.elements):
        return []
    return [pair for e, sequence in zip(target.elements, sequences) for pair in _target_sources(e.value, sequence)]


def _layouts(value: Value | None) -> str:
    """``value`` as a message names it, a tuple's items each by its layout (``([batch, ff/'model'],)``)."""
    if isinstance(value, TupleValue):
        return "(" + ", ".join(_layouts(v) for v in value.items) + ("," if len(value.items) == 1 else "") + ")"
    return described_value(value)


def _value_node(name: str, key: str) -> cst.Subscript:
    """``name["key"]``: the value under a string key of the dict ``name`` holds."""
    return cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(cst.SimpleString(json.dumps(key))))])


def _field_store(name: str, key: str, node: cst.BaseExpression, replacer: cst.BaseExpression | None
                 ) -> cst.Assign:
    """``name = name._replace(key=node)`` (``replacer(name, key=node)`` for a dataclass, ``replacer`` how the module
    names ``dataclasses.replace``): the NamedTuple or dataclass ``name`` holds with its field ``key`` replaced."""
    equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    field = cst.Arg(node, keyword=cst.Name(key), equal=equal)
    call = cst.Call(cst.Attribute(cst.Name(name), cst.Name("_replace")), [field]) if replacer is None else \
        cst.Call(replacer, [cst.Arg(cst.Name(name)), field])
    return cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=call)


def _dataclass_replace(ctx: ModuleContext) -> cst.BaseExpression | None:
    """How the module names ``dataclasses.replace`` (``dataclasses.replace``, ``dc.replace``, ``replace``), if it
    imports it or its module; None where it does not (the generated file adds no import)."""
    table = ctx.imports
    for local, qualified in table.imports.items():
        if local in table.shadowed:
            continue
        if qualified == "dataclasses.replace":
            return cst.Name(local)
        if qualified == "dataclasses":
            return cst.Attribute(cst.Name(local), cst.Name("replace"))
    return None


def _first_read(node: cst.CSTNode, name: str) -> cst.Subscript:
    """The ``name[0]`` read in ``node`` (a converted first item of a returned tuple)."""
    found: list[cst.Subscript] = []

    class _Find(cst.CSTVisitor):
        def visit_Subscript(self, sub: cst.Subscript) -> None:
            if isinstance(sub.value, cst.Name) and sub.value.value == name and not found:
                found.append(sub)

    node.visit(_Find())
    return found[0]


def _field_name(node: cst.BaseExpression) -> str | None:
    """``layers`` of ``model.layers`` / ``params["layers"]`` (the field a sequence of hinted structs is in,
    whose length ``meshify verify`` reads from ``--dims layers=N``); None for anything else."""
    if isinstance(node, cst.Attribute) and dotted_name(node) is not None:
        return node.attr.value
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            and isinstance(node.slice[0].slice.value, cst.SimpleString):
        key = node.slice[0].slice.value.evaluated_value
        return key if isinstance(key, str) else None
    return None


#: The helpers whose unread parameters are being found (a recursive helper reads every argument).
_FINDING: set[int] = set()


@functools.lru_cache(maxsize=1 << 10)
def unread_params(fn: cst.FunctionDef, ctx: ModuleContext) -> frozenset[str]:
    """The parameters of helper ``fn`` that no live statement of its body reads (``def h(x, unused):``):
    XLA drops what computes the argument passed there, collectives too, when nothing else reads it."""
    if id(fn) in _FINDING or not isinstance(fn.body, cst.IndentedBlock):
        return frozenset()
    _FINDING.add(id(fn))
    try:
        live = live_before(fn.body.body, 0, ctx)
    finally:
        _FINDING.discard(id(fn))
    p = fn.params
    return frozenset(q.name.value for q in (*p.posonly_params, *p.params, *p.kwonly_params)
                     if q.name.value not in live)


#: Attributes of an array that are not its values: ``zeros(v.shape, v.dtype)`` needs no collective of ``v``.
_METADATA = frozenset({"shape", "dtype", "ndim", "size"})


def _read_by(node: cst.CSTNode, ctx: ModuleContext | None,
             local: Mapping[str, cst.FunctionDef] = MappingProxyType({})) -> tuple[str, ...]:
    """The names whose values ``node`` reads: :func:`_names_read`, less names read only for their shape or
    dtype (``v.shape``), and less the arguments of calls of the module's helpers (``ctx``) and of the
    body's nested defs (``local``) for parameters they never read."""
    calls: list[cst.Call] = []

    helpers = {**(ctx.functions if ctx is not None else {}), **local}

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            if ctx is not None and isinstance(n.func, cst.Name) and n.func.value in helpers:
                calls.append(n)

    node.visit(_Calls())
    skipped: set[int] = set()
    for call in calls:
        assert ctx is not None and isinstance(call.func, cst.Name)
        fn = helpers[call.func.value]
        unread = unread_params(fn, ctx)
        if not unread:
            continue
        named = [q.name.value for q in (*fn.params.posonly_params, *fn.params.params)]
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) != len([a for a in call.args if a.keyword is None]):
            continue  # *args spelled at the call: positions unknown
        for k, arg in enumerate(positional):
            if k < len(named) and named[k] in unread:
                skipped.add(id(arg))
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in unread:
                skipped.add(id(arg))
    found: set[str] = set()
    defined = ctx.functions if ctx is not None else {}

    class _Names(cst.CSTVisitor):
        def visit_Arg(self, n: cst.Arg) -> bool:
            if id(n) not in skipped:
                n.value.visit(self)
            return False  # (a keyword is no variable)

        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            if not (n.attr.value in _METADATA and isinstance(n.value, cst.Name) and n.value.value not in defined):
                n.value.visit(self)
            return False

    node.visit(_Names())
    return tuple(sorted(found))


@functools.lru_cache(maxsize=1 << 12)  # by the statements' identities (see _names_read)
def _dead_statements(body: tuple[cst.CSTNode, ...], ctx: ModuleContext | None = None
                     ) -> tuple[frozenset[int], tuple[frozenset[str], ...]]:
    live: set[str] = set()
    before: list[frozenset[str]] = [frozenset()] * len(body)

    class _Deferred(cst.CSTVisitor):
        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            # the names it reads from the enclosing scope (not its parameters, not its own locals)
            p = n.params
            own = {q.name.value for q in (*p.posonly_params, *p.params, *p.kwonly_params)}
            own |= {q.name.value for q in (p.star_arg, p.star_kwarg) if isinstance(q, cst.Param)}
            live.update(set(_names_read(n.body)) - own - bound_names(n.body))
            return False

        def visit_Call(self, n: cst.Call) -> bool:
            # a lambda a JAX loop, branch or tree map runs right away: its reads are its statement's
            if _runs_now(n.func):
                for arg in n.args:
                    if not isinstance(arg.value, cst.Lambda):
                        arg.visit(self)
                    else:
                        arg.value.body.visit(self)  # (a def or lambda inside it may still run later)
                n.func.visit(self)
                return False
            return True

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            live.update(_names_read(n.body))
            return False

    for stmt in body:
        stmt.visit(_Deferred())
    dead: set[int] = set()
    local = {stmt.name.value: stmt for stmt in body if isinstance(stmt, cst.FunctionDef)}
    for i in range(len(body) - 1, -1, -1):
        _liveness_step(body[i], i, live, dead, ctx, local)
        before[i] = frozenset(live)
    return frozenset(dead), tuple(before)


#: JAX calls that run the functions passed to them while the call runs (no later call of them).
_RUN_NOW = frozenset({"fori_loop", "scan", "while_loop", "cond", "switch", "map", "tree_map"})


def _runs_now(func: cst.BaseExpression) -> bool:
    """``jax.lax.fori_loop`` / ``lax.scan`` / ``jax.tree.map`` ...: a lambda passed runs inside the call."""
    name = dotted_name(func)
    return name is not None and name.split(".")[0] in ("jax", "lax") and name.rsplit(".", 1)[-1] in _RUN_NOW


def _liveness_step(stmt: cst.CSTNode, i: int, live: set[str], dead: set[int], ctx: ModuleContext | None,
                   local: Mapping[str, cst.FunctionDef]) -> None:
    """One statement of :func:`_dead_statements`' backward pass: ``live`` becomes what is live before it."""
    if isinstance(stmt, cst.FunctionDef):  # reads its decorators and defaults now (its body: _Deferred)
        p = stmt.params
        for part in (*stmt.decorators, *(q.default for q in (*p.params, *p.kwonly_params, *p.posonly_params)
                                         if q.default is not None)):
            live.update(_read_by(part, ctx, local))
        return
    if isinstance(stmt, cst.For | cst.If | cst.While):
        assigned = _assigned_only(stmt)
        if assigned is not None and not (assigned & live):
            dead.add(i)  # a Python loop or branch that only binds names nobody reads later: XLA drops it
        else:
            live.update(_read_by(stmt, ctx, local))
        return
    smalls = [s for s in stmt.body if isinstance(s, cst.Assign | cst.AnnAssign | cst.AugAssign)] \
        if isinstance(stmt, cst.SimpleStatementLine) else []
    if not smalls or len(smalls) != len(stmt.body):  # type: ignore[attr-defined]
        live.update(_read_by(stmt, ctx, local))
        return
    targets: set[str] = set()
    plain = True  # names, or tuples of names: no attribute or subscript written
    for small in smalls:
        for target in ([t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]):
            elements = [e.value for e in target.elements] if isinstance(target, cst.Tuple | cst.List) \
                else [target]
            plain = plain and all(isinstance(e, cst.Name) for e in elements)
            targets.update(_names_read(target))
    if plain and not (targets & live):
        dead.add(i)
        return
    live.difference_update(targets)
    for small in smalls:
        if small.value is not None:
            live.update(_read_by(small.value, ctx, local))
        if isinstance(small, cst.AugAssign):  # v += u reads v too
            live.update(_names_read(small.target))


def _assigned_only(node: cst.CSTNode) -> set[str] | None:
    """The names a ``for``/``if``/``while`` statement binds, where all it does is bind names (plain
    assignments to names, ``pass``, nested such statements); None where it does anything else (a call
    for its effect, an attribute or item written, a ``return``, ``break``, an ``else``...)."""
    out: set[str] = set()
    if isinstance(node, cst.For):
        if node.orelse is not None or node.asynchronous is not None:
            return None
        out |= set(_names_read(node.target))
    elif isinstance(node, cst.If):
        if node.orelse is not None:
            other = _assigned_only(node.orelse if isinstance(node.orelse, cst.If) else node.orelse)
            if other is None:
                return None
            out |= other
    elif isinstance(node, cst.While):
        if node.orelse is not None:
            return None
    elif not isinstance(node, cst.Else):
        return None
    body = node.body
    statements: Sequence[cst.BaseStatement] = body.body if isinstance(body, cst.IndentedBlock) \
        else [cst.SimpleStatementLine(body=body.body)]  # type: ignore[arg-type]
    for stmt in statements:
        if isinstance(stmt, cst.For | cst.If | cst.While):
            inner = _assigned_only(stmt)
            if inner is None:
                return None
            out |= inner
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None
        for small in stmt.body:
            if isinstance(small, cst.Pass):
                continue
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, cst.AnnAssign | cst.AugAssign) and (
                    not isinstance(small, cst.AnnAssign) or small.value is not None):
                targets = [small.target]
            else:
                return None
            for target in targets:
                elements = [e.value for e in target.elements] if isinstance(target, cst.Tuple | cst.List) else [target]
                if not all(isinstance(e, cst.Name) for e in elements):
                    return None
                out |= {e.value for e in elements}  # type: ignore[attr-defined]
    return out


#: Iterations a Python while loop on values meshify reads may run (each walked as Python runs it).
_MAX_WHILE = 64

#: Dims of operands without hints get placeholder names like ``einsum_e`` (see ``rules.contractions.contract``).
_PLACEHOLDER_PREFIXES = ("einsum_", "matmul_", "dot_")


def _array_or_none(a: Value, b: Value) -> bool:
    """One of ``a``, ``b`` None (a branch that leaves a name None) and the other an array, or a tuple or pytree."""
    return any(isinstance(v, Array | Opaque | TupleValue | StructValue) and is_none(o) for v, o in ((a, b), (b, a)))


def _none_arm(node: cst.BaseExpression) -> bool:
    """``a if flag else None`` (or ``None if flag else a``)."""
    return isinstance(node, cst.IfExp) and any(isinstance(n, cst.Name) and n.value == "None"
                                               for n in (node.body, node.orelse))



def _resized_dims(merged: Array, values: tuple[Array, ...]) -> Array:
    """``merged`` (the value both branches of an if leave, the user's names kept) with each dim one branch
    leaves as the user's ``d`` and the other as ``d?``, a dim made of it with another size (``jnp.concatenate((h,
    back), axis=-1)`` under ``if bidirectional:``), named ``d?``: its size depends on the branch taken, and it
    lines up with whatever the code after the if reads it as, never as ``d`` alone."""
    dims = list(merged.layout.dims)
    for k, d in enumerate(dims):
        grown = [v.dims[k] for v in values if v.dims[k] != d and v.dims[k].endswith(INFERRED)
                 and unsliced(v.dims[k]) == d.rstrip(INFERRED)]
        if grown:
            dims[k] = grown[0]
    if tuple(dims) == merged.layout.dims:
        return merged
    return Array(Layout(tuple(dims), merged.layout.axes, merged.layout.partial), merged.origin)

class FunctionRewriter:
    """Rewrites one function body; see the module docstring for the guarantee."""

    def __init__(self, ctx: ModuleContext, fn: cst.FunctionDef, mesh: MeshSpec, rules: Rules,
                 stack: tuple[str, ...] = (), sizes: dict[str, int] | None = None,
                 assume_defaults: bool = False, free: dict[str, Value] | None = None,
                 unknown_dtypes: frozenset[str] = frozenset(), reduce_dtype: str | None = None,
                 nones: frozenset[str] = frozenset(), declared: dict[str, int] | None = None,
                 regather: bool | None = None, flags: dict[str, bool] | None = None) -> None:
        self.ctx = ctx
        #: The optional array parameters that are None in this version of a @mesh function (_optional).
        self.nones = nones
        #: The static flags' values this version of a @mesh function is rewritten for (_driver._versions).
        self.flags = dict(flags or {})
        #: What the live function's closure variables hold (the decorator path knows them).
        self.free = dict(free or {})
        #: explain's mode: static parameters take their literal defaults, so that an ``if`` on
        #: one follows the branch a default call takes (the generated code keeps both).
        self.assume_defaults = assume_defaults
        #: Dim sizes from ``@mesh(dims=...)``: when one axis would split two dims, the smaller side
        #: is gathered (unknown dims count as 1024 elements).
        self.sizes = dict(sizes or {})
        #: The sizes the decorator gives (``sizes`` less explain's ``--dims``): the only ones a choice
        #: that changes the generated code may read.
        self.declared = dict(self.sizes if declared is None else declared)
        self.stack = (*stack, fn.name.value)
        self.uses: list[str] = []
        self._helper = False
        #: A nested def's rewriter: the def of the module (or class) it is nested in, whose ``self`` it reads.
        self.enclosing: cst.FunctionDef | None = None
        #: A @mesh function's array and pytree parameters (set when its parameters are read).
        self._args: dict[str, StructHint | None] = {}
        self._results: list[Value] = []
        #: The static conditions each result is returned under, by the ``if`` statements around its
        #: ``return`` (test, which branch), outermost first; None for a return inside a loop.
        self._result_paths: list[tuple[tuple[cst.BaseExpression, bool], ...] | None] = []
        #: The ``if`` branches being walked: (test, whether this is its body rather than its else).
        self._conditions: list[tuple[cst.BaseExpression, bool]] = []
        #: The tests of ifs whose value meshify reads (a flag this version is for): id -> its truth.
        self._known_tests: dict[int, bool] = {}
        #: A helper's result dtype carriers (every return's, in the helper's names), or None.
        self.return_dtype: tuple[str, ...] | None = ()
        #: Whether a helper returns a partial sum accumulated in float32 (its caller's psum casts back).
        self.returns_widened = False
        #: A helper returning a tuple: each item's dtype carriers (in the helper's names) and whether it is
        #: a partial sum accumulated in float32, joined over every return; None when unknown.
        self.return_items: Items | None = None
        #: A loop body's walk (scan, fori_loop, while_loop): its caller cannot name the dtype of what it
        #: returns, so a partial sum accumulated in float32 is completed before the return.
        self.blind_caller = False
        self._forced_return: Layout | None = None
        #: A custom_jvp/custom_vjp rule's version: the layout each item of its returned tuple must have (None:
        #: any value, a residual), and what needs them (see ``_helpers._custom_rules``).
        self._forced_items: tuple[Layout | None, ...] | None = None
        self._forced_purpose = ""
        self.fn = fn
        self.mesh = mesh
        self.rules = rules
        self.env: dict[str, Value] = {}
        self.records: list[Record] = []
        self.bindings: list[Binding] = []
        self.index_names: set[str] = set()
        self._returning: cst.Tuple | None = None  # the returned tuple literal being evaluated
        self._lowering_call: cst.CSTNode | None = None  # the call whose lowering carry_out makes
        self._item_ends: list[int] = []  # len(records) after each of its items
        self.key_names: set[str] = set()
        #: Names used as masks where this function reads them (not followed into helpers: verify's draw only).
        self.mask_names: set[str] = set()
        #: Calls of a function a static value holds, checked elementwise when traced (mr.elementwise):
        #: their result has their operand's dtype.
        self.elementwise_calls: set[cst.CSTNode] = set()
        #: (static parameter, attribute) pairs read, e.g. ("self", "w"), and the dims of those a hint pins.
        self.static_reads: set[tuple[str, str]] = set()
        #: Module variables the body reads (``SCALE``): a call after one is rebound traces again.
        self.globals_read: set[str] = set()
        self.pinned_reads: dict[tuple[str, str], tuple[str, ...]] = {}
        self._loops: list[int | str | TracedLoop | UnknownLoop | None] = []
        #: Per entry of ``_loops``: the names a Python loop's body binds (None for a loop JAX runs).
        self._loop_names: list[frozenset[str] | None] = []
        #: Per Python loop being walked: the names it carries (bound before it and read in its body first).
        self.loop_carried: list[frozenset[str]] = []
        #: Per Python loop being walked: its break/continue statements (None: a while loop, which has none).
        self._jumps: list[_Jumps | None] = []
        #: Names bound to a list this function built (``xs = []``): ``xs.append(v)`` is followed (_containers).
        self.own_lists: set[str] = set()
        #: ``+``/``-`` chains being evaluated as written, and whether one's terms are being tried (_sums).
        self.plain_sums: set[cst.BinaryOperation] = set()
        self.sum_trial = False
        #: What ``outs.get(k)`` gave, each its own object: an array or None, known only when traced (_mappings).
        self.maybe_none: list[Value] = []
        #: A helper's parameters its caller passes an array or None (``mask``), known only when traced.
        self.maybe_none_params: frozenset[str] = frozenset()
        #: A helper's parameters the caller passes a Python number or an array known only when traced.
        self.maybe_number_params: frozenset[str] = frozenset()
        #: ``a if flag else None`` (the user's node) -> its array arm's operand: converted in that arm (convert).
        self.none_arms: dict[cst.IfExp, Operand] = {}
        #: Nodes (by id; kept, so that no other node takes the id) where a value a Python number or an array may
        #: be read (``_evaluate.number_or_array``).
        self.number_reads: dict[int, cst.CSTNode] = {}
        #: Where this helper's result holds an array or None known only when traced (_mappings.maybe_none_paths):
        #: its caller marks them in the value it gets.
        self.maybe_results: frozenset[tuple] = frozenset()
        #: Dicts read at a key meshify does not know while still empty, in a kept loop's first walk (_mappings).
        self.first_reads: set[str] = set()
        #: (dict name, key) -> ``d.get("k", default)`` read in the loops being walked where ``d`` (carried by one of
        #: them) holds no key "k": refused where the body stores it (later iterations would read what it stored).
        self.absent_reads: dict[tuple[str, str], tuple[cst.CSTNode, Value]] = {}
        #: Of those, the ones handed on to something that may keep the list (``gs = xs``): their appends are
        #: refused.  Never rolled back: a loop's next iteration appends after the hand-off.
        self.shared_lists: set[str] = set(closure_names(fn))
        #: Name -> the version of its value (a fresh number at each binding): see :meth:`identity`.
        self.versions: dict[str, int] = {}
        #: Names bound to ``jnp.arange`` over a dim (``b = jnp.arange(n)``) -> (their version then, the dim):
        #: ``logp[b, b]`` picks each row's entry as ``logp[jnp.arange(n), b]`` does (_evaluate._per_row_pick).
        self.aranges: dict[str, tuple[int, str, int, int]] = {}
        #: The body's statements, and the index of the one being walked (records name it: ``statement``).
        self._top_statements: Sequence[cst.CSTNode] = ()
        self._top = -1
        #: Names bound by a lambda being walked: their partial sums are reduced inline, never hoisted.
        self.lambda_names: set[str] = set()
        #: Walking a function JAX differentiates (see _cotangents): the names whose value has a cotangent (None:
        #: not differentiating), and, while ``jax.grad`` walks its function, the argument nodes it differentiates.
        self.tangent: frozenset[str] | None = None
        self.grad_args: list[cst.CSTNode] | None = None
        #: The nested ``def`` statements walked so far (original node -> what each use needs; _nested).
        self.local_defs: dict[cst.FunctionDef, LocalDef] = {}
        #: A nested def's walk: the dtype carriers of float32-accumulated partial sums it reads from the
        #: enclosing function (see _nested.walk_local).
        self.closure_dtypes: dict[str, tuple[str, ...] | None] = {}
        #: Likewise the items of tuples holding such partial sums that it reads (see _nested.walk_local).
        self.closure_tuples: dict[str, Items] = {}
        self._comments: list[str] = []
        self._line = 0
        #: A one-line body walked as a line of its own -> its first statement (for positions).
        self._anchors: dict[cst.SimpleStatementLine, cst.CSTNode] = {}
        #: Statements to write before the one being rewritten (a check a reading of it needs first), by code.
        self._before: dict[str, cst.BaseStatement] = {}
        #: Generator expressions whose items' order changes nothing but rounding (the argument of sum()).
        self.order_free: set[cst.CSTNode] = set()
        #: Comprehensions whose one reader adds their items up (``sum(h @ w for h in hs)``): a partial sum an item
        #: holds stays partial, completed once after the sum (a sum is linear), not item by item.
        self.summed: set[cst.CSTNode] = set()
        self._return: tuple[tuple[str, ...], ...] | tuple[str, ...] | None = None
        #: A return hint ``list[Tensor[...]]``: the items' dims, and each return's items (checked after the walk).
        self._items_hint: tuple[str, ...] | None = None
        #: A helper's return hint ``tuple[A, B]``: each item's dims (None: not a Tensor hint).
        self._helper_items: tuple[tuple[str, ...] | None, ...] | None = None
        self._items_returned: list[tuple[cst.CSTNode, tuple[Value, ...] | None]] = []
        #: The dtype of each value as code, for float32 accumulation of low-precision partial sums.
        self.dtypes = Dtypes(self, unknown=unknown_dtypes)
        #: ``@mesh(reduce_dtype=...)``: the dtype low-precision partial sums are all-reduced in (None: float32);
        #: a helper takes its caller's.
        self.reduce_dtype = reduce_dtype if reduce_dtype is not None or stack else \
            read_reduce_dtype(ctx, mesh_decorator(ctx, fn))
        #: ``@mesh(regather=...)`` (default True): a loop body JAX runs that gathers weights as FSDP's
        #: runs under ``mr.regathering``; a helper takes its caller's.
        self.regather = regather if regather is not None else read_regather(ctx, mesh_decorator(ctx, fn))
        #: ``@mesh(example={...})``: values for the @mesh function's static parameters, which explain's mode
        #: reads in place of (missing) defaults; checked on every path, read by none other.
        self.example = {} if stack else read_example(ctx, fn, mesh_decorator(ctx, fn))

    # -- driver -------------------------------------------------------------------------

    def run(self) -> FunctionPlan:
        params = self._bind_params()
        self._return = read_return_dims(self.ctx, self.fn)
        self._items_hint = read_sequence_return(self.ctx, self.fn)
        self._struct_return = read_struct_return(self.ctx, self.fn) if not self._helper else None
        if self._struct_return is not None:  # (this version's None fields: an optional field returned as None)
            self._struct_return = self._struct_return.without(self.nones)
        #: ``-> tuple[Tensor[()], Params]``: each item's dims or pytree hint (the return is then read as one
        #: without a hint, each item pinned by its own).
        self._mixed_return = read_mixed_return(self.ctx, self.fn) if not self._helper else None
        out_layouts = self._out_layouts() if self._return is not None else None
        node = self._walk_body()
        if out_layouts is None:
            out_layouts = self._unhinted_layouts()
            self._check_items_hint()
        plan = FunctionPlan(self.fn.name.value, self.mesh, self.rules, params,
                            {n: self.rules.layout(d) for n, d in params.items()}, out_layouts,
                            self.records, self.bindings)
        plan.node = node
        plan.index_params = self.index_names & set(params)
        plan.key_params = self.key_names & set(params)
        plan.mask_params = self.mask_names & set(params)
        for param, attr in sorted(self.static_reads):
            plan.static_reads.setdefault(param, {})[attr] = self.pinned_reads.get((param, attr))
        plan.helpers = list(dict.fromkeys(self.uses))
        plan.globals_read = tuple(sorted(self.globals_read))
        for name in plan.globals_read:
            value = self.ctx.global_value(name)
            target = self.ctx.alias_target(name) if "." not in name else None
            if target is not None:  # dot = jnp.dot: checked at each call to hold it still
                plan.aliases[name] = target
            elif isinstance(value, Static) and value.known:
                plan.global_values[name] = value.literal
            elif not isinstance(value, Static) and "." not in name:  # (with its hint's rank, where hinted)
                hinted = self.ctx.annotated_arrays.get(name)
                plan.arrays_read[name] = len(hinted) if hinted is not None else None
        # what a converted file checks: floats feed arithmetic (a temperature, an epsilon), not layouts,
        # so one rebound from outside is read afresh; an int, a string, a tuple may be an axis, a shape, a mode
        plan.decisive_values = {n: v for n, v in plan.global_values.items() if not isinstance(v, float | complex)}
        plan.reduce_dtype = self.reduce_dtype
        plan.args = self._args
        plan.flags = dict(self.flags)
        return plan

    def _check_items_hint(self) -> None:
        """A return hint ``list[Tensor[...]]`` (or ``tuple[Tensor[...], ...]``): every return gives a list or tuple
        whose items have those dims, in the layout the rules give them (the results leave as they are)."""
        dims = self._items_hint
        if dims is None:
            return
        where = self.fn.returns.annotation  # type: ignore[union-attr]
        target = self._rule_layout(dims, where)
        for node, items in self._items_returned:
            if items is None:
                raise self.ctx.error(LayoutError, node, f"{self.fn.name.value}() is hinted to return a list of "
                                     f"arrays {_dims_text(dims)} but returns {self.ctx.code(node)!r}, which is not "
                                     "one", "return a list or tuple of arrays, or change the return hint")
            for item in items:
                if not isinstance(item, Array) or len(item.dims) != len(dims) or any(
                        unify_dims(a, b) is None for a, b in zip(item.dims, dims)):
                    got = item.layout.describe() if isinstance(item, Array) else type(item).__name__.lower()
                    fix = (f"make the hint name the items' dims in order (list[Tensor[{hint_dims(item.dims)}]]), "
                           "or drop it") if isinstance(item, Array) else "make the hint name the items' dims, or drop it"
                    raise self.ctx.error(LayoutError, where, f"{self.fn.name.value}() is hinted to return arrays "
                                         f"{_dims_text(dims)}, but an item it returns is {got}", fix)
                if item.layout.axes != target.axes:
                    raise self.ctx.error(LayoutError, where, f"{self.fn.name.value}() returns items of layout "
                                         f"{item.layout.describe()}, not {target.describe()} as the rules give "
                                         f"{_dims_text(dims)}", "pin each item with a hint where it is made, or drop "
                                         "the return hint (results then leave in the layout they have)")

    def run_helper(self, bound: dict[str, Value]) -> tuple[cst.FunctionDef, Value]:
        """Rewrites a helper for the values its caller passes; returns it and its result's value."""
        self._helper = True
        self.dtypes.names.update(self.closure_dtypes)
        self.dtypes.wide_names |= set(self.closure_dtypes)
        self.dtypes.tuples.update(self.closure_tuples)
        for param in self._all_params():
            name = param.name.value
            value = bound[name]
            dims = read_dims(self.ctx, param.annotation.annotation) if param.annotation else None
            if dims is not None and isinstance(value, Opaque):
                value = Array(Layout.replicated(dims))  # a whole value of unknown dims, named (as y: ... = v names it)
            if dims == () and isinstance(value, Static) and (not value.known or type(value.literal) in (int, float)):
                # pos: Tensor[()] given a Python number or a loop's index (fori_loop's i): a scalar, on every device
                value = Array(Layout.replicated(()))
            if dims is not None and not (isinstance(value, Array) and value.dims == dims) \
                    and not _inferred_to_hinted(value, dims):
                passed = described_value(value)
                raise self.ctx.error(
                    LayoutError, param.annotation.annotation,
                    f"{self.fn.name.value}() hints {name} as {_dims_text(dims)} but the caller "
                    f"({' -> '.join(self.stack[:-1])}) passes {passed}",
                    "make the helper's hint name the same dims in the same order, or drop it")
            self.env[name] = value
            if name in self.maybe_none_params:  # (an array or None, as the caller's flag is when traced)
                self.maybe_none.append(value)
            if name in self.maybe_number_params and not any(value is v for v in self.ctx.root.maybe_numbers):
                self.ctx.root.maybe_numbers.append(value)  # (a Python number or an array, as the caller's m)
        hint = self.fn.returns.annotation if self.fn.returns else None
        self._return = read_dims(self.ctx, hint) if hint is not None else None
        self._helper_items = read_helper_items(self.ctx, self.fn)
        self._items_hint = read_sequence_return(self.ctx, self.fn, strict=False)
        node = self._walk_body()
        self.maybe_results = frozenset().union(*(maybe_none_paths(self, r) for r in self._results))
        first = self._results[0]
        if all(other == first for other in self._results[1:]) or self._forced_return is not None:
            return node, first
        joined = _joined_none(self._results)
        if joined is not None:  # if shift == 0: return None, on another path an array: an array or None
            self.maybe_results |= joined[1]
            return node, joined[0]
        target = _common_layout(self._results)
        if target is None:
            raise self.ctx.error(LayoutError, self.fn.name,
                                 f"{self.fn.name.value}() returns values of different dims on different paths",
                                 "give every return the same dims, or add a return hint")
        # Return paths disagree (say, one returns a partial sum, another reduced it): walk again,
        # converting every return to one layout.
        again = FunctionRewriter(self.ctx, self.fn, self.mesh, self.rules, self.stack[:-1], self.sizes,
                                 self.assume_defaults, free=self.free, unknown_dtypes=self.dtypes.unknown,
                                 reduce_dtype=self.reduce_dtype, declared=self.declared, regather=self.regather)
        again._forced_return = target
        again.closure_dtypes, again.closure_tuples = self.closure_dtypes, self.closure_tuples
        again.blind_caller = self.blind_caller
        node, _ = again.run_helper(bound)
        self.records, self.bindings, self.uses = again.records, again.bindings, again.uses
        self.index_names, self.key_names = again.index_names, again.key_names
        self.static_reads, self.pinned_reads = again.static_reads, again.pinned_reads
        self.dtypes, self.return_dtype, self.returns_widened = again.dtypes, again.return_dtype, again.returns_widened
        self.return_items = again.return_items
        self.maybe_results = frozenset({()}) if self.maybe_results else frozenset()
        return node, Array(target)

    def _all_params(self) -> list[cst.Param]:
        p = self.fn.params
        if self._helper:  # *args and **kwargs: the tuple and dict of what this call passes there
            stars = [s for s in (p.star_arg, p.star_kwarg) if isinstance(s, cst.Param)]
            return [*p.posonly_params, *p.params, *p.kwonly_params, *stars]
        for star in (p.star_arg, p.star_kwarg):
            if isinstance(star, cst.Param):
                raise self.ctx.error(UnsupportedError, star, f"*args/**kwargs in {self.fn.name.value}()",
                                     "give each argument its own parameter")
        return [*p.posonly_params, *p.params, *p.kwonly_params]

    def _walk_body(self) -> cst.FunctionDef:
        outer, self.ctx.aliases_read = self.ctx.aliases_read, set()
        try:
            return self._walk_body_once()
        finally:  # (a helper's walk inside this one: its aliases are the caller's too, through its spec)
            self.globals_read |= self.ctx.aliases_read
            self.ctx.aliases_read = outer | self.ctx.aliases_read

    def _walk_body_once(self) -> cst.FunctionDef:
        body = self.fn.body
        one_line = not isinstance(body, cst.IndentedBlock)
        if one_line:  # def f(x): return x * 2
            body = self._indented(body)
        self._top_statements = body.body
        new_body = emit_defs(self, self._block(body.body))
        self._top = -1
        # XLA removes what computes a value nobody reads, collectives too: so does explain's count.
        # A psum rebinding a name before a statement lives where a live statement reads the name from there
        # on (the statement itself may be dead, or pass it to a helper that never reads it).
        dead = dead_statements(body.body, self.ctx)
        self.records[:] = [replace(r, items=None) if r.items is not None else r for r in self.records
                           if (r.binds in live_before(body.body, r.statement, self.ctx) if r.binds and r.statement >= 0
                               else r.statement not in dead and (not r.feeds or bool(
                                   set(r.feeds) & _live_after(body.body, r.statement, self.ctx))))]
        captured = self.dtypes.captured(cst.Module(body=new_body).code if self.dtypes.captures else "")
        if captured:
            first = new_body[0]
            docstring = isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) \
                and isinstance(first.body[0].value, cst.SimpleString | cst.ConcatenatedString)
            at = 1 if docstring else 0
            captured[0] = captured[0].with_changes(leading_lines=[comment_line(
                "the dtypes of reassigned parameters, for partial sums of float16/bfloat16 (mr.sum_dtype)")])
            new_body = [*new_body[:at], *captured, *new_body[at:]]
        if not self._is_return(body.body[-1]):
            raise self.ctx.error(UnsupportedError, self.fn, f"{self.fn.name.value}() does not end in a return",
                                 "return the result as the last statement")
        if one_line:
            return self.fn.with_changes(body=self._one_line(self.fn.body, new_body))
        return self.fn.with_changes(body=body.with_changes(body=new_body))

    def _indented(self, suite: cst.SimpleStatementSuite) -> cst.IndentedBlock:
        """A one-line body (``if cfg.bias: x = x + b``) as a block of one line, to walk."""
        line = cst.SimpleStatementLine(body=suite.body)
        self._anchors[line] = suite.body[0]  # where errors and records point
        return cst.IndentedBlock(body=[line], header=suite.trailing_whitespace)

    @staticmethod
    def _one_line(suite: cst.SimpleStatementSuite, new: list[cst.BaseStatement]) -> cst.BaseSuite:
        """A rewritten one-line body: on its line still, unless the rewrite added comments or statements."""
        if len(new) == 1 and isinstance(new[0], cst.SimpleStatementLine) and not new[0].leading_lines:
            return suite.with_changes(body=new[0].body)
        return cst.IndentedBlock(body=new, header=suite.trailing_whitespace)

    def _suite(self, suite: cst.BaseSuite) -> cst.BaseSuite:
        """A block's statements rewritten (an indented block, or a one-line body)."""
        if isinstance(suite, cst.IndentedBlock):
            return suite.with_changes(body=self._block(suite.body))
        return self._one_line(suite, self._block(self._indented(suite).body))  # type: ignore[arg-type]

    @staticmethod
    def _appended(suite: cst.BaseSuite, lines: list[cst.BaseStatement]) -> cst.BaseSuite:
        """``lines`` at the end of a rewritten body; a one-line body (``if flag: t = x @ w``) becomes a block."""
        if not lines:
            return suite
        if isinstance(suite, cst.IndentedBlock):
            return suite.with_changes(body=[*suite.body, *lines])
        assert isinstance(suite, cst.SimpleStatementSuite)
        return cst.IndentedBlock(body=[cst.SimpleStatementLine(body=suite.body), *lines],
                                 header=suite.trailing_whitespace)

    @staticmethod
    def _suite_returns(suite: cst.BaseSuite) -> bool:
        if isinstance(suite, cst.IndentedBlock):
            return FunctionRewriter._is_exit(suite.body[-1])
        return any(isinstance(s, cst.Return | cst.Raise | cst.Break | cst.Continue)
                   for s in suite.body)  # type: ignore[attr-defined]

    def _block(self, statements) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        top = statements is self._top_statements
        for i, stmt in enumerate(statements):
            if i and self._is_exit(statements[i - 1]):
                raise self.ctx.error(UnsupportedError, stmt, "code after a return, raise, break or continue",
                                     "remove unreachable code")
            if i and self._exits_here(statements[i - 1]):
                # if stride != 1: return ...  on a value known here: what follows never runs in this version
                # (kept as written, not rewritten: it may not fit the layouts of the path Python takes)
                test = self.ctx.code(statements[i - 1].test)
                first = stmt
                if isinstance(first, cst.SimpleStatementLine | cst.BaseCompoundStatement):
                    first = first.with_changes(leading_lines=[*first.leading_lines, comment_line(
                        f"{test!r} is {self._known_tests[id(statements[i - 1].test)]} in this version: what follows "
                        "never runs (kept as written)")])
                out.extend([first, *statements[i + 1:]])
                break
            if top:
                self._top = i
            outer, self.ctx.current = self.ctx.current, self._anchors.get(stmt, stmt)
            saved, self._before = self._before, {}
            try:
                new = self._statement(stmt)
                out.extend([*self._before.values(), *new])
            finally:
                self.ctx.current, self._before = outer, saved
        return out

    def _with_statement(self, stmt: cst.With) -> cst.With:
        """``with jax.named_scope("mlp"):`` (a profiler annotation, ``contextlib.nullcontext()``, ...): a context
        that names or times what runs inside and leaves the values as they are, its body rewritten where it
        stands and the ``with`` kept; any other context manager (one that changes how JAX computes, or binds a
        value with ``as``) is refused, naming it."""
        self._line = self.ctx.line(stmt)
        for item in stmt.items:
            call = item.item
            names = self.ctx.qualified_names(call.func) if isinstance(call, cst.Call) else set()
            if not names & _NEUTRAL_CONTEXTS or item.asname is not None:
                code = self.ctx.code(item.item)
                raise self.ctx.error(UnsupportedError, item, f"'with {code}' in a @mesh function: meshify knows "
                                     "only contexts that leave the values as they are (jax.named_scope, "
                                     "jax.profiler.TraceAnnotation, contextlib.nullcontext; without 'as')",
                                     "move it outside the @mesh function (around the call), or drop it")
        if not isinstance(stmt.body, cst.IndentedBlock):
            return stmt.with_changes(body=stmt.body.with_changes(body=self._block_line(stmt.body)))
        return stmt.with_changes(body=stmt.body.with_changes(body=self._block(stmt.body.body)))

    def _block_line(self, line: cst.SimpleStatementSuite) -> list[cst.BaseSmallStatement]:
        """The statements of a one-line body (``with ctx: y = f(x)``), rewritten as lines, back on one line."""
        out = self._block([cst.SimpleStatementLine([s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
                           for s in line.body])
        if not all(isinstance(s, cst.SimpleStatementLine) for s in out):
            raise self.ctx.error(UnsupportedError, line, "a one-line 'with' body meshify rewrites into statements",
                                 "write the body on its own lines")
        return [small for s in out for small in s.body]  # type: ignore[attr-defined]

    def check_before(self, code: str, comment: str) -> None:
        """Writes the expression ``code`` as a statement before the one being rewritten (a check it needs
        first, run when the function runs), once."""
        if code not in self._before:
            line = cst.SimpleStatementLine([cst.Expr(cst.parse_expression(code))], leading_lines=[comment_line(comment)])
            self._before[code] = line

    def _exits_here(self, stmt: cst.CSTNode) -> bool:
        """Whether ``stmt`` is an ``if`` on a value known when rewriting whose branch taken ends in a return (or
        raise, break, continue)."""
        if not isinstance(stmt, cst.If) or id(stmt.test) not in self._known_tests:
            return False
        if self._known_tests[id(stmt.test)]:
            return self._suite_returns(stmt.body)
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            return False
        return isinstance(orelse, cst.Else) and self._suite_returns(orelse.body)

    def _out_layouts(self) -> tuple[Layout, ...] | Layout:
        where = self.fn.returns.annotation if self.fn.returns else self.fn
        if self._return and isinstance(self._return[0], tuple):
            return tuple(self._rule_layout(d, where) for d in self._return)  # type: ignore[arg-type]
        return self._rule_layout(self._return, where)  # type: ignore[arg-type]

    def _bind_params(self) -> dict[str, tuple[str, ...]]:
        params: dict[str, tuple[str, ...]] = {}
        p = self.fn.params
        if p.star_arg not in (None, cst.MaybeSentinel.DEFAULT) and isinstance(p.star_arg, cst.Param) \
                and p.star_arg.annotation is not None:
            raise self.ctx.error(UnsupportedError, p.star_arg, "*args with a Tensor hint",
                                 "give each array its own parameter")
        self._args = {}
        for param in [*p.posonly_params, *p.params, *p.kwonly_params]:
            name = param.name.value
            hint = param.annotation.annotation if param.annotation else None
            inner = optional_inner(self.ctx, hint) if hint is not None else None
            if inner is not None and name in self.nones:
                self.env[name] = Static.of(None)  # this version's None: ``if bias is None:`` is taken
                continue
            hint = inner if inner is not None else hint
            dims = read_dims(self.ctx, hint) if hint is not None else None
            struct = read_struct(self.ctx, hint) if hint is not None and dims is None else None
            if struct is not None:
                struct = struct.without(self.nones)  # (this version's None fields: Linear.b is None)
                self.env[name] = self._struct_value(struct, name, hint, params)
                self._args[name] = struct
                continue
            if dims is None:
                self.env[name] = replace(self.default_of(param), param=name)
                continue
            layout = self._rule_layout(dims, hint)
            params[name] = dims
            self._args[name] = None
            self.env[name] = Array(layout)
        return params

    def param_dtype(self, name: str) -> str | None:
        """A parameter's dtype where the code says it: a jaxtyping dtype hint's, else ``int32`` for one used
        as indices (an integer array, int32 by JAX's default); None for the function's float inputs."""
        param = next((p for p in self._all_params() if p.name.value == name), None)
        hint = param.annotation.annotation if param is not None and param.annotation is not None else None
        dtype = hint_dtype(self.ctx, hint) if hint is not None else None
        if dtype is None and name in self.index_names:
            return "int32"
        return dtype

    def default_of(self, param: cst.Param) -> Static:
        """A static parameter's value in explain's mode: its ``@mesh(example=...)`` value or its default
        where either is a literal or a config the module spells out; else (and when converting) unknown."""
        if param.name.value in self.flags:
            return Static.of(self.flags[param.name.value])
        node = self.example.get(param.name.value, param.default) if self.assume_defaults else None
        if node is not None:
            try:
                return Static.of(ast.literal_eval(self.ctx.code(node)))
            except (ValueError, SyntaxError):
                pass
            config = self.ctx.config_value(node)  # cfg: Config = DEFAULT_CONFIG
            if config is not None:
                return Static.of(config)
        return Static()

    def _struct_value(self, struct: StructHint, path: str, hint: cst.CSTNode,
                      params: dict[str, tuple[str, ...]]) -> StructValue:
        fields = []
        for field_name, field_hint in struct.fields:
            leaf = f"{path}.{field_name}"
            if isinstance(field_hint, StructHint):
                fields.append((field_name, self._struct_value(field_hint, leaf, hint, params)))
            elif field_hint is None:  # an optional field, None in this version: ``if p.b is None:`` is taken
                fields.append((field_name, Static.of(None)))
            else:
                params[leaf] = field_hint
                fields.append((field_name, Array(self._rule_layout(field_hint, hint))))
        if struct.kind == "tuple":  # indexed and unpacked like any tuple of arrays
            return TupleValue(tuple(v for _, v in fields))  # type: ignore[return-value]
        return StructValue(struct.cls, tuple(fields), struct.kind, struct.meta)

    def _rule_layout(self, dims: tuple[str, ...], node: cst.CSTNode) -> Layout:
        try:
            return self.rules.layout(dims)
        except MeshifyError as e:
            raise e.with_span(self.ctx.span(node)) from None

    @staticmethod
    def _is_return(stmt: cst.BaseStatement) -> bool:
        """A return statement, or a ``with`` whose body ends in one (``with jax.named_scope("out"): return y``)."""
        if isinstance(stmt, cst.With):
            body = stmt.body
            if isinstance(body, cst.IndentedBlock):
                return bool(body.body) and FunctionRewriter._is_return(body.body[-1])
            return any(isinstance(s, cst.Return) for s in body.body)
        return isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(s, cst.Return) for s in stmt.body)

    @staticmethod
    def _is_exit(stmt: cst.BaseStatement) -> bool:
        """A return, a raise, a break or a continue: the statements after it never run."""
        return isinstance(stmt, cst.SimpleStatementLine) and any(
            isinstance(s, cst.Return | cst.Raise | cst.Break | cst.Continue) for s in stmt.body)

    # -- statements ---------------------------------------------------------------------

    def _statement(self, stmt: cst.BaseStatement) -> list[cst.BaseStatement]:
        if isinstance(stmt, cst.FunctionDef):
            self._line = self.ctx.line(stmt)
            return [define(self, stmt)]  # rewritten where it is used (see _nested)
        if isinstance(stmt, cst.For):
            return self._for_statement(stmt)
        if isinstance(stmt, cst.If):
            return [self._if_statement(stmt)]
        if isinstance(stmt, cst.While):
            self._jumps.append(None)
            try:
                return [self._while_statement(stmt)]
            finally:
                self._jumps.pop()
        if isinstance(stmt, cst.With):
            return [self._with_statement(stmt)]
        if isinstance(stmt, cst.SimpleStatementLine):
            self._line = self.ctx.line(self._anchors.get(stmt, stmt))
            local = bound_function(self, stmt)  # f = lambda ...: / act = functools.partial(...): a nested def
            if local is not None:
                return [local]
        if not isinstance(stmt, cst.SimpleStatementLine):
            kind = type(stmt).__name__.lower()
            fix = {"for": "use jax.lax.scan/fori_loop, or vectorise the loop",
                   "while": "use jax.lax.while_loop(cond, body, init) (its condition must be one value on every device)",
                   "if": "branch with jnp.where, or move the branch outside the @mesh function"}.get(
                       kind, "move it outside the @mesh function")
            raise self.ctx.error(UnsupportedError, stmt, f"'{kind}' statements are not supported in a @mesh function",
                                 fix)
        returned = stmt.body[0] if len(stmt.body) == 1 else None
        if isinstance(returned, cst.Return) and isinstance(returned.value, cst.IfExp) and not self._helper:
            mark = self.mark()
            try:
                return self._simple_statement(stmt)
            except BranchLayouts as e:  # return (loss, logits) if with_logits else loss
                if e.node is not returned.value:
                    raise
                self.rollback(mark)
                return [self._if_statement(self._return_as_if(stmt, returned.value))]
        return self._simple_statement(stmt)

    def _return_as_if(self, stmt: cst.SimpleStatementLine, choice: cst.IfExp) -> cst.If:
        """``return a if flag else b`` whose branches have different layouts, walked as ``if flag: return a``,
        ``else: return b`` (so written out): a static flag chooses the results (see :meth:`_by_statics`)."""
        def line(value: cst.BaseExpression) -> cst.SimpleStatementLine:
            new = cst.SimpleStatementLine(body=[cst.Return(value=value.with_changes(lpar=[], rpar=[]) if isinstance(
                value, cst.Tuple) and value.lpar else value)])
            self.ctx.anchors[new] = self.ctx.anchors[new.body[0]] = value
            return new

        test = choice.test.with_changes(lpar=[], rpar=[]) if not isinstance(
            choice.test, cst.BooleanOperation | cst.IfExp | cst.NamedExpr | cst.Lambda) else choice.test
        self.ctx.anchors[test] = choice.test  # (errors at the test point at the user's)
        new = cst.If(test=test, body=cst.IndentedBlock(body=[line(choice.body)]),
            orelse=cst.Else(body=cst.IndentedBlock(body=[line(choice.orelse)])),
            leading_lines=stmt.leading_lines)
        self.ctx.anchors[new] = stmt
        return new

    def _simple_statement(self, stmt: cst.SimpleStatementLine) -> list[cst.BaseStatement]:
        hoisted: list[cst.BaseStatement] = []
        for _ in range(_MAX_RESTARTS):
            self._comments = []
            mark = self.mark()
            self._line = self.ctx.line(self._anchors.get(stmt, stmt))
            try:
                small = [self._small(s) for s in stmt.body]
            except _Restart as r:
                self.rollback(mark)
                hoisted.append(self._materialise(r, stmt))
                continue
            new = stmt.with_changes(body=small)
            if self._comments:
                new = new.with_changes(leading_lines=[*stmt.leading_lines,  # (each once: top_k's values and indices)
                                                      *(comment_line(c) for c in dict.fromkeys(self._comments))])
            return [*hoisted, new]
        raise self.ctx.error(UnsupportedError, self._anchors.get(stmt, stmt),
                             "statement needs too many materialised partial sums",
                             "split it into several statements")

    def _for_statement(self, stmt: cst.For) -> list[cst.BaseStatement]:
        """A Python loop over static values (``for i in range(n_layers)``), unrolled by Python.

        The body is rewritten once, so every iteration must start from the same layouts:
        the walk checks that the body leaves each array it found as it found it.  An array the
        body leaves in another layout of the same dims (a partial sum it needed whole, a dim it
        split) is converted to that layout before the loop, once (inside, a psum would sum
        again on every iteration), and the body walked again.
        """
        unrolled = self._unrolled_for(stmt)
        if unrolled is not None:
            return unrolled
        hoisted: list[cst.BaseStatement] = []
        entered: dict[str, list] = {}
        for _ in range(_MAX_LOOP_ENTRIES):
            mark = self.mark()
            try:
                return [*hoisted, self._for_once(stmt)]
            except _LoopEntry as entry:
                self.rollback(mark)
                self._line = self.ctx.line(stmt)
                shown = entry.name if entry.key is None else f"{entry.name}[{entry.key!r}]"
                entered.setdefault(shown, []).append(entry.layout)
                hoisted.extend(self._enter_loop(entry.name, entry.layout) if entry.key is None
                               else self._enter_loop_value(entry.name, entry.key, entry.layout))
        # each conversion before the loop left the body leaving the array in yet another layout: name them
        names = sorted(entered, key=lambda n: -len(entered[n]))
        shown = "; ".join(f"{n!r} goes between " + " and ".join(dict.fromkeys(
            layout.describe() if isinstance(layout, Layout) else "Python values" for layout in entered[n]))
            for n in names)
        first = names[0]
        dims = next((layout.dims for layout in entered[first] if isinstance(layout, Layout)), None)
        raise self.ctx.error(UnsupportedError, stmt, f"loop needs too many conversions before it: each iteration "
                             f"leaves {', '.join(repr(n) for n in names)} in another layout than the one it found "
                             f"({shown})", f"pin {first!r} with a hint inside the loop, where the body reassigns it "
                             f"({first}: Tensor[{hint_dims(dims) if dims else '...'}] = ...), so that every "
                             "iteration leaves it as it found it")

    def _unrolled_for(self, stmt: cst.For) -> list[cst.BaseStatement] | None:
        """``for q in jax.tree.leaves(params): total = total + jnp.sum(q ** 2)``, ``for w in (w1, w2): x = x @ w``:
        a loop over items meshify knows one by one (:meth:`_unrolled_columns`) whose layouts differ, which one
        body rewritten once cannot take: unrolled, as Python runs it, each item bound to the target in the order
        Python takes them (``q = params.b``: a pytree's leaves in JAX's order) and a copy of the body rewritten
        for it.  None where the items share a layout or are not known one by one (the loop kept as written)."""
        if stmt.orelse is not None or stmt.asynchronous is not None:
            return None
        if read_again(stmt.iter):
            mark = self.mark()
            held = self.expr(stmt.iter).value
            self.rollback(mark)
            if isinstance(held, TupleValue) and not held.items:
                # (key, *subs = jax.random.split(key, 1): no item, so no iteration runs)
                note = comment_line(f"the loop over {self.ctx.code(stmt.iter)} runs no iteration (it has no item)")
                return [cst.SimpleStatementLine([cst.Pass()], leading_lines=[*stmt.leading_lines, note])]
        found = self._unrolled_columns(stmt.target, stmt.iter)
        if found is None:
            return None
        names, columns = found
        mark = self.mark()
        value_columns = [[self.expr(e).value for e in elements] for elements in columns]
        self.rollback(mark)
        keyed = any(self._dict_keys(stmt.iter, sorted_only=True, items=i) is not None for i in (False, True))
        if not keyed and all(common_item(values) is not None or all(isinstance(v, Static) for v in values)
                             for values in value_columns):
            return None  # (Python values: the loop kept, as Python runs it; a dict's keys steer what is read)
        block = stmt.body if isinstance(stmt.body, cst.IndentedBlock) else self._indented(stmt.body)  # type: ignore[arg-type]
        exits = _jumps_out(block.body) + _returns_in(block.body)
        if exits:
            word = {cst.Break: "break", cst.Continue: "continue"}.get(type(exits[0]), "return")
            raise self.ctx.error(UnsupportedError, exits[0], f"'{word}' in a loop over {self.ctx.code(stmt.iter)!r}, "
                                 "whose items have different layouts (meshify unrolls it: a copy of the body per "
                                 "item)", "leave the loop without it (an if around the rest of the body, a flag), or "
                                 "give the items one layout")
        self._line = self.ctx.line(stmt)
        layouts = ", ".join(v.layout.describe() if isinstance(v, Array) else type(v).__name__
                            for v in value_columns[-1])
        out: list[cst.BaseStatement] = []
        rebound = set().union(*(bound_names(s) for s in block.body))
        # a key or a counter the body only reads is written in its place (params["bias"]: its dtype is known)
        literal = [n for n, column in zip(names, columns) if n not in rebound
                   and all(isinstance(e, cst.SimpleString | cst.Integer) for e in column)]
        # Python reads the iterable once, before the first iteration: items the body could change (it rebinds a
        # name they read) or that compute something are read into a tuple first, each iteration taking its item
        from meshify.rewrite._helpers import module_names

        taken = set(module_names(self.ctx.text)) | set(self.env) | set(self.free) | rebound
        for c, (name, column) in enumerate(zip(names, columns)):
            if all(isinstance(e, cst.SimpleString | cst.Integer) for e in column) or all(
                    read_again(e) and not ({n.value for n in _all_names(e)} & rebound) for e in column):
                continue
            held = next(f"{name}_items{i or ''}" for i in itertools.count() if f"{name}_items{i or ''}" not in taken)
            taken.add(held)
            line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(held))], cst.Tuple(
                [cst.Element(_clone(self, e)) for e in column]))])
            self.ctx.anchors[line] = stmt.iter
            out.extend(self._block([line]))
            columns[c] = [cst.Subscript(cst.Name(held), [cst.SubscriptElement(cst.Index(int_node(i)))])
                          for i in range(len(column))]
        for items in zip(*columns):
            for name, item in zip(names, items):
                line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], _clone(self, item))])
                self.ctx.anchors[line] = stmt.target  # (where its errors point: the loop's target)
                out.extend(self._block([line]))
            put = _Put({n: item for n, item in zip(names, items) if n in literal})
            out.extend(self._block([_clone(self, s, put if literal else None) for s in block.body]))
        if out:
            why = "each key reads a value of another layout" if keyed else \
                f"its items have different layouts ({layouts})"
            note = comment_line(f"the loop over {self.ctx.code(stmt.iter)} unrolled: {why}")
            out[0] = out[0].with_changes(leading_lines=[*stmt.leading_lines, note])
        return out

    def _while_statement(self, stmt: cst.While) -> cst.While | cst.For:
        """``while len(res.shape) < len(shape): res = res[..., None]`` (guided diffusion's
        ``_extract_into_tensor``): a Python loop on values meshify reads, walked iteration by iteration as
        Python runs it; kept as written where no iteration needs other code (no collective, no value
        converted); else refused, as is a condition meshify cannot read."""
        self._line = self.ctx.line(stmt)
        fix = "loop over range(n) with n known, or use jax.lax.while_loop(cond, body, init)"
        if stmt.orelse is not None:
            raise self.ctx.error(UnsupportedError, stmt, "while/else", "write a plain while loop (move the else: "
                                 "block after it)")
        code = cst.Module([]).code_for_node
        block = stmt.body if isinstance(stmt.body, cst.IndentedBlock) else self._indented(stmt.body)  # type: ignore[arg-type]
        jumps = _jumps_out(block.body)
        if jumps:
            word = "break" if isinstance(jumps[0], cst.Break) else "continue"
            raise self.ctx.error(UnsupportedError, jumps[0], f"'{word}' in a Python while loop",
                                 "loop with for over range(n) (break and continue work there), or put the condition "
                                 "in the while's test")
        tests_as_written = True
        for trips in range(_MAX_WHILE):
            test = self.expr(stmt.test)
            if trips == 0 and isinstance(test.value, Static) and not test.value.known:
                return self._while_unknown(stmt, block, fix)
            if not (isinstance(test.value, Static) and test.value.known):
                raise self.ctx.error(UnsupportedError, stmt.test, f"a while loop on {self.ctx.code(stmt.test)!r}, which "
                                     "meshify cannot read here (a Python while loop must stop at the same iteration "
                                     "on every device, and meshify rewrites its body once per iteration)", fix)
            tests_as_written = tests_as_written and code(test.node) == code(stmt.test)
            if not test.value.literal:
                if tests_as_written:
                    return stmt
                # the condition reads sizes (len(res.shape): global ones), written differently per iteration: the
                # count of iterations this version runs, which the condition decides before the function runs
                counter = "_" if "_" not in bound_names(self.fn.body) else "_trip"  # (never a name the code reads)
                loop = cst.For(target=cst.Name(counter), iter=cst.parse_expression(f"range({trips})"), body=stmt.body,
                               leading_lines=[*stmt.leading_lines, comment_line(
                                   f"'while {self.ctx.code(stmt.test)}' runs {trips} times in this version")])
                return loop  # type: ignore[return-value]
            before = len(self.records)
            new = self._block(block.body)
            if len(self.records) != before or len(new) != len(block.body) \
                    or any(code(n) != code(o) for n, o in zip(new, block.body)):
                raise self.ctx.error(UnsupportedError, stmt, "a while loop whose body meshify rewrites (a collective "
                                     "or a converted value in it): its iterations would need other code", fix)
        raise self.ctx.error(UnsupportedError, stmt, f"a while loop running more than {_MAX_WHILE} iterations",
                             fix)

    def _while_unknown(self, stmt: cst.While, block: cst.IndentedBlock, fix: str) -> cst.While:
        """A Python while loop on a static value meshify does not know (``while n < cfg.halvings:``): kept as
        written where its body is Python arithmetic and arrays it leaves as it found them, with no collective
        (every iteration the same code); the Python values it changes are unknown after it."""
        start = dict(self.env)
        before = len(self.records)
        code = cst.Module([]).code_for_node
        new = self._block(block.body)
        changed = [n for n, v in self.env.items() if start.get(n) != v]
        arrays = [n for n in changed if not isinstance(self.env[n], Static) or not isinstance(start.get(n), Static)]
        if arrays or len(self.records) != before or len(new) != len(block.body) \
                or any(code(n) != code(o) for n, o in zip(new, block.body)):
            raise self.ctx.error(UnsupportedError, stmt.test, f"a while loop on {self.ctx.code(stmt.test)!r}, which "
                                 "meshify cannot read here, whose body changes arrays"
                                 + (f" ({', '.join(map(repr, arrays))})" if arrays else "") + " or needs collectives: "
                                 "meshify rewrites a loop's body once for an unknown count only where it is the same "
                                 "code every iteration", fix)
        for name in changed:
            self.env[name] = Static()  # n += 1 an unknown number of times
        test = self.expr(stmt.test)
        if not isinstance(test.value, Static):
            raise self.ctx.error(UnsupportedError, stmt.test, f"a while loop on {self.ctx.code(stmt.test)!r}, an "
                                 "array: a traced condition", fix)
        return stmt

    def mark(self) -> WalkState:
        """Everything walking code changes, to :meth:`rollback` to before walking it again."""
        return WalkState(dict(self.env), len(self.records), len(self.bindings), len(self.uses), len(self._comments),
                         frozenset(self.index_names), frozenset(self.key_names), frozenset(self.static_reads),
                         dict(self.pinned_reads), self.dtypes.snapshot(), frozenset(self.own_lists),
                         len(self._results), tuple(len(j.at) if j is not None else 0 for j in self._jumps))

    def rollback(self, mark: WalkState) -> None:
        self.env = dict(mark.env)
        del self.records[mark.records:], self.bindings[mark.bindings:], self.uses[mark.uses:]
        del self._comments[mark.comments:]
        self.index_names, self.key_names = set(mark.index_names), set(mark.key_names)
        self.static_reads, self.pinned_reads = set(mark.static_reads), dict(mark.pinned_reads)
        self.dtypes.restore(mark.dtypes)
        self.own_lists = set(mark.own_lists)
        del self._results[mark.results:], self._result_paths[mark.results:]
        for jumps, count in zip(self._jumps, mark.jumps):
            if jumps is not None:
                del jumps.at[count:]

    def _enter_loop(self, name: str, target: Layout | Value) -> list[cst.BaseStatement]:
        """``name = <name converted to target>``, before a loop whose body returns it in ``target`` (nothing
        where only its inferred dims' names change)."""
        value = self.env[name]
        if not isinstance(target, Layout):  # a list the body appends to (_containers.appending), a counter
            self.env[name] = target
            return []
        checked = None
        if isinstance(value, Opaque):  # acc = jnp.zeros((4, 8)) before a loop whose body splits it
            assert value.shape is not None
            checked, value = value.shape, Array(Layout.replicated(target.dims))
        assert isinstance(value, Array)
        if value.layout.dims != target.dims:  # inferred dims named as the body names them
            value = Array(Layout(target.dims, value.layout.axes, value.layout.partial), value.origin)
        self._comments = []
        node = self._converted_value(Operand(value, cst.Name(name), cst.Name(name)), target, "the loop body")
        if checked is not None and isinstance(node, cst.Call):
            # its entries are checked against the split dims' sizes in the call, as where code meets it
            node = call_template(entries_template(self.mesh, target), mr=cst.Name(self.ctx.mr), x=node)
        if value.layout.partial and not target.partial:
            self.dtypes.completed(name)
        maybe = maybe_none(self, self.env[name])
        self.env[name] = Array(target, value.origin)
        self.bindings.append(Binding(self._line, name, target))
        if isinstance(node, cst.Name):
            return []
        if maybe:  # an array or None, known only when traced: converted where it is an array
            self.maybe_none.append(self.env[name])
            node = cst.IfExp(cst.Comparison(cst.Name(name), [cst.ComparisonTarget(cst.IsNot(), cst.Name("None"))]),
                             node, cst.Name("None"))
        assign = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=node)
        return [cst.SimpleStatementLine(body=[assign], leading_lines=[comment_line(c) for c in self._comments])]

    def _enter_loop_value(self, name: str, key: str, target: Layout) -> list[cst.BaseStatement]:
        """``name[key] = <that value converted to target>`` (or ``name = {**name, key: ...}`` for a dict another
        name may hold), before a loop whose body leaves the value under ``key`` of the dict of known keys ``name``
        holds in ``target``: every iteration then finds it as the body leaves it.  A NamedTuple's field likewise,
        ``name = name._replace(key=...)``, and a dataclass's, ``name = dataclasses.replace(name, key=...)``."""
        held = self.env[name]
        assert isinstance(held, StructValue) and held.kind in ("dict", "namedtuple", "dataclass")
        value = held.field(key)
        assert isinstance(value, Array)
        if value.layout.dims != target.dims:  # inferred dims named as the body names them
            value = Array(Layout(target.dims, value.layout.axes, value.layout.partial), value.origin)
        self._comments = []
        item = _value_node(name, key) if held.kind == "dict" else cst.Attribute(cst.Name(name), cst.Name(key))
        node = self._converted_value(Operand(value, item, item), target, "the loop body")
        self.env[name] = replace(held, fields=tuple((k, Array(target, value.origin) if k == key else v)
                                                    for k, v in held.fields))
        if node is item:
            return []
        store = self._value_store(name, key, node) if held.kind == "dict" else _field_store(
            name, key, node, _dataclass_replace(self.ctx) if held.kind == "dataclass" else None)
        return [cst.SimpleStatementLine(body=[store], leading_lines=[comment_line(c) for c in self._comments])]

    def _converted_value(self, op: Operand, target: Layout, purpose: str) -> cst.BaseExpression:
        """``op`` (a name, or a dict's value ``d["k"]``, read in place) converted to ``target``, each step noted for
        ``purpose``; a partial sum completed has its dtype cast back and is no longer widened in the dict's items."""
        value = op.value
        assert isinstance(value, Array)
        node, layout = op.node, value.layout
        for step in plan_conversion(layout, target, self.mesh):
            # a float16/bfloat16 partial sum accumulated in float32 is cast back, as everywhere else
            reducing = step.kind in ("psum", "psum_scatter")
            node = apply_step(step, node, self.ctx.mr, self._like(op.original) if reducing else None,
                              reduce_dtype=self.reduce_dtype if reducing else None)
            self.note(step, op, layout, purpose)
            layout = step_result(step, layout)
        if value.layout.partial and not target.partial:
            self.dtypes.completed_value(op.original)
        return node

    def _value_store(self, name: str, key: str, node: cst.BaseExpression) -> cst.BaseSmallStatement:
        """``name[key] = node`` where this function made the dict ``name`` holds and no other name holds it, else
        ``name = {**name, key: node}`` (a new dict: another name's stays as meshify holds it)."""
        if name in self.own_lists and name not in self.shared_lists:
            return cst.Assign(targets=[cst.AssignTarget(_value_node(name, key))], value=node)
        spread = cst.Dict([cst.StarredDictElement(cst.Name(name)),
                           cst.DictElement(cst.SimpleString(json.dumps(key)), node)])
        return cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=spread)

    def _for_once(self, stmt: cst.For) -> cst.For:
        self._line = self.ctx.line(stmt)
        if stmt.orelse is not None or stmt.asynchronous is not None:
            raise self.ctx.error(UnsupportedError, stmt, "for/else or async for",
                                 "write a plain for loop (move the else: block after it)")
        counted = _counted(self, stmt.iter)  # for i, layer in enumerate(layers); for a, b in zip(xs, ys)
        if counted is not None:
            first, iterable, items, new_iter = counted
            self._bind_target(stmt.target, TupleValue(tuple(items)))
        else:
            first = stmt.iter
            iterable = self.expr(first)
            new_iter = iterable.node
            self._bind_target(stmt.target, self._loop_item(first, iterable), _items_proxy(self, first, iterable.value))
            self.dtypes.bind_columns(stmt.target, first)  # for y, x in zip(*pairs): each position's items' dtypes
        targets_after = self.dtypes.loop_targets([(name, sequence) for name, sequence in _target_sources(
            stmt.target, stmt.iter) if isinstance(self.env.get(name), Array)])
        block = stmt.body if isinstance(stmt.body, cst.IndentedBlock) else self._indented(stmt.body)  # type: ignore[arg-type]
        # assigned before read, or the loop's own target: each iteration starts them afresh
        fresh = rebound_first(block.body) | set(_bound_names(stmt.target))
        start = {name: value for name, value in self.env.items() if name not in fresh}
        trips: int | str | UnknownLoop | None = self._trip_count(first)
        if trips is None and sequence_item(iterable.value) is not None:
            # for layer in model.layers (a list[Layer] field): as many as verify draws, --dims layers=N
            trips = _field_name(first)
            if trips is None and isinstance(first, cst.Name) and first.value in self._args:
                trips = first.value  # for b in blocks, a tuple[Block, ...] parameter: --dims blocks=N
        jumps_out = _jumps_out(block.body)
        if jumps_out:  # (a collective after one runs on some iterations only: explain cannot count it)
            first_jump = jumps_out[0]
            word = "break" if isinstance(first_jump, cst.Break) else "continue"
            trips = UnknownLoop(self._line, self.ctx.code(stmt.iter), self.fn.name.value,
                                f"it may skip iterations or stop early: '{word}' at line {self.ctx.line(first_jump)}")
        self._loops.append(trips if trips is not None else UnknownLoop(self._line, self.ctx.code(stmt.iter),
                                                                       self.fn.name.value))
        self._loop_names.append(frozenset(bound_names(stmt)))
        self.loop_carried.append(frozenset(start))
        jumps = _Jumps(start)
        self._jumps.append(jumps)
        shared_before = set(self.shared_lists)
        outer_reads, self.absent_reads = self.absent_reads, {}
        try:
            statements = self._block(block.body)
            statements.extend(self._complete_carried(start, stmt))
        finally:
            self._loops.pop()
            self._loop_names.pop()
            self.loop_carried.pop()
            self._jumps.pop()
            absent, self.absent_reads = self.absent_reads, {**outer_reads, **self.absent_reads}
        body = block.with_changes(body=statements) if block is stmt.body else self._one_line(stmt.body, statements)
        for name in sorted((self.shared_lists - shared_before) & set(start) & listed_names(self.fn)):
            # handed on after it was appended to: the next iteration's appends would not be followed
            raise _LoopEntry(name, start[name])
        self.dtypes.left_loop(targets_after)
        end = self.env
        for env in (*(env for _, _, env in jumps.at), end):
            self._check_absent_reads(absent, start, env)
        for word, node, env in jumps.at:
            self._check_carried(stmt, start, env, f"at the '{word}' on line {self.ctx.line(node)}")
        self._check_carried(stmt, start, end, "")
        breaks = [(node, env) for word, node, env in jumps.at if word == "break"]
        for node, env in breaks:  # after the loop: what the body's end or a break leaves (of one layout)
            for name, value in env.items():
                other = end.get(name)
                if not (isinstance(value, Array) and isinstance(other, Array) and value.layout != other.layout):
                    continue
                if not self._read_outside(stmt, name):  # a temporary of the body: the end's value stands
                    env[name] = other
                    continue
                raise self.ctx.error(
                    LayoutError, node, f"{name!r} has layout {value.layout.describe()} at this 'break' and "
                    f"{other.layout.describe()} at the end of the loop's body, and is read after the loop",
                    (f"give {name!r} one layout at both (a hint: {name}: Tensor[{hint_dims(other.dims)}] = ...), "
                     if value.dims == other.dims else "") + "or read it only inside the loop")
        if breaks:
            self.env = self._merge(stmt, start, [end], [env for _, env in breaks])
        return stmt.with_changes(body=body, iter=new_iter)

    def _check_absent_reads(self, absent: dict[tuple[str, str], tuple[cst.CSTNode, Value]], start: dict[str, Value],
                            env: dict[str, Value]) -> None:
        """Refuses ``d.get("k", default)`` in a loop whose body stores ``d["k"]`` where ``d`` held no such key when
        the loop began, unless what it stores has the default's layout (or is whole where the default is a Python
        value): the body is rewritten once, for the first iteration's default, and the later iterations read the
        value stored instead (was: a psum completing it again, or a raw JAX error)."""
        for (name, key), (read, default) in absent.items():
            before, after = start.get(name), env.get(name)
            stored = after.field(key) if isinstance(after, StructValue) and after.kind == "dict" else None
            if stored is None or (isinstance(before, StructValue) and before.field(key) is not None):
                continue
            if common_item([default, stored]) is not None or isinstance(default, Static) and isinstance(
                    stored, Array) and not stored.layout.is_split and not stored.layout.partial:
                continue
            raise self.ctx.error(
                UnsupportedError, read, f"{self.ctx.code(read)} reads key {key!r}, which {name!r} does not hold when "
                f"the loop around it starts and its body stores ({described_value(stored)}, where the default is "
                f"{described_value(default)}): the first iteration reads the default, the others what was stored, "
                "and meshify rewrites the body once", f"store the key before the loop ({name}[{key!r}] = <the "
                "default>), or keep that value in a name of its own (prev = default before the loop, prev = ... in it)")

    def _read_outside(self, loop: cst.For, name: str) -> bool:
        """Whether ``name`` appears outside ``loop`` in the statement of the body holding it (an outer loop may
        read it on its next iteration) or in any statement after that one."""
        if self._top < 0:
            return True
        found = False

        class _Find(cst.CSTVisitor):
            def visit_For(self, node: cst.For) -> bool:
                return node is not loop

            def visit_Name(self, node: cst.Name) -> None:
                nonlocal found
                found = found or node.value == name

        for statement in self._top_statements[self._top:]:
            statement.visit(_Find())
        return found

    def _check_carried(self, stmt: cst.For, start: dict[str, Value], env: dict[str, Value], where: str) -> None:
        """Each value the loop entered with as the next iteration takes it from ``env`` (the body's end, or a
        ``continue``/``break`` (``where``)): raises :class:`_LoopEntry` to enter the loop in the layout the body
        leaves, or refuses a change no conversion before the loop can make."""
        for name, before in start.items():
            after = env.get(name)
            if name in self.first_reads and mapping_item(before) is None and mapping_item(after) is None:
                raise self.ctx.error(UnsupportedError, stmt, f"this loop reads {name!r} at a key meshify does not "
                                     "know while rewriting, and stores into it at keys it knows (or not at all): "
                                     "which value that reads is known only when traced", f"store at keys of the "
                                     f"loop's counter ({name}[f\"l{{i}}\"] = h), or keep the value read in a name "
                                     "of its own (prev = h)")
            if isinstance(before, Array) and isinstance(after, Array) and before != after \
                    and before.layout.axes == after.layout.axes and before.layout.partial == after.layout.partial \
                    and common_item([before, after]) == before:
                env[name] = before  # x = jnp.concatenate([a, b]): 'c?' for the user's 'c', nothing else changed
                continue
            if sequence_item(before) is None and sequence_item(after) is not None:
                # xs = [] before a loop whose body appends to it: every iteration starts from the list of its items
                raise _LoopEntry(name, after)
            if mapping_item(before) is None and mapping_item(after) is not None:
                # outs = {} before a loop whose body stores at keys meshify does not know: every iteration starts
                # from the dict of its values' one layout (the stores checked the keys it held before share it)
                raise _LoopEntry(name, after)
            if mapping_item(before) is not None and after != before:
                self._same_mapping(stmt, name, before, after, where)
            if isinstance(before, StructValue) and isinstance(after, StructValue) and after != before \
                    and before.kind not in ("mapping", "sequence") and after.kind == before.kind:
                self._same_fields(stmt, name, before, after, where)
            if isinstance(before, Static | TupleValue) and isinstance(after, TupleValue) and after != before:
                # hidden_states = hidden_states + (x,): as many items as iterations, of one layout
                raise _LoopEntry(name, self._grown(name, before, after, stmt))
            if isinstance(before, Static) and isinstance(after, Static) and after != before and before != Static():
                # n = n + 1, dims = dims + (2,), h = h // 2: another value each iteration, unknown after the first
                raise _LoopEntry(name, Static())
            if isinstance(before, Array) and isinstance(after, Array) and before.layout != after.layout and (
                    before.layout.dims == after.layout.dims or renamed_dims(before.layout.dims, after.layout.dims)):
                # enter the loop in the layout the body leaves it in (an inferred dim the body lines up with a
                # user's name, x of a reshape's 'height_width?' meeting a 'patches' weight, takes that name)
                raise _LoopEntry(name, after.layout)
            if isinstance(before, Opaque) and before.shape is not None and isinstance(after, Array) and any(
                    after.layout.axes) and not after.layout.partial and len(before.shape) == after.layout.rank:
                raise _LoopEntry(name, after.layout)  # acc = jnp.zeros((B, D)), then split by the body
            if isinstance(before, Array) and after != before:
                described = described_value(after)
                raise self.ctx.error(
                    LayoutError, stmt, f"the layout of {name!r} changes across iterations of this loop: "
                    f"{before.layout.describe()} before, {described} {where or 'after'}",
                    f"pin it with a hint before the loop and inside it: {name}: Tensor["
                    f"{hint_dims(before.dims) if before.dims else '()'}] = ...")

    def _same_fields(self, stmt: cst.For, name: str, before: StructValue, after: StructValue, where: str) -> None:
        """A dict of known keys (or a NamedTuple, a dataclass) that a loop carries, as the next iteration takes it:
        the body is rewritten once, so a value it leaves in another layout of the same dims is converted before
        the loop (a dict's: :class:`_LoopEntry` of that key), a Python value it changes is unknown from there on;
        any other change (a struct's field, a value of other dims) is refused.  (Was not checked: ``d = {"acc":
        x @ w}`` then ``d["acc"] = d["acc"] + h @ w`` in the loop psummed the completed sum again each
        iteration.)"""
        keys = {k for k, _ in after.fields}
        for key, b in before.fields:
            a = after.field(key) if key in keys else None
            if a is None or a == b:
                continue  # (a key the body removes or adds: its reads are checked where they are)
            if isinstance(b, Array) and isinstance(a, Array) and b.layout.axes == a.layout.axes \
                    and b.layout.partial == a.layout.partial and common_item([b, a]) == b:
                continue  # (only names meshify inferred differ)
            replaceable = before.kind in ("dict", "namedtuple") or (
                before.kind == "dataclass" and _dataclass_replace(self.ctx) is not None)
            if replaceable and isinstance(key, str) and isinstance(b, Array) \
                    and isinstance(a, Array) and b.layout != a.layout and (b.dims == a.dims or renamed_dims(b.dims,
                                                                                                         a.dims)):
                raise _LoopEntry(name, a.layout, key)  # (d["acc"] = ..., s = s._replace(acc=...) before the loop)
            if isinstance(b, Static) and isinstance(a, Static) and b != Static():
                raise _LoopEntry(name, replace(before, fields=tuple((k, Static() if k == key else v)
                                                                    for k, v in before.fields)))
            shown = f"{name}[{key!r}]" if before.kind == "dict" else f"{name}.{key}"
            differ = [d for d, x, y in zip(b.dims, b.layout.axes, a.layout.axes) if x != y] \
                if isinstance(b, Array) and isinstance(a, Array) and b.dims == a.dims else []
            named = f" ({', '.join(map(repr, differ))} split the same way)" if differ else ""
            raise self.ctx.error(
                LayoutError, stmt, f"{shown} is {_layouts(b)} when this loop's body starts and "
                f"{_layouts(a)} {where or 'at its end'}: the body is rewritten once, for one layout",
                f"keep it in a name of its own while the loop runs (v = {shown} before the loop, rebuild "
                f"{name!r} after it), or give it one layout in every iteration{named} (a hint where it is made)"
                + ("; or import dataclasses in this module: meshify then converts it before the loop with "
                   "dataclasses.replace" if before.kind == "dataclass" and isinstance(b, Array) and isinstance(a, Array)
                   and (b.dims == a.dims or renamed_dims(b.dims, a.dims)) else ""))

    def _either_list(self, name: str, a: Value, b: Value, stmt: cst.CSTNode) -> Value:
        """A list one branch of an if appends to and the other does not (``if keep: hs.append(x)``): a
        sequence of its items' one layout (its length is known only when traced)."""
        items = [*listed_items(a), *listed_items(b)]  # type: ignore[misc]
        if not items:
            return Static()
        common = common_item(items)
        if common is not None:
            return sequence_of(common)
        if one_layout(items) is not None:
            raise self.ctx.error(LayoutError, stmt, f"{name!r} holds other items after each branch, of different "
                                 "layouts", f"give the items of {name!r} one layout (a hint where each is made), "
                                 "or make the list after the if")
        return sequence_of(items[0])

    def _same_mapping(self, stmt: cst.For, name: str, before: Value, after: Value | None, where: str) -> None:
        """A dict of keys known only when traced that a loop carries, as the next iteration takes it: the body
        rewritten for its values' one layout must find that layout again (``outs = {"a": y}`` rebinding it to
        values of another, or to something else, is refused)."""
        item = mapping_item(before)
        values = [mapping_item(after)] if mapping_item(after) is not None else [v for _, v in after.fields] \
            if isinstance(after, StructValue) and after.kind == "dict" else None
        if values is not None and common_item([item, *values]) == item:
            return
        raise self.ctx.error(LayoutError, stmt, f"{name!r} holds a dict of keys known only when traced, its values "
                             f"{described_value(item)}, when this loop's body starts, and {described_value(after)}"
                             + (f" holding {', '.join(described_value(v) for v in values)}" if values else "")
                             + f" {where or 'at its end'}: the body is rewritten once, for one layout",
                             f"give the values of {name!r} one layout in every iteration, or make a new dict (under "
                             "another name) where it changes")

    def _either_mapping(self, name: str, a: Value, b: Value, stmt: cst.CSTNode) -> Value:
        """A dict one branch of an if stores into at a key meshify does not know and the other leaves (``if keep:
        outs[f"l{i}"] = h``): a dict of keys known only when traced, its values' one layout."""
        values = [v for held in (a, b) for v in ([mapping_item(held)] if mapping_item(held) is not None else
                                                 [v for _, v in held.fields] if isinstance(held, StructValue)
                                                 and held.kind == "dict" else [None])]
        common = common_item(values) if None not in values else None
        if common is None:
            raise self.ctx.error(LayoutError, stmt, f"{name!r} is a dict of keys known only when traced after one "
                                 f"branch and {described_value(a if mapping_item(b) is not None else b)} after the "
                                 "other, or its values have different layouts", f"give {name!r} one kind of value "
                                 "after both branches, of one layout (a hint where each is made)")
        return mapping_of(common)

    def _either_dict(self, name: str, a: StructValue, b: StructValue, stmt: cst.CSTNode) -> Value:
        """A dict of known keys the branches of an if leave differently (``if c: m["new"] = x``, ``m["a"]`` of
        another value in each): the same keys in the same order, each value the one both leave (an array of
        one layout; a Python value that differs, known only when traced); keys one branch adds or removes, a
        dict of keys known only when traced (:mod:`_mappings`), its values of one layout.  Was the first
        branch's dict, whatever the other left (its keys, ``len`` and ``in`` wrong where the other ran)."""
        if [k for k, _ in a.fields] != [k for k, _ in b.fields]:
            values = [v for _, v in (*a.fields, *b.fields)]
            common = common_item(values)
            if common is None or not isinstance(common, Array | Opaque):
                raise self.ctx.error(LayoutError, stmt, f"{name!r} holds other keys after each branch (keys "
                                     f"{[k for k, _ in a.fields]} and {[k for k, _ in b.fields]}), and its values "
                                     f"are not arrays of one layout ({', '.join(described_value(v) for v in values)})"
                                     ": which keys it holds is known only when traced", "store the same keys in "
                                     "both branches, or give its values one layout (a hint where each is made), or "
                                     "keep what one branch adds in a dict of its own")
            return mapping_of(common)
        fields = []
        for (key, x), (_, y) in zip(a.fields, b.fields):
            both = x if x == y else Static() if isinstance(x, Static) and isinstance(y, Static) \
                and not any(isinstance(v.literal, LocalDef) for v in (x, y)) else common_item([x, y])
            if both is None:
                raise self.ctx.error(LayoutError, stmt, f"{name}[{key!r}] is {described_value(x)} after one branch "
                                     f"and {described_value(y)} after the other", "give it one layout in both "
                                     "branches (a hint where each is made: v: Tensor[...] = ...)")
            fields.append((key, both))
        return StructValue(a.cls, tuple(fields), "dict", a.meta)

    def _either_struct(self, name: str, a: StructValue, b: StructValue, stmt: cst.CSTNode) -> Value:
        """A NamedTuple (or dataclass) the branches of an if leave differently: each field the one both leave (an
        array of one layout; a Python value that differs, known only when traced).  Was the first branch's,
        whatever the other left (its fields' dims and layouts wrong where the other ran: a raw JAX error)."""
        if a.cls != b.cls or [k for k, _ in a.fields] != [k for k, _ in b.fields]:
            raise self.ctx.error(LayoutError, stmt, f"{name!r} is a {a.cls} after one branch and a {b.cls} (or other "
                                 "fields) after the other", f"make {name!r} the same class with the same fields "
                                 "after both branches")
        fields = []
        for (key, x), (_, y) in zip(a.fields, b.fields):
            both = x if x == y else Static() if isinstance(x, Static) and isinstance(y, Static) \
                and not any(isinstance(v.literal, LocalDef) for v in (x, y)) else common_item([x, y])
            if both is None:
                dims = x.dims if isinstance(x, Array) else None
                fix = (f"pin {name}.{key} with a hint where each branch makes it: v: Tensor[{hint_dims(dims)}] = ..."
                       if dims and isinstance(y, Array) and y.dims == dims else f"give {name}.{key} the same dims "
                       f"in both branches, or keep what one branch makes in a name of its own")
                raise self.ctx.error(LayoutError, stmt, f"{name}.{key} is {described_value(x)} after one branch "
                                     f"and {described_value(y)} after the other", fix)
            fields.append((key, both))
        return replace(a, fields=tuple(fields))

    def _grown(self, name: str, before: Static | TupleValue, after: TupleValue, stmt: cst.For) -> StructValue:
        """The sequence a tuple (or list) the loop's body joins items to holds: every item of one layout."""
        items = [*(before.items if isinstance(before, TupleValue) else ()), *after.items]
        common = common_item(items)  # (items differing only by names meshify inferred: the user's)
        if common is not None and after.items:
            return sequence_of(common)
        if not after.items or one_layout(items, like=after.items[-1]) is not None:
            raise self.ctx.error(LayoutError, stmt, f"{name!r} gains items in this loop whose layouts differ (or "
                                 "loses them): the body is rewritten once, so every item must have one layout",
                                 f"give the items of {name!r} one layout (a hint where each is made), or collect them "
                                 "with jax.lax.scan")
        return sequence_of(after.items[-1])

    def _complete_carried(self, start: dict[str, Value], stmt: cst.For) -> list[cst.BaseStatement]:
        """``h = mr.psum(h, ...)`` at the end of a loop body that leaves ``h`` a partial sum where it
        entered whole (or less partial): the next iteration takes it as it entered.  (Entering the loop
        as a partial sum instead would sum each device's whole copy on the first iteration.)"""
        out = []
        for name, before in start.items():
            after = self.env.get(name)
            if not (isinstance(before, Array) and isinstance(after, Array) and before.dims == after.dims):
                continue
            extra = after.layout.partial - before.layout.partial
            if extra:
                out.append(self._summed(name, after, extra, stmt, "the next iteration (it entered the loop whole)"))
        for name, before in start.items():
            after = self.env.get(name)
            if isinstance(before, StructValue) and isinstance(after, StructValue) and before.kind == "dict" \
                    and after.kind == "dict":
                out.extend(self._complete_carried_values(name, before, after))
        return out

    def _complete_carried_values(self, name: str, before: StructValue, after: StructValue) -> list[cst.BaseStatement]:
        """``d["acc"] = mr.psum(d["acc"], ...)`` at the end of a loop body that leaves the value under a key of the
        dict ``d`` a partial sum where it entered whole (``d = {**d, "acc": d["acc"] + h @ w}``)."""
        out = []
        for key, b in before.fields:
            a = after.field(key)
            if not (isinstance(key, str) and isinstance(b, Array) and isinstance(a, Array) and b.dims == a.dims
                    and a.layout.partial - b.layout.partial):
                continue
            self._comments = []
            item = _value_node(name, key)
            target = a.layout.with_partial(a.layout.partial & b.layout.partial)
            node = self._converted_value(Operand(a, item, item), target,
                                         "the next iteration (it entered the loop whole)")
            self.env[name] = after = replace(after, fields=tuple((k, Array(target, a.origin) if k == key else v)
                                                                 for k, v in after.fields))
            out.append(cst.SimpleStatementLine(body=[self._value_store(name, key, node)],
                                               leading_lines=[comment_line(c) for c in self._comments]))
        return out

    def _summed(self, name: str, value: Array, extra: frozenset[str], stmt: cst.CSTNode,
                purpose: str) -> cst.BaseStatement:
        """``name = mr.psum(name, ...)`` over the ``extra`` axes of ``value``'s partial sum, for ``purpose``."""
        self._comments = []
        return self._materialise(self._restart(name, value, extra, purpose), stmt)

    def _restart(self, name: str, value: Array, extra: frozenset[str], purpose: str) -> _Restart:
        """The psum completing ``name``'s partial sum over the ``extra`` axes, for ``purpose``, as a restart."""
        steps = plan_conversion(value.layout, value.layout.with_partial(value.layout.partial - extra), self.mesh)
        reason = self._reason(steps[0], Operand(value, cst.Name(name), cst.Name(name)), value.layout, purpose)
        return _Restart(name, steps[0].axes, reason)

    def _if_statement(self, stmt: cst.If) -> cst.If:
        """``if flag:`` on a static value (a config field, a ``train`` flag): both branches are rewritten.

        Python picks the branch at trace time, so each branch must leave every array it
        shares with the other in the same layout; a branch that returns leaves nothing.
        """
        self._line = self.ctx.line(stmt)
        test = self.expr(stmt.test)
        if isinstance(test.value, Opaque):  # a module variable set under an if or a try, a closure's (converted)
            raise self.ctx.error(UnsupportedError, stmt.test, f"an if on {self.ctx.code(stmt.test)!r}, which reads a "
                                 "value meshify cannot tell from an array here (a module variable assigned under an "
                                 "if or a try, or changed after, or a closure's variable in a converted file)",
                                 "make it a literal module constant (MODE = \"sum\"), or pass it as a static "
                                 "argument with a default; to branch on an array, use jnp.where(cond, a, b)")
        if not isinstance(test.value, Static):
            raise self.ctx.error(UnsupportedError, stmt.test, "an if on a traced array (a value known only on device)",
                                 "branch with jnp.where(cond, a, b), or on static Python values only")
        if test.value.known and self.assume_defaults:
            return self._taken_branch(stmt, test)
        known = none_test(self, stmt.test)
        if known is not None:
            return self._known_branch(stmt, known)
        if not test.value.known:
            return self._both_branches(stmt, test)
        mark = self.mark()
        try:
            return self._both_branches(stmt, test)
        except MeshifyError:  # a flag whose value meshify reads: the branch Python skips may not fit
            self.rollback(mark)
            return self._known_branch(stmt, bool(test.value.literal))

    def _both_branches(self, stmt: cst.If, test: Operand) -> cst.If:
        """Each branch rewritten; after the ``if``, each name has the one value both branches leave."""
        start = dict(self.env)
        dtypes_start = self.dtypes.snapshot()
        if test.value.known:  # (a flag of this version: the returns of the branch Python skips are not its results)
            self._known_tests[id(stmt.test)] = bool(test.value.literal)
        self._narrow(stmt.test, True)
        body, refused = self._branch(stmt.body, stmt.test, True, test)
        after_body, body_returns = self.env, refused is not None or self._suite_returns(stmt.body)
        dtypes_body = self.dtypes.snapshot()
        self.env = dict(start)
        self._narrow(stmt.test, False)
        self.dtypes.restore(dtypes_start)
        orelse = stmt.orelse
        new_orelse: cst.If | cst.Else | None = None
        else_returns = False
        if isinstance(orelse, cst.If):
            self._conditions.append((stmt.test, False))
            try:
                new_orelse = self._if_statement(orelse)
            finally:
                self._conditions.pop()
        elif isinstance(orelse, cst.Else):
            new_body, other = self._branch(orelse.body, stmt.test, False, test)
            if refused is not None and other is not None:
                raise refused
            new_orelse = orelse.with_changes(body=new_body)
            else_returns = other is not None or self._suite_returns(orelse.body)
        after_else = self.env
        if not body_returns and not else_returns:
            # a partial sum one branch leaves where the other leaves it whole (a dense layer or an MoE one,
            # chosen by a static flag): completed at the end of its branch, so both leave it alike (an elif
            # chain's branches are joined by its own if first)
            dtypes_else = self.dtypes.snapshot()
            self.env = after_body
            self.dtypes.restore(dtypes_body)
            body = self._appended(body, self._join_partials(after_else, stmt))
            dtypes_body = self.dtypes.snapshot()
            self.env = after_else
            self.dtypes.restore(dtypes_else)
            if isinstance(new_orelse, cst.Else):
                new_orelse = new_orelse.with_changes(body=self._appended(new_orelse.body,
                                                                         self._join_partials(after_body, stmt)))
            elif orelse is None:  # if i == 0: x = ln(x), x a partial sum: completed on the path that skips it
                joined = self._join_partials(after_body, stmt)
                if joined:
                    new_orelse = cst.Else(body=cst.IndentedBlock(body=joined))
                    after_else = self.env
        taken = (after_body if test.value.literal else after_else) if test.value.known else None
        self.env = self._merge(stmt, start, [] if body_returns else [after_body],
                               [] if else_returns else [after_else], taken=taken)
        self.dtypes.merge([*([] if body_returns else [dtypes_body]),
                           *([] if else_returns else [self.dtypes.snapshot()])])
        return stmt.with_changes(test=test.node, body=body,
                                 orelse=new_orelse if new_orelse is not None else stmt.orelse)

    def _narrow(self, test: cst.BaseExpression, taken: bool) -> None:
        """``if prev is not None:`` (or ``is None``'s else), ``prev`` what ``outs.get(k)`` gave: an array in the
        branch where it is not None, None in the other."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)
                and isinstance(test.comparisons[0].operator, cst.Is | cst.IsNot)
                and isinstance(test.comparisons[0].comparator, cst.Name)
                and test.comparisons[0].comparator.value == "None"):
            return
        name = test.left.value
        if not maybe_none(self, self.env.get(name)):
            return
        if isinstance(test.comparisons[0].operator, cst.IsNot) == taken:
            self.env[name] = replace(self.env[name])  # type: ignore[type-var]
        else:  # (after the if, an array or None again: _merge)
            self.env[name] = Static.of(None)

    def _branch(self, suite: cst.BaseSuite, test: cst.BaseExpression, taken: bool, value: Operand
                ) -> tuple[cst.BaseSuite, MeshifyError | None]:
        """One branch of an ``if`` on a static value meshify does not know (``if cfg.mode == "assoc":``),
        rewritten; where meshify refuses it (an op without a rule, say), the branch raises that error
        instead, in the version a call that takes it runs: refused when taken, never rewritten wrong (a
        config may keep an alternative its calls never take).  Returns the suite and that error, if any."""
        mark = self.mark()
        self._conditions.append((test, taken))
        try:
            return self._suite(suite), None
        except MeshifyError as e:
            if value.value.known or isinstance(e, BranchLayouts) or e.span is None:
                raise
            self.rollback(mark)
            return self._refused_suite(e, test, taken), e
        finally:
            self._conditions.pop()

    def _refused_suite(self, error: MeshifyError, test: cst.BaseExpression, taken: bool) -> cst.BaseSuite:
        """``raise mr.refused(...)`` in place of a branch meshify refuses (see :meth:`_branch`)."""
        assert error.span is not None
        when = f"{'' if taken else 'not '}{self.ctx.code(test)}"
        call = cst.parse_expression(
            f"{self.ctx.mr}.refused({json.dumps(error.code)}, {json.dumps(error.headline)}, "
            f"{json.dumps(error.fix)}, at={json.dumps(f'{error.span.path}:{error.span.line}:{error.span.col}')})")
        lines = [comment_line(f"this branch is not rewritten: a call where {when} raises {error.code} "
                              f"(line {error.span.line}: {error.headline})")]
        raised = cst.SimpleStatementLine(body=[cst.Raise(exc=call)], leading_lines=lines)
        return cst.IndentedBlock(body=[raised])  # (a one-line body too: the raise goes on a line of its own)

    def _join_partials(self, other: dict[str, Value], stmt: cst.If) -> list[cst.BaseStatement]:
        """``name = mr.psum(name, ...)`` for each array this branch (``self.env``) leaves partial over axes
        the ``other`` branch's is not, with the same dims and splits otherwise."""
        out = []
        for name, value in list(self.env.items()):
            theirs = other.get(name)
            if isinstance(value, TupleValue) and isinstance(theirs, TupleValue) and len(value.items) == len(theirs.items) \
                    and value != theirs and not maybe_none(self, value):
                out += self._join_partial_items(name, value, theirs)
                continue
            if isinstance(value, Array) and value.layout.partial and isinstance(theirs, Static) and theirs.known \
                    and type(theirs.literal) in (int, float) and value.layout.rank:
                # a partial sum here, a Python number there: completed, a number or a whole array after the if
                out.append(self._summed(name, value, value.layout.partial, stmt, "the end of this branch (the other "
                                        "leaves a Python number)"))
                continue
            if isinstance(value, Opaque) and isinstance(theirs, Array) and not theirs.layout.partial \
                    and theirs.layout.is_split and value.shape is not None and len(value.shape) == theirs.layout.rank and theirs.layout.rank \
                    and 1 not in value.shape:
                out.append(self._whole_of_dims(name, theirs.layout))
                continue
            if not (isinstance(value, Array) and isinstance(theirs, Array) and value.layout.partial
                    and value.layout.rank == theirs.layout.rank and value.layout.axes == theirs.layout.axes
                    and all(unify_dims(a, b) is not None for a, b in zip(value.dims, theirs.dims))):
                continue  # (dims differing only by names meshify inferred are the same dims)
            extra = value.layout.partial - theirs.layout.partial
            if extra:
                out.append(self._summed(name, value, extra, stmt, "the end of this branch (the other leaves it whole)"))
        return out

    def _whole_of_dims(self, name: str, layout: Layout) -> cst.BaseStatement:
        """``name = mr.local_block(name, ...)``: an array of a literal shape this branch leaves in ``name``
        (``s = jnp.ones((4, 16))``) where the other leaves an array of the same rank named by its dims, taken as whole
        of those dims (each entry a size it gives; none is 1, a broadcast) and sliced locally to the other's blocks
        (no communication, where gathering the other's would move its blocks)."""
        self._comments = []
        node = self._converted_value(Operand(Array(Layout.replicated(layout.dims)), cst.Name(name), cst.Name(name)),
                                     layout, "the end of this branch (the other leaves it split)")
        self.env[name] = Array(layout)
        assign = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=node)
        return cst.SimpleStatementLine(body=[assign], leading_lines=[comment_line(c) for c in self._comments])

    def _join_partial_items(self, name: str, value: TupleValue, theirs: TupleValue) -> list[cst.BaseStatement]:
        """``name = (mr.psum(name[0], ...), name[1])``: the items of the tuple this branch leaves in ``name`` that
        are partial sums over axes the ``other`` branch's items are not, with the same dims and splits otherwise
        (``t = (h @ v, x)`` here, ``t = (x, h)`` there), completed at the end of this branch."""
        self._comments = []
        items, changed = [], False
        for i, (x, y) in enumerate(zip(value.items, theirs.items)):
            node = item_node(cst.Name(name), i)
            if isinstance(x, Array) and isinstance(y, Array) and x.layout.partial - y.layout.partial \
                    and x.layout.rank == y.layout.rank and x.layout.axes == y.layout.axes \
                    and all(unify_dims(a, b) is not None for a, b in zip(x.dims, y.dims)):
                target = x.layout.with_partial(x.layout.partial & y.layout.partial)
                new = self._converted_value(Operand(x, node, node), target, "the end of this branch (the other "
                                            "leaves it whole)")
                items.append((Array(target, x.origin), new))
                changed = True
            else:
                items.append((x, node))
        if not changed:
            return []
        self.env[name] = value.of(v for v, _ in items)
        assign = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))],
                            value=value.literal([cst.Element(n) for _, n in items]))
        return [cst.SimpleStatementLine(body=[assign], leading_lines=[comment_line(c) for c in self._comments])]

    def _known_branch(self, stmt: cst.If, taken: bool) -> cst.If:
        """``if pos is None:`` where meshify knows whether ``pos`` is None (an array never is; a helper
        version is specialised on it), or ``if bidirectional:`` on a flag whose value meshify reads (a
        literal the caller passes, a module constant) where the branches cannot both be rewritten (``ret
        = 0`` then ``ret += ...`` in one branch only: a number after one, an array after the other): only
        the branch Python takes is rewritten, the other kept as written (it never runs in this version),
        and a comment says so."""
        note = comment_line(f"'{self.ctx.code(stmt.test)}' is {taken} in this version: only "
                            f"{'this branch' if taken else 'the else branch'} runs, and is rewritten")
        new = stmt.with_changes(leading_lines=[*stmt.leading_lines, note])
        self._known_tests[id(stmt.test)] = taken  # (if lora is None: return x: what follows never runs here)
        if taken:
            return new.with_changes(body=self._suite(stmt.body))
        if isinstance(stmt.orelse, cst.If):
            return new.with_changes(orelse=self._if_statement(stmt.orelse))
        if isinstance(stmt.orelse, cst.Else):
            return new.with_changes(orelse=stmt.orelse.with_changes(body=self._suite(stmt.orelse.body)))
        return new

    def _taken_branch(self, stmt: cst.If, test: Operand) -> cst.If:
        """explain's mode, a known condition: only the branch Python will take is walked."""
        self._known_tests[id(stmt.test)] = bool(test.value.literal)
        if test.value.literal:
            return stmt.with_changes(body=self._suite(stmt.body))
        if isinstance(stmt.orelse, cst.If):
            return stmt.with_changes(orelse=self._if_statement(stmt.orelse))
        if isinstance(stmt.orelse, cst.Else):
            self._suite(stmt.orelse.body)
        return stmt

    def _merge(self, stmt, start, *branches, taken: dict[str, Value] | None = None) -> dict[str, Value]:
        """The values names hold after an if: the one both branches leave (an array's layout must agree); a
        Python value or a list that differs is the branch's Python takes (``taken``: a condition meshify
        knows), else unknown (a list: of one layout)."""
        envs = [env for group in branches for env in group]
        if not envs:
            return start
        merged = dict(envs[0])
        for env in envs[1:]:
            for name in set(merged) | set(env):
                a, b = merged.get(name), env.get(name)
                if a is None or b is None:
                    merged[name] = a if a is not None else b
                elif a != b:
                    merged[name] = self._either(name, a, b, stmt, taken.get(name) if taken is not None else None,
                                                known=taken is not None)
        for name, value in list(merged.items()):  # prev = outs.get(k) None after one branch: None or not after it
            if value is not None and any(maybe_none(self, env.get(name)) for env in envs) \
                    and not maybe_none(self, value):
                merged[name] = replace(value)  # (its own object)
                self.maybe_none.append(merged[name])
        numbers = self.ctx.root.maybe_numbers
        for name, value in list(merged.items()):  # out = m if m is not None else 1.0 in one branch: a number still
            if value is not None and not any(value is v for v in numbers) \
                    and any(env.get(name) is v for env in envs for v in numbers):
                merged[name] = replace(value)  # (its own object; an array or None still, where it was)
                numbers.append(merged[name])
                if any(value is v for v in self.maybe_none):
                    self.maybe_none.append(merged[name])
        return merged

    def _either(self, name: str, a: Value, b: Value, stmt: cst.CSTNode, taken: Value | None, known: bool = False
                ) -> Value:
        """The value ``name`` holds after an if whose branches leave ``a`` and ``b`` (they differ): the one
        Python takes where meshify knows the condition (``taken``); two Python values, known only when traced;
        arrays of one layout; lists, dicts and structs key by key, tuples of one length item by item
        (:meth:`_either_items`); an array (or a tuple or pytree) or None where the condition is ``known`` only when
        traced (else refused: the caller rewrites the branch Python takes).  Any other pair is refused here:
        keeping one branch's value would rewrite what reads it for a layout the other branch does not leave."""
        if taken is not None and not isinstance(a, Array) and not isinstance(b, Array):
            return taken
        if isinstance(a, Static) and isinstance(b, Static) and not any(isinstance(v.literal, LocalDef) for v in (a, b)):
            return Static()  # n = 1 in one branch, 3 in the other: known only when traced
        if isinstance(a, Array) and isinstance(b, Array) and a.dims != b.dims and taken is not None \
                and common_item([a, b]) is not None:
            # (if bidirectional: h = jnp.concatenate((h, back), -1), the flag known: the joined 'd?' of the branch
            # Python takes, never the user's 'd' of the other, a dim of another size)
            return taken
        if isinstance(a, Array) and isinstance(b, Array) and common_item([a, b]) is not None:
            # (dims differing only by names meshify inferred: the user's, but for one of another size)
            return _resized_dims(common_item([a, b]), (a, b))  # type: ignore[arg-type]
        if isinstance(a, TupleValue) and isinstance(b, TupleValue) and len(a.items) == len(b.items):
            return self._either_items(name, a, b, stmt, known)
        if listed_items(a) is not None and listed_items(b) is not None:
            return self._either_list(name, a, b, stmt)
        if mapping_item(a) is not None or mapping_item(b) is not None:
            return self._either_mapping(name, a, b, stmt)
        if all(isinstance(v, StructValue) and v.kind == "dict" for v in (a, b)):
            return self._either_dict(name, a, b, stmt)  # type: ignore[arg-type]
        if all(isinstance(v, StructValue) and v.kind in ("namedtuple", "dataclass") for v in (a, b)):
            return self._either_struct(name, a, b, stmt)  # type: ignore[arg-type]
        if not known and _array_or_none(a, b):
            # b = None; if flag: b = x @ w (flag known only when traced): an array or None after the if
            value = replace(next(v for v in (a, b) if not is_none(v)))  # (its own object)
            self.maybe_none.append(value)
            return value
        if isinstance(a, Opaque) and isinstance(b, Opaque) and (a.shape is None or b.shape is None
                                                                or len(a.shape) == len(b.shape)):
            return Opaque(a.shape if a.shape == b.shape else None)  # whole arrays, their shape known when traced
        if any(isinstance(v, Static) and isinstance(v.literal, LocalDef) for v in (a, b)):
            raise self.ctx.error(UnsupportedError, stmt, f"{name!r} is a different function after each "
                                 "branch", f"define {name}() once before the if, or call it only inside "
                                 "the branch that defines it")
        if isinstance(a, Array) and isinstance(b, Array):
            raise self.ctx.error(LayoutError, stmt, f"{name!r} has layout {described_value(a)} after one branch "
                                 f"and {described_value(b)} after the other",
                                 f"pin it with a hint in both branches: {name}: Tensor[...] = ...")
        number = next((v for v in (a, b) if isinstance(v, Static) and v.known and type(v.literal) in (int, float)), None)
        array = next((v for v in (a, b) if isinstance(v, Array) and not v.layout.partial), None)
        if number is not None and array is not None:
            # s = 1.0; if cfg.use_m: s = x * 2: a Python number or an array, known only when traced; read where
            # both give one result (_evaluate.number_or_array_of); a 0-d array: JAX treats the two alike
            if not array.layout.rank:
                return array
            value = replace(array)  # (its own object)
            self.ctx.root.maybe_numbers.append(value)
            return value
        if isinstance(a, Array) or isinstance(b, Array):
            raise self.ctx.error(LayoutError, stmt, f"{name!r} has layout {described_value(a)} after one branch "
                                 f"and {described_value(b)} after the other",
                                 f"make it an array before the if, with a hint ({name}: Tensor[()] = "
                                 f"jnp.zeros(()) for a scalar), so that both branches leave an array")
        raise self.ctx.error(LayoutError, stmt, f"{name!r} is {_kind(a)} after one branch and {_kind(b)} after "
                             "the other: what reads it after the if is rewritten once, for one of them",
                             f"give {name!r} the same kind of value after both branches (an array of one layout, "
                             "a tuple of as many items), or keep what each branch makes in a name of its own")

    def _either_items(self, name: str, a: TupleValue, b: TupleValue, stmt: cst.CSTNode, known: bool) -> Value:
        """Two tuples (or lists) of one length the branches of an if leave (``t = (h @ w, v)`` and ``t = (h, v @
        u)``): item by item, as :meth:`_either` merges names (``t[0]`` named in its messages).  Was a list of one
        layout for all their items, refused where the positions differ."""
        items = []
        for i, (x, y) in enumerate(zip(a.items, b.items)):
            if x == y:
                items.append(x)
                continue
            if not is_none(x) and not is_none(y) and (holds_partial(x) != holds_partial(y) or (
                    isinstance(x, Array) and isinstance(y, Array) and x.layout.partial != y.layout.partial)):
                partial = x if holds_partial(x) else y
                dims = partial.dims if isinstance(partial, Array) else None
                raise self.ctx.error(LayoutError, stmt, f"{name}[{i}] is {_layouts(x)} after one branch and "
                                     f"{_layouts(y)} after the other (a partial sum in one only)",
                                     "complete it where it is made, with a hint on a name of its own (v: Tensor["
                                     f"{hint_dims(dims) if dims else '...'}] = ...), then put that name in the tuple")
            items.append(self._either(f"{name}[{i}]", x, y, stmt, None, known))
        return a.of(items)

    def _loop_item(self, node: cst.BaseExpression, iterable: Operand) -> Value:
        """What ``for t in <node>`` binds ``t`` to: an item of a sequence of hinted structs (``params.blocks``:
        the item hint's layout), of a tuple meshify holds item by item (a helper's ``*args``: they must share
        a layout), or a Python value (``range(n)``); a loop over an array is refused."""
        item = sequence_item(iterable.value)
        if isinstance(iterable.value, TupleValue) and iterable.value.items:  # for t in xs (a helper's *args)
            from meshify.rewrite._bodies import _text

            item = common_item(iterable.value.items)
            if item is None:
                raise self.ctx.error(UnsupportedError, node, "a Python loop over a tuple whose items have "
                                     "different layouts: " + ", ".join(_text(i) for i in iterable.value.items),
                                     "give the items the same layout before the loop, or unroll it")
        value = iterable.value
        if item is None and isinstance(value, Array) and value.layout.rank and not value.layout.axes[0] \
                and not value.layout.partial:
            # for k in keys (keys = jax.random.split(key, n)): each row of a value whole along its first dim
            return Array(Layout(value.dims[1:], value.layout.axes[1:]), value.origin)
        if item is None and isinstance(value, Opaque):  # (a whole array of unknown dims: a row of it)
            return Opaque(value.shape[1:] if value.shape else None)
        if item is None and mapping_item(value) is not None:  # for k in outs: keys known only when traced
            return Static()
        if isinstance(value, StructValue) and item is None:  # for k in params: a pytree's keys
            from meshify.rewrite._evaluate import _PYTREE_LOOP_FIX

            name = self.ctx.code(node)
            raise self.ctx.error(UnsupportedError, node, f"a Python loop over the pytree {name!r} (its keys or "
                                 "items) is not modelled", _PYTREE_LOOP_FIX.format(name=name))
        if not isinstance(value, Static) and item is None:
            split = isinstance(value, Array) and value.layout.rank and value.layout.axes[0]
            raise self.ctx.error(UnsupportedError, node, "a Python loop over an array" + (
                f" split along its first dim {value.dims[0]!r}" if split else " that is a partial sum"
                if isinstance(value, Array) and value.layout.partial else ""),
                                 "loop over static values (range(n)), or use jax.lax.scan")
        return Static() if item is None else item

    def _trip_count(self, iterable: cst.BaseExpression) -> int | str | None:
        """``range(n)``'s n: an int literal, or the dim whose size n is (``range(w.shape[0])``)."""
        if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name)
                and iterable.func.value == "range" and len(iterable.args) == 1):
            return None
        value = self.expr(iterable.args[0].value).value
        if isinstance(value, Static) and value.known and isinstance(value.literal, int):
            return value.literal
        return value.size_of if isinstance(value, Static) else None

    def _keeps_partial(self, targets: Sequence[cst.AssignTarget]) -> bool:
        """Whether ``d["acc"] = x @ w`` stores the partial sum as it is (completed where it is read whole, as a dict
        display's): one target, a string key of a dict of known keys whose values' dtypes meshify follows."""
        if len(targets) != 1 or not isinstance(target := targets[0].target, cst.Subscript) \
                or not isinstance(target.value, cst.Name) or len(target.slice) != 1 \
                or not isinstance(target.slice[0].slice, cst.Index) \
                or not isinstance(target.slice[0].slice.value, cst.SimpleString):
            return False
        held = self.env.get(target.value.value)
        return isinstance(held, StructValue) and held.kind == "dict" \
            and isinstance(self.dtypes.tuples.get(target.value.value), KeyedItems)

    def _fresh_pytrees(self, node: cst.BaseExpression) -> bool:
        """Whether ``node`` is a call of a JAX transform or loop, whose pytree results JAX builds anew (a dict
        of metrics out of ``jax.value_and_grad(..., has_aux=True)``, a scan's carry): this function's own."""
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Call) and self.ctx.qualified_names(node.func.func) & _TRANSFORMS:
            return True
        return bool(self.ctx.qualified_names(node.func) & _LOOPS)

    def _materialise(self, r: _Restart, stmt: cst.CSTNode) -> cst.BaseStatement:
        value = self.env[r.name]
        assert isinstance(value, Array)
        layout = value.layout.with_partial(value.layout.partial - set(r.axes))
        self.env[r.name] = Array(layout)
        maybe = maybe_none(self, value)
        if maybe:  # (an array or None, known only when traced: completed where it is an array)
            self.maybe_none.append(self.env[r.name])
        identity, invariant = self._record_scope(cst.Name(r.name))
        self.records.append(Record(self._line, "psum", r.axes, "", r.reason, value.layout, tuple(self._loops),
                                   value=identity, invariant=invariant, statement=self._top, binds=r.name))
        self.bindings.append(Binding(self._line, r.name, layout))
        line = psum_statement(r.name, r.axes, self.ctx.mr, self._like(cst.Name(r.name), where=stmt),
                              self.reduce_dtype)
        if maybe:  # b = mr.psum(b, ...) if b is not None else None
            assign = line.body[0]
            assert isinstance(assign, cst.Assign)
            guard = cst.Comparison(cst.Name(r.name), [cst.ComparisonTarget(cst.IsNot(), cst.Name("None"))])
            line = line.with_changes(body=[assign.with_changes(value=cst.IfExp(guard, assign.value, cst.Name("None")))])
        self.dtypes.completed(r.name)
        return line.with_changes(leading_lines=[comment_line(r.reason)])

    def _small(self, s: cst.BaseSmallStatement) -> cst.BaseSmallStatement:
        if isinstance(s, cst.Assign):
            before = len(self.records)
            if len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name):
                self.number_reads[id(s.value)] = s.value  # (out = m if m is not None else 1.0: a number or an array)
            op = self.expr(s.value)
            if any(isinstance(t.target, cst.Subscript) for t in s.targets) and isinstance(op.value, Array) \
                    and op.value.layout.partial and not self._keeps_partial(s.targets):
                # hs[i] = x @ w: a list's items are whole (as appends make them)
                whole = op.value.layout.with_partial(())
                held = [self.env.get(t.target.value.value) for t in s.targets if isinstance(t.target, cst.Subscript)
                        and isinstance(t.target.value, cst.Name)]
                what = "a value of a dict" if any(isinstance(h, StructValue) and h.kind in ("dict", "mapping")
                                                  for h in held) else "an item of a list"
                op = Operand(Array(whole, op.value.origin), op.original, self.convert(op, whole, what))
            self._fed_names(s, self.records[before:])
            if isinstance(op.value, Static | Opaque) and not getattr(op.value, "known", False):  # act = jax.nn.gelu
                from meshify.rewrite._evaluate import chosen
                from meshify.rewrite._helpers import function_ref

                ref = function_ref(self.ctx, chosen(self, s.value), set(self.env) | set(self.free)
                                   | set(self.ctx.enclosing_names(self.fn)))
                if ref is None and isinstance(s.value, cst.Attribute):  # f = self.norm: a method held in a name
                    from meshify.rewrite._evaluate import own_method

                    method = own_method(self, s.value)
                    if method is not None and (method.receiver is None or isinstance(method.receiver, cst.Name)):
                        ref = FunctionRef(self.ctx.code(s.value), helper=method.method.name.value, path=self.ctx.path,
                                          owner=method.owner.name.value, static=method.static,
                                          receiver=method.receiver.value if method.receiver is not None else "")
                op = op if ref is None else replace(op, value=Static.of(ref))
            for target in s.targets:
                self._bind_target(target.target, op.value, s.value)
            names = {t.target.value for t in s.targets if isinstance(t.target, cst.Name)}
            if isinstance(s.value, cst.BinaryOperation) and isinstance(s.value.operator, cst.Add) \
                    and isinstance(op.value, TupleValue | StructValue):
                self.own_lists.update(names)  # hs = hs + [x]: a new list, made here
            if self._fresh_pytrees(s.value):  # (loss, metrics), g = jax.value_and_grad(f, has_aux=True)(...)
                self.own_lists.update(n.value for t in s.targets for n in _target_names(t.target)
                                      if isinstance(self.env.get(n.value), StructValue)
                                      and self.env[n.value].kind == "dict")
            made = (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp)
            if isinstance(s.value, made) or _repeated_literal(s.value) or _copied_dict(s.value, op.value) or isinstance(s.value, cst.IfExp) and all(  # () if output_hidden else None
                    isinstance(b, made) or isinstance(b, cst.Name) and b.value == "None"
                    for b in (s.value.body, s.value.orelse)):
                self.own_lists.update(names)
                if _repeated_nones(s.value) and isinstance(op.value, Static) and not op.value.known:
                    # hs = [None] * n, n a size meshify does not know: placeholders, arrays stored into them
                    for name in names:
                        self.env[name] = sequence_of(Static.of(None))
                if names & listed_names(self.fn) and isinstance(op.value, TupleValue) and holds_partial(op.value):
                    op = self._completed_items(op, names)
                    for target in s.targets:
                        self._bind_target(target.target, op.value, s.value)
            return s.with_changes(value=op.node)
        if isinstance(s, cst.AnnAssign):
            return self._ann_assign(s)
        if isinstance(s, cst.AugAssign):
            return self._aug_assign(s)
        if isinstance(s, cst.Return):
            before = len(self._results)
            out = self._return_items_marked(s)
            path = None if self._loops else tuple(self._conditions)
            self._result_paths.extend([path] * (len(self._results) - before))
            return out
        if isinstance(s, cst.Expr):
            appended = appending(self, s.value)
            return s.with_changes(value=appended if appended is not None else self.expr(s.value).node)
        if isinstance(s, cst.Pass):
            return s
        if isinstance(s, cst.Assert):
            return self._assert(s)
        if isinstance(s, cst.Raise):
            return self._raise(s)
        if isinstance(s, cst.Break | cst.Continue):
            return self._jump(s)
        if isinstance(s, cst.Del) and removed(self, s):  # del hs[0]
            return s
        kind = type(s).__name__.lower()
        raise self.ctx.error(UnsupportedError, s, f"'{kind}' statements are not supported in a @mesh function",
                             "move it outside the @mesh function")

    def _jump(self, s: cst.Break | cst.Continue) -> cst.Break | cst.Continue:
        """``break``/``continue`` in a Python loop, kept as written: Python takes it at trace time, on a condition
        every device shares.  A value the loop carries that is a partial sum here, where it entered whole, is
        completed first (as at the body's end); the rest is checked when the loop's walk ends (``_Jumps``)."""
        word = "break" if isinstance(s, cst.Break) else "continue"
        jumps = self._jumps[-1] if self._jumps else None
        if jumps is None:
            raise self.ctx.error(UnsupportedError, s, f"'{word}' " + (
                "in a Python while loop" if self._jumps else "outside a loop"),
                "loop with for over range(n) or a sequence" if self._jumps else "remove it")
        for name, before in jumps.start.items():
            after = self.env.get(name)
            if isinstance(before, Array) and isinstance(after, Array) and before.dims == after.dims:
                extra = after.layout.partial - before.layout.partial
                if extra:
                    raise self._restart(name, after, extra, f"the '{word}' (it entered the loop whole)")
        jumps.at.append((word, s, dict(self.env)))
        return s

    def _completed_items(self, op: Operand, names: set[str]) -> Operand:
        """``hs = [x @ w]`` (a list display), ``hs`` appended to or popped later: its partial sums completed here,
        since what it appends is whole (``_containers.appending``) and a list's items are read as one layout."""
        assert isinstance(op.value, TupleValue) and isinstance(op.original, cst.List | cst.Tuple) \
            and isinstance(op.node, cst.List | cst.Tuple)
        purpose = f"an item of the list {min(names)!r}"
        items, elements = [], []
        for v, e, n in zip(op.value.items, op.original.elements, op.node.elements):
            if isinstance(v, Array) and v.layout.partial and not isinstance(e, cst.StarredElement):
                whole = v.layout.with_partial(())
                n = n.with_changes(value=self.convert(Operand(v, e.value, n.value), whole, purpose))
                v = Array(whole, v.origin)
            items.append(v)
            elements.append(n)
        return Operand(op.value.of(items), op.original, op.node.with_changes(elements=elements))

    def _assert(self, s: cst.Assert) -> cst.Assert:
        """``assert`` on static values (shapes, the config): kept, a check run when JAX traces the program
        (``x.shape[-1]`` of a split dim still means its global size)."""
        test = self.expr(s.test)
        msg = self.expr(s.msg) if s.msg is not None else None
        for op in (test, msg):
            if op is not None and not isinstance(op.value, Static):
                raise self.ctx.error(
                    UnsupportedError, op.original, f"assert on {self.ctx.code(op.original)!r}, a traced array: "
                    "its value is known only on device, when the program runs",
                    "assert on static values only (shapes, the config); check array values outside the @mesh "
                    "function, or with jax.experimental.checkify")
        return s.with_changes(test=test.node, msg=msg.node if msg is not None else s.msg)

    def _raise(self, s: cst.Raise) -> cst.Raise:
        """``raise ValueError(...)``: kept (under ``if`` on static values, a check run at trace time)."""
        exc = self.expr(s.exc) if s.exc is not None else None
        cause = self.expr(s.cause.item) if s.cause is not None else None
        new = s.with_changes(exc=exc.node) if exc is not None else s
        return new.with_changes(cause=s.cause.with_changes(item=cause.node)) if cause is not None else new

    def _bind_target(self, target: cst.BaseAssignTargetExpression, value: Value,
                     node: cst.BaseExpression | None = None) -> None:
        if isinstance(target, cst.Name):
            self.own_lists.discard(target.value)
            self.dtypes.bind(target.value, node, value)
            self.env[target.value] = value
            self.versions[target.value] = next(_VERSIONS)
            if isinstance(value, Array):
                self.bindings.append(Binding(self._line, target.value, value.layout))
                grid = _arange_grid(self, node)
                if grid is not None and value.layout.rank == grid[1]:
                    self.aranges[target.value] = (self.versions[target.value], value.dims[grid[0]], *grid)
            return
        if isinstance(target, cst.Tuple | cst.List):
            elements = [e.value for e in target.elements]
            starred = [i for i, e in enumerate(target.elements) if isinstance(e, cst.StarredElement)]
            count = (1 if value.dims[0] == BROADCAST else literal_size(value.dims[0])) \
                if isinstance(value, Array) and value.layout.rank else None
            if starred and isinstance(value, Array) and count is not None and not value.layout.axes[0] \
                    and not value.layout.partial:
                # key, *subs = jax.random.split(key, 3): rows of a first dim of a size its name says (3?, 1)
                layout = value.layout
                row = Array(Layout(layout.dims[1:], layout.axes[1:]), value.origin)
                value = TupleValue((row,) * count)
            elif starred and isinstance(value, Array):
                raise self.ctx.error(UnsupportedError, target, f"starred unpacking of {self.ctx.code(node or target)!r}"
                                     f" along its first dim {value.dims[0]!r}"
                                     + (f", split over {axes_text(value.layout.axes[0])}" if value.layout.axes[0] else
                                        ", whose size meshify does not know while rewriting"),
                                     "unpack it into one name per row (a, b, c = x), or index it (x[0], x[1:])")
            if starred and isinstance(value, TupleValue | Opaque | Static):  # q, *kv = jnp.split(qkv, 3, -1)
                self._bind_starred(target, elements, starred, value, node)
                return
            if isinstance(value, TupleValue):
                if len(value.items) != len(elements):
                    raise self.ctx.error(LayoutError, target, f"unpacking {len(value.items)} values into "
                                         f"{len(elements)} names", f"unpack into {len(value.items)} names")
                # each item's expression, or the whole right-hand side (jnp.split(x @ w, 2): its items
                # have its dtype, and are partial sums formed like it)
                nodes = [e.value for e in node.elements] if isinstance(node, cst.Tuple | cst.List) \
                    and len(node.elements) == len(elements) \
                    else _items(node, len(elements), node is not None and node in self.dtypes.call_items)
                for e, v, n in zip(elements, value.items, nodes):
                    self._bind_target(e, v, n)
                return
            if isinstance(value, StructValue) and value.kind == "namedtuple" and not starred:
                # nodes, senders, receivers = graph (jraph's GraphsTuple): a NamedTuple unpacks into its fields
                if len(value.fields) != len(elements):
                    raise self.ctx.error(LayoutError, target, f"unpacking {value.cls}'s {len(value.fields)} fields "
                                         f"into {len(elements)} names", f"unpack into {len(value.fields)} names: "
                                         f"{', '.join(k for k, _ in value.fields)}")
                fields = [cst.Attribute(node, cst.Name(k)) if node is not None and read_again(node) else None
                          for k, _ in value.fields]
                for e, (_, v), n in zip(elements, value.fields, fields):
                    if n is not None:
                        self.ctx.anchors[n] = node
                    self._bind_target(e, v, n)
                return
            if isinstance(value, Array) and not starred and value.layout.rank > 0:
                # key, value = jnp.einsum("bd,cdh->cbh", x, w_kv): rows of its first dim (Python unpacks an
                # array along it; the count is checked when JAX traces it)
                layout = value.layout
                if layout.axes[0]:
                    raise self.ctx.error(UnsupportedError, target, f"unpacking {self.ctx.code(node or target)!r} "
                                         f"along dim {layout.dims[0]!r}, split over {axes_text(layout.axes[0])}: "
                                         "each device holds a block of its rows",
                                         f"map {layout.dims[0]!r} to no mesh axis, or index the rows (x[0], x[1])")
                row = Array(Layout(layout.dims[1:], layout.axes[1:], layout.partial), value.origin)
                for e, n in zip(elements, _items(node, len(elements))):
                    self._bind_target(e, row, n)
                return
            if isinstance(value, Opaque):  # e.g. k1, k2 = jax.random.split(key)
                for e in elements:
                    self._bind_target(e, Opaque())
                return
            if isinstance(value, Static):
                shape_of = value.shape_of if value.shape_of and len(value.shape_of) == len(elements) else None
                for i, e in enumerate(elements):
                    self._bind_target(e, Static(size_of=shape_of[i]) if shape_of else Static())
                return
        if isinstance(target, cst.Subscript) and stored(self, target, value) is not None:  # hs[i] = v
            self.dtypes.stored(target, node, holds_partial(value))
            return
        raise self.ctx.error(UnsupportedError, target, f"assignment to {self.ctx.code(target)!r}",
                             "assign arrays to plain names (no attribute, subscript or .at[] updates)")

    def _bind_starred(self, target: cst.Tuple | cst.List, elements: list, starred: list[int], value: Value,
                      node: cst.BaseExpression | None) -> None:
        """``first, *rest = items``: the names before and after the starred one take one item each, the starred
        one a list of the others (a tuple of values here; opaque or static where the items are)."""
        if len(starred) > 1:
            raise self.ctx.error(LayoutError, target, "multiple starred names in one assignment", "star one name")
        at = starred[0]
        after = len(elements) - at - 1
        if not isinstance(value, TupleValue):
            for i, e in enumerate(elements):
                self._bind_target(e, type(value)() if i != at else value if isinstance(value, Opaque) else Static())
            return
        if len(value.items) < len(elements) - 1:
            raise self.ctx.error(LayoutError, target, f"unpacking {len(value.items)} values into "
                                 f"{len(elements) - 1} names and a starred one",
                                 f"unpack into at most {len(value.items) + 1} names")
        items = list(value.items)
        nodes = [e.value for e in node.elements] if isinstance(node, cst.Tuple | cst.List) \
            and len(node.elements) == len(items) and not any(isinstance(e, cst.StarredElement) for e in node.elements) \
            else _items(node, len(items), node is not None and node in self.dtypes.call_items)
        for i, e in enumerate(elements[:at]):
            self._bind_target(e, items[i], nodes[i])
        for j, e in enumerate(elements[at + 1:]):
            k = len(items) - after + j
            self._bind_target(e, items[k], nodes[k])
        rest = TupleValue(tuple(items[at:len(items) - after]))
        if isinstance(node, cst.Tuple | cst.List) and len(node.elements) == len(items):  # *ab, c = (x, 2 * x, y)
            self._bind_target(elements[at], rest, node.with_changes(elements=node.elements[at:len(items) - after]))
        elif node is not None and node in self.dtypes.call_items:  # a helper's items, known one by one
            self._bind_target(elements[at], rest)
            self.dtypes.tuples[elements[at].value] = self.dtypes.call_items[node][at:len(items) - after]
        else:  # jnp.split(x @ w, 3): every item has the whole expression's dtype
            self._bind_target(elements[at], rest, node)

    def _ann_assign(self, s: cst.AnnAssign) -> cst.AnnAssign:
        dims = read_dims(self.ctx, s.annotation.annotation)
        inner = optional_inner(self.ctx, s.annotation.annotation) if dims is None else None
        if inner is not None:  # mask: Tensor[...] | None = make(...) if shift > 0 else None
            dims = read_dims(self.ctx, inner)
        if s.value is None:
            raise self.ctx.error(UnsupportedError, s, "annotation without a value", "assign a value")
        if dims is not None and is_reshape(self, s.value):
            call = reshape_call(self, s.value)
            value, node = self.lower(call, reshape_named(self.rule_context(), call, dims))
            op = Operand(value, s.value, node)
        elif dims is not None and isinstance(s.value, cst.IfExp) and isinstance(s.target, cst.Name) \
                and none_test(self, s.value.test) is None:
            op = self._if_exp_to_hint(s.value, dims, s.annotation, s.target.value)
        else:
            op = self.expr(s.value)
        if dims is None:
            self._bind_target(s.target, op.value)
            return s.with_changes(value=op.node)
        if not isinstance(s.target, cst.Name):
            raise self.ctx.error(UnsupportedError, s.target, "a Tensor hint on a target that is not a name",
                                 "assign to a plain name: h: Tensor[...] = ...")
        target = self._rule_layout(dims, s.annotation)
        name = s.target.value
        value = op.value
        if isinstance(s.value, cst.Attribute) and isinstance(s.value.value, cst.Name):
            read = self.env.get(s.value.value.value)
            if isinstance(read, Static) and read.param is not None:  # w: Tensor[...] = self.w
                self.pinned_reads[(read.param, s.value.attr.value)] = dims
        if isinstance(value, Array) and value.layout.rank == len(dims) and value.dims != dims:
            # An annotated assignment names the value's dims (Mesh-TF's rename_dimension):
            # the data stays put, the new names bring their own layout rules.
            self._check_merges_kept(value.dims, dims, s.value, f"{name}'s hint {_dims_text(dims)}")
            renamed = Layout(dims, value.layout.axes, value.layout.partial)
            op = Operand(Array(renamed, value.origin), op.original, op.node)
        node = self.convert_to_hint(op, target, s.value, f"{name}'s hint {_dims_text(dims)}")
        self.dtypes.bind(name, s.value, Array(target))
        self.env[name] = Array(target)
        if maybe_none(self, value) or _none_arm(s.value) and none_test(self, s.value.test) is None:
            self.maybe_none.append(self.env[name])  # (an array or None, as the flag is when traced)
        self.versions[name] = next(_VERSIONS)
        self.bindings.append(Binding(self._line, name, target))
        return s.with_changes(value=node)

    def _if_exp_to_hint(self, node: cst.IfExp, dims: tuple[str, ...], annotation: cst.Annotation,
                        name: str) -> Operand:
        """``y: Tensor[...] = a if flag else b`` (a static flag): each arm converted to the hint's layout
        inside the arm, so arms of different layouts (a partial sum, a split value) give one value."""
        test = self.expr(node.test)
        if not isinstance(test.value, Static):
            raise self.ctx.error(UnsupportedError, node.test, "a conditional expression on a traced array",
                                 "use jnp.where(cond, a, b)")
        target = self._rule_layout(dims, annotation)
        arms = []
        for arm in (node.body, node.orelse):
            op = self.expr(arm)
            value = op.value
            if isinstance(value, Array) and value.layout.rank == len(dims) and value.dims != dims:  # renamed
                self._check_merges_kept(value.dims, dims, arm, f"{name}'s hint {_dims_text(dims)}")
                op = Operand(Array(Layout(dims, value.layout.axes, value.layout.partial), value.origin),
                             op.original, op.node)
            arms.append(self.convert_to_hint(op, target, arm, f"{name}'s hint {_dims_text(dims)}"))
        return Operand(Array(target), node, node.with_changes(test=test.node, body=arms[0], orelse=arms[1]))

    def _aug_assign(self, s: cst.AugAssign) -> cst.BaseSmallStatement:
        if not isinstance(s.target, cst.Name):
            raise self.ctx.error(UnsupportedError, s.target, f"in-place update of {self.ctx.code(s.target)!r}",
                                 "assign to a plain name: x = x + y")
        operator = _AUG_TO_BINARY.get(type(s.operator))
        if operator is None:
            raise self.ctx.error(UnsupportedError, s, f"augmented assignment {self.ctx.code(s.operator).strip()}",
                                 "write it out: x = x <op> y")
        if operator in (cst.Add, cst.Subtract, cst.Multiply, cst.Divide):  # (y *= m: m a number or an array)
            self.number_reads.update({id(s.target): s.target, id(s.value): s.value})
        left = self.expr(s.target)
        right = self.expr(s.value)
        value, nodes = binary_operator(self, operator, left, right, s)
        value = number_or_array(self, value, left, right, nodes[0], nodes[1])
        own = s.target.value in self.own_lists  # hs += [x] extends the list it holds
        if operator is cst.Add and isinstance(left.value, TupleValue | StructValue) and isinstance(
                value, TupleValue | StructValue) and (not own or s.target.value in self.shared_lists):
            raise self.ctx.error(UnsupportedError, s, f"{self.ctx.code(s.target)} += ... on a list this function did "
                                 "not make, or that another name (or a helper) also holds: a list changes in place, "
                                 "where meshify does not follow it",
                                 f"make a new one, {self.ctx.code(s.target)} = {self.ctx.code(s.target)} + "
                                 f"{self.ctx.code(s.value)} (a helper returns it, for its caller to bind)")
        self._bind_target(s.target, value, cst.BinaryOperation(s.target, operator(), s.value))
        if own and isinstance(value, TupleValue | StructValue):
            self.own_lists.add(s.target.value)
        if nodes[0] is left.node:
            return s.with_changes(value=nodes[1])
        return cst.Assign(targets=[cst.AssignTarget(s.target)],
                          value=cst.BinaryOperation(nodes[0], operator(), nodes[1]))

    def _returned_dtype(self, node: cst.BaseExpression) -> tuple[str, ...] | None:
        carriers = self.dtypes.of(node)
        known = self.return_dtype
        self.return_dtype = None if carriers is None or known is None else tuple(dict.fromkeys((*known, *carriers)))
        return carriers

    def _return_items(self, s: cst.Return, op: Operand) -> cst.Return:
        """A helper's ``return a, b``: each item's carriers and widened-ness kept for the caller (which
        binds ``x, y = helper(...)`` item by item, so the psum completing ``y`` casts it back); an item
        accumulated in float32 whose dtype the caller could not name is completed here."""
        assert isinstance(op.value, TupleValue) and isinstance(s.value, cst.BaseExpression)
        items = list(self.dtypes.items_of(op.original, op.value) or ())
        values = list(op.value.items)
        operands: list[Operand] | None = None
        if isinstance(op.original, cst.Tuple | cst.List) and isinstance(op.node, cst.Tuple | cst.List) \
                and len(op.original.elements) == len(op.node.elements) == len(values):
            operands = [Operand(v, e.value, n.value) for v, e, n in zip(values, op.original.elements, op.node.elements)]
        elif isinstance(op.original, cst.Name):  # return t: its items, t[0], t[1], rebuilt where one is completed
            operands = [Operand(v, item_node(op.original, i), item_node(op.node, i)) for i, v in enumerate(values)]
        changed = False
        for i, ((carriers, wide), value) in enumerate(zip(items, values)):
            if not (wide and holds_partial(value)) or (isinstance(value, Array) and not self.blind_caller
                                                  and self.dtypes.expressible(carriers)):
                continue
            if operands is not None and isinstance(value, StructValue):  # (loss, {"acc": ..., "mean": ...})
                done = self._completed_dict(operands[i].original, operands[i])
            elif operands is not None and isinstance(value, TupleValue):  # l, ({"m": ...}, {"loss": l})
                done = self._completed_tuple(operands[i])
                if done is None and isinstance(operands[i].original, cst.Name):  # y, stats: a held list's items
                    done = self.complete_widened(operands[i], "the caller (it cannot name the dtype to cast the "
                                                 "sum back to)")
                    done = None if done is operands[i] else done
            else:
                done = None if operands is None else self.complete_widened(
                    operands[i], "the caller (it cannot name the dtype to cast the sum back to)")
            if done is None or (holds_partial(done.value) and self.dtypes.contains_widened(done.original)
                                and not isinstance(done.value, StructValue | TupleValue)):
                raise self.error(UnsupportedError, s.value, f"{self.fn.name.value}() returns "
                                 f"{self.ctx.code(s.value)!r}, whose item {i} holds a partial sum whose operands' "
                                 "dtype meshify cannot read here (were they float16/bfloat16, it would be "
                                 "accumulated in float32, and its caller could not cast it back)",
                                 "return a tuple literal of arrays, (a, b), or a dict literal, or reduce that item "
                                 "before returning")
            assert operands is not None
            operands[i], values[i], items[i], changed = done, done.value, (carriers, False), True
        value = op.value.of(values)
        self._results.append(value)
        known = tuple(items) if len(items) == len(values) else None
        previous = self.return_items
        if len(self._results) == 1 or previous is None or known is None or len(previous) != len(known):
            self.return_items = known if len(self._results) == 1 else None
        else:
            self.return_items = merge_items([previous, known])
        if not changed:
            return s.with_changes(value=op.node)
        assert operands is not None
        if isinstance(op.node, cst.Tuple | cst.List) and isinstance(op.original, cst.Tuple | cst.List):
            return s.with_changes(value=op.node.with_changes(elements=[
                e.with_changes(value=o.node) for e, o in zip(op.node.elements, operands)]))
        return s.with_changes(value=cst.Tuple([cst.Element(o.node) for o in operands]))

    def _return_items_marked(self, s: cst.Return) -> cst.Return:
        """:meth:`_return_stmt`, each record made while evaluating item ``i`` of a returned tuple literal
        marked ``item=i`` (what the caller's ``a, b = f(...)`` reads of it: see ``result_items_fed``)."""
        if not (self._helper and isinstance(s.value, cst.Tuple)):
            return self._return_stmt(s)
        start = len(self.records)
        self._returning, self._item_ends = s.value, []
        try:
            out = self._return_stmt(s)
        finally:
            ends, self._returning = self._item_ends, None
        for i, end in enumerate(ends):
            for k in range(start, min(end, len(self.records))):
                if self.records[k].item < 0:
                    self.records[k] = replace(self.records[k], item=i)
        return out

    def _completed_dict(self, written: cst.BaseExpression, op: Operand) -> Operand | None:
        """A helper's ``return {"s": jnp.sum(h, 0), ...}`` holding partial sums whose dtype its caller could
        not read back out of a dict (each may be a float32 sum of float16 operands): each completed here, as
        a returned partial sum of that kind is.  None where the dict is not a literal of arrays."""
        value = op.value
        if not isinstance(value, StructValue) or any(not isinstance(v, Array) and holds_partial(v)
                                                     for _, v in value.fields):
            return None
        if isinstance(written, cst.IfExp) and isinstance(op.node, cst.IfExp) and _none_arm(written):
            # return {"m": x @ w} if flag else None: the dict's arm completed; the result is a dict or None still
            side = "orelse" if isinstance(written.body, cst.Name) and written.body.value == "None" else "body"
            done = self._completed_dict(getattr(written, side), Operand(value, getattr(written, side),
                                                                         getattr(op.node, side)))
            if done is None:
                return None
            result = replace(done.value)  # (its own object)
            if maybe_none(self, value):
                self.maybe_none.append(result)
            return Operand(result, written, op.node.with_changes(**{side: done.node}))
        if isinstance(written, cst.Call) and isinstance(op.node, cst.Call) and value.kind == "namedtuple" \
                and len(written.args) == len(op.node.args) and not any(a.star for a in written.args):
            return self._completed_namedtuple(written, op, value)
        if not isinstance(written, cst.Dict) or not isinstance(op.node, cst.Dict):
            return None
        keys = _literal_keys(written)
        if keys is None or len(set(keys)) != len(keys) or set(keys) != {k for k, _ in value.fields}:
            return None  # (a spread name, a key given twice: which node holds which field is not read here)
        fields = dict(value.fields)
        node = self._completed_entries(written, op.node, fields)
        if node is None:
            return None
        return Operand(replace(value, fields=tuple((k, fields[k]) for k, _ in value.fields)), written, node)

    def _completed_entries(self, written: cst.Dict, node: cst.Dict, fields: dict[str, Value]) -> cst.Dict | None:
        """The dict display ``node`` (of ``written``) with each field's partial sum completed, by key, spreads of
        dict displays (``{**{"s": a}, "t": b}``) entered; ``fields`` updated to the completed values."""
        if len(written.elements) != len(node.elements):
            return None
        elements = list(node.elements)
        for i, (e, n) in enumerate(zip(written.elements, node.elements)):
            if isinstance(e, cst.StarredDictElement):
                if not (isinstance(e.value, cst.Dict) and isinstance(n, cst.StarredDictElement)
                        and isinstance(n.value, cst.Dict)):
                    return None
                inner = self._completed_entries(e.value, n.value, fields)
                if inner is None:
                    return None
                elements[i] = n.with_changes(value=inner)
            elif isinstance(n, cst.DictElement) and isinstance(e.key, cst.SimpleString):
                key = e.key.evaluated_value
                done, fields[key] = self._completed_leaf(fields[key], e.value, n.value)
                elements[i] = n.with_changes(value=done)
            else:
                return None
        return node.with_changes(elements=elements)

    def _completed_tuple(self, op: Operand) -> Operand | None:
        """A returned tuple (or list) literal nested in a helper's result (``l, ({"m": ...}, {"loss": l})``,
        ``y, [jnp.sum(y), ...]``): each item
        completed as a returned dict's (or array's) is; None where it is not a literal of dicts and arrays."""
        value, written = op.value, op.original
        if not (isinstance(value, TupleValue) and isinstance(written, cst.Tuple | cst.List)
                and isinstance(op.node, cst.Tuple | cst.List)
                and len(written.elements) == len(op.node.elements) == len(value.items)):
            return None
        elements, items = list(op.node.elements), list(value.items)
        for i, (e, v) in enumerate(zip(written.elements, value.items)):
            if isinstance(e, cst.StarredElement):
                return None
            inner = Operand(v, e.value, elements[i].value)
            if isinstance(v, StructValue):
                done = self._completed_dict(e.value, inner)
            elif isinstance(v, TupleValue):
                done = self._completed_tuple(inner)
            else:
                node, left = self._completed_leaf(v, e.value, elements[i].value)
                done = Operand(left, e.value, node)
            if done is None:
                return None
            items[i] = done.value
            elements[i] = elements[i].with_changes(value=done.node)
        return Operand(value.of(items), written, op.node.with_changes(elements=elements))

    def _completed_leaf(self, v: Value, written: cst.BaseExpression, node: cst.BaseExpression
                        ) -> tuple[cst.BaseExpression, Value]:
        """One item of a returned dict or NamedTuple: a partial sum that may be float32-accumulated completed
        here (the caller cannot name its dtype); anything else as it is."""
        if not (isinstance(v, Array) and v.layout.partial and self.dtypes.contains_widened(written)):
            return node, v
        whole = v.layout.with_partial(())
        return (self.convert(Operand(v, written, node), whole,
                             "the caller (it cannot name the dtype to cast the sum back to)"), Array(whole, v.origin))

    def _completed_namedtuple(self, written: cst.Call, op: Operand, value: StructValue) -> Operand:
        """``return Out(h, loss=jnp.mean(h))`` in a helper: as :meth:`_completed_dict`, argument by argument."""
        names = [k for k, _ in value.fields]
        args, fields = list(op.node.args), dict(value.fields)  # type: ignore[union-attr]
        for i, a in enumerate(written.args):
            key = a.keyword.value if a.keyword is not None else names[i]
            node, fields[key] = self._completed_leaf(fields[key], a.value, args[i].value)
            args[i] = args[i].with_changes(value=node)
        return Operand(replace(value, fields=tuple((k, fields[k]) for k in names)), written,
                       op.node.with_changes(args=args))  # type: ignore[union-attr]

    def _return_stmt(self, s: cst.Return) -> cst.Return:
        if s.value is None:
            raise self.ctx.error(LayoutError, s, "bare return", "return the result")
        if self.maybe_none and (self._forced_items is not None or not self._helper):
            self._refuse_returned_maybe(s.value)
        hint = self._return
        if self._helper and self._forced_items is not None:
            return self._forced_tuple(s)
        if self._helper and self._forced_return is not None:
            op = self.expr(s.value)
            carriers = self._returned_dtype(s.value)
            if self._forced_return.partial and self.dtypes.contains_widened(s.value):
                if self.blind_caller or not self.dtypes.expressible(carriers):
                    raise self.error(UnsupportedError, s.value, f"{self.fn.name.value}() returns a partial sum "
                                     "accumulated in float32 for float16/bfloat16 operands on several paths, and "
                                     "its caller cannot name the dtype to cast it back to",
                                     "reduce it before returning (give the function a return hint)")
                self.returns_widened = True
            node = self.convert_to_hint(op, self._forced_return, s.value, "every return path")
            self._results.append(Array(self._forced_return))
            return s.with_changes(value=node)
        if self._helper and hint is None:
            op = self.expr(s.value)
            carriers = self._returned_dtype(s.value)
            if self._helper_items is not None or self._items_hint is not None:
                op = self._pinned_items(s.value, op)
            if isinstance(op.value, TupleValue):
                return self._return_items(s, op)
            if isinstance(op.value, StructValue) and holds_partial(op.value) and self.dtypes.contains_widened(s.value):
                completed = self._completed_dict(s.value, op)
                if completed is not None:
                    self._results.append(completed.value)
                    return s.with_changes(value=completed.node)
                raise self.error(UnsupportedError, s.value, f"{self.fn.name.value}() returns "
                                 f"{self.ctx.code(s.value)!r}, a {op.value.kind} holding a partial sum whose operands' "
                                 "dtype meshify cannot read here: were they float16/bfloat16, the sum would be "
                                 "accumulated in float32, and a caller cannot read the dtype to cast it back to out "
                                 f"of a {op.value.kind}",
                                 "return the partial sum as an array (or in a tuple of arrays), or reduce it first")
            if isinstance(op.value, Array) and op.value.layout.partial and self.dtypes.contains_widened(s.value) \
                    and (self.blind_caller or not self.dtypes.expressible(carriers)):
                # A partial sum accumulated in float32 whose dtype the caller could not name: complete it here.
                whole = op.value.layout.with_partial(())
                node = self.convert(op, whole, "the caller (it cannot name the dtype to cast the sum back to)")
                self._results.append(Array(whole))
                return s.with_changes(value=node)
            self._results.append(op.value)
            if isinstance(op.value, Array) and op.value.layout.partial and self.dtypes.contains_widened(s.value):
                self.returns_widened = True
            return s.with_changes(value=op.node)
        if self._helper:
            op = self.expr(s.value)
            self._returned_dtype(s.value)  # the caller reads the result's dtype (a hint names only its dims)
            target = self._rule_layout(hint, self.fn.returns.annotation)  # type: ignore[union-attr,arg-type]
            node = self.convert_to_hint(op, target, s.value, "the return hint")
            self._results.append(Array(target))
            return s.with_changes(value=node)
        if hint is None:
            return self._unhinted_return(s)
        if hint and isinstance(hint[0], tuple):
            if not isinstance(s.value, cst.Tuple):
                op = self.expr(s.value)
                if isinstance(op.value, TupleValue) and len(op.value.items) == len(hint):
                    return s.with_changes(value=self._hinted_items(op, hint))  # return head(x, w)
            if not isinstance(s.value, cst.Tuple) or len(s.value.elements) != len(hint):
                raise self.ctx.error(LayoutError, s.value, f"the return hint names a tuple of {len(hint)} "
                                     f"values but {self.ctx.code(s.value)!r} is not a tuple of {len(hint)}",
                                     "return a tuple literal matching the hint")
            elements = []
            for i, (e, dims) in enumerate(zip(s.value.elements, hint)):
                op = self.expr(e.value)
                node = self.convert_to_hint(op, self.rules.layout(dims), e.value,
                                            f"return value {i}")
                elements.append(e.with_changes(value=node))
            return s.with_changes(value=s.value.with_changes(elements=elements))
        op = self.expr(s.value)
        node = self.convert_to_hint(op, self.rules.layout(hint), s.value, "the return hint")
        return s.with_changes(value=node)

    def _refuse_returned_maybe(self, value: cst.BaseExpression) -> None:
        """An array or None known only when traced leaves a ``@mesh`` function with its array's out_spec (a
        PartitionSpec is a pytree prefix of None too), and a helper's caller is told (``maybe_results``); a
        tuple or dict that may be None has no one out_spec, and a custom rule's tangent must be an array."""
        for n in _names_in_expr(value):
            held = self.env.get(n.value)
            if self._forced_items is not None:
                refuse_maybe_none(self, [Operand(held, n, n)], f"returned by {self.fn.name.value}(), a rule of "
                                  "jax.custom_jvp/custom_vjp")  # type: ignore[arg-type]
            elif maybe_pytree(self, held):
                raise self.ctx.error(UnsupportedError, n, f"{n.value!r}, a {_value_text(held)[2:]} or None known "
                                     f"only when traced, is returned by {self.fn.name.value}(): its out_specs would "
                                     "differ per trace", f"test it (if {n.value} is not None:) and return its arrays "
                                     f"on that path, or return them one by one, each an array or None ({n.value}[k] "
                                     f"if {n.value} is not None else None)")

    def _forced_tuple(self, s: cst.Return) -> cst.Return:
        """A custom_jvp/custom_vjp rule's ``return a, b``: each item converted to the layout its role needs
        (a tangent or cotangent in its primal's layout, a partial sum completed), a residual as it is."""
        assert s.value is not None and self._forced_items is not None
        targets, value = self._forced_items, s.value
        if isinstance(value, cst.Tuple) and len(value.elements) == len(targets) \
                and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            elements, items = [], []
            for i, (e, target) in enumerate(zip(value.elements, targets)):
                op = self.expr(e.value)
                if target is None:
                    items.append(op.value)
                    elements.append(e.with_changes(value=op.node))
                    continue
                node = self.convert_to_hint(op, target, e.value, f"{self._forced_purpose} (item {i})")
                items.append(Array(target))
                elements.append(e.with_changes(value=node))
            self._results.append(TupleValue(tuple(items)))
            return s.with_changes(value=value.with_changes(elements=elements))
        op = self.expr(value)
        if isinstance(op.value, TupleValue) and len(op.value.items) == len(targets) and all(
                t is None or isinstance(v, Array) and v.layout == t for v, t in zip(op.value.items, targets)):
            self._results.append(op.value)
            return s.with_changes(value=op.node)
        raise self.ctx.error(UnsupportedError, value, f"{self.fn.name.value}() returns {self.ctx.code(value)!r}, "
                             f"where {self._forced_purpose} needs a tuple of {len(targets)}",
                             f"return a tuple literal of {len(targets)} items (return a, b)")

    def _pinned_items(self, written: cst.BaseExpression, op: Operand) -> Operand:
        """A helper's ``return a, b`` against its return hint ``tuple[Tensor[...], Tensor[...]]`` (or
        ``list[Tensor[...]]``): each hinted item converted to the layout the rules give its dims, as a hint
        on one array pins it (an item hinted by another type, ``tuple[Tensor[...], Cache]``, as it is)."""
        where = self.fn.returns.annotation  # type: ignore[union-attr]
        items = op.value.items if isinstance(op.value, TupleValue) else None
        fixed = self._helper_items
        if items is None and fixed is None and listed_items(op.value) is not None:
            # a list grown in a loop: its items cannot be converted one by one; they must have the layout
            self._items_returned = [(written, listed_items(op.value))]
            self._check_items_hint()
            return op
        if items is None or (fixed is not None and len(items) != len(fixed)):
            count = f"a tuple of {len(fixed)}" if fixed is not None else "a list or tuple of arrays"
            raise self.ctx.error(LayoutError, written, f"{self.fn.name.value}() is hinted to return {count} but "
                                 f"returns {self.ctx.code(written)!r}, "
                                 f"{f'a tuple of {len(items)}' if items is not None else described_value(op.value)}",
                                 "return what the hint names, or change the hint")
        hints = fixed if fixed is not None else (self._items_hint,) * len(items)
        if isinstance(op.original, cst.Tuple | cst.List) and isinstance(op.node, cst.Tuple | cst.List) \
                and len(op.original.elements) == len(op.node.elements) == len(items) \
                and not any(isinstance(e, cst.StarredElement) for e in op.original.elements):
            elements, values = [], []
            for i, (item, dims, e, n) in enumerate(zip(items, hints, op.original.elements, op.node.elements)):
                if dims is None:
                    elements.append(n)
                    values.append(item)
                    continue
                target = self._rule_layout(dims, where)
                node = self.convert_to_hint(Operand(item, e.value, n.value), target, e.value, f"return value {i}")
                elements.append(n.with_changes(value=node))
                values.append(Array(target))
            return Operand(TupleValue(tuple(values)), op.original, op.node.with_changes(elements=elements))
        targets = tuple(self._rule_layout(d, where) if d is not None else None for d in hints)
        node = self._hinted_items(op, targets)
        values = tuple(item if t is None else Array(t) for item, t in zip(items, targets))
        return Operand(TupleValue(values), op.original, node)

    def _hinted_items(self, op: Operand, hint: tuple) -> cst.BaseExpression:
        """``return head(x, w)`` of a tuple the code does not spell out, against a ``tuple[...]`` hint: as
        written where every item already has its hint's layout; else each item converted, the tuple bound
        once by the first item's read (``(psum((out := head(x, w))[0], ...), out[1])``)."""
        assert isinstance(op.value, TupleValue)
        from meshify.rewrite._helpers import module_names

        taken = set(module_names(self.ctx.text)) | set(self.env) | set(self.free)
        name = next(n for n in ("out", "results", *(f"out{i}" for i in range(2, 99))) if n not in taken)
        mark = self.mark()
        targets = [t if t is None or isinstance(t, Layout) else self.rules.layout(t) for t in hint]
        elements = []
        for i, (item, target) in enumerate(zip(op.value.items, targets)):
            read = cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])
            source = cst.Subscript(op.original, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])
            node = read if target is None else self.convert_to_hint(Operand(item, source, read), target,
                                                                    op.original, f"return value {i}")
            elements.append(node)
        if all(isinstance(e, cst.Subscript) and isinstance(e.value, cst.Name) and e.value.value == name
               for e in elements):
            self.rollback(mark)  # nothing to convert: the tuple leaves as the call returns it
            for item, target in zip(op.value.items, targets):
                if target is not None:
                    self.convert_to_hint(Operand(item, op.original, op.node), target, op.original,
                                         "the return hint")  # (checks only: no collective is needed)
            return op.node
        walrus = cst.NamedExpr(cst.Name(name), op.node, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        first = elements[0].deep_replace(_first_read(elements[0], name), cst.Subscript(walrus, [
            cst.SubscriptElement(cst.Index(cst.Integer("0")))]))
        return cst.Tuple([cst.Element(e) for e in (first, *elements[1:])])

    def _unhinted_return(self, s: cst.Return) -> cst.Return:
        """A ``@mesh`` function without a return hint: each result leaves in the layout it has (its splits
        kept, its partial sums completed); a tuple literal item by item."""
        assert s.value is not None
        if self._struct_return is not None:
            return self._struct_returned(s, self._struct_return)
        if self._mixed_return is not None and not isinstance(s.value, cst.Tuple):
            unpacked = self._mixed_unpacked(s)
            if unpacked is not None:
                return unpacked
            raise self.ctx.error(LayoutError, s.value, f"the return hint names a tuple of {len(self._mixed_return)} "
                                 f"values but {self.ctx.code(s.value)!r} is not a tuple literal",
                                 f"return a tuple literal of {len(self._mixed_return)} values")
        literal = self._spelled_out(s.value)
        if literal is not None:
            node, left = self._leaving_items(literal, "return value ")
            self._results.append(left)
            self._items_returned.append((s.value, left.items))
            return s.with_changes(value=node)
        self.number_reads[id(s.value)] = s.value  # (return m if m is not None else 1.0: a number or an array)
        op = self.expr(s.value)
        left = self._number_left(op)
        if left is not None:
            self._results.append(left)
            return s.with_changes(value=op.node)
        self._items_returned.append((s.value, listed_items(op.value) if not isinstance(op.value, Static) else None))
        if isinstance(op.value, TupleValue) and isinstance(op.node, cst.Tuple) and not isinstance(
                s.value, cst.Tuple) and len(op.node.elements) == len(op.value.items):
            # tuple(v for v in [h, pooled, all_hidden] if v is not None): the literal meshify unrolled it to
            node, left = self._leaving_held(Operand(op.value, op.node, op.node), op.node, "return value ")
            self._results.append(left)
            return s.with_changes(value=node)
        if isinstance(op.value, TupleValue) and all(isinstance(v, Array | Opaque) or _as_is(v) is not None
                                                    for v in op.value.items):
            # return helper(x), return jax.value_and_grad(loss_fn)(params): a tuple whose items leave as they are
            # (its pytrees of whole arrays too), a partial item completed where it leaves
            partial = next((i for i, v in enumerate(op.value.items) if isinstance(v, Array) and v.layout.partial), None)
            if partial is not None:
                completed = self.completed_in_place(s.value, op)
                if completed is None:
                    raise self.ctx.error(UnsupportedError, s.value, f"{self.fn.name.value}() returns "
                                         f"{self.ctx.code(s.value)!r}, whose item {partial} is a partial sum, and "
                                         "has no return hint", f"unpack it and return the items: a, b = "
                                         f"{self.ctx.code(s.value)}; return a, b")
                op = completed
            items = tuple(Array(v.layout.with_partial(())) if isinstance(v, Array) else Array(Layout.replicated(()))
                          if isinstance(v, Opaque) else _as_is(v) for v in op.value.items)
            self._results.append(op.value.of(items))
            return s.with_changes(value=op.node)
        if isinstance(op.value, TupleValue) and not holds_partial(op.value):
            # return step(w, x): a helper's (loss, grads, metrics), its dicts and NamedTuples of whole arrays
            # leaving as they are
            left = _as_is(op.value)
            if left is not None:
                self._results.append(left)
                return s.with_changes(value=op.node)
        if isinstance(op.value, StructValue) and op.value.kind in ("dict", "namedtuple", "dataclass"):
            node, left = self._leaving_dict(op, s.value, "the result")
            self._results.append(left)
            return s.with_changes(value=node)
        node, layout = self._leaving(op, s.value, "the result")
        self._results.append(Array(layout))
        return s.with_changes(value=node)

    def _number_left(self, op: Operand) -> Array | None:
        """What a result that is a Python number or an array known only when traced (``m if m is not None else
        1.0``) leaves as: the array's layout, its out_spec ``P()`` where the call returns the number
        (:class:`NumberOrLayout`); None for any other value (one of a helper: its caller reads the result)."""
        if self._helper or not any(op.value is v for v in self.ctx.root.maybe_numbers):
            return None
        if not isinstance(op.value, Array) or op.value.layout.partial:  # (made whole where it is made: _evaluate)
            refuse_number_or_array(self, op)
        return Array(NumberOrLayout(op.value.layout.dims, op.value.layout.axes))

    def _spelled_out(self, value: cst.BaseExpression) -> cst.Tuple | cst.List | None:
        """A returned tuple literal, or list literal holding a tuple or list (``[x, [a, b]]``; a flat one leaves as
        the expression it is), its starred names spelled out item by item (``[*a, *b]`` of lists meshify holds:
        ``[a[0], b[0], b[1]]``); None for anything else."""
        if not isinstance(value, cst.Tuple | cst.List):
            return None
        elements = []
        for e in value.elements:
            if not isinstance(e, cst.StarredElement):
                elements.append(e)
                continue
            held = self.env.get(e.value.value) if isinstance(e.value, cst.Name) else None
            if sequence_item(held) is not None:
                return None  # (*hs, x) of a list of a length meshify does not know: such a list itself
            if not isinstance(held, TupleValue):
                return value if isinstance(value, cst.Tuple) else None
            for i in range(len(held.items)):
                read = item_node(e.value, i)
                self.ctx.anchors[read] = e.value
                elements.append(cst.Element(read))
        spelled = value.with_changes(elements=elements)
        if isinstance(value, cst.List) and elements == list(value.elements) and not any(
                isinstance(e.value, cst.Tuple | cst.List) for e in elements):
            return None
        return spelled

    def _mixed_unpacked(self, s: cst.Return) -> cst.Return | None:
        """``return jax.value_and_grad(loss)(params, x)`` under ``-> tuple[Tensor[()], Params]``: the tuple it
        gives read item by item as a literal of its items would be (``(lambda returned: (returned[0],
        returned[1]))(...)``, each item converted to its hint's layout); None where it is not a tuple of as
        many items."""
        assert s.value is not None and self._mixed_return is not None
        op = self.expr(s.value)
        if not (isinstance(op.value, TupleValue) and len(op.value.items) == len(self._mixed_return)):
            return None
        name = "returned"
        saved = self.env.get(name)
        self.env[name] = op.value
        self.dtypes.bind(name, s.value, op.value, held=True)
        literal = cst.Tuple([cst.Element(item_node(cst.Name(name), i)) for i in range(len(op.value.items))])
        from meshify.rewrite._evaluate import _anchor_all

        _anchor_all(self, literal, s.value)
        try:
            node, left = self._leaving_items(literal, "return value ")
        finally:
            if saved is None:
                self.env.pop(name, None)
            else:
                self.env[name] = saved
        self._results.append(left)
        self._items_returned.append((s.value, left.items))
        if self.ctx.code(node) == self.ctx.code(literal):  # every item leaves as it is
            return s.with_changes(value=op.node)
        fn = cst.Lambda(cst.Parameters([cst.Param(cst.Name(name))]), node, lpar=[cst.LeftParen()],
                        rpar=[cst.RightParen()])
        return s.with_changes(value=cst.Call(fn, [cst.Arg(op.node)]))

    def completed_in_place(self, original: cst.BaseExpression, op: Operand, purpose: str = "return value"
                           ) -> Operand | None:
        """``return jax.value_and_grad(loss)(params, x)`` (a tuple the code does not spell out, an item a partial
        sum): ``(lambda r: (mr.psum(r[0], ...), r[1]))(<it>)``, each partial item completed where it leaves (cast
        back to its carriers' dtype where formed in float32); None where an item's dtype is not known."""
        assert isinstance(op.value, TupleValue)
        items = self.dtypes.items_of(original, op.value)
        if items is None or any(widened and carriers is None for carriers, widened in items):
            return None
        elements = []
        for i, v in enumerate(op.value.items):
            read = item_node(cst.Name("r"), i)
            if isinstance(v, Array) and v.layout.partial:
                at = item_node(original, i)  # (its dtype: the item's, as the tuple's carriers say)
                self.ctx.anchors[at] = original
                read = self.convert(Operand(v, at, read), v.layout.with_partial(()), f"{purpose} {i}")
            elements.append(cst.Element(read))
        fn = cst.Lambda(cst.Parameters([cst.Param(cst.Name("r"))]), op.value.literal(elements), lpar=[cst.LeftParen()],
                        rpar=[cst.RightParen()])
        return Operand(op.value, op.original, cst.Call(fn, [cst.Arg(op.node)]))

    def _struct_returned(self, s: cst.Return, hint: StructHint) -> cst.Return:
        """``return cache`` under ``-> Cache`` (a TypedDict or NamedTuple with hinted fields): a dict (or that
        NamedTuple) of the same fields, each converted to the layout its field's hint gives."""
        assert s.value is not None
        op = self.expr(s.value)
        value = op.value
        kind = hint.kind if hint.kind in ("dict", "dataclass") else "namedtuple"
        if not (isinstance(value, StructValue) and value.kind == kind and (kind == "dict" or value.cls == hint.cls)):
            raise self.ctx.error(LayoutError, s.value, f"the return hint names a {hint.cls} but "
                                 f"{self.ctx.code(s.value)!r} is {_value_text(value)}",
                                 f"return a {hint.cls} ({'a dict of its keys' if kind == 'dict' else hint.cls + '(...)'})"
                                 ", or change the return hint")
        node, left = self._leaving_dict(op, s.value, "the return hint", hint)
        self._results.append(left)
        return s.with_changes(value=node)

    def _leaving_items(self, literal: cst.Tuple | cst.List, purpose: str) -> tuple[cst.BaseExpression, TupleValue]:
        """A tuple (or list) literal leaving a function without a return hint, item by item (``return loss,
        (logits, aux)``, as ``value_and_grad(has_aux=True)`` wants it): each in the layout it has, its partial
        sums completed; nested tuples and lists, dicts and NamedTuples in it likewise."""
        elements, layouts = [], []
        hints = self._mixed_return if purpose == "return value " else None
        if hints is not None and len(hints) != len(literal.elements):
            raise self.ctx.error(LayoutError, literal, f"the return hint names a tuple of {len(hints)} values but "
                                 f"{self.ctx.code(literal)!r} has {len(literal.elements)}",
                                 "return a tuple literal matching the hint")
        for i, e in enumerate(literal.elements):
            if isinstance(e, cst.StarredElement):
                raise self.ctx.error(UnsupportedError, e, "a starred item in a returned tuple",
                                     "return the items one by one, or add a return hint")
            node, left = self._leaving_value(e.value, f"{purpose}{i}", hints[i] if hints is not None else None)
            elements.append(e.with_changes(value=node))
            layouts.append(left)
        return literal.with_changes(elements=elements), TupleValue(tuple(layouts),
                                                                   "list" if isinstance(literal, cst.List) else "tuple")

    def _leaving_value(self, expr: cst.BaseExpression, purpose: str, hint: tuple[str, ...] | StructHint | None = None
                       ) -> tuple[cst.BaseExpression, Value]:
        """One item of a returned tuple: its node and the value (layouts) it leaves with (``hint``: the item's
        in a return hint ``tuple[Tensor[()], Params]``)."""
        spelled = self._spelled_out(expr) if hint is None and isinstance(expr, cst.Tuple | cst.List) else None
        if spelled is not None and spelled.elements:  # return loss, (logits, aux)
            return self._leaving_items(spelled, f"{purpose}.")
        if hint is None and not self._helper:
            self.number_reads[id(expr)] = expr  # (return y, m: m a number or an array)
        item = self.expr(expr)
        if hint is None and self._number_left(item) is not None:
            return item.node, self._number_left(item)  # type: ignore[return-value]
        if isinstance(hint, StructHint):
            kind = hint.kind if hint.kind in ("dict", "dataclass") else "namedtuple"
            if not (isinstance(item.value, StructValue) and item.value.kind == kind
                    and (kind == "dict" or item.value.cls == hint.cls)):
                raise self.ctx.error(LayoutError, expr, f"the return hint names a {hint.cls} but "
                                     f"{self.ctx.code(expr)!r} is {_value_text(item.value)}",
                                     f"return a {hint.cls}, or change the return hint")
            return self._leaving_dict(item, expr, purpose, hint)
        if hint is not None:
            node, layout = self._leaving(item, expr, purpose, hint)
            return node, Array(layout)
        if isinstance(item.value, StructValue) and item.value.kind in ("dict", "namedtuple", "dataclass"):  # (loss, params)
            return self._leaving_dict(item, expr, purpose)
        if isinstance(item.value, TupleValue) and item.value.items:  # aux = (h, h.sum(-1)); return loss, aux
            return self._leaving_held(item, expr, purpose)
        row = sequence_item(item.value)
        if isinstance(row, TupleValue) and row.items and all(
                isinstance(i, Array) and not i.layout.partial for i in row.items):
            # rows = list(zip(hs, gs)), as long as each call's: every row's arrays in their layouts (mr.Each)
            return item.node, item.value
        if is_none(item.value):  # (None on this path, an array on another: joined as an array or None)
            return item.node, item.value
        node, layout = self._leaving(item, expr, purpose)
        return node, Array(layout)

    def _leaving_held(self, op: Operand, where: cst.BaseExpression, purpose: str
                      ) -> tuple[cst.BaseExpression, TupleValue]:
        """A tuple meshify holds item by item, returned by a name (``hs = [x]; hs.append(y); return x, hs``):
        as it is where every item leaves as it is; else rebuilt item by item from the name (a partial sum
        completed in its place)."""
        assert isinstance(op.value, TupleValue)
        if not self._whole_items(op.value):
            spelled = isinstance(op.node, cst.Tuple | cst.List) and len(op.node.elements) == len(op.value.items) \
                and isinstance(where, cst.Tuple | cst.List) and len(where.elements) == len(op.value.items)
            if not spelled and not isinstance(op.node, cst.Name | cst.Attribute) and all(
                    isinstance(v, Array) or not holds_partial(v) for v in op.value.items):
                # (checkpointed(x, w), y): a call's items completed as they leave, in place
                done = self.completed_in_place(where, op, purpose)
                if done is not None:
                    return done.node, op.value.of(Array(v.layout.with_partial(())) if isinstance(v, Array) else v
                                                  for v in op.value.items)
            if not spelled and not isinstance(op.node, cst.Name | cst.Attribute):
                raise self.ctx.error(UnsupportedError, where, f"{self.fn.name.value}() returns "
                                     f"{self.ctx.code(where)!r}, a {op.value.kind} holding a partial sum meshify would "
                                     "have to complete item by item", f"bind it to a name first (out = "
                                     f"{self.ctx.code(where)}), or return its items in a tuple literal")
            rebuilt = op.node if spelled else op.value.literal([cst.Element(cst.Subscript(op.node, [
                cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])) for i in range(len(op.value.items))])
            original = where if spelled else cst.Tuple([cst.Element(cst.Subscript(where, [cst.SubscriptElement(
                cst.Index(cst.Integer(str(i))))])) for i in range(len(op.value.items))])
            layouts = []
            elements = []
            for i, (item, e, o) in enumerate(zip(op.value.items, rebuilt.elements, original.elements)):
                inner = Operand(item, o.value, e.value)
                if isinstance(item, TupleValue):
                    node, left = self._leaving_held(inner, o.value, f"{purpose}.{i}")
                elif isinstance(item, StructValue) and item.kind in ("dict", "namedtuple", "dataclass"):
                    node, left = self._leaving_dict(inner, o.value, f"{purpose}.{i}")
                else:
                    node, layout = self._leaving(inner, o.value, f"{purpose}.{i}")
                    left = Array(layout)
                elements.append(e.with_changes(value=node))
                layouts.append(left)
            return rebuilt.with_changes(elements=elements), op.value.of(layouts)

        def leaving(value: Value) -> Value:
            if isinstance(value, TupleValue):
                return value.of(leaving(v) for v in value.items)
            if isinstance(value, Array):
                return Array(value.layout)
            if isinstance(value, Opaque):
                return Array(Layout.replicated(()))
            item = sequence_item(value) or mapping_item(value)
            return Array(item.layout) if isinstance(item, Array) else value

        return op.node, leaving(op.value)  # type: ignore[return-value]

    def _whole_items(self, value: Value) -> bool:
        """Whether every item of a held tuple leaves as it is: whole arrays, arrays of unknown dims, tuples of
        them, appended lists of whole items (a dict or a NamedTuple, a Python value: rebuilt, or refused)."""
        if isinstance(value, TupleValue):
            return all(self._whole_items(v) for v in value.items)
        if isinstance(value, Array):
            return not value.layout.partial
        item = sequence_item(value) or mapping_item(value)
        return isinstance(value, Opaque) or (isinstance(item, Array) and not item.layout.partial)

    def _leaving_dict(self, op: Operand, where: cst.BaseExpression, purpose: str, hint: StructHint | None = None
                      ) -> tuple[cst.BaseExpression, StructValue]:
        """``{"loss": loss, "acc": acc}`` (or a name holding a dict, a dict of parameters) leaving a function
        without a return hint: each value in the layout it has, its partial sums completed; a dict of them.
        ``hint`` (``-> Cache``): the same keys, each value converted to its field's layout."""
        assert isinstance(op.value, StructValue)
        if hint is not None:
            self._check_fields(op.value, hint, where)
        if op.value.kind in ("namedtuple", "dataclass"):
            return self._leaving_namedtuple(op, where, purpose, hint)
        written = self.dtypes.aliases.get(where, where)  # (a dict comprehension: the dict literal it was unrolled to)
        # a display whose entries are the fields in order ({**m, "t": x} is not: its items are read by key)
        keys = [k for k, _ in op.value.fields]
        literal = isinstance(op.node, cst.Dict) and _entries_are(op.node, keys)
        elements, left = [], []
        for i, (key, value) in enumerate(op.value.fields):
            item = op.node.elements[i].value if literal else cst.Subscript(  # type: ignore[union-attr]
                op.node, [cst.SubscriptElement(cst.Index(cst.SimpleString(json.dumps(key))))])
            original = written.elements[i].value if isinstance(written, cst.Dict) and literal \
                and _entries_are(written, keys) else where  # type: ignore[union-attr]
            if original is where:  # m["loss"], {**a, "t": x}["t"]: its own dtype (the dict's items known)
                original = cst.Subscript(where, [cst.SubscriptElement(cst.Index(cst.SimpleString(json.dumps(key))))])
                self.ctx.anchors[original] = where
            if isinstance(value, TupleValue) and value.items:  # {"loss": l, "hidden_states": hs}
                node, held = self._leaving_held(Operand(value, original, item), original, f"{purpose}'s {key!r}")
                elements.append(cst.DictElement(cst.SimpleString(json.dumps(key)), node))
                left.append((key, held))
                continue
            field = dict(hint.fields)[key] if hint is not None else None
            if isinstance(field, StructHint):
                node, inner = self._leaving_dict(Operand(value, original, item), original, f"{purpose}'s {key!r}",
                                                 field)
                elements.append(cst.DictElement(cst.SimpleString(json.dumps(key)), node))
                left.append((key, inner))
                continue
            if isinstance(sequence_item(value), StructValue) and field is None:  # {"blocks": [Block, ...]}
                elements.append(cst.DictElement(cst.SimpleString(json.dumps(key)), item))
                left.append((key, self._leaving_sequence(Operand(value, original, item), original)))
                continue
            node, layout = self._leaving(Operand(value, original, item), original, f"{purpose}'s {key!r}", field)
            elements.append(cst.DictElement(cst.SimpleString(json.dumps(key)), node))
            left.append((key, Array(layout)))
        new = op.node.with_changes(elements=[e.with_changes(value=n.value) for e, n in zip(
            op.node.elements, elements)]) if literal else cst.Dict(elements)  # type: ignore[union-attr]
        return new, StructValue("dict", tuple(left), "dict")

    def _leaving_namedtuple(self, op: Operand, where: cst.BaseExpression, purpose: str,
                            hint: StructHint | None = None) -> tuple[cst.BaseExpression, StructValue]:
        """``Out(logits=h, loss=l)`` (or a name holding one) leaving a function without a return hint: each field
        in the layout it has, its partial sums completed, rebuilt as ``Out(logits=..., loss=...)``."""
        value = op.value
        assert isinstance(value, StructValue)
        names = [k for k, _ in value.fields]
        built = isinstance(op.node, cst.Call) and isinstance(where, cst.Call) and len(op.node.args) <= len(names) \
            and not any(a.star for a in op.node.args) \
            and self.ctx.code(where.func).rsplit(".", 1)[-1] == value.cls.rsplit(".", 1)[-1]
        as_is = False
        if built:  # Out(h, loss=l): each argument by the field it fills (the others take their defaults)
            items = {(a.keyword.value if a.keyword is not None else names[i]): (a.value, w.value)
                     for i, (a, w) in enumerate(zip(op.node.args, where.args))}
        elif isinstance(op.node, cst.Name | cst.Attribute):
            items = {k: (cst.Attribute(op.node, cst.Name(k)), where) for k in names}
        elif not holds_partial(value):  # return jax.tree.map(f, p): no field to complete, so as it is
            items = {k: (cst.Attribute(op.node, cst.Name(k)), where) for k in names}
            as_is = True
        else:
            raise self.ctx.error(UnsupportedError, where, f"{self.fn.name.value}() returns "
                                 f"{self.ctx.code(where)!r}, a {value.cls} meshify would have to rebuild field by field",
                                 f"bind it to a name first (out = {self.ctx.code(where)}; return out)")
        args, left = [], []
        records = len(self.records)
        for k, v in value.fields:
            node, original = items.get(k, (where, where))
            inner: StructValue | TupleValue | None = None
            if isinstance(v, TupleValue) and v.items:  # Params(blocks=(b1, b2)): item by item
                new, inner = self._leaving_held(Operand(v, original, node), original, f"{purpose}'s {k!r}")
                layout = Layout.replicated(())
            elif isinstance(sequence_item(v), StructValue):  # Params(blocks=[Block, ...]) of each call's length
                new, inner = node, self._leaving_sequence(Operand(v, original, node), original)
                layout = Layout.replicated(())
            elif is_none(v):
                new, layout = node, Layout.replicated(())  # Out(h, attentions=None): no array, its spec unused
            elif isinstance(v, Static):
                new, layout = node, None
            elif isinstance(v, StructValue) and v.kind in ("dict", "namedtuple", "dataclass"):  # Nested(out=Out(...), ...)
                field = dict(hint.fields).get(k) if hint is not None else None
                new, inner = self._leaving_dict(Operand(v, original, node), original, f"{purpose}'s {k!r}",
                                                field if isinstance(field, StructHint) else None)
                layout = Layout.replicated(())
            else:
                field = dict(hint.fields).get(k) if hint is not None else None
                new, layout = self._leaving(Operand(v, original, node), original, f"{purpose}'s {k!r}",
                                            field if isinstance(field, tuple) else None)
            args.append(cst.Arg(new, keyword=cst.Name(k), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
            if layout is None:
                raise self.ctx.error(UnsupportedError, original, f"{self.fn.name.value}() returns a {value.cls} whose "
                                     f"field {k!r} is a Python value (shard_map returns arrays only)",
                                     f"return a {value.cls} of arrays (jnp.asarray({k})), or the Python value beside it "
                                     "outside the @mesh function")
            left.append((k, inner if inner is not None else Array(layout)))
        if as_is and len(self.records) != records:
            raise self.ctx.error(UnsupportedError, where, f"{self.fn.name.value}() returns "
                                 f"{self.ctx.code(where)!r}, a {value.cls} meshify would have to rebuild field by field",
                                 f"bind it to a name first (out = {self.ctx.code(where)}; return out)")
        if as_is:
            return op.node, StructValue(value.cls, tuple(left), value.kind, value.meta)
        meta = self._meta_names(value)
        if meta and not isinstance(op.node, cst.Name | cst.Attribute):
            raise self.ctx.error(UnsupportedError, where, f"{self.fn.name.value}() returns {self.ctx.code(where)!r}, "
                                 f"a {value.cls} with static fields meshify would have to rebuild field by field",
                                 f"bind it to a name first (out = {self.ctx.code(where)}; return out)")
        for k in meta:  # (its static fields: the values it holds, read off it)
            args.append(cst.Arg(cst.Attribute(op.node, cst.Name(k)), keyword=cst.Name(k), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
        return cst.Call(cst.Name(value.cls), args), StructValue(value.cls, tuple(left), value.kind, value.meta)

    def _leaving_sequence(self, op: Operand, where: cst.BaseExpression) -> StructValue:
        """A field holding a list of pytrees as long as each call's (``new_ema.blocks`` of ``jax.tree.map`` over
        params with ``blocks: list[Block]``): as it is, every item leaving in the item's layouts (out_specs
        ``mr.Each(Block(w=P(...)))``, spelled out per call by the runtime); a partial sum in the items refused
        (it would have to be completed item by item)."""
        value = op.value
        item = sequence_item(value)
        assert isinstance(value, StructValue) and isinstance(item, StructValue)
        if holds_partial(item):
            raise self._list_of_pytrees(op, where, item, ", holding partial sums meshify would have to complete item "
                                        "by item", "complete them before (or return each field's arrays as a list: "
                                        "{fields})")
        return value

    def _list_of_pytrees(self, op: Operand, where: cst.BaseExpression, item: StructValue, why: str, fix: str):
        """The error for a returned list of pytrees as long as each call's: ``why`` it is refused, ``fix`` with
        ``{fields}`` standing for ``[b.w for b in <the list>], ...``."""
        code = _short(self.ctx.code(where))  # (the user's code: not the names of the helpers' versions)
        field = next(iter(dict(item.fields)), "w")
        read = f'b["{field}"]' if item.kind == "dict" else f"b.{field}"
        return self.ctx.error(UnsupportedError, where, f"{self.fn.name.value}() returns {code!r}, a list of "
                              f"{item.cls if item.kind != 'dict' else 'dicts'} as long as each call's{why}",
                              fix.format(fields=f"[{read} for b in {code}], ..."))

    def _check_fields(self, value: StructValue, hint: StructHint, where: cst.BaseExpression) -> None:
        """A result's fields against its struct hint's: the same keys (a NamedTuple's are its class's)."""
        have, want = [k for k, _ in value.fields], [k for k, _ in hint.fields]
        if sorted(have) != sorted(want):
            missing, extra = [k for k in want if k not in have], [k for k in have if k not in want]
            raise self.ctx.error(LayoutError, where, f"{self.ctx.code(where)!r} has the keys {have} but its hint "
                                 f"{hint.cls} names {want}" + (f" (missing {missing})" if missing else "")
                                 + (f" (not in it: {extra})" if extra else ""),
                                 f"return the keys {hint.cls} names, or change the hint")
        for k, nested in hint.fields:
            v = value.field(k)
            if isinstance(nested, StructHint) and not isinstance(v, StructValue):
                raise self.ctx.error(LayoutError, where, f"field {k!r} of {self.ctx.code(where)!r} is "
                                     f"{_value_text(v)} but {hint.cls} hints a {nested.cls}",
                                     "return the nested struct its hint names")

    def _leaving(self, op: Operand, where: cst.BaseExpression, purpose: str, dims: tuple[str, ...] | None = None
                 ) -> tuple[cst.BaseExpression, Layout]:
        value = op.value
        if dims is not None:  # a field of -> Cache: the layout its hint gives
            target = self.rules.layout(dims)
            return self.convert_to_hint(op, target, where, purpose), target
        if isinstance(value, Array):
            target = value.layout.with_partial(())
            return self.convert_to_hint(op, target, where, purpose), target
        if isinstance(value, Opaque):
            return op.node, Layout.replicated(())  # a whole array of dims meshify does not know: replicated
        if is_none(value):
            return op.node, Layout.replicated(())  # None (all_attn when not asked for): no array, its spec unused
        if isinstance(value, Static) and isinstance(op.original, cst.Call) and any(
                q.startswith(("jax.numpy.", "numpy.")) and q.rsplit(".", 1)[-1] in _SCALAR_TYPES
                for q in self.ctx.qualified_names(op.original.func)):
            return op.node, Layout.replicated(())  # jnp.float32(0): a 0-d array on every device
        item = sequence_item(value) or mapping_item(value)
        if isinstance(item, Array) and not item.layout.partial:
            # hidden states appended in a loop (or stored in a dict at keys known only when traced): every item in
            # one layout, one out_spec for the whole list (a pytree prefix of it)
            return op.node, item.layout
        if isinstance(item, Opaque):  # (arrays of dims meshify cannot infer: whole, replicated)
            return op.node, Layout.replicated(())
        if mapping_item(value) is not None:
            raise self.ctx.error(UnsupportedError, where, f"{self.fn.name.value}() returns {self.ctx.code(where)!r}, "
                                 f"a dict of keys known only when traced, holding {described_value(item)}: not "
                                 "returned by meshify yet", "store arrays in it (one array per key), or return "
                                 "each part in a dict of its own")
        names = ", ".join(f"r{i}" for i in range(len(value.items))) if isinstance(value, TupleValue) else ""
        if isinstance(item, StructValue):  # Params(blocks=[Block(...), ...]) of a length each call gives
            raise self._list_of_pytrees(op, where, item, " (its out_specs would need each call's length): not "
                                        "rebuilt by meshify yet", "hold the list in a field of a hinted pytree "
                                        "(class P(TypedDict): layers: list[...]; a field's list is returned as each "
                                        "call's), or return each field's arrays as a list ({fields}) and rebuild "
                                        "the pytree outside the @mesh function")
        read = self._static_attribute(where) if isinstance(value, Static) else None
        if read is not None:  # jax.nn.silu(self.w): an array meshify never saw, taken for a Python value
            raise self._unhinted_attribute(where, read)
        what = f"a {value.kind}" if isinstance(value, TupleValue) else "a pytree" if isinstance(value, StructValue) \
            else "a Python value"
        fix = ("return its arrays as a dict ({\"w\": p.w, ...}) or a tuple of them, or add a return hint naming "
               "its class (-> Params)" if isinstance(value, StructValue) and value.kind != "dict"
               else ("add a return hint naming the returned pytree's class (-> Params, a TypedDict or NamedTuple "
                     "of hinted fields), which pins each field") if isinstance(value, StructValue)
               else "return arrays: a tuple literal or a dict literal of them for several (a nested dict, or a "
                    "Python value, is not returned by meshify yet)" if isinstance(value, StructValue | Static)
               else (f"unpack it and return its items as a tuple literal ({names} = {_short(self.ctx.code(where))}; "
                     f"return {names})")
               if isinstance(value, TupleValue) and any(isinstance(i, StructValue | TupleValue) for i in value.items)
               else 'return arrays (a tuple literal of them for several), or add a return hint: '
                    '-> tuple[Tensor["batch"], Tensor[()]]')
        raise self.ctx.error(UnsupportedError, where, f"{self.fn.name.value}() returns {self.ctx.code(where)!r}, "
                             f"{what}, and has no return hint", fix)

    def _unhinted_attribute(self, where: cst.BaseExpression, read: cst.Attribute) -> MeshifyError:
        """``return jax.nn.silu(self.w)``, ``self.w`` with no hint: what is wrong (its dims unknown) and the fix."""
        text, attr = self.ctx.code(read), read.attr.value
        param = self.env[read.value.value].param  # type: ignore[union-attr,attr-defined]
        return self.ctx.error(UnsupportedError, read, f"{self.fn.name.value}() returns {_short(self.ctx.code(where))!r}, "
                              f"computed from {text!r}, an attribute of the static parameter {param!r} with no hint: "
                              "meshify cannot know its dims, and reads it as a Python value (an array there is "
                              "refused when called)", f"name its dims where {self.fn.name.value}() reads it, {attr}: "
                              f'Tensor["d"] = {text} (one name per dim of {text}), and use {attr}: it is then an '
                              "input, read again on every call (a hint on the class or in __init__ is not read)")

    def _static_attribute(self, node: cst.BaseExpression) -> cst.Attribute | None:
        """The first attribute of a static parameter (``self.w``, ``cfg.table``) ``node`` reads, else None."""
        found: list[cst.Attribute] = []

        class _Reads(cst.CSTVisitor):
            def visit_Attribute(self, attribute: cst.Attribute) -> None:
                found.append(attribute)

        node.visit(_Reads())
        return next((a for a in found if isinstance(a.value, cst.Name) and isinstance(
            self.env.get(a.value.value), Static) and self.env[a.value.value].param is not None), None)  # type: ignore[union-attr]

    def _unhinted_layouts(self) -> tuple[Layout, ...] | Layout:
        """The out_specs of a function without a return hint: its results' layouts, one for every path."""
        first = self._results[0]
        joined = _joined_none(self._results)  # (return x, None on one path, return y, m on another: m or None)
        if joined is not None:
            first = joined[0]
        elif any(r != first for r in self._results[1:]):
            return self._by_statics()
        return self._result_layouts(first)

    def _result_layouts(self, first: Value):
        def layouts(value):
            if isinstance(value, StructValue) and value.kind == "sequence":  # each call's length: mr.Each(...)
                return EachLayouts({ITEMS: layouts(sequence_item(value))})
            if isinstance(value, StructValue):  # a dict of results, or a NamedTuple of the module
                out = {k: layouts(v) for k, v in value.fields}
                return out if value.kind == "dict" else StructLayouts(value.cls, out, bool(self._meta_names(value)))
            if isinstance(value, TupleValue):  # return loss, (logits, aux)
                return tuple(layouts(item) for item in value.items)
            if is_none(value):  # None (all_attn when not asked for): no array, its spec unused
                return Layout.replicated(())
            return value.layout

        if isinstance(first, TupleValue):
            return tuple(layouts(item) for item in first.items)
        if isinstance(first, StructValue):
            return layouts(first)  # type: ignore[no-any-return]
        assert isinstance(first, Array)
        return first.layout

    def _meta_names(self, value: StructValue) -> tuple[str, ...]:
        """The static fields of a dataclass value's class (a value rebuilt elsewhere may not carry them)."""
        if value.meta or value.kind != "dataclass":
            return value.meta
        from meshify.rewrite._hints import _meta_fields

        cls = self.ctx.classes.get(value.cls)
        return tuple(sorted(_meta_fields(self.ctx, cls))) if cls is not None else ()

    def _by_statics(self) -> OutByStatics:
        """The out_specs of a function that returns other results on other paths (``if return_hidden:
        return y, h``), each path chosen by ``if`` statements on static parameters: the results' layouts,
        the first whose conditions hold (in the order of the returns) chosen per call by those parameters."""
        fix = 'add a return hint naming the dims it returns (-> Tensor["batch", "d_model"])'
        if len(self._result_paths) == len(self._results) and self._known_tests:
            # a path through a branch whose test meshify reads false (true) never returns in this version; a
            # test it reads chooses nothing per call
            kept = [(tuple((t, k) for t, k in p if id(t) not in self._known_tests) if p is not None else None, r)
                    for p, r in zip(self._result_paths, self._results)
                    if p is None or all(self._known_tests.get(id(t), k) == k for t, k in p)]
            first = next((i for i, (p, _) in enumerate(kept) if p == ()), None)
            kept = kept if first is None else kept[:first + 1]  # (returns after one that always returns: never)
            if kept and all(r == kept[0][1] for _, r in kept):
                return self._result_layouts(kept[0][1])  # type: ignore[return-value]
            paths, results = [p for p, _ in kept], [r for _, r in kept]
        else:
            paths, results = self._result_paths, self._results
        if len(paths) != len(results) or None in paths:
            raise self.ctx.error(LayoutError, self.fn.name, f"{self.fn.name.value}() has no return hint and returns "
                                 "values of different layouts on different paths (one inside a loop)", fix)
        statics = {p.name.value for p in self._all_params()} - set(self._args) - set(self.nones)
        local = bound_names(self.fn.body)
        read: set[str] = set()
        for path in paths:
            for test, _ in path or ():
                for name in _names_read(test):
                    if name in local or (name not in statics and not isinstance(self.ctx.global_value(name), Static)):
                        code = self.ctx.code(test)
                        what = f"{name!r}" if code == name else f"{code!r}, which reads {name!r}"
                        raise self.ctx.error(
                            LayoutError, test, f"{self.fn.name.value}() has no return hint and returns values of "
                            f"different layouts on different paths, chosen by {what}, "
                            f"{'a name it binds' if name in local else 'not a static parameter'}: the results' "
                            "layouts can be chosen per call by static parameters (and module constants) only",
                            f"write the if on the static parameters {name!r} is made from (if return_hidden and "
                            "not train:), or return the same results on every path")
                    read.add(name)
        params = tuple(p.name.value for p in self._all_params() if p.name.value in read)
        def text(test: cst.BaseExpression, taken: bool) -> str:  # to stand beside 'and' as it does here
            code = self.ctx.code(test)
            negated = {"==": "!=", "!=": "==", "is": "is not", "is not": "is", "in": "not in", "not in": "in"}
            if not taken and isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and not test.lpar:
                op = test.comparisons[0].operator
                spelled = self.ctx.code(op).strip()
                if spelled in negated:  # mode != "sum", not "not mode == 'sum'"
                    return f"{self.ctx.code(test.left)} {negated[spelled]} {self.ctx.code(test.comparisons[0].comparator)}"
            simple = isinstance(test, cst.Name | cst.Attribute | cst.Call | cst.Subscript) or (
                taken and isinstance(test, cst.Comparison))
            code = code if simple or test.lpar else f"({code})"
            return code if taken else f"not {code}"

        cases = [(tuple(text(t, taken) for t, taken in path or ()), self._result_layouts(r))
                 for path, r in zip(paths, results)]
        while len(cases) > 1 and cases[-2][1] == cases[-1][1]:
            del cases[-2]  # chosen or not, the same layouts
        return OutByStatics(params, tuple(cases[:-1]), cases[-1][1])

    # -- conversions ----------------------------------------------------------------------

    def _check_merges_kept(self, dims: tuple[str, ...], names: tuple[str, ...], where: cst.CSTNode,
                           purpose: str) -> None:
        """A dim a reshape merged (``batch_beam?``) that a hint names after one of its parts (``batch``): a name
        with two sizes, refused (a reshape reading ``batch``'s size off another array would split it wrong)."""
        renamed = merge_renamed(dims, names)
        if renamed is not None:
            t, parts = renamed
            d = dims[names.index(t)]
            raise self.ctx.error(
                LayoutError, where, f"{self.ctx.code(where)!r} has dims {_dims_text(dims)}: its dim "
                f"{d.rstrip(INFERRED)!r} is {' x '.join(repr(p) for p in parts)} merged by a reshape, but "
                f"{purpose} names it {t!r}, the name of one of them (a dim of another size: a reshape reading "
                f"{t!r}'s size would split it wrong)", f"give the merged dim a name of its own "
                f"({'_'.join(parts)!r}) in this hint and in the hints of the helpers it is passed to")

    def convert_to_hint(self, op: Operand, target: Layout, where: cst.CSTNode, purpose: str) -> cst.BaseExpression:
        """Converts a value to the layout a hint pins (its dims must match the hint's)."""
        value = op.value
        if isinstance(value, Static | Opaque):
            source = Layout.replicated(target.dims) if isinstance(value, Opaque) or target.dims else None
            if source is None:
                return op.node
            return self.convert(Operand(Array(source), op.original, op.node), target, purpose)
        if isinstance(value, TupleValue):
            raise self.ctx.error(LayoutError, where, f"{self.ctx.code(where)!r} is a tuple but {purpose} "
                                 "names one array", "unpack the tuple, or name each item in a tuple[...] hint")
        self._check_merges_kept(value.dims, target.dims, where, purpose)
        if value.dims != target.dims and len(value.dims) == len(target.dims) and all(
                unify_dims(d, t) == t or (d == BROADCAST and not axes)
                for d, t, axes in zip(value.dims, target.dims, target.axes)):
            # dims meshify named itself (a reshape's ``heads?``) take the hint's names, as does a one-entry
            # slice (``h[:, -1:]``) the hint keeps whole
            value = Array(Layout(target.dims, value.layout.axes, value.layout.partial), value.origin)
            op = Operand(value, op.original, op.node)
        if value.dims != target.dims:
            placeholders = [d for d in value.dims if d not in target.dims and d.startswith(_PLACEHOLDER_PREFIXES)]
            fix = ("fix the hint, or transpose/rename so that the dims match in order" if not placeholders else
                   f"{placeholders[0]!r} is a placeholder for a dim of an operand without a Tensor hint: name that "
                   f"operand's dims first ('w: Tensor[...] = ...'), or rename the result with an annotated assignment")
            raise self.error(
                LayoutError, where,
                f"{self.ctx.code(where)!r} has dims {_dims_text(value.dims)} but {purpose} says "
                f"{_dims_text(target.dims)}", fix)
        return self.convert(op, target, purpose)

    def convert(self, op: Operand, target: Layout, purpose: str, varying: frozenset[str] = frozenset()
                ) -> cst.BaseExpression:
        """``op``'s node, wrapped in the collectives that give it layout ``target``."""
        value = op.value
        if isinstance(value, Opaque) and (target.is_split or target.partial):
            # a whole array of unknown dims cannot be sliced to a block: passing it whole would mis-shape
            # (or, with equal sizes, mis-align) what the rule computes
            code = self.ctx.code(op.original)
            raise self.error(UnsupportedError, op.original,
                             f"{_short(code)!r}, whose dims meshify cannot infer, would have to be split as "
                             f"{target.describe()} for {purpose}",
                             f"name its dims where it is bound ({_short(code)}: Tensor[...] = ...) so that meshify "
                             "can slice it, or map the dims it meets to no mesh axis")
        if not isinstance(value, Array):
            return op.node
        source = value.layout
        if source == target:
            return op.node
        if maybe_none(self, value):  # an array or None, known only when traced: converted where it is an array
            return self._unless_none(op, target, purpose, varying)
        steps = plan_conversion(source, target, self.mesh)
        psums = [s for s in steps if s.kind == "psum"]
        if psums and isinstance(op.original, cst.Name) and op.node is op.original \
                and op.original.value in self.env and op.original.value not in self.lambda_names:
            raise _Restart(op.original.value, psums[0].axes, self._reason(psums[0], op, source, purpose))
        node = op.node
        layout = source
        for step in steps:
            like = self._like(op.original) if step.kind in ("psum", "psum_scatter") else None
            fsdp = step.kind == "all_gather" and set(step.axes) <= varying
            node = apply_step(step, node, self.ctx.mr, like, varying=fsdp,
                              reduce_dtype=self.reduce_dtype if step.kind in ("psum", "psum_scatter") else None)
            self.note(step, op, layout, purpose, fsdp)
            layout = step_result(step, layout)
        return node

    def _unless_none(self, op: Operand, target: Layout, purpose: str, varying: frozenset[str]) -> cst.BaseExpression:
        """``op``, an array or None known only when traced, converted to ``target`` where it is an array: in the
        array's arm of ``a if flag else None``; ``mr.psum(m, ...) if m is not None else None`` for a name;
        ``(lambda maybe: None if maybe is None else mr.psum(maybe, ...))(...)`` for anything else."""
        assert isinstance(op.value, Array)
        arm = self.none_arms.get(op.original) if isinstance(op.original, cst.IfExp) else None
        if arm is not None and isinstance(op.node, cst.IfExp):
            which = "body" if arm.original is op.original.body else "orelse"  # type: ignore[attr-defined]
            return op.node.with_changes(**{which: self.convert(arm, target, purpose, varying)})
        array = Array(op.value.layout, op.value.origin)  # (another object: an array where it is not None)
        if isinstance(op.node, cst.Name):
            name, outer = op.node.value, op.node
        else:
            from meshify.rewrite._helpers import module_names

            taken = set(module_names(self.ctx.text)) | set(self.env) | set(self.free)
            name = next(n for n in ("maybe", *(f"maybe{i}" for i in range(2, 99))) if n not in taken)
            outer = None
        converted = self.convert(Operand(array, op.original, cst.Name(name)), target, purpose, varying)
        test = cst.Comparison(cst.Name(name), [cst.ComparisonTarget(cst.IsNot() if outer else cst.Is(),
                                                                    cst.Name("None"))])
        if outer is not None:
            return cst.IfExp(test, converted, cst.Name("None"), lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        body = cst.IfExp(test, cst.Name("None"), converted)
        fn = cst.Lambda(cst.Parameters([cst.Param(cst.Name(name))]), body, lpar=[cst.LeftParen()],
                        rpar=[cst.RightParen()])
        return cst.Call(fn, [cst.Arg(op.node)])

    def lower(self, call, lowering) -> tuple[Value, cst.BaseExpression]:
        """Carries out a rule's :class:`~meshify.rewrite.rules.Lowering` for ``call``: converts its
        operands, builds the replacement (the user's call with converted operands and replaced parts,
        or the rule's template), records and comments each collective, marks index operands; the
        functions a loop or branch runs are walked by :func:`~meshify.rewrite._bodies.run_walks`."""
        if lowering.walks is not None:
            return run_walks(self, call, lowering)
        self.observe_contraction(lowering.contraction)
        for dims, source in lowering.origins:
            self.ctx.reshape_origins.setdefault(dims, source)
        self._lowering_call = call.node
        try:
            nodes = self.carry_out(lowering)
        finally:
            self._lowering_call = None
        rebuilt = self.rebuilt(call, lowering, nodes)
        if lowering.accumulate is not None:
            keyword, operands = lowering.accumulate
            given = call.params.get(keyword)
            if given is None:
                rebuilt = self.accumulating(call.node, rebuilt, keyword, operands)
            elif isinstance(given.value, Static) and given.value.known and given.value.literal is None:
                rebuilt = self.accumulating(call.node, rebuilt, keyword, operands, at=call.position(given))
        result, node = (lowering.result, rebuilt) if lowering.template is None else \
            (lowering.result, self.replacement(lowering, nodes, call=rebuilt))
        if lowering.contraction is not None and isinstance(result, Array) and result.layout.partial \
                and self.dtypes.of(call.node) == ("bool",):
            # jnp.matmul / einsum of booleans: its blocks' results are or-ed (mr.psum of a bool), never summed;
            # completed here, so that nothing of another dtype is summed with them ((m @ n) * 2.0, + x @ w)
            whole = result.layout.with_partial(())
            node = self.convert(Operand(result, call.node, node), whole,
                                f"{call.name} of booleans (or-ed across devices, never summed)")
            result = Array(whole, result.origin)
        return result, node

    def rebuilt(self, call, lowering, nodes: list, walked: dict | None = None) -> cst.Call:
        """The user's call with, in place, each operand the lowering converts (its node in ``nodes``),
        each part it replaces, and each function walked for it (``walked``: place -> new node)."""
        replaced: dict = {}
        nested: dict[cst.CSTNode, cst.BaseExpression] = {}  # an item of a list argument: [a, b]
        for c, node in zip(lowering.converts, nodes):
            if call.receiver is not None and c.operand.original is call.receiver.original:
                replaced["receiver"] = node
                continue
            try:
                replaced[call.position(c.operand)] = node
            except ValueError:
                nested[c.operand.node] = node
        if lowering.callee is not None:
            replaced["func"] = cst.Attribute(cst.Name(self.ctx.mr), cst.Name(lowering.callee))
        parts = {at: self._part_node(value, nodes) for at, value in lowering.replace}
        parts.update(walked or {})
        replaced.update({at.position: node for at, node in parts.items() if at.item is None})
        for position in sorted({at.position for at in parts if at.item is not None}):
            items = {at.item: node for at, node in parts.items() if at.position == position}
            literal = replaced.get(position, call.operand_node(position))
            replaced[position] = literal.with_changes(
                elements=[e.with_changes(value=items.get(j, e.value)) for j, e in enumerate(literal.elements)])
        rebuilt = call.rebuild(replaced)
        if nested:
            rebuilt = rebuilt.visit(_Swap(nested))
        if lowering.keywords:  # (arguments a runtime callee takes besides the user's: axis_name=)
            args = list(rebuilt.args)
            if args:
                args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args += [cst.Arg(self._part_node(value, nodes), keyword=cst.Name(name), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
                for name, value in lowering.keywords]
            rebuilt = rebuilt.with_changes(args=args)
        return rebuilt

    def _part_node(self, value: object, nodes: list) -> cst.CSTNode:
        """The node of a lowering's ``fill`` or ``replace`` value; a :class:`Template` filled and a
        tuple's items made in turn."""
        from meshify.rewrite.rules._api import Template

        if isinstance(value, Template):
            return call_template(value.text, mr=cst.Name(self.ctx.mr),
                                 **{name: self._part_node(v, nodes) for name, v in value.fill})
        if isinstance(value, tuple):
            return cst.Tuple([cst.Element(self._part_node(v, nodes)) for v in value])
        return self._filled(value, nodes)

    def accumulating(self, original: cst.CSTNode, node: cst.Call, keyword: str, operands,
                     at: int | None = None) -> cst.Call:
        """``node`` with ``keyword=mr.sum_dtype(...)``: the partial sum it forms accumulates in float32
        when its operands are float16/bfloat16 (the psum completing it casts back)."""
        carriers: tuple[str, ...] | None = ()
        for o in operands:
            c = self.dtypes.of(o.original)
            carriers = None if c is None or carriers is None else tuple(dict.fromkeys((*carriers, *c)))
        if not carriers:
            return node
        self.dtypes.widened.add(original)
        value = cst.parse_expression(f"{self.ctx.mr}.sum_dtype({', '.join(carriers)})")
        args = list(node.args)
        if at is not None:  # dtype=None written out (positionally): fill it in
            args[at] = args[at].with_changes(value=value)
            return node.with_changes(args=args)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(value, keyword=cst.Name(keyword), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
        return node.with_changes(args=args)

    def complete_widened(self, op: Operand, purpose: str) -> Operand:
        """``op`` (a lambda's result: an array or a tuple literal of them) with each partial sum formed
        in float32 completed here, where the names its dtype is read from exist (outside the lambda
        they do not)."""
        value = op.value
        if isinstance(value, Array) and value.layout.partial and self.dtypes.contains_widened(op.original):
            whole = value.layout.with_partial(())
            done = Array(whole, value.origin)
            if maybe_none(self, value):  # (completed where it is an array: still an array or None)
                self.maybe_none.append(done)
            return Operand(done, op.original, self.convert(op, whole, purpose))
        if isinstance(value, TupleValue) and isinstance(op.original, cst.Tuple | cst.List) \
                and isinstance(op.node, cst.Tuple | cst.List) \
                and len(op.original.elements) == len(value.items):
            items = [self.complete_widened(Operand(v, e.value, n.value), purpose)
                     for v, e, n in zip(value.items, op.original.elements, op.node.elements)]
            node = op.node.with_changes(elements=[e.with_changes(value=i.node)
                                                  for e, i in zip(op.node.elements, items)])
            return Operand(value.of(i.value for i in items), op.original, node)
        if isinstance(value, TupleValue) and isinstance(op.original, cst.Name) and holds_partial(value) \
                and any(w for _, w in self.dtypes.items_of(op.original, value) or ((None, True),)):
            # a name holding a tuple with such a partial sum: its items, completed where they need it
            items = [self.complete_widened(Operand(v, item_node(op.original, i), item_node(op.node, i)), purpose)
                     for i, v in enumerate(value.items)]
            node = value.literal([cst.Element(i.node) for i in items])
            return Operand(value.of(i.value for i in items), op.original, node)
        return op

    def _like(self, original: cst.BaseExpression, where: cst.CSTNode | None = None) -> cst.BaseExpression | None:
        """The ``like=`` of a psum completing ``original``: the dtypes the single-device op had."""
        if not self.dtypes.contains_widened(original):
            return None  # formed in its own dtype (a lookup's partial sum is exact): the psum keeps it
        carriers = self.dtypes.of(original)
        from meshify.rewrite._dtypes import _names_in as names_in

        if carriers is not None and any(self.dtypes.holds_widened(name) for text in carriers
                                        for name in names_in(text)):
            carriers = None  # (tuple(a), b[0][0]: the float32 items themselves, never the dtype to cast back to)
        if carriers is None:
            raise self.error(UnsupportedError, original if where is None else where,
                             f"cannot tell the dtype of {self.ctx.code(original)!r}, a partial sum: meshify forms "
                             "it in float32 where its operands are float16/bfloat16 and casts it back after the psum, "
                             "which needs the dtype the code gives it (whatever the inputs' dtypes are)",
                             "bind the factors meshify has no rule for to names first (s = f(y)), or reduce the "
                             "partial sum before combining it with them")
        return like_node(carriers) if carriers else None

    def _wrapped(self, c, node: cst.BaseExpression) -> cst.BaseExpression:
        """``node`` in a rule's wrapper (``mr.like(x)``: a partial sum's shape and dtype); a partial sum
        formed in float32 for float16/bfloat16 operands gives the dtype they promote to (``like=``)."""
        wrapped = call_template(c.wrap, mr=cst.Name(self.ctx.mr), x=node,
                                **{name: self._filled(value, []) for name, value in c.fill})
        if c.wrap != "{mr}.like({x})" or not isinstance(wrapped, cst.Call):
            return wrapped
        like = self._like(c.operand.original)
        if like is None:
            return wrapped
        return wrapped.with_changes(args=[*wrapped.args[:-1], wrapped.args[-1].with_changes(comma=cst.Comma(
            whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(like, keyword=cst.Name("like"), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))])

    def _fed_names(self, s: cst.Assign, made: list[Record]) -> None:
        """``a, b = helper(...)`` at the top of the body: each record of the helper's that feeds some of its
        result's items alone feeds those names (see ``Record.feeds``); every other carried item is dropped."""
        if not any(r.items is not None for r in made):
            return
        target = s.targets[0].target if len(s.targets) == 1 else None
        names = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)] \
            if isinstance(target, cst.Tuple | cst.List) else []
        line = self._top_statements[self._top] if 0 <= self._top < len(self._top_statements) else None
        top = isinstance(line, cst.SimpleStatementLine) and any(small is s for small in line.body)
        usable = top and isinstance(target, cst.Tuple | cst.List) and len(names) == len(target.elements)
        start = len(self.records) - len(made)
        for k, r in enumerate(made):
            if r.items is None:
                continue
            call, fed = r.items
            feeds = tuple(names[i] for i in sorted(fed) if i < len(names)) \
                if usable and call is s.value and max(fed, default=len(names)) < len(names) else ()
            self.records[start + k] = replace(r, items=None, feeds=feeds)

    def carry_out(self, lowering) -> list[cst.BaseExpression]:
        """A lowering's conversions (their nodes, in order), index marks, collectives and notes."""
        self._observe(lowering.converts)
        nodes = [self.convert(c.operand, c.layout, c.purpose, c.varying) for c in lowering.converts]
        nodes = [n if c.wrap is None else self._wrapped(c, n) for c, n in zip(lowering.converts, nodes)]
        for operand in lowering.indices:
            self.mark_index(operand)
        # the dtype of the value a rule's collectives run on: its first operand's (see Collective.wire)
        dtype = self.dtypes.concrete(lowering.converts[0].operand.original) if lowering.converts else None
        operands = tuple(c.operand.original for c in lowering.converts)
        for i, e in enumerate(lowering.emitted):
            self.note_custom(e.kind, e.axes, e.layout, e.dim, e.reason, dtype, operands)
            # the collectives one rule emits are distinct (a masked mean's sum and count; a halo exchange's sides,
            # rows up, rows down, corners: each its own collective-permute), those of another of the same value not
            if i and self.records[-1].value is not None:
                self.records[-1] = replace(self.records[-1], value=(self.records[-1].value, i))
            if e.result_items is not None and self._lowering_call is not None:  # see Record.items
                self.records[-1] = replace(self.records[-1], items=(self._lowering_call, e.result_items))
        self._comments.extend(lowering.notes)
        return nodes

    def replacement(self, lowering, nodes: list, call: cst.BaseExpression | None = None) -> cst.BaseExpression:
        """A lowering's template filled (``{call}``: the user's call with converted operands)."""
        fill = {name: self._part_node(value, nodes) for name, value in lowering.fill}
        if call is not None:
            fill["call"] = call
        return call_template(lowering.template, mr=cst.Name(self.ctx.mr), **fill)

    def _observe(self, converts) -> None:
        """Tells :data:`OPERAND_OBSERVERS` the conversions of one op's operands, before they are made."""
        given = [c for c in converts if c is not None]
        for observe in OPERAND_OBSERVERS:
            observe(self, given)
        if self.tangent is not None:
            from meshify.rewrite._cotangents import note

            note(self, given)

    def converted(self, operands, converts) -> list[cst.BaseExpression]:
        """Each operand's node after the conversion a rule asked for (None: as it is)."""
        self._observe(converts)
        nodes = [o.node if c is None else self.convert(c.operand, c.layout, c.purpose, c.varying)
                 for o, c in zip(operands, converts)]
        return [n if c is None or c.wrap is None else self._wrapped(c, n) for c, n in zip(converts, nodes)]

    @staticmethod
    def _filled(value: object, nodes: list) -> cst.CSTNode:
        from meshify.rewrite.rules._api import MeshAxes, Ref

        if isinstance(value, Ref):
            return nodes[value.index]
        if isinstance(value, MeshAxes):
            return axes_node(value.axes)
        if isinstance(value, bool):
            return cst.Name(str(value))
        if isinstance(value, int):
            return int_node(value)
        if isinstance(value, tuple):
            return cst.Tuple([cst.Element(int_node(v)) for v in value])
        if isinstance(value, str):
            return cst.SimpleString(json.dumps(value))
        assert isinstance(value, cst.CSTNode), value
        return value

    def note(self, step: Step, op: Operand, layout: Layout, purpose: str, fsdp: bool = False) -> None:
        reason = self._reason(step, op, layout, purpose)
        if fsdp:
            reason += (f" (used beside values split over {axes_text(step.axes)}, so gathered as varying: its "
                       "gradient is reduce-scattered back, as in FSDP)")
        self._comments.append(reason)
        dim = layout.dims[step.dim] if step.dim >= 0 else ""
        value, invariant = self._record_scope(op.original)
        self.records.append(Record(self._line, step.kind, step.axes, dim, reason, layout, tuple(self._loops), fsdp,
                                   dtype=self.dtypes.concrete(op.original), value=value, invariant=invariant,
                                   statement=self._top))

    def note_custom(self, kind: str, axes: tuple[str, ...], layout: Layout, dim: str, reason: str,
                    dtype: str | None = None, operands: tuple[cst.CSTNode, ...] = ()) -> None:
        """Records a collective an op rule emitted itself (pmax, sharded softmax, ...).

        ``layout`` is that of the value the collective runs on (e.g. the reduced max); ``dtype`` its
        operand's where the code says it; ``operands`` the rule's operands (the first the reduced one).
        """
        self._comments.append(reason)
        value, invariant = self._record_scope(operands[0]) if operands else (None, tuple(False for _ in self._loops))
        if value is not None and len(operands) > 1:  # a mask, weights: part of what is reduced
            others = [self._record_scope(o) for o in operands[1:]]
            value = (value, tuple(v for v, _ in others))
            invariant = tuple(all(flags) for flags in zip(invariant, *(i for _, i in others)))
        self.records.append(Record(self._line, kind, axes, dim, reason, layout, tuple(self._loops), dtype=dtype,
                                   value=value, invariant=invariant, statement=self._top))

    def _reason(self, step: Step, op: Operand, source: Layout, purpose: str) -> str:
        reason = collective(step.kind).reason
        assert reason is not None, step
        dim = source.dims[step.dim] if step.dim >= 0 else ""
        to = source.dims[step.to_dim] if step.to_dim >= 0 else ""
        return reason(_short(self.ctx.code(op.original)), step.axes, dim, to, purpose, _origin(op))

    # -- expressions ------------------------------------------------------------------------

    def expr(self, node: cst.BaseExpression) -> Operand:
        op = evaluate(self, node)
        if self.ctx.root.maybe_numbers and id(node) not in self.number_reads \
                and any(op.value is v for v in self.ctx.root.maybe_numbers):
            refuse_number_or_array(self, op)
        return op

    def rule_context(self, operands: dict[cst.CSTNode, Operand] | None = None) -> RuleContext:
        """What an op rule may read (never this rewriter): the mesh, the rules, the sizes, the function,
        the names bound so far, and ``operands`` (sub-expressions evaluated for the rule), all read-only."""
        unnamed = tuple(f"{p}.{a}" for p, a in sorted(self.static_reads) if (p, a) not in self.pinned_reads)
        return RuleContext(self.mesh, self.rules, MappingProxyType(self.sizes), self.fn, self.ctx,
                           MappingProxyType(self.env), MappingProxyType(operands or {}),
                           declared=MappingProxyType(self.declared), unnamed_reads=unnamed)

    def observe_contraction(self, contraction) -> None:
        """Tells the contraction observers (``contractions.OBSERVERS``) of one a rule planned."""
        if contraction is None:
            return
        for one in contraction if isinstance(contraction, tuple) else (contraction,):  # attention: two
            for observe in CONTRACTION_OBSERVERS:
                observe(self, one.value, list(one.converts), list(one.inputs), one.what)

    @property
    def loops(self) -> tuple[int | str | TracedLoop | None, ...]:
        """The trip counts of the loops being walked, outermost first (each record made carries them)."""
        return tuple(self._loops)

    def enter_loop(self, trips: int | str | TracedLoop | None) -> None:
        """Walks a loop's body from here to :meth:`leave_loop`: what it records runs ``trips`` times."""
        self._loops.append(trips)
        self._loop_names.append(None)

    def leave_loop(self) -> None:
        self._loops.pop()
        self._loop_names.pop()

    def _dict_keys(self, iterable: cst.BaseExpression, sorted_only: bool, items: bool = False, values: bool = False
                   ) -> tuple[str, list[str]] | None:
        """``sorted(params)`` / ``sorted(params.keys())`` (``items``: ``sorted(params.items())``) of a dict meshify
        holds key by key: (its code, its keys in sorted order); without ``sorted_only`` also ``params``,
        ``params.keys()`` (``params.items()``), in the hint's order (for a use whose result does not depend on
        the order: a dict comprehension).  None for any other iterable."""
        node = iterable
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "sorted" \
                and not self.ctx.binds("sorted") and "sorted" not in self.env and len(node.args) == 1 \
                and node.args[0].keyword is None and not node.args[0].star:
            node, ordered = node.args[0].value, True
        else:
            ordered = False
        if sorted_only and not ordered:
            return None
        method = None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args \
                and node.func.attr.value in ("keys", "items", "values"):
            method, node = node.func.attr.value, node.func.value
        if (method == "items") != items or (method == "values") != values or not read_again(node):
            return None
        mark = self.mark()
        try:
            held = self.expr(node).value
        finally:
            self.rollback(mark)
        if not (isinstance(held, StructValue) and held.kind == "dict"):
            return None
        keys = [k for k, _ in held.fields]
        return self.ctx.code(node), sorted(keys) if ordered else keys

    def dict_comprehension(self, node: cst.DictComp) -> Operand | None:
        """``{k: v - lr * grads[k] for k, v in params.items()}``, ``{k: "bias" not in k for k in params}``: one
        ``for`` over items meshify knows one by one (a dict's keys and values in any order: the dict made is the
        same; a pytree's leaves, a tuple, ``zip``/``enumerate`` of them), its keys string literals once unrolled:
        the dict literal of each item's key and value, each rewritten for its item; None for any other (refused
        near arrays, as before)."""
        comp = node.for_in
        if comp.inner_for_in is not None or comp.asynchronous is not None:
            return None
        found = self._unrolled_columns(comp.target, comp.iter, any_order=True)
        if found is None:  # {k: v * 2 for k, v in outs.items()} of a dict of keys known only when traced
            return self.comprehension(node)
        names, columns = found
        from meshify.rewrite._evaluate import _anchor_all

        entries: list[cst.DictElement] = []
        for items in zip(*columns):
            bound = dict(zip(names, items))
            keep = True
            for clause in comp.ifs:  # {k: v for k, v in params.items() if k != "bias"}: filtered on Python values
                test = clause.test.visit(_Put(bound))
                _anchor_all(self, test, clause.test)
                mark = self.mark()
                value = self.expr(test).value
                self.rollback(mark)
                if not (isinstance(value, Static) and value.known):
                    return None
                keep = keep and bool(value.literal)
            if keep:
                key, value = node.key.visit(_Put(bound)), node.value.visit(_Put(bound))
                _anchor_all(self, key, node.key)
                _anchor_all(self, value, node.value)
                entries.append(cst.DictElement(key, value))
        literal = cst.Dict(entries)
        from meshify.rewrite._evaluate import _string_keys

        mark = self.mark()
        keys = [self.expr(e.key).value for e in entries]
        self.rollback(mark)
        if not all(isinstance(k, Static) and k.known and isinstance(k.literal, str) for k in keys) \
                or len({k.literal for k in keys}) != len(keys):  # type: ignore[union-attr]
            return None
        literal = cst.Dict([cst.DictElement(cst.SimpleString(json.dumps(k.literal)), e.value)  # type: ignore[union-attr]
                            for k, e in zip(keys, entries)])
        assert _string_keys(literal) is not None
        self.ctx.anchors[literal] = node
        # each value rewritten for its entry; a partial sum formed in float32 completed here, where its own dtype
        # is known (read back as d["w"] after, it would be the dict's)
        values = [self.complete_widened(self.expr(e.value), "a value of the dict comprehension")
                  for e in literal.elements]  # type: ignore[union-attr]
        new = literal.with_changes(elements=[e.with_changes(value=v.node) for e, v in zip(literal.elements, values)])
        self.dtypes.aliases[node] = literal  # (each value's dtype is its own entry's)
        return Operand(StructValue("dict", tuple((k.literal, v.value) for k, v in zip(keys, values)), "dict"),  # type: ignore[union-attr]
                       node, new)

    def _unrolled_columns(self, target: cst.BaseAssignTargetExpression, iterable: cst.BaseExpression,
                          any_order: bool = False) -> tuple[list[str], list[list[cst.BaseExpression]]] | None:
        """What a loop unrolled item by item binds: its target's names and, for each, the items it takes, as code
        (``for q in jax.tree.leaves(params)``: ``params.b``, ``params.w1``, ...; ``for p, m in zip(xs, ys)``;
        ``for i, q in enumerate(leaves)``: ``0``, ``1``, ... for ``i``); None where the iterable's items are not
        known one by one (see :meth:`_unrolled_items`)."""
        if isinstance(target, cst.Tuple) and len(target.elements) == 2 and all(
                isinstance(e.value, cst.Name) and not isinstance(e, cst.StarredElement) for e in target.elements):
            pairs = self._dict_keys(iterable, sorted_only=not any_order, items=True)
            if pairs is not None:  # for k, v in sorted(params.items()): each key's literal and its value
                base, keys = pairs
                names = [e.value.value for e in target.elements]  # type: ignore[attr-defined]
                if len(set(names)) != 2 or not keys:
                    return None
                return names, [[cst.SimpleString(json.dumps(k)) for k in keys],
                               [cst.parse_expression(f"{base}[{json.dumps(k)}]") for k in keys]]
        if any_order and isinstance(target, cst.Name):
            found = self._dict_keys(iterable, sorted_only=False)
            if found is not None and found[1]:  # {k: ... for k in params}: its keys
                return [target.value], [[cst.SimpleString(json.dumps(k)) for k in found[1]]]
            found = self._dict_keys(iterable, sorted_only=False, values=True)
            if found is not None and found[1]:  # sum(jnp.sum(v ** 2) for v in params.values()): its values
                return [target.value], [[cst.parse_expression(f"{found[0]}[{json.dumps(k)}]") for k in found[1]]]
        # for p, m in zip(jax.tree.leaves(params), jax.tree.leaves(mask)): each name unrolled beside the others
        iterables = [iterable]
        if isinstance(target, cst.Tuple) and len(target.elements) == 2 and isinstance(target.elements[0].value, cst.Name) \
                and not any(isinstance(e, cst.StarredElement) for e in target.elements) \
                and isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and iterable.func.value == "enumerate" and not self.ctx.binds("enumerate") \
                and "enumerate" not in self.env and len(iterable.args) in (1, 2) \
                and all(not a.star for a in iterable.args):
            start = iterable.args[1].value if len(iterable.args) == 2 else cst.Integer("0")
            if not isinstance(start, cst.Integer) or iterable.args[0].keyword is not None:
                return None
            # for i, (p, m) in enumerate(zip(leaves, masks)): the counter beside what the inner target takes
            # (in the order the items come: the counter numbers them, so a dict's hint order is not its order)
            inner = self._unrolled_columns(target.elements[1].value, iterable.args[0].value)
            if inner is None or target.elements[0].value.value in inner[0]:  # type: ignore[attr-defined]
                return None
            counter = int(start.value, 0)
            return ([target.elements[0].value.value, *inner[0]],  # type: ignore[attr-defined]
                    [[int_node(counter + i) for i in range(len(inner[1][0]))], *inner[1]])
        elif isinstance(target, cst.Tuple) and all(isinstance(e.value, cst.Name) and not isinstance(e, cst.StarredElement)
                                                   for e in target.elements) and target.elements:
            call = iterable
            names = [e.value.value for e in target.elements]  # type: ignore[attr-defined]
            width = len(target.elements)
            if isinstance(iterable, cst.Tuple | cst.List) and iterable.elements and all(
                    isinstance(e, cst.Element) and isinstance(e.value, cst.Tuple | cst.List)
                    and len(e.value.elements) == width
                    and not any(isinstance(i, cst.StarredElement) for i in e.value.elements)
                    for e in iterable.elements):
                # for name, w in (("w1", p.w1), ("w2", p.w2)): each position of the pairs a column
                if len(set(names)) != len(names):
                    return None
                return names, [[e.value.elements[j].value for e in iterable.elements]  # type: ignore[attr-defined]
                               for j in range(width)]
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "zip"
                    and not self.ctx.binds("zip") and "zip" not in self.env
                    and len(call.args) == len(target.elements) and all(a.keyword is None and not a.star
                                                                          for a in call.args)):
                return None
            iterables = [a.value for a in call.args]
        elif isinstance(target, cst.Name):
            names = [target.value]
        else:
            return None
        if len(set(names)) != len(names):
            return None
        columns = [self._unrolled_items(i) for i in iterables]
        if any(c is None for c in columns):
            return None
        length = min(len(c) for c in columns)  # type: ignore[arg-type]
        if not length:
            return None
        return names, [c[:length] for c in columns]  # type: ignore[index]

    def _unrolled_comprehension(self, node: cst.ListComp | cst.GeneratorExp) -> Operand | None:
        """``tuple(v for v in [h, pooled, all_hidden] if v is not None)`` (HF's return): one ``for`` over a list or
        tuple literal of names whose values differ (arrays of other layouts, None), its filters Python values
        per item: unrolled, each item kept or dropped as its filter says (``(h, pooled)``); None where the
        comprehension is not one of these (the general walk takes it)."""
        comp = node.for_in
        if comp.inner_for_in is not None or comp.asynchronous is not None:
            return None
        # (sum(... for v in params.values()): a sum takes the items in any order, as a dict comprehension does)
        found = self._unrolled_columns(comp.target, comp.iter, any_order=node in self.order_free)
        if found is None:
            return None
        names, columns = found
        # (an item other than a name is written where the element reads it: read once, it runs once)
        for name, elements in zip(names, columns):
            simple = all(read_again(e) or isinstance(e, cst.Subscript) and isinstance(e.slice[0].slice, cst.Index)
                         and isinstance(e.slice[0].slice.value, cst.Integer) for e in elements)  # type: ignore[union-attr]
            reads = sum(1 for n in _all_names(node.elt) if n.value == name)
            if not simple and reads > 1:
                return None
        mark = self.mark()
        value_columns = [[self.expr(e).value for e in elements] for elements in columns]  # type: ignore[union-attr]
        self.rollback(mark)
        if all(common_item(values) is not None for values in value_columns):
            return None
        elements_at = list(zip(*columns))
        values_at = list(zip(*value_columns))

        kept_nodes, kept_values, kept_written = [], [], []
        for items, values in zip(elements_at, values_at):
            keep = True
            for clause in comp.ifs:  # (the items' values bound to the names: v is not None reads it)
                mark = self.mark()
                self.env.update(zip(names, values))
                test = self.expr(clause.test)
                self.rollback(mark)
                if not (isinstance(test.value, Static) and test.value.known):
                    return None
                keep = keep and bool(test.value.literal)
            if keep:
                written = node.elt.visit(_Put(dict(zip(names, items))))
                element = self.expr(written)
                self.dtypes.aliases[element.node] = written  # (its carriers, where a rule reads the item as written)
                kept_written.append(written)
                kept_nodes.append(element.node)
                kept_values.append(element.value)
        # the comprehension as written stands for its items as written: their carriers, and whether one is a partial
        # sum formed in float32 (sum(jnp.vdot(q, q) for q in jax.tree.leaves(p)) of bfloat16 leaves)
        # each item's own (carriers, widened): s[0] of s = [jnp.sum(q) for q in leaves] is the first leaf's dtype
        self.dtypes.call_items[node] = tuple((self.dtypes.of(w), self.dtypes.contains_widened(w))
                                             for w in kept_written)
        if kept_written:  # (as their sum: the dtype they promote to together)
            joined: cst.BaseExpression = kept_written[0]
            for w in kept_written[1:]:
                joined = cst.BinaryOperation(joined, cst.Add(), w)
            self.dtypes.aliases[node] = joined
        if any(self.dtypes.contains_widened(w) for w in kept_written):
            self.dtypes.widened.add(node)
        made = cst.List if isinstance(node, cst.ListComp) else cst.Tuple
        new = made([cst.Element(n) for n in kept_nodes]) if kept_nodes or made is cst.List else cst.Tuple([])
        return Operand(TupleValue(tuple(kept_values), "list" if made is cst.List else "tuple"), node, new)

    def _unrolled_items(self, iterable: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        """The items a comprehension unrolled item by item reads: a list or tuple literal's (not starred), a pytree's
        leaves (``jax.tree.leaves(params)``: reading them runs nothing), a tuple meshify holds item by item by
        index; None for any other iterable."""
        if isinstance(iterable, cst.List | cst.Tuple) and iterable.elements:
            if any(isinstance(e, cst.StarredElement) for e in iterable.elements):
                return None
            return [e.value for e in iterable.elements]
        from meshify.rewrite._evaluate import _anchor_all, tree_leaf_reads

        keys = self._dict_keys(iterable, sorted_only=True)
        if keys is not None:  # for k in sorted(params): the keys, in sorted order
            return [cst.SimpleString(json.dumps(k)) for k in keys[1]]
        leaves = tree_leaf_reads(self, iterable) if isinstance(iterable, cst.Call) else None
        if leaves is not None:
            for e in leaves:
                _anchor_all(self, e, iterable)
            return leaves
        if not read_again(iterable):
            return None
        mark = self.mark()
        held = self.expr(iterable).value
        self.rollback(mark)
        if not isinstance(held, TupleValue) or not held.items:
            return None
        return [cst.Subscript(iterable, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])
                for i in range(len(held.items))]

    def comprehension(self, node: cst.ListComp | cst.GeneratorExp | cst.DictComp) -> Operand | None:
        """``[relu(x @ w1[i]) @ w2[i] for i in range(L)]``, ``(h * h for h in hs)``, ``[a * b for a in xs for b in
        ys]``: the element walked once, each ``for``'s target bound to what each iteration binds (as a Python
        loop's body: the items must share one layout), a partial sum completed in the element; the list item by
        item where every iterable's count is known (a tuple meshify holds item by item, and no ``if`` filters
        them on Python values), else a sequence of the element's value.  A dict comprehension meshify does not
        unroll (``{k: v * 2 for k, v in outs.items()}``, keys known only when traced): a dict of those keys, its
        values the element's one layout (``_mappings``).  None: an ``async`` form, refused near arrays as
        before."""
        unrolled = self._unrolled_comprehension(node) if not isinstance(node, cst.DictComp) else None
        if unrolled is not None:
            return unrolled
        clauses: list[cst.CompFor] = []
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            if comp.asynchronous is not None:
                return None
            clauses.append(comp)
            comp = comp.inner_for_in
        saved: dict[str, Value] = {}
        bound: list[str] = []
        entered = 0
        count: int | None = 1
        rewritten: list[tuple[cst.BaseExpression, list[cst.CompIf]]] = []
        # (its targets take another value each iteration: a partial sum one holds is reduced where it is read,
        # as a lambda's parameter's is, never hoisted before the statement, where they are not bound)
        saved_lambda_names = set(self.lambda_names)
        try:
            for comp in clauses:
                counted = _counted(self, comp.iter)
                if counted is not None:
                    first, iterable, items, new_iter = counted
                    item: Value = TupleValue(tuple(items))
                else:
                    first, iterable = comp.iter, self.expr(comp.iter)
                    new_iter, item = iterable.node, self._loop_item(comp.iter, iterable)
                known = len(iterable.value.items) if isinstance(iterable.value, TupleValue) else None
                count = count * known if count is not None and known is not None else None
                for n in _bound_names(comp.target):
                    if n not in bound:
                        bound.append(n)
                        if n in self.env:
                            saved[n] = self.env[n]
                self._bind_target(comp.target, item)
                self.lambda_names |= set(_bound_names(comp.target))
                if isinstance(comp.target, cst.Name) and counted is None:  # (t in a: a's items' dtypes)
                    self.dtypes.bind_item(comp.target.value, comp.iter)
                else:  # (y, x in zip(ys, xs), in zip(*pairs), in pairs: each position's items' dtypes, as a loop's)
                    for name, sequence in _target_sources(comp.target, comp.iter) if counted is not None else ():
                        if isinstance(self.env.get(name), Array):
                            self.dtypes.bind_item(name, sequence)
                    self.dtypes.bind_columns(comp.target, comp.iter)
                self.enter_loop(known if known is not None else self._trip_count(first))
                entered += 1
                ifs = []
                for clause in comp.ifs:  # [h for i, h in enumerate(hs) if i % 2 == 0]: Python values choose the items
                    test = self.expr(clause.test)
                    if not isinstance(test.value, Static):
                        raise self.ctx.error(UnsupportedError, clause.test, f"a comprehension's filter "
                                             f"'if {self.ctx.code(clause.test)}' on an array (a value known only on "
                                             "device)", "filter on Python values (an index, a flag), or mask the "
                                             "items with jnp.where")
                    ifs.append(clause.with_changes(test=test.node))
                rewritten.append((new_iter, ifs))
            key = self._comprehension_key(node) if isinstance(node, cst.DictComp) else None
            element = self.expr(node.value if isinstance(node, cst.DictComp) else node.elt)
            value, new_elt = element.value, element.node
            if isinstance(value, Array) and value.layout.partial and not self._summed_items(node, clauses):
                whole = value.layout.with_partial(())
                new_elt = self.convert(element, whole, "an item of the list the comprehension makes")
                value = Array(whole, value.origin)
        finally:
            self.lambda_names = saved_lambda_names
            for _ in range(entered):
                self.leave_loop()
            for n in bound:
                if n in saved:
                    self.env[n] = saved[n]
                else:
                    self.env.pop(n, None)
        inner: cst.CompFor | None = None
        for comp, (new_iter, ifs) in reversed(list(zip(clauses, rewritten))):
            inner = comp.with_changes(iter=new_iter, ifs=ifs, inner_for_in=inner)
        if isinstance(node, cst.DictComp):
            assert key is not None
            if holds_partial(value):  # (an array's was completed above; a tuple's would be item by item)
                raise self.ctx.error(UnsupportedError, node.value, f"a dict comprehension over keys known only when "
                                     f"traced whose value {self.ctx.code(node.value)!r} holds a partial sum",
                                     "make its values whole arrays (one array per key)")
            made = node.with_changes(key=key.node, value=new_elt, for_in=inner)
            return Operand(Static() if isinstance(value, Static) else mapping_of(value), node, made)
        new = node.with_changes(elt=new_elt, for_in=inner)
        if isinstance(value, Static):  # [d * 2 for d in x.shape]: Python values (split dims' sizes global)
            return Operand(Static(), node, new)
        # (a filter keeps a count meshify does not know: a sequence of the element's layout)
        filtered = any(ifs for _, ifs in rewritten)
        result: Value = TupleValue((value,) * count, "list" if isinstance(node, cst.ListComp) else "tuple") \
            if count is not None and not filtered else sequence_of(value)
        return Operand(result, node, new)

    def _summed_items(self, node: cst.ListComp | cst.GeneratorExp | cst.DictComp, clauses: list[cst.CompFor]) -> bool:
        """Whether the partial sum each item of ``node`` holds may stay partial: a sum adds the items up (it is in
        :attr:`summed`) and the psum completing that sum can name their dtype outside the comprehension (``*hs``
        for ``h`` of ``for h in hs``: the items' promoted dtype; ``hs`` itself for a list built in a loop), where
        it formed them in float32.  Walked while the comprehension's targets are bound."""
        if node not in self.summed or isinstance(node, cst.DictComp):
            return False
        lifted: dict[str, Carriers] = {}
        for comp in clauses:
            for name, sequence in _target_sources(comp.target, comp.iter):
                carriers = self.dtypes.of(sequence)
                # (a list appended to in a loop, of no carriers known here: the list itself, whose items promote
                # together, read in the same expression as the comprehension)
                lifted[name] = tuple(f"*{c}" for c in carriers) if carriers else (sequence.value,) \
                    if isinstance(sequence, cst.Name) and sequence_item(self.env.get(sequence.value)) is not None \
                    else None
        carriers = self.dtypes.outside(self.dtypes.of(node.elt), lifted,
                                       {n for comp in clauses for n in _bound_names(comp.target)})
        self.dtypes.comprehensions[node] = carriers
        return carriers is not None or not self.dtypes.contains_widened(node.elt)

    def _comprehension_key(self, node: cst.DictComp) -> Operand:
        """A dict comprehension's key, walked where its targets are bound: a Python value (a key that is an array
        is Python's error, refused here)."""
        key = self.expr(node.key)
        if not isinstance(key.value, Static):
            raise self.ctx.error(UnsupportedError, node.key, f"a dict comprehension keyed by "
                                 f"{self.ctx.code(node.key)!r}, which is not a Python value",
                                 "key it by a string or an int (k of outs.items())")
        return key

    def rebind_list(self, name: str, value: Value) -> None:
        """``name``, a list this function built, holding ``value`` after an append: a new version of it."""
        self.env[name] = value
        self.versions[name] = next(_VERSIONS)

    def identity(self, node: cst.CSTNode) -> tuple:
        """``node``'s value as XLA's common-subexpression pass tells values apart: its code, each name it
        reads at the version bound now (two reads of ``x @ w`` with neither rebound between are one value)."""
        names = _names_read(node)
        return (self.ctx.code(node), tuple((n, self.versions.get(n, 0)) for n in names))

    def carried_records(self, records: Sequence[Record], tag: object, operands: Sequence[cst.CSTNode] | None,
                        params: Mapping[str, cst.CSTNode | None] | None = None, call: cst.CSTNode | None = None,
                        items: Sequence[frozenset[int] | None] = ()) -> None:
        """A callee's records (a helper's version, a nested def's walk) as this function's: inside its loops;
        each value also told apart by ``tag`` (the version) and the identities of ``operands`` (the call's
        arguments; None: the callee reads more than them, so its values are never merged).

        ``params``: the callee's parameters -> the caller's argument nodes (a helper of this module).  A
        value the helper computes from its parameters alone (``x @ w`` in ``act(h, w1)``) is then the
        caller's ``h @ w1``, as XLA's common-subexpression pass sees it: one collective with the caller's
        own ``h @ w1`` (see :meth:`_in_caller`)."""
        scopes = [self._record_scope(o) for o in operands] if operands is not None else None
        outer = tuple(all(flags) for flags in zip(*(i for _, i in scopes))) if scopes \
            else tuple(scopes is not None for _ in self._loops)
        # an operand without an identity (a lambda's parameter: another value at each use) is never merged
        key = (tag, tuple(v for v, _ in scopes)) if scopes is not None and all(v is not None for v, _ in scopes) \
            else None
        translated: dict[object, tuple | None] = {}

        def value(r: Record) -> tuple | None:
            if key is None or r.value is None:
                return None
            if params is not None and not any(r.loops):
                if r.value not in translated:
                    translated[r.value] = self._in_caller(r.value, params)
                done = translated[r.value]
                if done is not None:
                    return done
            return ("carried", key, r.value)  # (three items: never read as an identity by _in_caller)

        fed = list(items) + [None] * (len(records) - len(items))
        self.records.extend(replace(r, loops=(*self._loops, *r.loops), invariant=(*outer, *r.invariant),
                                    value=value(r), statement=self._top, binds="", feeds=(), item=-1,  # (the callee's)
                                    items=(call, f) if call is not None and f is not None else None)
                            for r, f in zip(records, fed))

    def _in_caller(self, value: object, params: Mapping[str, cst.CSTNode | None]) -> tuple | None:
        """A helper record's ``value`` (an :meth:`identity`, or one with the rule's other operands') as
        this function's identity of the same expression with each parameter replaced by its argument;
        None where it reads anything else of the helper's (a name it rebound, a default) or a name this
        function binds (another value here), or an argument is more than a name or attribute chain
        (``act(a + b, w)``: its text would not be what this function writes)."""
        if not isinstance(value, tuple) or len(value) != 2:
            return None
        code, names = value
        if not isinstance(code, str):  # (the operand's identity, the others')
            first = self._in_caller(code, params)
            others = tuple(self._in_caller(o, params) for o in names) if isinstance(names, tuple) else (None,)
            return None if first is None or None in others else (first, others)
        if not (isinstance(names, tuple) and all(isinstance(n, tuple) and len(n) == 2 for n in names)):
            return None  # not an identity (a rule's emitted collective numbered apart)
        for name, version in names:
            if version != 0:
                return None  # rebound in the helper
            if name in params:
                node = params[name]
                if node is None or dotted_name(node) is None:
                    return None  # a default, *args/**kwargs, or an expression passed
            elif name in self.env or name in self.versions or name in self.free:
                return None  # the helper's global is another value here
        if re.search(r"\blambda\b|\bfor\b", code):
            return None  # names bound inside the expression
        expression = _parsed(code)
        if expression is None:
            return None

        class _Arguments(cst.CSTTransformer):
            def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
                passed = params.get(original.value)
                return passed if isinstance(passed, cst.BaseExpression) else updated

            def visit_Attribute(self, node: cst.Attribute) -> bool:
                return False  # the attribute's own name is no variable: its value is rewritten on leaving

            def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
                return updated.with_changes(value=original.value.visit(self))

            def visit_Arg(self, node: cst.Arg) -> bool:
                return True

            def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
                return updated.with_changes(keyword=original.keyword)  # a keyword is no variable

        rewritten = expression.visit(_Arguments())
        if not isinstance(rewritten, cst.BaseExpression):
            return None
        return (cst.Module([]).code_for_node(rewritten),
                tuple((n, self.versions.get(n, 0)) for n in _names_read(rewritten)))

    def records_of(self, start: int, node: cst.CSTNode) -> None:
        """Gives the records made since ``start`` by a rule with no operand to convert (a slice's halo
        exchange) the identity of ``node``'s value, each its own (the sides of one exchange), so that
        ``explain`` counts them once where the code computes that value twice, as XLA does."""
        value, invariant = self._record_scope(node)
        if value is not None:
            for i in range(start, len(self.records)):
                self.records[i] = replace(self.records[i], value=(value, i - start), invariant=invariant)

    def _record_scope(self, node: cst.CSTNode | None) -> tuple[tuple | None, tuple[bool, ...]]:
        """A record's ``value`` and ``invariant`` for a collective on ``node`` (None: a value never merged)."""
        if node is None:
            return None, tuple(False for _ in self._loops)
        identity = self.identity(node)
        read = {n for n, _ in identity[1]}
        invariant = tuple(names is not None and not (read & names) for names in self._loop_names)
        if read & self.lambda_names:  # a lambda's parameter: another value at each use of the lambda
            return None, tuple(False for _ in self._loops)
        return identity, invariant

    def mark_index(self, operand: Operand) -> None:
        """Remembers the names an index expression reads: parameters among them hold integers.  An item
        of a helper's ``*args``/``**kwargs`` read by a literal (``ids[0]``, ``kw["tokens"]``) is
        remembered as that item (``ids[0]``, ``kw['tokens']``): only what its caller passes there holds
        integers (see ``_helpers._mark_arguments``)."""
        names = self.index_names
        p = self.fn.params
        stars = {s.name.value for s in (p.star_arg, p.star_kwarg) if isinstance(s, cst.Param)} if self._helper \
            else set()

        class _Names(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                names.add(node.value)

            def visit_Subscript(self, node: cst.Subscript) -> bool:
                item = _star_item(node, stars)
                if item is None:
                    return True
                names.add(item)
                return False

        before = set(names)
        operand.original.visit(_Names())
        for name in set(names) - before:  # t = tokens[:, 1:] used as labels: tokens holds the integers
            for text in self.dtypes.names.get(name) or ():
                names.update(re.findall(r"[A-Za-z_]\w*", text))

    def lookup(self, node: cst.Name) -> Value:
        local = local_def(self, node.value)
        if local is not None:
            raise refuse_value(self, node, local)
        if node.value in self.env:
            if node.value in self.own_lists and node.value not in self.shared_lists and shares(self, node):
                self.shared_lists.add(node.value)  # gs = hs: its appends from here on are not followed
            return self.env[node.value]
        if node.value in ("True", "False", "None"):
            return Static.of({"True": True, "False": False, "None": None}[node.value])
        if node.value in self.free:
            return self.free[node.value]
        if node.value in self.ctx.enclosing_names(self.fn):  # a closure's variable: may be an array
            return Opaque()
        value = self.ctx.global_value(node.value)
        if node.value in self.ctx.assignments or node.value in self.ctx.annotated_arrays or (
                node.value in self.ctx.imports.imports and not isinstance(value, Static)):
            # a module constant: the program is keyed on its value; a module array (or what may be one):
            # on its identity (a trace bakes the array it read into the program)
            self.globals_read.add(node.value)
        return value

    def error(self, cls: type[MeshifyError], node: cst.CSTNode, headline: str, fix: str = "") -> MeshifyError:
        """A positioned error; a dims error's fix says which reads without a dims hint meshify took for Python
        values (``self.w``), as a rule's does (:meth:`RuleContext.error`)."""
        return self.rule_context().error(cls, node, headline, fix)


class _Swap(cst.CSTTransformer):
    """Replaces given nodes (by identity) wherever they sit in a tree."""

    def __init__(self, nodes: dict[cst.CSTNode, cst.BaseExpression]) -> None:
        super().__init__()
        self.nodes = nodes

    def on_leave(self, original, updated):
        return self.nodes.get(original, updated)


_AUG_TO_BINARY = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.PowerAssign: cst.Power, cst.MatrixMultiplyAssign: cst.MatrixMultiply,
    cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
}


def _items(node: cst.BaseExpression | None, n: int, known: bool = False) -> list[cst.BaseExpression | None]:
    """What each item of ``a, b = node`` is, for its dtype: ``node[i]`` where ``node`` names a tuple
    (a tuple parameter, a scan's ``xs``: its items' dtypes may differ) or is a call whose items the
    dtypes know (``known``: a helper returning a tuple), else ``node`` itself."""
    if known or isinstance(node, cst.Name | cst.Attribute | cst.Subscript):
        return [cst.Subscript(node, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))]) for i in range(n)]
    return [node] * n


def _joined_none(results: list[Value]) -> tuple[Value, frozenset[tuple]] | None:
    """The results of a helper's return paths, some of which return None where others return an array
    (``if shift == 0: return None``; ``return out, None`` beside ``return out, mask``): the arrays' value where
    the paths agree otherwise, and the paths (item indices) that are an array or None known only when traced."""
    def joined(a: Value, b: Value, path: tuple) -> tuple[Value, frozenset[tuple]] | None:
        if a == b:
            return a, frozenset()
        if is_none(a) and isinstance(b, Array) or is_none(b) and isinstance(a, Array):
            return (b if is_none(a) else a), frozenset({path})
        if isinstance(a, TupleValue) and isinstance(b, TupleValue) and len(a.items) == len(b.items):
            items = [joined(x, y, (*path, i)) for i, (x, y) in enumerate(zip(a.items, b.items))]
            if None in items:
                return None
            return a.of(v for v, _ in items), frozenset().union(*(p for _, p in items))  # type: ignore[misc]
        return None

    value, paths = results[0], frozenset()
    for other in results[1:]:
        step = joined(value, other, ())
        if step is None:
            return None
        value, paths = step[0], paths | step[1]
    return (value, paths) if paths else None


def _common_layout(results: list[Value]) -> Layout | None:
    """One layout every return path can be converted to: the first path's splits, and
    only the partial sums all paths share."""
    arrays = [r for r in results if isinstance(r, Array)]
    if len(arrays) != len(results) or len({a.dims for a in arrays}) != 1:
        return None
    partial = frozenset.intersection(*(a.layout.partial for a in arrays))
    base = min(arrays, key=lambda a: len(a.layout.partial)).layout
    axes = tuple(tuple(x for x in ax if x not in partial) for ax in base.axes)
    return Layout(base.dims, axes, partial)


def _origin(op: Operand) -> str:
    origin = op.value.origin if isinstance(op.value, Array) else ""
    return f" ({origin})" if origin else ""



#: numpy's scalar types: ``jnp.float32(0)`` makes a 0-d array.
_SCALAR_TYPES = frozenset({"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
                           "uint16", "uint32", "uint64", "bool_", "complex64", "complex128", "asarray", "array"})


def _value_text(value: Value | None) -> str:
    """What a value is, for a message: an array and its layout, a dict, a NamedTuple, a tuple, a Python value."""
    if isinstance(value, Array):
        return f"an array of layout {value.layout.describe()}"
    if isinstance(value, StructValue):
        return "a dict" if value.kind == "dict" else f"a {value.cls}"
    return "a tuple" if isinstance(value, TupleValue) else "a Python value" if isinstance(value, Static) else \
        "an array of dims meshify cannot infer"


def _as_is(value: Value) -> Value | None:
    """What a returned value of whole arrays leaves as, spelled as its out_specs read it (arrays, tuples of
    them, dicts and NamedTuples of them; arrays of unknown dims replicated); None for anything else (a list,
    a Python value, a partial sum)."""
    if isinstance(value, Array):
        return None if value.layout.partial else Array(value.layout)
    if isinstance(value, Opaque):
        return Array(Layout.replicated(()))
    if is_none(value):
        return Array(Layout.replicated(()))  # (None: an optional field's gradient; no array, its spec unused)
    if isinstance(value, TupleValue):
        items = [_as_is(v) for v in value.items]
        return None if any(i is None for i in items) else TupleValue(tuple(items))  # type: ignore[arg-type]
    item = mapping_item(value)
    if isinstance(item, Array) and not item.layout.partial:  # a dict of keys known only when traced: one spec
        return Array(item.layout)
    if isinstance(value, StructValue) and value.kind in ("dict", "namedtuple", "dataclass"):
        fields = [(k, _as_is(v)) for k, v in value.fields]
        if any(v is None for _, v in fields):
            return None
        return StructValue(value.cls, tuple(fields), value.kind, value.meta)  # type: ignore[arg-type]
    return None


#: Context managers that name or time the code they hold and leave its values as they are.
_NEUTRAL_CONTEXTS = frozenset({"jax.named_scope", "jax.profiler.TraceAnnotation", "jax.profiler.StepTraceAnnotation",
                               "contextlib.nullcontext", "jax.profiler.annotate_function"})

_TRANSFORMS = frozenset({"jax.value_and_grad", "jax.grad", "jax.vmap", "jax.jit", "jax.checkpoint", "jax.remat",
                         "jax.named_call"})
_LOOPS = frozenset({"jax.lax.scan", "jax.lax.cond", "jax.lax.switch", "jax.lax.fori_loop", "jax.lax.while_loop"})


def _target_names(target: cst.BaseExpression) -> list[cst.Name]:
    """The names an assignment target binds (``(loss, metrics), g``: all three)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, cst.Tuple | cst.List):
        return [n for e in target.elements for n in _target_names(e.value)]
    return []


def _copied_dict(node: cst.BaseExpression, value: Value) -> bool:
    """``dict(cache)``, ``dict(cache, k=k)``, ``cache.copy()`` of a dict of arrays: a new dict, made here."""
    if not (isinstance(value, StructValue) and value.kind == "dict" and isinstance(node, cst.Call)):
        return False
    func = node.func
    return (isinstance(func, cst.Name) and func.value == "dict") or (
        isinstance(func, cst.Attribute) and func.attr.value == "copy" and not node.args)


def _dims_text(dims: Sequence[str]) -> str:
    return "[" + ", ".join(dims) + "]"


def _short(text: str, limit: int = 48) -> str:
    """An expression's text for a comment, abbreviated whole-part by whole-part when long
    (``jnp.einsum(...)``, ``h[...] * 2.0``), never cut mid-expression."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    try:
        return _abbreviated(cst.parse_expression(text), limit)
    except cst.ParserSyntaxError:
        return text[: limit - 3] + "..."


def _abbreviated(node: cst.BaseExpression, limit: int) -> str:
    code = " ".join(cst.Module([]).code_for_node(node).split())
    if len(code) <= limit:
        return code
    if isinstance(node, cst.Call):
        return _abbreviated(node.func, limit - 5) + "(...)"
    if isinstance(node, cst.Subscript):
        inner = _abbreviated(node.value, limit - 7)
        simple = isinstance(node.value, cst.Name | cst.Attribute | cst.Call | cst.Subscript)
        return (inner if simple or inner.startswith("(") else f"({inner})") + "[...]"
    if isinstance(node, cst.BinaryOperation):
        op = cst.Module([]).code_for_node(node.operator).strip()
        half = max(8, (limit - len(op) - 2) // 2)
        return f"{_abbreviated(node.left, half)} {op} {_abbreviated(node.right, half)}"
    if isinstance(node, cst.UnaryOperation):
        return cst.Module([]).code_for_node(node.operator) + _abbreviated(node.expression, limit - 1)
    if isinstance(node, cst.Attribute) and len(node.attr.value) < limit:
        return "..." + "." + node.attr.value
    return "..."


def _arange_grid(rw, node: cst.BaseExpression | None) -> tuple[int, int] | None:
    """Where ``jnp.arange(n)`` runs in ``node`` and its rank: ``(0, 1)`` for it alone, ``(j, k)`` for it indexed
    with ``:`` at ``j`` of ``k`` and ``None`` elsewhere (``jnp.arange(B)[:, None]``: ``(0, 2)``); else None."""
    j, width, call = 0, 1, node
    if isinstance(node, cst.Subscript):
        width, call = len(node.slice), node.value
        full = [i for i, e in enumerate(node.slice) if isinstance(e.slice, cst.Slice) and e.slice.lower is None
                and e.slice.upper is None and e.slice.step is None]
        nones = [i for i, e in enumerate(node.slice) if isinstance(e.slice, cst.Index)
                 and isinstance(e.slice.value, cst.Name) and e.slice.value.value == "None"]
        if len(full) != 1 or len(full) + len(nones) != width:
            return None
        j = full[0]
    if isinstance(call, cst.Call) and rw.ctx.called_as(call.func) & {"jax.numpy.arange", "numpy.arange"}:
        return j, width
    return None


def _names_in_expr(node: cst.BaseExpression) -> list[cst.Name]:
    """The names an expression hands on as they are: itself, or the items of a tuple, list or dict display
    (nested); what an operation on a name makes is another value."""
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, cst.Tuple | cst.List):
        return [n for e in node.elements for n in _names_in_expr(e.value)]
    if isinstance(node, cst.Dict):
        return [n for e in node.elements for n in _names_in_expr(e.value)]
    return []
