"""The op-rule interface: an evaluated call, the registry, the closed world, the lowering.

Ops are keyed by qualified name (``jax.numpy.einsum`` whether the user wrote
``jnp.einsum``, ``jax.numpy.einsum`` or ``from jax.numpy import einsum as es``); array
methods (``x.sum()``) by method name (``jax.Array.sum`` for their signatures).  A rule
receives the evaluated :class:`Call`, bound to the function's declared signature by
:func:`closed_world` (an argument it does not model is refused first), and returns a
:class:`Lowering`: data saying which operand goes to which layout, the result's value,
the replacement code as a template or as parts of the user's call replaced (a reshape's
per-shard sizes), and the collectives it runs itself.  It builds no code and changes no
state: what it may read is a :class:`RuleContext` (the mesh, the rules, the static sizes,
positioned errors, the source text of a node, the values of the function's names), never the
rewriter; the interpreter (``FunctionRewriter.lower``) converts, emits, comments and
records.  A named reshape (``h: Tensor[...] = x.reshape(...)``) is a rule of the same
form, called by the annotated assignment with the hint's dims.

A call that runs functions of the user's (loops, branches) returns, in ``walks``, a
:class:`Loop` or :class:`Branches`: which function arguments to walk (a lambda, a nested
def, a module helper), with which argument values, where each rewritten function goes
back in the call, and how the call's result follows from the body's; its ``result`` is
None.  What a walk returns decides what else happens, so the rule states the policy and
:mod:`meshify.rewrite._bodies` iterates: a loop whose body returns its carry in another
layout than it came in is walked again with the carry entering in that layout (converted
once, before the loop); branches are walked once each to learn their results, then again
each with its result converted, inside the branch, to the one layout they share.

A call no rule handles goes to :func:`unknown_call`: allowed only where every array
reaching it is whole and not a partial sum.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING

import libcst as cst

from meshify.annotate._types import BROADCAST, INFERRED, Axes, Layout, MeshSpec, Rules
from meshify.errors import LayoutError, MeshifyError, UnsupportedError
from meshify.rewrite._signatures import BINARY, REFUSED_ELEMENTWISE, UNARY, signature
from meshify.rewrite._values import Array, Opaque, Operand, Static, StructValue, TupleValue, Value

if TYPE_CHECKING:
    from meshify.rewrite._context import ModuleContext

# Linearity of an elementwise op in its operands decides whether partial sums may pass.
ADD, MUL, DIV, NEG, NONLINEAR = "add", "mul", "div", "neg", "nonlinear"


def _untyped_container(annotation: str) -> bool:
    """Whether a parameter's annotation says nothing of its arrays' dims (``dict``, ``Mapping[str, Array]``)."""
    bare = annotation.replace("typing.", "").replace("collections.abc.", "").split("[")[0]
    return bare in {"dict", "Dict", "Mapping", "MutableMapping", "Any", "PyTree", "object"}


@dataclass(frozen=True, slots=True)
class RuleContext:
    """What an op rule may read, and all it receives besides its :class:`Call`: the mesh, the
    rules, the static dim sizes, the function being rewritten (as written), and read-only queries
    (a node's source text and qualified names, a name's value, a positioned error to raise).  It
    is not the rewriter and reaches none of its state: a rule asks for conversions, code and
    records by what it returns (:class:`Lowering`), and the interpreter makes each.
    ``FunctionRewriter.rule_context`` builds one per call."""

    mesh: MeshSpec
    rules: Rules
    #: Dim sizes from ``@mesh(dims=...)`` (read-only).
    sizes: Mapping[str, int]
    #: The function being rewritten, as the user wrote it.
    function: cst.FunctionDef
    _module: ModuleContext
    _env: Mapping[str, Value]
    #: Sub-expressions the interpreter evaluated for this rule (a subscript's indices and slice bounds).
    _operands: Mapping[cst.CSTNode, Operand] = field(default_factory=lambda: MappingProxyType({}))
    #: The sizes ``@mesh(dims=...)`` itself gives (read-only): a choice that changes the code written
    #: reads only these, so that explain (whose ``--dims`` add to ``sizes``) predicts the code convert writes.
    declared: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    #: Attributes read so far off static parameters without a dims hint (``self.w``): taken for Python
    #: numbers, so a dims error may come from one that is an array.
    unnamed_reads: tuple[str, ...] = ()

    def code(self, node: cst.CSTNode) -> str:
        """The source text of a node of the user's code (as messages quote it)."""
        return self._module.code(node)

    @property
    def mr(self) -> str:
        """The name the generated code calls meshify's runtime by (``mr``)."""
        return self._module.mr

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """What a name or attribute refers to (``jax.numpy.reshape`` for ``jnp.reshape``)."""
        return self._module.qualified_names(node)

    def error(self, cls: type[MeshifyError], node: cst.CSTNode, headline: str, fix: str = "") -> MeshifyError:
        """A positioned error at ``node`` (file, line, column, the line quoted, the fix), to raise."""
        if issubclass(cls, LayoutError) and self.unnamed_reads:
            param = self.unnamed_reads[0].split(".")[0]
            fix += (f"; meshify took {', '.join(self.unnamed_reads)} (read without a dims hint) for Python values: "
                    f"if one is an array, name its dims where it is read (w: Tensor[...] = {param}.w)")
        if issubclass(cls, LayoutError):
            fix += self._container_fix(node)
        return self._module.error(cls, node, headline, fix)

    def _container_fix(self, node: cst.CSTNode) -> str:
        """More to a dims error's fix where ``node`` reads a parameter without a dims-hinted type by key
        (``params["w1"]`` of ``params: dict``): a TypedDict naming the dims of each key the function reads."""
        params = self.function.params
        unhinted = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
                    if p.annotation is None or _untyped_container(self.code(p.annotation.annotation))}
        keys: dict[str, list[str]] = {}

        class _Reads(cst.CSTVisitor):
            def visit_Subscript(self, sub: cst.Subscript) -> None:
                key = sub.slice[0].slice if len(sub.slice) == 1 else None
                if isinstance(sub.value, cst.Name) and sub.value.value in unhinted and isinstance(key, cst.Index) \
                        and isinstance(key.value, cst.SimpleString):
                    found = keys.setdefault(sub.value.value, [])
                    if key.value.evaluated_value not in found:
                        found.append(str(key.value.evaluated_value))

        node.visit(_Reads())
        if not keys:
            return ""
        name = next(iter(keys))
        self.function.visit(_Reads())  # (every key the function reads, for the class to write)
        read = keys[name]
        fields = "; ".join(f'{k}: Tensor["...", "..."]' for k in read)
        return (f"; or give {name!r} a type naming its arrays' dims, which every read of it then has: "
                f"class Params(TypedDict): {fields} (one field per key), and {name}: Params in the signature")

    def written_out(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is of a definition meshify wrote out for the user's code (an optax loss, a
        per-row pick), not the user's own."""
        return node in self._module.anchors

    def bound(self, name: str) -> Value | None:
        """The value of a name the function has bound so far (None: not bound in the function)."""
        return self._env.get(name)

    def def_named(self, name: str) -> cst.FunctionDef | None:
        """The def ``name`` refers to here: one of the function's nested defs, or the module's top-level def (a
        helper the function may pass or call) where the function does not bind the name; else None."""
        from meshify.rewrite._nested import LocalDef

        held = self._env.get(name)
        if isinstance(held, Static) and isinstance(held.literal, LocalDef):
            return held.literal.node
        return None if name in self._env else self._module.functions.get(name)

    def operand(self, node: cst.BaseExpression) -> Operand:
        """A sub-expression the interpreter evaluated before calling the rule (KeyError: it did not)."""
        return self._operands[node]

    def rewritten(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """``node`` as rewritten where the interpreter evaluated it before calling the rule, else as written."""
        found = self._operands.get(node)
        return found.node if found is not None else node

    def lined_up(self, a: str, b: str) -> None:
        """Dims ``a`` and ``b`` lined up in an op (so JAX checks they have one size): an inferred one
        (``heads?``) takes the other's size in explain's figures."""
        for inferred, other in ((a, b), (b, a)):
            if inferred.endswith(INFERRED) and inferred != other:
                self._module.root.dim_aliases.setdefault(inferred, other)
                self._module.root.lined_up.setdefault(inferred, set()).add(other)

    def sized_by(self, dim: str, recipe: tuple) -> None:
        """Inferred ``dim`` has the size ``recipe`` computes from other dims' (see ``ModuleContext.size_recipes``)."""
        if dim.endswith(INFERRED):
            self._module.root.size_recipes.setdefault(dim, recipe)

    def same_size(self, dim: str) -> frozenset[str]:
        """``dim`` and the dims lined up with it in ops, and with those in turn: each has its size."""
        graph = self._module.root.lined_up
        found, todo = {dim}, [dim]
        while todo:
            d = todo.pop()
            for other in (*graph.get(d, ()), *(k for k, v in graph.items() if d in v)):
                if other not in found:
                    found.add(other)
                    todo.append(other)
        return frozenset(found)

    def reshape_origin(self, dims: tuple[str, ...]) -> str | None:
        """The dim an earlier reshape split into ``dims`` (merging them back gives its name again)."""
        return self._module.reshape_origins.get(dims)

    def elements(self, dims: Sequence[str]) -> int:
        """Estimated elements of a value with these dims, for choosing which side to gather: the sizes
        ``@mesh(dims=...)`` declares (unknown ones count 1024), as the code written is chosen (explain's
        ``--dims`` alone would predict a program that convert and the decorator do not write)."""
        total = 1
        for dim in dims:
            total *= 1 if dim == BROADCAST else self.declared.get(dim, 1024)
        return total



@dataclass(frozen=True, slots=True)
class Call:
    """An evaluated call: positional and keyword operands, and the original node."""

    node: cst.Call
    name: str
    args: tuple  # tuple[Operand, ...]
    kwargs: dict  # dict[str, Operand]
    receiver: Operand | None = None  # the operand a method is called on
    #: Parameter name -> operand (a tuple for ``*args``), bound by :func:`closed_world`.
    params: dict = field(default_factory=dict)
    #: Each item of a list or tuple literal written as an argument (``x.reshape((b, l, h, d))``): its
    #: node as written -> its operand, as the interpreter evaluated it (once) for the argument's value.
    items: Mapping[cst.CSTNode, Operand] = field(default_factory=dict)
    #: An argument holding a shape (``x.reshape(y.shape)``, a name bound to one) -> its entries
    #: ``y.shape[0], y.shape[1], ...`` as the interpreter evaluates them.
    entries: Mapping[cst.CSTNode, tuple[Operand, ...]] = field(default_factory=dict)

    @property
    def short(self) -> str:
        """The function's own name, as messages say it (``scan`` for ``jax.lax.scan``)."""
        return self.name.rsplit(".", 1)[-1]

    def arg(self, index: int, keyword: str, default: object = None):
        if index < len(self.args):
            return self.args[index]
        return self.kwargs.get(keyword, default)

    def rebuild(self, replaced: dict) -> cst.Call:
        """The call with operand ``i`` (positional index; keywords after them) replaced."""
        new_args = []
        for i, arg in enumerate(self.node.args):
            node = replaced.get(i, self.operand_node(i))
            new_args.append(arg if node is arg.value else arg.with_changes(value=node))
        func = replaced.get("func", self.node.func)
        receiver = replaced.get("receiver", self.receiver.node) if self.receiver is not None else None
        if receiver is not None and receiver is not func.value:  # type: ignore[attr-defined]
            func = func.with_changes(value=receiver)
        if func is self.node.func and all(a is b for a, b in zip(new_args, self.node.args)):
            return self.node  # nothing converted: the call as written (libcst nodes are immutable)
        return self.node.with_changes(func=func, args=new_args)

    def position(self, operand) -> int:
        """The index in the call's arguments of ``operand`` (positional or keyword), for :meth:`rebuild`."""
        for i, arg in enumerate(self.node.args):
            if arg.keyword is None and i < len(self.args) and self.args[i].original is operand.original:
                return i
            if arg.keyword is not None and arg.keyword.value in self.kwargs \
                    and self.kwargs[arg.keyword.value].original is operand.original:
                return i
        raise ValueError("not an operand of this call")

    def operand_node(self, i: int) -> cst.BaseExpression:
        """The evaluated node of argument ``i`` (keywords counted), as the call is rebuilt with it."""
        arg = self.node.args[i]
        if arg.keyword is None and i < len(self.args):
            return self.args[i].node
        if arg.keyword is not None:
            return self.kwargs[arg.keyword.value].node
        return arg.value


@dataclass(frozen=True, slots=True)
class Convert:
    """An operand the interpreter converts to ``layout`` before the call (inserting the collectives
    the planner chooses, each with a comment saying it serves ``purpose``)."""

    operand: Operand
    layout: Layout
    purpose: str
    #: A template around the converted node (``{x}``), e.g. ``{mr}.like({x})``.
    wrap: str | None = None
    #: The template's other placeholders, as a lowering's ``fill`` (nodes, ints, strings).
    fill: tuple[tuple[str, object], ...] = ()
    #: Mesh axes the op's other operands are split over: the result varies over them anyway, so a
    #: gather over one of them may vary too (its gradient is then reduce-scattered: FSDP).
    varying: frozenset[str] = frozenset()


def beside(converts: list) -> list:
    """Each conversion marked with the mesh axes the op's other operands are split over (see
    :attr:`Convert.varying`); None entries (operands left as they are) stay None."""
    from dataclasses import replace

    splits = [c.layout.split_axes if c is not None else frozenset() for c in converts]
    return [None if c is None else replace(c, varying=frozenset().union(*(s for j, s in enumerate(splits) if j != i)))
            for i, c in enumerate(converts)]


@dataclass(frozen=True, slots=True)
class Ref:
    """In a :class:`Lowering`'s ``fill``: the node of ``converts[index]`` after its conversion."""

    index: int


@dataclass(frozen=True, slots=True)
class MeshAxes:
    """In a :class:`Lowering`'s ``fill``: mesh axes, rendered ``"model"`` or ``("data", "model")``."""

    axes: Axes


@dataclass(frozen=True, slots=True)
class Template:
    """In a :class:`Lowering`'s ``fill`` or ``replace``: the expression ``text`` (``{mr}`` is the
    runtime module), its other placeholders filled from ``fill`` as a lowering's are."""

    text: str
    fill: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True, slots=True)
class At:
    """A place in the user's call: argument ``position`` (its index among the arguments as written,
    keywords counted, as :meth:`Call.rebuild` counts them), or item ``item`` of the list or tuple
    literal written there (the sizes of ``x.reshape((b, l, h, d))``, the branches of a ``switch``)."""

    position: int
    item: int | None = None


@dataclass(frozen=True, slots=True)
class Body:
    """A function the call runs (a loop body, a branch), as the user passed it: a lambda, a def
    nested in the function or a module helper.  The interpreter walks it in the caller's scope and
    puts its rewritten node (a lambda, a nested def's or a helper version's name) back ``at``."""

    fn: Operand
    at: At


@dataclass(frozen=True, slots=True)
class Loop:
    """A loop JAX runs (``scan``, ``fori_loop``): ``body`` walked once for one iteration, which
    counts ``trips`` times in ``explain``.

    Attributes:
        args: what the body receives each iteration; ``args[carry]`` is the carry, entering as
            ``init`` (the user's operand).  The carry must leave the body in the layout it entered:
            when the body returns it in another layout of the same dims, the interpreter converts
            ``init`` to that layout once, before the loop, and walks the body again.
        stacked: None: the call returns the body's result, the carry (``fori_loop``).  Else the
            body returns ``(carry, y)`` and the call ``(carry, ys)``, ``ys`` being ``y`` stacked
            over the iterations as a new leading, unsplit dim of this name (``scan``).
    """

    body: Body
    args: tuple[Value, ...]
    carry: int
    init: Operand
    trips: int | str | None
    stacked: str | None = None
    #: ``unroll=`` (scan, fori_loop with static bounds): the body's copies in the HLO (see TracedLoop).
    unroll: int | bool = 1
    #: ``while_loop``'s condition, walked with the carry the body settles on; its result must be one
    #: value on every device (a partial sum completed inside it), or the devices would loop apart.
    cond: Body | None = None
    #: The user's node each of ``args`` comes from (None: the loop's own, an index): a body's parameter fed
    #: from a value with a cotangent has one (``explain``'s backward psums inside the body).
    sources: tuple[cst.CSTNode | None, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class Branches:
    """Branches of which one runs (``cond``, ``switch``): each of ``bodies`` walked for ``operands``,
    which are completed first where they are partial sums formed in float32 (a branch could not
    name their dtype).  The call returns one layout whichever branch runs: per array, the splits of
    the branch with fewest pending partial sums, each branch converting its result to it inside."""

    bodies: tuple[Body, ...]
    operands: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class Emitted:
    """A collective the replacement runs itself (``mr.max`` runs a pmax): a kind of
    :data:`meshify.rewrite._collectives.COLLECTIVES`, over ``axes``, on a value of ``layout``."""

    kind: str
    axes: Axes
    layout: Layout
    dim: str
    reason: str
    #: The items of the call's tuple result this collective feeds alone (None: all of it): XLA drops it
    #: where none of them is read (``jax.lax.top_k(x, k)[0]`` reads no gathered index).
    result_items: frozenset[int] | None = None


@dataclass(frozen=True, slots=True)
class Contraction:
    """An einsum-like contraction a rule planned (``contractions.contract``): its result, each
    operand's conversion (None: used as it is) and subscripts; the interpreter passes it to
    ``contractions.OBSERVERS`` (``meshify plan`` counts FLOPs and saved activations)."""

    value: Value
    converts: tuple[Convert | None, ...]
    inputs: tuple[str, ...]
    what: str


@dataclass(frozen=True, slots=True)
class Lowering:
    """What a rule decides for one call, as data; the interpreter carries it out
    (``FunctionRewriter.lower``): converts the operands, builds the code, records and comments
    the collectives.  Rules build no CST and change no state.

    Attributes:
        result: the value the call returns (dims, layout, pending partial sums); None where
            ``walks`` names functions the call runs, whose walk decides it.
        converts: operands to convert first, in order.
        template: None keeps the user's call, each converted operand's node replaced; else the
            replacement expression, its ``{name}`` placeholders filled from ``fill`` (``{mr}`` is
            the runtime module): a :class:`Ref`, :class:`MeshAxes`, a :class:`Template`, an int, a
            tuple of ints, a str (a string literal) or a node of the user's code.
        replace: parts of the user's call (kept otherwise) replaced, each by a ``fill`` value or a
            tuple of them (a shape spelled out).
        walks: the functions the call runs (loop bodies, branches), for the interpreter to walk.
        emitted: collectives the replacement runs itself.
        notes: comments for work with no collective (a masked local lookup).
        indices: operands read as integer indices (``meshify verify`` feeds their names integers).
        accumulate: the dtype keyword and operands of a partial sum this call forms.
        contraction: the contraction planned, for the observers of contractions.
        origins: dims a reshape split -> the dim they came from, for the module to remember (merging
            them back names the result as the user did).
        callee: a runtime function (``mr.<callee>``) called in place of the user's, with the same
            parameters and the user's arguments (``mr.dynamic_slice``: its starts clamped itself).
        keywords: arguments added after the user's (a runtime callee's ``axis_name=``), as ``fill`` values.
    """

    result: Value | None
    converts: tuple[Convert, ...] = ()
    template: str | None = None
    fill: tuple[tuple[str, object], ...] = ()
    emitted: tuple[Emitted, ...] = ()
    notes: tuple[str, ...] = ()
    indices: tuple[Operand, ...] = ()
    #: A partial sum this call forms, as ``(keyword, operands)``: the interpreter passes
    #: ``keyword=mr.sum_dtype(<their dtypes>)`` so that low-precision operands accumulate in float32
    #: (see :mod:`meshify.rewrite._dtypes`).
    accumulate: tuple[str, tuple[Operand, ...]] | None = None
    replace: tuple[tuple[At, object], ...] = ()
    walks: Loop | Branches | None = None
    contraction: Contraction | tuple[Contraction, ...] | None = None
    origins: tuple[tuple[tuple[str, ...], str], ...] = ()
    callee: str | None = None
    keywords: tuple[tuple[str, object], ...] = ()


def keep(value: Value) -> Lowering:
    """The call as the user wrote it, returning ``value`` (operands used as they are)."""
    return Lowering(value)


#: A rule: ``rule(ctx, call)`` (its registration's keywords bound).
Rule = Callable[[RuleContext, Call], Lowering]
REGISTRY: dict[str, Rule] = {}
METHODS: dict[str, Rule] = {}
#: Ops whose function arguments (loop bodies, branches) are walked, in the caller's scope, by the
#: interpreter as their rule's :class:`Loop` or :class:`Branches` says: their lambdas and nested
#: defs may read the caller's arrays, and are not evaluated as values.
BODY_OPS: set[str] = set()


@dataclass(frozen=True, slots=True)
class Models:
    """Which parameters of a JAX function a rule models (its declared signature is in
    :mod:`_signatures`).  ``reads`` None: every one; ``passthrough``: the others may be any
    static value (they keep an elementwise op elementwise: ``gelu(approximate=...)``)."""

    reads: frozenset[str] | None
    passthrough: bool = False
    #: ``reads`` as the registration wrote it (a test checks each name is a real parameter).
    declared: tuple[str, ...] = ()


#: Qualified name (``jax.numpy.take``; methods as ``jax.Array.sum``) -> what its rule models.
MODELS: dict[str, Models] = {}
#: ``reads=REQUIRED``: the parameters without a default (``x``; ``x1, x2``; ``*args``), whatever their names.
REQUIRED = "<required>"


def op(*names: str, method: str | None = None, reads: tuple[str, ...] | None = None, passthrough: bool = False,
       **bound):
    """Registers a rule for ``names`` (and ``x.method(...)``), modelling the parameters ``reads``."""
    def register(fn):
        for name in (*names, *([f"jax.Array.{method}"] if method else [])):
            declared = signature(name)
            assert declared is not None, f"{name}: declare its signature in _signatures.py"
            required = [p.name for p in declared.params
                        if p.kind == "varargs" or p.default is inspect.Parameter.empty]
            names_read = None if reads is None else frozenset(
                n for r in reads for n in (required if r == REQUIRED else [r]) if declared.get(n) is not None)
            MODELS[name] = Models(names_read, passthrough, tuple(reads or ()))
        for name in names:
            REGISTRY[name] = partial(fn, **bound)
        if method:
            METHODS[method] = partial(fn, **bound)
        return fn
    return register


def closed_world(ctx: RuleContext, call: Call, qualified: str) -> dict[str, object]:
    """Binds ``call``'s arguments to the declared signature of ``qualified`` as Python would;
    an argument the rule does not model must be at its default (or static, for a passthrough
    rule), else this is a positioned error: never an argument dropped or passed through unseen.

    Returns parameter -> operand (a tuple of operands for ``*args``; a keyword ``**kwargs`` takes under its
    own name, modelled when the rule reads the ``**kwargs`` parameter)."""
    declared = signature(qualified)
    assert declared is not None, qualified  # op() checked it at registration
    models = MODELS[qualified]
    bound = _bind(ctx, call, qualified, declared)
    call.params.update(bound)
    for name, operand in bound.items():
        param = declared.get(name) or declared.varkw()
        assert param is not None, name  # _bind bound only declared names (or **kwargs)
        if models.reads is None or param.name in models.reads:
            continue
        for o in operand if isinstance(operand, tuple) else (operand,):
            if _at_default(o, param.default) or (models.passthrough and isinstance(o.value, Static)):
                continue
            default = "" if param.default in (inspect.Parameter.empty, ...) else f" (default {param.default!r})"
            raise ctx.error(UnsupportedError, o.original,
                            f"{call.short}({name}={ctx.code(o.original)}): meshify's rule for "
                            f"{qualified} does not model {name}=",
                            f"drop {name}={default}, or compute this outside the @mesh function")
    return bound


def _at_default(operand, default: object) -> bool:
    value = operand.value
    if default in (inspect.Parameter.empty, ...) or not (isinstance(value, Static) and value.known):
        return False
    return type(value.literal) is type(default) and value.literal == default


def _bind(ctx: RuleContext, call: Call, qualified: str, declared) -> dict[str, object]:
    bound: dict[str, object] = {}
    positional = [p for p in declared.params if p.kind in ("positional", "either")]
    varargs = next((p for p in declared.params if p.kind == "varargs"), None)
    short = call.short
    for i, operand in enumerate(call.args):
        if i < len(positional):
            bound[positional[i].name] = operand
        elif varargs is not None:
            bound[varargs.name] = (*bound.get(varargs.name, ()), operand)  # type: ignore[misc]
        else:
            raise ctx.error(UnsupportedError, operand.original, f"{short}() takes {len(positional)} positional "
                            f"arguments but {len(call.args)} were given ({qualified})", "pass the others by keyword")
    for keyword, operand in call.kwargs.items():
        param = declared.get(keyword)
        if declared.varkw() is None if param is None else param.kind in ("positional", "varargs", "varkw"):
            raise ctx.error(UnsupportedError, operand.original, f"{short}() has no keyword parameter {keyword!r} "
                            f"({qualified} takes {', '.join(declared.names())})", f"drop {keyword}=")
        if keyword in bound:
            raise ctx.error(UnsupportedError, operand.original, f"{short}() got {keyword!r} twice",
                            f"pass {keyword} once")
        bound[keyword] = operand
    return bound



def literal_items(seq: Operand | None) -> list[Operand] | None:
    """The items of ``[a, b]`` / ``(a, b)`` written as a literal argument, each an operand a rule may
    convert (None: not a literal, or one with ``*rest``).  The interpreter evaluated the items with the
    call's arguments; walking them again would repeat their comments."""
    node = seq.original if seq is not None else None
    if isinstance(node, cst.ListComp | cst.GeneratorExp) and isinstance(seq.node, cst.List | cst.Tuple) \
            and isinstance(seq.value, TupleValue) and len(seq.value.items) == len(seq.node.elements):
        # [jnp.sum(v) for _, v in sorted(p.items())], unrolled item by item: its items as the literal holds them
        return [Operand(v, n.value, n.value) for v, n in zip(seq.value.items, seq.node.elements)]
    if not isinstance(node, cst.List | cst.Tuple) or any(isinstance(e, cst.StarredElement) for e in node.elements):
        return None
    assert seq is not None and isinstance(seq.node, cst.List | cst.Tuple)
    literal = seq.value.literal if isinstance(seq.value, Static) else None
    if isinstance(literal, tuple | list) and len(literal) == len(node.elements):
        # (0, 0): a tuple of constants is one known value, item by item; (0, P + i) in a loop body, of a value
        # known only when traced, holds the ints it knows (the others None)
        values = [Static.of(v) if seq.value.known or type(v) is int else Static() for v in literal]
    else:
        values = seq.value.items if isinstance(seq.value, TupleValue) else [seq.value] * len(node.elements)
    return [Operand(v, e.value, n.value) for v, e, n in zip(values, node.elements, seq.node.elements)]


def unknown_call(ctx: RuleContext, call: Call) -> Lowering:
    """A function meshify has no rule for: fine on replicated values, an error on split ones."""
    operands = [*call.args, *call.kwargs.values()]
    if call.receiver is not None:
        operands.append(call.receiver)
    for operand in operands:
        for path, value in _arrays_in(operand.value, ctx.code(operand.original), operand.original):
            if value.layout.is_split or value.layout.partial:
                _from_star_import(ctx, call)
                if call.name.rsplit(".", 1)[-1] in ("append", "extend", "insert") and "." in call.name:
                    raise ctx.error(UnsupportedError, call.node, f"{call.name}(...): a Python list of arrays built "
                                    "up statement by statement is not modelled by meshify (its items' layouts are "
                                    "not followed)", "collect the values with jax.lax.scan (its ys), or build the "
                                    "list as one literal ([a, b, c]) and jnp.stack / jnp.concatenate it")
                unnamed = next((o for o in operands if isinstance(o.value, Opaque)), None)
                if unnamed is not None and call.name in REGISTRY:  # (softmax(v, where=mask) of a v whose dims are unknown: no rule can line up)
                    code = ctx.code(unnamed.original)
                    raise ctx.error(UnsupportedError, call.node, f"{call.name} of {code!r}, an array whose dims "
                                    f"meshify cannot infer, beside {path!r} with layout {value.layout.describe()}",
                                    f"name its dims where it is made: {code}: Tensor[...] = ..." if code.isidentifier()
                                    else f"name its dims where it is made: v: Tensor[...] = {code}")
                if call.name in REFUSED_ELEMENTWISE:
                    raise ctx.error(UnsupportedError, call.node,
                                    f"{call.name} is elementwise, but meshify cannot run it on a device's block of "
                                    f"{path!r} (layout {value.layout.describe()}): "
                                    f"{REFUSED_ELEMENTWISE[call.name]}",
                                    "call it outside the @mesh function, on its inputs or outputs, or write it with "
                                    "functions meshify has rules for")
                method = call.name.rsplit(".", 1)[-1]
                if call.name.startswith("optax.") or (call.receiver is not None and method in ("update", "init")
                                                      and not isinstance(call.receiver.value, Array)):
                    # (tx.update(grads, state, params): an optimizer's step, whose work on each leaf meshify cannot
                    # see; unsplitting a dim would be wrong advice)
                    raise ctx.error(UnsupportedError, call.node, f"{call.name} (an optimizer's step, as optax's, or "
                                    f"an optax function meshify has no rule for) on {path!r} with layout "
                                    f"{value.layout.describe()}: meshify cannot see what it does to each device's "
                                    "block", f"return the gradients from the @mesh function and call {call.name} in a "
                                    "jax.jit step around that call (examples/gpt2.py's train: the updates and the "
                                    "optimizer state keep the parameters' shardings), or write the update with "
                                    "jax.tree.map (lambda w, g: w - lr * g), which meshify follows")
                func = call.node.func if isinstance(call.node, cst.Call) else None
                if isinstance(func, cst.Lambda | cst.Call):  # (lambda a: ...)(x): a function called where it is made
                    raise ctx.error(UnsupportedError, call.node, f"{ctx.code(func)} is called where it is made, on "
                                    f"{path!r} with layout {value.layout.describe()}: meshify follows a function "
                                    "into its body only by its name", f"bind it to a name first (f = "
                                    f"{ctx.code(func.with_changes(lpar=[], rpar=[]))}) and call f on {path!r}, or write it as a "
                                    "def")
                raise ctx.error(
                    UnsupportedError, call.node,
                    f"{call.name} has no meshify rule and {path!r} reaches it with layout "
                    f"{value.layout.describe()}", unsplit_fix(value.layout, _axis_dim(call, value.layout)))
    if all(isinstance(o.value, Static) for o in operands) and _returns_static(ctx, call):
        return keep(_computed(ctx, call) or Static())
    return keep(Opaque(_known_shape(call)))


def _from_star_import(ctx: RuleContext, call: Call) -> None:
    """Refuses ``jnp.split(...)`` where ``jnp`` comes from ``from helpers import *``: meshify cannot tell what the
    name is, so the call is not one its rules know (saying so, not "no rule")."""
    table = ctx._module.imports
    root = call.name.split(".")[0]
    if not table.star_imports or table.bound(root) or root in ctx._module.functions or root in ctx._module.classes \
            or ctx.bound(root) is not None:
        return
    stars = ", ".join(f"from {m} import *" for m in table.star_imports)
    raise ctx.error(UnsupportedError, call.node, f"{root!r} in {call.name} is not bound in this module: it may come "
                    f"from `{stars}`, which meshify does not follow, so it cannot tell which function this is",
                    "import it by name in this module (import jax.numpy as jnp, from jax import numpy as jnp)")


#: Builtins computed here where every argument is known (``tuple(range(1, x.ndim))``, an axis).
_COMPUTED = {"range": range, "tuple": tuple, "list": list, "min": min, "max": max, "abs": abs, "int": int,
             "len": len, "sum": sum, "builtins.sum": sum}


def _computed(ctx: RuleContext, call: Call) -> Static | None:
    fn = _COMPUTED.get(call.name)
    if fn is None or ctx.bound(call.name) is not None or call.receiver is not None or call.kwargs \
            or not all(o.value.known for o in call.args):
        return None
    try:
        return Static.of(fn(*(o.value.literal for o in call.args)))
    except (TypeError, ValueError):
        return None


#: Functions of static values that return static values (never an array): what Python code
#: computes sizes and flags with.
_STATIC_FUNCTIONS = frozenset({"int", "float", "bool", "str", "len", "min", "max", "abs", "round", "range", "tuple",
                               "list", "sum", "builtins.sum", "divmod", "pow", "isinstance", "getattr", "hasattr", "type"})
_STATIC_MODULES = ("math.", "operator.", "numpy.dtype", "jax.numpy.dtype", "jax.random.split", "jax.random.key",
                   "jax.random.PRNGKey", "jax.random.fold_in", "numpy.prod", "math.prod",
                   "jax.numpy.finfo", "jax.numpy.iinfo", "numpy.finfo", "numpy.iinfo",
                   # questions about dtypes (x.dtype is static: mixed-precision code casts by them)
                   "jax.numpy.issubdtype", "numpy.issubdtype", "jax.dtypes.issubdtype", "jax.numpy.isdtype",
                   "numpy.isdtype", "jax.numpy.promote_types", "numpy.promote_types", "jax.numpy.can_cast",
                   "numpy.can_cast", "jax.dtypes.canonicalize_dtype")


_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
                     "uint32", "bool_", "complex64"})


def _returns_static(ctx: RuleContext, call: Call) -> bool:
    """Whether a call without a rule, on static arguments only, returns a static value: builtins,
    ``math``, a dtype of a scalar (``np.float32(0.25)``) and numpy's elementwise math on scalars
    (``np.sqrt(d_head)``); anything else (``jnp.eye(4)``, a user function) may return an array."""
    if call.name in _STATIC_FUNCTIONS and ctx.bound(call.name) is None:
        return True
    module, _, attr = call.name.rpartition(".")
    if module in ("numpy", "jax.numpy") and (attr in _DTYPES or f"jax.numpy.{attr}" in UNARY
                                             or f"jax.numpy.{attr}" in BINARY):
        return all(not isinstance(o.value.literal, list | tuple) for o in call.args if o.value.known)
    return call.name.startswith(_STATIC_MODULES) and not call.name.startswith(("jax.random.",))


def _known_shape(call: Call) -> tuple[int, ...] | None:
    """The shape of ``jnp.eye(n, m)`` / ``jnp.identity(n)`` from literals (``jnp.linspace``: its rule)."""
    ints = [o.value.literal if isinstance(o.value, Static) and o.value.known else None for o in call.args]
    name = call.name
    first = call.args[0].value if call.args else None
    if name in ("jax.numpy.tril", "jax.numpy.triu") and isinstance(first, Opaque) and first.shape is not None \
            and len(first.shape) >= 2:
        return first.shape  # jnp.tril(jnp.ones((6, 6))): a causal mask of a literal length
    if call.receiver is not None and isinstance(call.receiver.value, Opaque) and call.receiver.value.shape \
            is not None and isinstance(call.node.func, cst.Attribute) and call.node.func.attr.value == "reshape":
        return _reshaped(call.receiver.value.shape, ints)  # jnp.arange(8).reshape(8, 1)
    if name in _FULL_REDUCTIONS and len(call.args) == 1 and not set(call.kwargs) - {"dtype"}:
        return ()  # jnp.sum(W) of an array of unknown dims: a scalar
    if name in _SCANS and isinstance(first, Opaque) and first.shape is not None:
        # jnp.cumprod(1.0 - betas): a noise schedule's shape; flattened without an axis, as numpy does
        axis = call.kwargs.get("axis") or (call.args[1] if len(call.args) > 1 else None)
        if axis is None or (isinstance(axis.value, Static) and axis.value.known and axis.value.literal is None):
            return (math.prod(first.shape),)
        return first.shape
    if name in ("jax.numpy.concatenate", "jax.numpy.hstack") and isinstance(first, TupleValue) and first.items \
            and all(isinstance(v, Opaque) and v.shape is not None and len(v.shape) == 1 for v in first.items) \
            and len(call.args) == 1 and not call.kwargs:
        return (sum(v.shape[0] for v in first.items),)  # jnp.concatenate([jnp.ones(1), alphas[:-1]])
    if name in ("jax.numpy.eye", "jax.numpy.identity") and ints and isinstance(ints[0], int) and not call.kwargs.get("k"):
        m = ints[1] if len(ints) > 1 and isinstance(ints[1], int) else ints[0]
        return (ints[0], m)
    return None


#: Scans keeping an array's shape along an axis (flattening it without one).
_SCANS = frozenset(f"jax.numpy.{n}" for n in ("cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "nancumsum",
                                                "nancumprod"))
#: Reductions of every entry when called with the array alone: a scalar whatever the array's dims.
_FULL_REDUCTIONS = frozenset(f"jax.numpy.{n}" for n in ("sum", "mean", "max", "min", "prod", "std", "var", "any",
                                                         "all", "amax", "amin", "nansum", "nanmean", "count_nonzero"))


def _reshaped(shape: tuple[int, ...], ints: list) -> tuple[int, ...] | None:
    """``shape`` reshaped to the literal ints ``ints`` (one may be -1), or None."""
    if len(ints) == 1 and isinstance(ints[0], tuple):
        ints = list(ints[0])
    if not ints or not all(type(n) is int for n in ints) or sum(n == -1 for n in ints) > 1:
        return None
    total, known = math.prod(shape), math.prod(n for n in ints if n != -1)
    if known <= 0 or total % known:
        return None
    out = tuple(total // known if n == -1 else n for n in ints)
    return out if math.prod(out) == total else None


def _arrays_in(value: Value, path: str, node: cst.CSTNode | None = None):
    """``(path, array)`` for every array inside ``value`` (through tuples, lists and structs);
    a literal ``[a, b]`` names its items by their own text."""
    if isinstance(value, Array):
        yield path, value
    elif isinstance(value, TupleValue):
        literal = isinstance(node, cst.List | cst.Tuple) and len(node.elements) == len(value.items)
        for i, item in enumerate(value.items):
            element = node.elements[i].value if isinstance(node, cst.List | cst.Tuple) and literal else None
            yield from _arrays_in(item, cst.Module([]).code_for_node(element) if element is not None
                                  else f"{path}[{i}]", element)
    elif isinstance(value, StructValue):
        for name, item in value.fields:
            yield from _arrays_in(item, f"{path}.{name}")


def _axis_dim(call: Call, layout: Layout) -> int | None:
    """The dim a call without a rule works along, where its ``axis`` says (``jnp.cumsum(x, axis=1)``,
    ``jnp.sort(x, -1)``), so that a fix names that dim and no other."""
    axis = call.kwargs.get("axis")
    if axis is None and call.name.rpartition(".")[2] in _ALONG_AXIS and len(call.args) > 1:
        axis = call.args[1]
    literal = axis.value.literal if axis is not None and isinstance(axis.value, Static) and axis.value.known else None
    if isinstance(literal, int) and -layout.rank <= literal < layout.rank:
        return literal % layout.rank
    return None


#: Functions of numpy's ``f(a, axis, ...)`` form.
_ALONG_AXIS = frozenset({"cumsum", "cumprod", "sort", "argsort", "argmax", "argmin", "flip", "diff", "median",
                         "cummax", "cummin", "cumlogsumexp", "nanmax", "nanmin", "nansum", "ptp", "any", "all"})


def unsplit_fix(layout: Layout, along: int | None = None) -> str:
    """What would let a function with no rule see this value: the split dim it works along (when its
    ``axis`` says which), else each split dim named; or the pin that reduces a partial sum."""
    split = [(d, a) for d, a in zip(layout.dims, layout.axes) if a]
    if along is not None and layout.axes[along]:
        split = [(layout.dims[along], layout.axes[along])]
    if split:
        named = ", ".join(f"{d!r} (over {' x '.join(map(repr, a))})" for d, a in split)
        # a dim meshify named itself (qkv? of a split, heads? of a reshape) takes its rule from the one it came from
        unmapped = ", ".join(dict.fromkeys(f"{d.rstrip('?')!r}: None" for d, _ in split))
        return (f"it is split along {named}: map {'that dim' if len(split) == 1 else 'those dims'} to no mesh "
                f"axis (rules={{{unmapped}}}), or call it outside the @mesh function; meshify never gathers "
                "silently")
    dims = ", ".join(repr(d) for d in layout.dims)
    return (f"it is a partial sum over {' x '.join(map(repr, sorted(layout.partial)))}: reduce it first by "
            f"naming it, v: Tensor[{dims}] = ..., then pass v")
