"""Expression evaluation and the op registry.

Ops are keyed by qualified name (``jax.numpy.einsum`` whether the user wrote
``jnp.einsum``, ``jax.numpy.einsum`` or ``from jax.numpy import einsum as es``); array
methods (``x.sum()``) by method name.  A rule receives the evaluated call and returns
the result's value and rewritten node, asking the rewriter to convert operands where
their layouts must change.  A new op is one entry here plus its tests.
"""

from __future__ import annotations

import inspect
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from meshify.annotate._types import BROADCAST, Axes, Layout
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._plan import choose_splits
from meshify.rewrite._signatures import BINARY, UNARY, signature
from meshify.rewrite._templates import axes_node, call_template, int_node
from meshify.rewrite._values import Array, Opaque, Operand, Static, StructValue, TupleValue, Value

__all__ = ["evaluate", "binary_operator", "REGISTRY", "METHODS"]

# Linearity of an elementwise op in its operands decides whether partial sums may pass.
ADD, MUL, DIV, NEG, NONLINEAR = "add", "mul", "div", "neg", "nonlinear"


@dataclass(frozen=True, slots=True)
class Call:
    """An evaluated call: positional and keyword operands, and the original node."""

    node: cst.Call
    name: str
    args: tuple  # tuple[Operand, ...]
    kwargs: dict  # dict[str, Operand]
    receiver: object = None  # the Operand a method is called on
    #: Parameter name -> operand (a tuple for ``*args``), bound by :func:`closed_world`.
    params: dict = field(default_factory=dict)

    def arg(self, index: int, keyword: str, default: object = None):
        if index < len(self.args):
            return self.args[index]
        return self.kwargs.get(keyword, default)

    def rebuild(self, rw, replaced: dict[int, cst.BaseExpression]) -> cst.Call:
        """The call with operand ``i`` (positional index; keywords after them) replaced."""
        new_args = []
        for i, arg in enumerate(self.node.args):
            node = replaced.get(i, self._operand_node(i))
            new_args.append(arg.with_changes(value=node))
        func = self.node.func
        if self.receiver is not None and "receiver" in replaced:
            func = func.with_changes(value=replaced["receiver"])
        elif self.receiver is not None:
            func = func.with_changes(value=self.receiver.node)
        return self.node.with_changes(func=func, args=new_args)

    def position(self, operand) -> int:
        """The index in the call's arguments of ``operand`` (positional or keyword), for :meth:`rebuild`."""
        for i, arg in enumerate(self.node.args):
            if arg.keyword is None and i < len(self.args) and self.args[i] is operand:
                return i
            if arg.keyword is not None and self.kwargs.get(arg.keyword.value) is operand:
                return i
        raise ValueError("not an operand of this call")

    def _operand_node(self, i: int) -> cst.BaseExpression:
        arg = self.node.args[i]
        if arg.keyword is None and i < len(self.args):
            return self.args[i].node
        if arg.keyword is not None:
            return self.kwargs[arg.keyword.value].node
        return arg.value


Rule = Callable[..., tuple[Value, cst.BaseExpression]]
REGISTRY: dict[str, Rule] = {}
METHODS: dict[str, Rule] = {}
#: Ops whose rule walks its lambda arguments itself (loop bodies), in the caller's scope:
#: their lambdas may read the caller's arrays.
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
            REGISTRY[name] = (lambda rw, call, _fn=fn: _fn(rw, call, **bound))
        if method:
            METHODS[method] = (lambda rw, call, _fn=fn: _fn(rw, call, **bound))
        return fn
    return register


def closed_world(rw, call: Call, qualified: str) -> dict[str, object]:
    """Binds ``call``'s arguments to the declared signature of ``qualified`` as Python would;
    an argument the rule does not model must be at its default (or static, for a passthrough
    rule), else this is a positioned error: never an argument dropped or passed through unseen.

    Returns parameter -> operand (a tuple of operands for ``*args``)."""
    declared = signature(qualified)
    models = MODELS[qualified]
    bound = _bind(rw, call, qualified, declared)
    call.params.update(bound)
    for name, operand in bound.items():
        if models.reads is None or name in models.reads:
            continue
        param = declared.get(name)
        for o in operand if isinstance(operand, tuple) else (operand,):
            if _at_default(o, param.default) or (models.passthrough and isinstance(o.value, Static)):
                continue
            default = "" if param.default in (inspect.Parameter.empty, ...) else f" (default {param.default!r})"
            raise rw.error(UnsupportedError, o.original,
                           f"{call.name.rsplit('.', 1)[-1]}({name}={rw.ctx.code(o.original)}): meshify's rule for "
                           f"{qualified} does not model {name}=",
                           f"drop {name}={default}, or compute this outside the @mesh function")
    return bound


def _at_default(operand, default: object) -> bool:
    value = operand.value
    if default in (inspect.Parameter.empty, ...) or not (isinstance(value, Static) and value.known):
        return False
    return type(value.literal) is type(default) and value.literal == default


def _bind(rw, call: Call, qualified: str, declared) -> dict[str, object]:
    bound: dict[str, object] = {}
    positional = [p for p in declared.params if p.kind in ("positional", "either")]
    varargs = next((p for p in declared.params if p.kind == "varargs"), None)
    short = call.name.rsplit(".", 1)[-1]
    for i, operand in enumerate(call.args):
        if i < len(positional):
            bound[positional[i].name] = operand
        elif varargs is not None:
            bound[varargs.name] = (*bound.get(varargs.name, ()), operand)  # type: ignore[misc]
        else:
            raise rw.error(UnsupportedError, operand.original, f"{short}() takes {len(positional)} positional "
                           f"arguments but {len(call.args)} were given ({qualified})", "pass the others by keyword")
    for keyword, operand in call.kwargs.items():
        param = declared.get(keyword)
        if param is None or param.kind in ("positional", "varargs"):
            raise rw.error(UnsupportedError, operand.original, f"{short}() has no keyword parameter {keyword!r} "
                           f"({qualified} takes {', '.join(declared.names())})", f"drop {keyword}=")
        if keyword in bound:
            raise rw.error(UnsupportedError, operand.original, f"{short}() got {keyword!r} twice",
                           f"pass {keyword} once")
        bound[keyword] = operand
    return bound


# -- evaluation -----------------------------------------------------------------------------


def evaluate(rw, node: cst.BaseExpression):
    if isinstance(node, cst.Name):
        return Operand(rw.lookup(node), node, node)
    if isinstance(node, cst.Integer | cst.Float | cst.Imaginary):
        return Operand(Static.of(_number(node)), node, node)
    if isinstance(node, cst.SimpleString):
        return Operand(Static.of(_string(node)), node, node)
    if isinstance(node, cst.ConcatenatedString | cst.FormattedString):
        return Operand(Static(), node, node)
    if isinstance(node, cst.UnaryOperation):
        return _unary(rw, node)
    if isinstance(node, cst.BinaryOperation):
        left, right = rw.expr(node.left), rw.expr(node.right)
        value, (l, r) = binary_operator(rw, type(node.operator), left, right, node)
        return Operand(value, node, node.with_changes(left=l, right=r))
    if isinstance(node, cst.Comparison):
        return _comparison(rw, node)
    if isinstance(node, cst.Call):
        return _call(rw, node)
    if isinstance(node, cst.Attribute):
        return _attribute(rw, node)
    if isinstance(node, cst.Subscript):
        return _subscript(rw, node)
    if isinstance(node, cst.Tuple | cst.List):
        items = [rw.expr(e.value) for e in node.elements]
        new = node.with_changes(elements=[e.with_changes(value=i.node) for e, i in zip(node.elements, items)])
        if all(isinstance(i.value, Static) for i in items):
            known = all(i.value.known for i in items)
            sizes = tuple(i.value.size_of for i in items)
            shape_of = sizes if items and all(sizes) else None
            return Operand(Static(tuple(i.value.literal for i in items), known, shape_of=shape_of), node, new)
        return Operand(TupleValue(tuple(i.value for i in items)), node, new)
    if isinstance(node, cst.IfExp):
        return _if_exp(rw, node)
    if isinstance(node, cst.Ellipsis):
        return Operand(Static.of(...), node, node)
    return _opaque_construct(rw, node)


def _number(node: cst.Integer | cst.Float | cst.Imaginary) -> object:
    """A numeric literal's value, without libcst's evaluated_value (which compiles each one)."""
    text = node.value
    try:
        if isinstance(node, cst.Integer):
            return int(text, 0)
        if isinstance(node, cst.Float):
            return float(text)
    except ValueError:
        pass
    return node.evaluated_value


def _string(node: cst.SimpleString) -> object:
    text = node.value
    if text[:1] in "\"'" and "\\" not in text:  # no prefix, no escapes: strip the quotes
        quote = 3 if text[:3] in ('"""', "'''") else 1
        return text[quote:-quote]
    return node.evaluated_value


def _opaque_construct(rw, node):
    """Lambdas, comprehensions, ...: fine on static values, refused near arrays."""
    names = _names_in(node)
    arrays = [n for n in names if isinstance(rw.env.get(n), Array)]
    if arrays:
        raise rw.error(UnsupportedError, node, f"{type(node).__name__} over array {arrays[0]!r} is not supported "
                       "in a @mesh function", "compute it with jax.numpy operations on whole arrays")
    return Operand(Static(), node, node)


def _names_in(node: cst.CSTNode) -> list[str]:
    found: list[str] = []

    class _Gather(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n.value)

    node.visit(_Gather())
    return found


def _unary(rw, node: cst.UnaryOperation):
    operand = rw.expr(node.expression)
    if isinstance(operand.value, Static):
        literal = operand.value
        if isinstance(node.operator, cst.Minus) and literal.known and isinstance(literal.literal, int | float):
            return Operand(Static.of(-literal.literal), node, node.with_changes(expression=operand.node))
        if isinstance(node.operator, cst.Not) and literal.known:
            return Operand(Static.of(not literal.literal), node, node.with_changes(expression=operand.node))
        return Operand(Static(), node, node.with_changes(expression=operand.node))
    linear = NEG if isinstance(node.operator, cst.Minus | cst.Plus) else NONLINEAR
    value, nodes = elementwise(rw, [operand], linear, node, "unary " + rw.ctx.code(node.operator).strip())
    return Operand(value, node, node.with_changes(expression=nodes[0]))


def binary_operator(rw, operator: type, left, right, node) -> tuple[Value, list[cst.BaseExpression]]:
    """Value and rewritten operands of ``left <op> right``."""
    if operator is cst.MatrixMultiply:
        return matmul(rw, [left, right], node, "@")
    linear = {cst.Add: ADD, cst.Subtract: ADD, cst.Multiply: MUL, cst.Divide: DIV}.get(operator, NONLINEAR)
    symbol = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.Power: "**",
              cst.FloorDivide: "//", cst.Modulo: "%"}.get(operator, operator.__name__)
    return elementwise(rw, [left, right], linear, node, f"'{symbol}'")


def _comparison(rw, node: cst.Comparison):
    if len(node.comparisons) != 1:
        left = rw.expr(node.left)
        if isinstance(left.value, Static):
            return Operand(Static(), node, node)
        raise rw.error(UnsupportedError, node, "chained comparison of arrays", "compare two arrays at a time")
    target = node.comparisons[0]
    left, right = rw.expr(node.left), rw.expr(target.comparator)
    value, (l, r) = elementwise(rw, [left, right], NONLINEAR, node, "comparison")
    new = node.with_changes(left=l, comparisons=[target.with_changes(comparator=r)])
    return Operand(value, node, new)


def _if_exp(rw, node: cst.IfExp):
    test = rw.expr(node.test)
    if not isinstance(test.value, Static):
        raise rw.error(UnsupportedError, node.test, "a conditional expression on a traced array",
                       "use jnp.where(cond, a, b)")
    body, orelse = rw.expr(node.body), rw.expr(node.orelse)
    if body.value != orelse.value:
        raise rw.error(LayoutError, node, "the branches of this conditional expression have different layouts",
                       "give both branches the same dims, or annotate the result")
    return Operand(body.value, node, node.with_changes(body=body.node, orelse=orelse.node))


# -- attributes and subscripts ----------------------------------------------------------------


def _attribute(rw, node: cst.Attribute):
    if _is_module_path(rw, node):
        return Operand(Static(), node, node)
    base = rw.expr(node.value)
    attr = node.attr.value
    new = node.with_changes(value=base.node)
    if isinstance(base.value, StructValue):
        value = base.value.field(attr)
        if value is None:
            raise rw.error(LayoutError, node, f"{base.value.cls} has no field {attr!r}",
                           f"its fields are {', '.join(k for k, _ in base.value.fields)}")
        return Operand(value, node, new)
    if isinstance(base.value, Static) and base.value.param is not None:
        rw.static_reads.add((base.value.param, attr))
    if isinstance(base.value, Array):
        layout = base.value.layout
        if attr == "shape":
            factors = [rw.mesh.size(a) for a in layout.axes]
            if any(f != 1 for f in factors):
                # The user's .shape means the global shape; the local array holds a block.
                factors_node = cst.Tuple([cst.Element(int_node(f)) for f in factors])
                return Operand(Static(shape_of=layout.dims), node,
                               call_template("{mr}.global_shape({x}, {f})", mr=cst.Name(rw.ctx.mr),
                                             x=base.node, f=factors_node))
            return Operand(Static(shape_of=layout.dims), node, new)
        if attr == "size":
            total = rw.mesh.size(layout.split_axes)
            if total != 1:
                return Operand(Static(), node, cst.BinaryOperation(new, cst.Multiply(), int_node(total),
                                                                   lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
            return Operand(Static(), node, new)
        if attr in ("ndim", "dtype"):
            return Operand(Static(), node, new)
        if attr == "T":
            return _transpose_attr(rw, base, node, new)
        raise rw.error(UnsupportedError, node, f"attribute .{attr} of array {rw.ctx.code(node.value)!r}",
                       "use jax.numpy functions")
    if isinstance(base.value, Opaque):
        return Operand(Static() if attr in ("shape", "ndim", "dtype", "size") else Opaque(), node, new)
    return Operand(Static(), node, new)


def _is_module_path(rw, node: cst.Attribute) -> bool:
    root = node
    while isinstance(root, cst.Attribute):
        root = root.value
    # jnp.einsum, math.pi: a path from an import; anything else (CFG.scale, a closure's cfg.w) is evaluated.
    return isinstance(root, cst.Name) and root.value not in rw.env and root.value in rw.ctx.imports.imports \
        and root.value not in rw.ctx.enclosing_names(rw.fn)


def _transpose_attr(rw, base, node, new):
    """``x.T``: a local transpose; splits and a pending partial sum move with the dims."""
    layout = base.value.layout
    perm = Layout(tuple(reversed(layout.dims)), tuple(reversed(layout.axes)), layout.partial)
    return Operand(Array(perm, base.value.origin), node, new)


def _subscript(rw, node: cst.Subscript):
    # x.shape[i]: the global size of dim i.
    if isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
        base = rw.expr(node.value.value)
        if isinstance(base.value, Array) and len(node.slice) == 1:
            index = _literal_int(rw, node.slice[0])
            layout = base.value.layout
            if index is not None and -layout.rank <= index < layout.rank:
                shards = rw.mesh.size(layout.axes[index])
                shape = node.value.with_changes(value=base.node)
                local = node.with_changes(value=shape)
                size = Static(size_of=layout.dims[index])
                if shards == 1:
                    return Operand(size, node, local)
                return Operand(size, node, cst.BinaryOperation(local, cst.Multiply(), int_node(shards),
                                                               lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
    base = rw.expr(node.value)
    if isinstance(base.value, Static):
        shape_of = base.value.shape_of
        index = _literal_int(rw, node.slice[0]) if shape_of and len(node.slice) == 1 else None
        size = Static(size_of=shape_of[index]) if index is not None and -len(shape_of) <= index < len(shape_of) \
            else Static()
        return Operand(size, node, node.with_changes(value=base.node))
    if isinstance(base.value, StructValue):
        element = node.slice[0].slice if len(node.slice) == 1 else None
        key = rw.expr(element.value).value if isinstance(element, cst.Index) else None
        if base.value.kind != "dict" or not (isinstance(key, Static) and isinstance(key.literal, str)):
            raise rw.error(UnsupportedError, node, f"indexing {base.value.cls} {rw.ctx.code(node.value)!r}",
                           "read a field by its literal name: p[\"w\"] for a TypedDict, p.w for a NamedTuple or "
                           "dataclass")
        value = base.value.field(key.literal)
        if value is None:
            raise rw.error(LayoutError, node, f"{base.value.cls} has no field {key.literal!r}",
                           f"its fields are {', '.join(k for k, _ in base.value.fields)}")
        return Operand(value, node, node.with_changes(value=base.node))
    if isinstance(base.value, TupleValue):
        index = _literal_int(rw, node.slice[0]) if len(node.slice) == 1 else None
        if index is None:
            raise rw.error(UnsupportedError, node, "indexing a tuple of arrays with a non-literal index",
                           "index it with an int literal, or unpack it: a, b = pair")
        return Operand(base.value.items[index], node, node.with_changes(value=base.node))
    if isinstance(base.value, Array):
        from meshify.rewrite._ops_shape import index_array

        return index_array(rw, node, base)
    return Operand(Opaque(), node, node.with_changes(value=base.node))


def _literal_int(rw, element: cst.SubscriptElement) -> int | None:
    index = element.slice
    if not isinstance(index, cst.Index):
        return None
    value = rw.expr(index.value).value
    if isinstance(value, Static) and value.known and isinstance(value.literal, int):
        return value.literal
    return None


# -- calls ----------------------------------------------------------------------------------------


def _call(rw, node: cst.Call):
    func = node.func
    names = rw.ctx.qualified_names(func) if isinstance(func, cst.Name | cst.Attribute) else set()
    rule_name = next((n for n in sorted(names) if n in REGISTRY), None)
    if node.args and isinstance(node.args[0].value, cst.Name) and any(n.startswith("jax.random.") for n in names):
        rw.key_names.add(node.args[0].value.value)  # a key: verify feeds it jax.random.key(...)
    shadow = rw.ctx.shadowed(func) if isinstance(func, cst.Name | cst.Attribute) else None
    if shadow is not None and not (isinstance(func, cst.Name) and func.value in rw.env):
        root = rw.ctx.code(func).split(".")[0]
        raise rw.error(UnsupportedError, node,
                       f"{root!r} is imported and also reassigned in this module (line {rw.ctx.line(shadow)}), "
                       f"so meshify cannot tell what {rw.ctx.code(func)} is",
                       f"keep {root!r} bound to one import (e.g. import jax.numpy as jnp) and rename the other")
    receiver = None
    if rule_name is None and isinstance(func, cst.Attribute) and not _is_module_path(rw, func):
        receiver = rw.expr(func.value)
        if isinstance(receiver.value, Array | Opaque):
            method = func.attr.value
            if method in METHODS and isinstance(receiver.value, Array):
                call = _evaluate_args(rw, node, method, receiver)
                closed_world(rw, call, f"jax.Array.{method}")
                value, new = METHODS[method](rw, call)
                return Operand(value, node, new)
            if isinstance(receiver.value, Array) and (receiver.value.layout.is_split or receiver.value.layout.partial):
                raise rw.error(UnsupportedError, node,
                               f"method .{method}() on {rw.ctx.code(func.value)!r}, which has layout "
                               f"{receiver.value.layout.describe()}", _unsplit_fix(rw, receiver.value.layout))
    if isinstance(func, cst.Name) and func.value in rw.env and rule_name is None:
        raise rw.error(UnsupportedError, node, f"calling local value {func.value!r}",
                       "call the function by its module name (jnp.exp(x)), or define it at module level")
    if isinstance(func, cst.Name) and rule_name is None and func.value in rw.ctx.functions \
            and func.value not in rw.ctx.imports.imports:
        from meshify.rewrite._helpers import call_helper

        value, new = call_helper(rw, _evaluate_args(rw, node, func.value, None), rw.ctx.functions[func.value])
        return Operand(value, node, new)
    call = _evaluate_args(rw, node, rule_name or (sorted(names)[0] if names else rw.ctx.code(func)), receiver)
    if rule_name is not None:
        closed_world(rw, call, rule_name)
        value, new = REGISTRY[rule_name](rw, call)
        return Operand(value, node, new)
    value, new = _unknown_call(rw, call)
    return Operand(value, node, new)


def _evaluate_args(rw, node: cst.Call, name: str, receiver) -> Call:
    args, kwargs = [], {}
    for arg in node.args:
        if arg.star:
            raise rw.error(UnsupportedError, arg, f"*args/**kwargs in a call to {name}", "pass arguments one by one")
        if isinstance(arg.value, cst.Lambda) and name in BODY_OPS:
            operand = Operand(Static(), arg.value, arg.value)  # the rule walks it
        else:
            operand = rw.expr(arg.value)
        if arg.keyword is None:
            args.append(operand)
        else:
            kwargs[arg.keyword.value] = operand
    return Call(node, name, tuple(args), kwargs, receiver)


def _unknown_call(rw, call: Call):
    """A function meshify has no rule for: fine on replicated values, an error on split ones."""
    operands = [*call.args, *call.kwargs.values()]
    if call.receiver is not None:
        operands.append(call.receiver)
    for operand in operands:
        for path, value in _arrays_in(operand.value, rw.ctx.code(operand.original), operand.original):
            if value.layout.is_split or value.layout.partial:
                raise rw.error(
                    UnsupportedError, call.node,
                    f"{call.name} has no meshify rule and {path!r} reaches it with layout "
                    f"{value.layout.describe()}", _unsplit_fix(rw, value.layout, _axis_dim(call, value.layout)))
    new = call.rebuild(rw, {})
    if all(isinstance(o.value, Static) for o in operands) and _returns_static(rw, call):
        return Static(), new
    return Opaque(_known_shape(call)), new


#: Functions of static values that return static values (never an array): what Python code
#: computes sizes and flags with.
_STATIC_FUNCTIONS = frozenset({"int", "float", "bool", "str", "len", "min", "max", "abs", "round", "range", "tuple",
                               "list", "sum", "divmod", "pow", "isinstance", "getattr", "hasattr", "type"})
_STATIC_MODULES = ("math.", "operator.", "numpy.dtype", "jax.numpy.dtype", "jax.random.split", "jax.random.key",
                   "jax.random.PRNGKey", "jax.random.fold_in", "numpy.prod", "math.prod")


_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
                     "uint32", "bool_", "complex64"})


def _returns_static(rw, call: Call) -> bool:
    """Whether a call without a rule, on static arguments only, returns a static value: builtins,
    ``math``, a dtype of a scalar (``np.float32(0.25)``) and numpy's elementwise math on scalars
    (``np.sqrt(d_head)``); anything else (``jnp.eye(4)``, a user function) may return an array."""
    if call.name in _STATIC_FUNCTIONS and call.name not in rw.env:
        return True
    module, _, attr = call.name.rpartition(".")
    if module in ("numpy", "jax.numpy") and (attr in _DTYPES or f"jax.numpy.{attr}" in UNARY
                                             or f"jax.numpy.{attr}" in BINARY):
        return all(not isinstance(o.value.literal, list | tuple) for o in call.args if o.value.known)
    return call.name.startswith(_STATIC_MODULES) and not call.name.startswith(("jax.random.",))


def _known_shape(call: Call) -> tuple[int, ...] | None:
    """The shape of ``jnp.eye(n, m)`` / ``jnp.linspace(a, b, num)`` / ``jnp.identity(n)`` from literals."""
    ints = [o.value.literal if isinstance(o.value, Static) and o.value.known else None for o in call.args]
    name = call.name
    if name in ("jax.numpy.eye", "jax.numpy.identity") and ints and isinstance(ints[0], int) and not call.kwargs.get("k"):
        m = ints[1] if len(ints) > 1 and isinstance(ints[1], int) else ints[0]
        return (ints[0], m)
    if name == "jax.numpy.linspace" and len(ints) >= 2:
        num = ints[2] if len(ints) > 2 else (call.kwargs["num"].value.literal if "num" in call.kwargs
                                             and isinstance(call.kwargs["num"].value, Static) else 50)
        return (num,) if isinstance(num, int) else None
    return None


def _arrays_in(value: Value, path: str, node: cst.CSTNode | None = None):
    """``(path, array)`` for every array inside ``value`` (through tuples, lists and structs);
    a literal ``[a, b]`` names its items by their own text."""
    if isinstance(value, Array):
        yield path, value
    elif isinstance(value, TupleValue):
        literal = isinstance(node, cst.List | cst.Tuple) and len(node.elements) == len(value.items)
        for i, item in enumerate(value.items):
            element = node.elements[i].value if literal else None  # type: ignore[union-attr]
            yield from _arrays_in(item, cst.Module([]).code_for_node(element) if literal else f"{path}[{i}]",
                                  element)
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


def _unsplit_fix(rw, layout: Layout, along: int | None = None) -> str:
    """What would let a function with no rule see this value: the split dim it works along (when its
    ``axis`` says which), else each split dim named; or the pin that reduces a partial sum."""
    split = [(d, a) for d, a in zip(layout.dims, layout.axes) if a]
    if along is not None and layout.axes[along]:
        split = [(layout.dims[along], layout.axes[along])]
    if split:
        named = ", ".join(f"{d!r} (over {' x '.join(map(repr, a))})" for d, a in split)
        unmapped = ", ".join(f"{d!r}: None" for d, _ in split)
        return (f"it is split along {named}: map {'that dim' if len(split) == 1 else 'those dims'} to no mesh "
                f"axis (rules={{{unmapped}}}), or call it outside the @mesh function; meshify never gathers "
                "silently")
    dims = ", ".join(repr(d) for d in layout.dims)
    return (f"it is a partial sum over {' x '.join(map(repr, sorted(layout.partial)))}: reduce it first by "
            f"naming it, v: Tensor[{dims}] = ..., then pass v")


# -- elementwise ------------------------------------------------------------------------------


def elementwise(rw, operands: Sequence, linear: str, node, what: str) -> tuple[Value, list[cst.BaseExpression]]:
    """numpy-broadcast elementwise op: merge splits, keep partial sums where linearity allows."""
    operands = _name_by_position(operands)
    arrays = [o for o in operands if isinstance(o.value, Array)]
    opaque = [o for o in operands if isinstance(o.value, Opaque)]
    for o in operands:
        if isinstance(o.value, TupleValue):
            raise rw.error(UnsupportedError, o.original, f"{what} on a tuple", "unpack the tuple and use one array")
    if not arrays:
        return (Opaque() if opaque else Static()), [o.node for o in operands]
    if opaque:
        for o in arrays:
            if o.value.layout.is_split or o.value.layout.partial:
                raise rw.error(LayoutError, opaque[0].original,
                               f"cannot infer the dims of {rw.ctx.code(opaque[0].original)!r}, used with "
                               f"{rw.ctx.code(o.original)!r} of layout {o.value.layout.describe()}",
                               f'annotate it: v: Tensor[...] = {rw.ctx.code(opaque[0].original)}')
        return Opaque(), [o.node for o in operands]
    rank = max(o.value.layout.rank for o in arrays)
    letters = list(string.ascii_letters[:rank])
    names: list[str] = [BROADCAST] * rank
    for o in arrays:
        offset = rank - o.value.layout.rank
        for i, dim in enumerate(o.value.dims):
            pos = offset + i
            if dim == BROADCAST:
                continue
            if names[pos] not in (BROADCAST, dim):
                raise rw.error(LayoutError, node,
                               f"{what} lines up dim {dim!r} of {rw.ctx.code(o.original)!r} with dim "
                               f"{names[pos]!r}", "transpose or rename so that the dims match by position "
                               "(numpy broadcasting aligns trailing dims)")
            names[pos] = dim
    arrays_by_size = sorted(arrays, key=lambda o: -rw.elements(o.value.dims))
    candidates: dict[str, list[Axes]] = {}
    weights: dict[str, int] = {}
    for o in arrays_by_size:
        offset = rank - o.value.layout.rank
        for i, axes in enumerate(o.value.layout.axes):
            letter = letters[offset + i]
            if axes and axes not in candidates.setdefault(letter, []):
                candidates[letter].append(axes)
                weights[letter] = max(weights.get(letter, 0), rw.elements(o.value.dims))
    preferred = {l: rw.rules.axes(n) for l, n in zip(letters, names) if n != BROADCAST}
    chosen = choose_splits(letters, candidates, preferred, weights)
    used = {a for axes in chosen.values() for a in axes}
    keep = _kept_partial(operands, linear) - used
    nodes = []
    origin = ""
    for o in operands:
        if not isinstance(o.value, Array):
            nodes.append(o.node)
            continue
        layout = o.value.layout
        offset = rank - layout.rank
        axes = tuple(() if d == BROADCAST else chosen[letters[offset + i]] for i, d in enumerate(layout.dims))
        partial = layout.partial & keep
        origin = origin or (o.value.origin if partial else "")
        nodes.append(rw.convert(o, Layout(layout.dims, axes, partial), f"{what}"))
    result_axes = tuple(() if n == BROADCAST else chosen[l] for l, n in zip(letters, names))
    return Array(Layout(tuple(names), result_axes, frozenset(keep)), origin), nodes


def _name_by_position(operands: Sequence) -> list:
    """Opaque operands of a known shape (``jnp.zeros((4, 8))``) as whole arrays, each entry named by
    the dim it lines up with under broadcasting (size 1: broadcast); the others stay opaque."""
    arrays = [o for o in operands if isinstance(o.value, Array)]
    if not arrays:
        return list(operands)
    rank = max(o.value.layout.rank for o in arrays)
    names: list[str | None] = [None] * rank
    for o in arrays:
        offset = rank - o.value.layout.rank
        for i, dim in enumerate(o.value.dims):
            if dim != BROADCAST and names[offset + i] is None:
                names[offset + i] = dim
    out = []
    for o in operands:
        shape = o.value.shape if isinstance(o.value, Opaque) else None
        if shape is not None and len(shape) <= rank:
            offset = rank - len(shape)
            dims = tuple(BROADCAST if n == 1 else names[offset + i] for i, n in enumerate(shape))
            if None not in dims:
                o = Operand(Array(Layout.replicated(dims)), o.original, o.node)  # type: ignore[arg-type]
        out.append(o)
    return out


def _kept_partial(operands: Sequence, linear: str) -> frozenset[str]:
    """The partial-sum axes an elementwise op may carry through (deferred all-reduce)."""
    partials = [o.value.layout.partial if isinstance(o.value, Array) else frozenset() for o in operands]
    if linear == NEG:
        return partials[0]
    if linear == ADD:
        # Sums of partial sums stay partial over the axes they share (the rest is reduced first).
        if all(isinstance(o.value, Array) for o in operands):
            return frozenset.intersection(*partials)
        return frozenset()
    if linear == MUL:
        carriers = [p for p in partials if p]
        return carriers[0] if len(carriers) == 1 else frozenset()
    if linear == DIV:
        return partials[0] if not partials[1] else frozenset()
    return frozenset()


def _unary_rule(rw, call: Call, linear: str = NONLINEAR):
    x = call.receiver if call.receiver is not None else call.arg(0, "x")
    if x is None:
        raise rw.error(UnsupportedError, call.node, f"{call.name} needs an array argument", "pass the array first")
    for name, extra in call.kwargs.items():
        if isinstance(extra.value, Array):
            raise rw.error(UnsupportedError, extra.original, f"array keyword {name}= of {call.name}",
                           f"apply {name}= with jnp.where or an elementwise op instead")
    value, (node,) = elementwise(rw, [x], linear, call.node, call.name.rsplit(".", 1)[-1])
    if call.receiver is not None:
        return value, call.rebuild(rw, {"receiver": node})
    return value, call.rebuild(rw, {0: node})


for _name in UNARY:  # a new elementwise function is one line in _signatures.UNARY
    op(_name, reads=(REQUIRED,), passthrough=True, linear=NEG if _name == "jax.numpy.negative" else NONLINEAR)(
        _unary_rule)


@op("jax.numpy.asarray", "jax.numpy.array", reads=("a", "object", "dtype", "copy"))
def _asarray(rw, call: Call):
    x = call.arg(0, "a") or call.arg(0, "object")
    if isinstance(x.value, Static):  # jnp.array([1., 2.]): a whole array of the literal's shape
        shape = _literal_shape(x.value.literal) if x.value.known else None
        return (Static() if shape == () else Opaque(shape)), call.rebuild(rw, {})
    return _unary_rule(rw, call)


def _literal_shape(value: object) -> tuple[int, ...] | None:
    """numpy's shape of a nested list/tuple of numbers, or None if it is ragged or not numbers."""
    if isinstance(value, bool | int | float | complex):
        return ()
    if isinstance(value, list | tuple) and value:
        inner = {_literal_shape(v) for v in value}
        if len(inner) == 1 and None not in inner:
            return (len(value), *inner.pop())
    return None


@op(method="astype", reads=("dtype", "copy"))
def _astype(rw, call: Call):
    # Casting a partial sum changes where rounding happens: materialise it first.
    return _unary_rule(rw, call)


def _binary_rule(rw, call: Call, linear: str = NONLINEAR, arity: int = 2):
    operands = [call.arg(i, k) for i, k in enumerate(["x1", "x2", "x3"][:arity])]
    if arity == 3:
        operands = [call.arg(0, "condition"), call.arg(1, "x"), call.arg(2, "y")]
    if any(o is None for o in operands):
        raise rw.error(UnsupportedError, call.node, f"{call.name} needs {arity} array arguments",
                       f"pass {arity} arrays (or scalars)")
    value, nodes = elementwise(rw, operands, linear, call.node, call.name.rsplit(".", 1)[-1])
    return value, call.rebuild(rw, dict(enumerate(nodes)))


_LINEARITY = {"add": ADD, "subtract": ADD, "multiply": MUL, "divide": DIV, "true_divide": DIV}
for _name in BINARY:  # likewise, one line in _signatures.BINARY
    op(_name, reads=(REQUIRED,), linear=_LINEARITY.get(_name.rpartition(".")[2], NONLINEAR))(_binary_rule)
op("jax.numpy.where", reads=("condition", "x", "y"), arity=3)(_binary_rule)


# -- contractions ---------------------------------------------------------------------------------


@op("jax.numpy.einsum", reads=("subscripts", "operands", "optimize", "precision", "preferred_element_type"))
def _einsum(rw, call: Call):
    spec = call.arg(0, "subscripts")
    if spec is None or not (isinstance(spec.value, Static) and isinstance(spec.value.literal, str)):
        raise rw.error(UnsupportedError, call.node, "einsum without literal subscripts",
                       'write the subscripts as a string literal: jnp.einsum("bd,df->bf", x, w)')
    operands = list(call.args[1:])
    inputs, output = _parse_subscripts(rw, spec.value.literal, operands, spec.original)
    value, nodes = contract(rw, operands, inputs, output, call.node, "einsum")
    return value, call.rebuild(rw, {i + 1: n for i, n in enumerate(nodes)})


def _parse_subscripts(rw, text: str, operands, where) -> tuple[list[str], str]:
    text = text.replace(" ", "")
    lhs, arrow, output = text.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise rw.error(LayoutError, where, f"einsum subscripts {text!r} name {len(inputs)} operands but "
                       f"{len(operands)} are given", "give one subscript group per operand")
    spare = iter(c for c in string.ascii_uppercase + string.ascii_lowercase if c not in text)
    ellipsis_letters = ""
    if "..." in text:
        width = max((_rank(o) - (len(s) - 3) for s, o in zip(inputs, operands) if "..." in s and _rank(o) is not None),
                    default=0)
        ellipsis_letters = "".join(next(spare) for _ in range(width))
    expanded = []
    for s, o in zip(inputs, operands):
        if "..." in s:
            rank = _rank(o)
            n = (rank - (len(s) - 3)) if rank is not None else 0
            s = s.replace("...", ellipsis_letters[len(ellipsis_letters) - n:] if n else "")
        rank = _rank(o)
        if rank is not None and len(s) != rank:
            raise rw.error(LayoutError, where,
                           f"einsum subscripts {s!r} name {len(s)} dims but operand "
                           f"{rw.ctx.code(o.original)!r} has {rank} dims {list(o.value.dims)}",
                           "make each subscript group as long as its operand's rank")
        expanded.append(s)
    if arrow:
        output = output.replace("...", ellipsis_letters)
    else:
        counts = {c: "".join(expanded).count(c) for c in "".join(expanded)}
        output = ellipsis_letters + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis_letters))
    for c in output:
        if c not in "".join(expanded):
            raise rw.error(LayoutError, where, f"einsum output letter {c!r} appears in no operand",
                           "every output letter must name a dim of some operand")
    return expanded, output


def _rank(o) -> int | None:
    return o.value.layout.rank if isinstance(o.value, Array) else None


def contract(rw, operands: Sequence, inputs: Sequence[str], output: str, node, what: str):
    """Plans an einsum-like contraction; returns the result value and converted operand nodes.

    A contracted dim split the same way in every operand is contracted locally and the
    result is a partial sum over its axes; split in some operands only, the others are
    sliced locally (free).  Output dims keep their splits.  Where one axis would split two
    dims, the larger operand (by rank) keeps its split and the smaller is gathered.
    """
    names: dict[str, str] = {}
    for o, letters in zip(operands, inputs):
        if isinstance(o.value, TupleValue):
            raise rw.error(UnsupportedError, o.original, f"{what} of a tuple", "unpack the tuple and use one array")
        if not isinstance(o.value, Array):
            continue
        for letter, dim in zip(letters, o.value.dims):
            if dim == BROADCAST:
                continue
            if names.get(letter, dim) != dim:
                raise rw.error(LayoutError, node,
                               f"{what} letter {letter!r} is dim {names[letter]!r} in one operand and {dim!r} in "
                               f"{rw.ctx.code(o.original)!r}",
                               "contracted and shared dims must have the same name in every hint")
            names[letter] = dim
    for letters in inputs:
        for letter in letters:
            names.setdefault(letter, f"{what}_{letter}")
    order = sorted(range(len(operands)), key=lambda i: -rw.elements(
        operands[i].value.dims if isinstance(operands[i].value, Array) else [""] * len(inputs[i])))
    candidates: dict[str, list[Axes]] = {}
    weights: dict[str, int] = {}
    for i in order:
        o = operands[i]
        if isinstance(o.value, Array):
            for letter, axes in zip(inputs[i], o.value.layout.axes):
                if axes and axes not in candidates.setdefault(letter, []):
                    candidates[letter].append(axes)
                    weights[letter] = max(weights.get(letter, 0), rw.elements(o.value.dims))
    all_letters = list(dict.fromkeys("".join(inputs)))
    preferred = {l: rw.rules.axes(names[l]) for l in all_letters}
    chosen = choose_splits(all_letters, candidates, preferred, weights)
    used = {a for axes in chosen.values() for a in axes}
    partial_ops = [o for o in operands if isinstance(o.value, Array) and o.value.layout.partial]
    keep = (partial_ops[0].value.layout.partial - used) if partial_ops else frozenset()
    nodes = []
    origin = partial_ops[0].value.origin if partial_ops else ""
    for i, (o, letters) in enumerate(zip(operands, inputs)):
        dims = tuple(names[l] for l in letters)
        axes = tuple(chosen[l] for l in letters)
        if isinstance(o.value, Array):
            partial = o.value.layout.partial & keep if (partial_ops and o is partial_ops[0]) else frozenset()
            nodes.append(rw.convert(o, Layout(dims, axes, partial), what))
        elif isinstance(o.value, Opaque):
            replicated = Operand(Array(Layout.replicated(dims)), o.original, o.node)
            nodes.append(rw.convert(replicated, Layout(dims, axes), what))
        else:
            nodes.append(o.node)
    contracted = [l for l in all_letters if l not in output and chosen[l]]
    summed_axes = {a for l in contracted for a in chosen[l]}
    if contracted:
        origin = "contracted " + ", ".join(f"'{names[l]}'" for l in contracted) + " split"
    out_layout = Layout(tuple(names[l] for l in output), tuple(chosen[l] for l in output),
                        frozenset(keep | summed_axes))
    return Array(out_layout, origin), nodes


def matmul(rw, operands: Sequence, node, what: str, dot: bool = False):
    """``a @ b`` / ``jnp.matmul`` / ``jnp.dot`` as a contraction."""
    ranks = [_rank(o) for o in operands]
    if any(isinstance(o.value, Static) for o in operands) or None in ranks:
        if all(not (isinstance(o.value, Array) and (o.value.layout.is_split or o.value.layout.partial))
               for o in operands):
            kind = Opaque() if any(isinstance(o.value, Array | Opaque) for o in operands) else Static()
            return kind, [o.node for o in operands]
        unknown = next(o for o, r in zip(operands, ranks) if isinstance(o.value, Static) or r is None)
        text = rw.ctx.code(unknown.node) if isinstance(unknown.node, cst.CSTNode) else "an operand"
        raise rw.error(LayoutError, node, f"cannot infer the dims of {text!r}, an operand of {what}",
                       f"make it a parameter with a Tensor hint, or name its dims first: "
                       f"'w: Tensor[\"d_in\", \"d_out\"] = {text}' (a whole copy on every device)")
    ra, rb = ranks
    if ra == 0 or rb == 0:
        raise rw.error(LayoutError, node, f"{what} of a scalar", "use * for scalars")
    if dot and rb > 2:
        a = string.ascii_letters[:ra]
        b = string.ascii_letters[ra:ra + rb - 2] + a[-1] + string.ascii_letters[ra + rb - 2]
        out = a[:-1] + b[:-2] + b[-1]
    elif ra == 1 and rb == 1:
        a, b, out = "k", "k", ""
    elif ra == 1:
        batch = "abcdefgh"[: rb - 2]
        a, b, out = "k", batch + "kj", batch + "j"
    elif rb == 1:
        batch = "abcdefgh"[: ra - 2]
        a, b, out = batch + "ik", "k", batch + "i"
    else:
        batch = "abcdefgh"[: max(ra, rb) - 2]
        a = batch[len(batch) - (ra - 2):] + "ik"
        b = batch[len(batch) - (rb - 2):] + "kj"
        out = batch + "ij"
    return contract(rw, operands, [a, b], out, node, what)


@op("jax.numpy.matmul", reads=("a", "b", "precision", "preferred_element_type"))
def _matmul(rw, call: Call):
    value, nodes = matmul(rw, [call.arg(0, "a"), call.arg(1, "b")], call.node, "matmul")
    return value, call.rebuild(rw, dict(enumerate(nodes)))


@op("jax.numpy.dot", reads=("a", "b", "precision", "preferred_element_type"))
def _dot(rw, call: Call):
    value, nodes = matmul(rw, [call.arg(0, "a"), call.arg(1, "b")], call.node, "dot", dot=True)
    return value, call.rebuild(rw, dict(enumerate(nodes)))


# -- reductions -------------------------------------------------------------------------------


def _reduced_dims(rw, call: Call, layout: Layout, axis_operand, default_all: bool = True) -> list[int]:
    if axis_operand is None or (isinstance(axis_operand.value, Static) and axis_operand.value.known
                                and axis_operand.value.literal is None):
        return list(range(layout.rank)) if default_all else [layout.rank - 1]
    value = axis_operand.value
    if not (isinstance(value, Static) and value.known):
        raise rw.error(UnsupportedError, axis_operand.original,
                       f"axis={rw.ctx.code(axis_operand.original)} of {call.name} is not a literal",
                       "write the axis as an int literal, e.g. axis=-1, so that meshify knows which dim it reduces")
    axes = value.literal if isinstance(value.literal, tuple) else (value.literal,)
    out = []
    for a in axes:
        if not isinstance(a, int) or not -layout.rank <= a < layout.rank:
            raise rw.error(LayoutError, axis_operand.original,
                           f"axis {a!r} is out of range for a value of dims {list(layout.dims)}",
                           f"use an axis from {-layout.rank} to {layout.rank - 1}")
        out.append(a % layout.rank)
    return sorted(set(out))


#: The parameters of ``jnp.sum``/``mean``/``max``/``min`` after the array, in positional order
#: (the method forms ``x.sum(...)`` take the same ones).
_REDUCE_PARAMS = {
    "sum": ("axis", "dtype", "out", "keepdims", "initial", "where"),
    "mean": ("axis", "dtype", "out", "keepdims"),
    "max": ("axis", "out", "keepdims", "initial", "where"),
    "min": ("axis", "out", "keepdims", "initial", "where"),
}


def _reduce_arg(call: Call, kind: str, name: str):
    """The operand a reduction got for parameter ``name``, positionally or by keyword (or None)."""
    params = _REDUCE_PARAMS[kind]
    if name not in params:
        return call.kwargs.get(name)
    offset = 0 if call.receiver is not None else 1
    return call.arg(offset + params.index(name), name)


def _is_none(operand) -> bool:
    return isinstance(operand.value, Static) and operand.value.known and operand.value.literal is None


def _local_extra(layout: Layout, reduced: list[int], operand, extra: str) -> bool:
    """Whether ``where=``/``initial=`` can run locally: nothing reduced is split or partial,
    and a ``where`` mask has the reduced value's own layout (so its local shape matches)."""
    if extra == "out" or layout.partial or any(layout.axes[i] for i in reduced):
        return False
    value = operand.value
    if extra == "where":
        return isinstance(value, Static) or (isinstance(value, Array) and value.layout == layout)
    return isinstance(value, Static)


def _reduce_rule(rw, call: Call, kind: str):
    x = call.receiver if call.receiver is not None else call.arg(0, "a")
    if not isinstance(x.value, Array):
        return _unknown_call(rw, call)
    layout = x.value.layout
    reduced = _reduced_dims(rw, call, layout, _reduce_arg(call, kind, "axis"))
    for extra in ("where", "initial", "out"):
        operand = _reduce_arg(call, kind, extra)
        if operand is not None and not _is_none(operand) and not _local_extra(layout, reduced, operand, extra):
            split = [layout.dims[i] for i in reduced if layout.axes[i]]
            why = (f"it reduces split dim{'s' if len(split) > 1 else ''} {', '.join(map(repr, split))}" if split
                   else f"{rw.ctx.code(x.original)!r} is a partial sum over "
                        f"{', '.join(map(repr, sorted(layout.partial)))}" if layout.partial
                   else f"{extra}= must have the layout of {rw.ctx.code(x.original)!r} ({layout.describe()})")
            fix = (f"map {', '.join(map(repr, split))} to no mesh axis (rules={{{', '.join(f'{d!r}: None' for d in split)}}})"
                   f", or drop {extra}=" if split else f"drop {extra}=, or name the value first so it is reduced "
                   f"(v: Tensor[{', '.join(map(repr, layout.dims))}] = ...)" if layout.partial
                   else f"give {extra}= the dims {list(layout.dims)}")
            raise rw.error(UnsupportedError, operand.original,
                           f"{call.name}({extra}=...) on {rw.ctx.code(x.original)!r} of layout {layout.describe()}: "
                           f"{why}", fix)
    keepdims_op = _reduce_arg(call, kind, "keepdims")
    if keepdims_op is not None and not (isinstance(keepdims_op.value, Static) and keepdims_op.value.known):
        raise rw.error(UnsupportedError, keepdims_op.original, "keepdims must be a literal True/False",
                       "write keepdims=True or keepdims=False")
    keepdims = bool(keepdims_op.value.literal) if keepdims_op is not None else False
    split = [i for i in reduced if layout.axes[i]]
    split_axes = tuple(a for i in split for a in layout.axes[i])
    linear = kind in ("sum", "mean")
    source = layout if linear else layout.with_partial(())
    x_node = rw.convert(x, source, call.name.rsplit(".", 1)[-1])
    dims, axes = [], []
    for i, (d, a) in enumerate(zip(layout.dims, layout.axes)):
        if i in reduced:
            if keepdims:
                dims.append(BROADCAST)
                axes.append(())
        else:
            dims.append(d)
            axes.append(a)
    replaced = {"receiver": x_node} if call.receiver is not None else {0: x_node}
    new = call.rebuild(rw, replaced)
    origin = x.value.origin
    partial = set(source.partial)
    if split and linear:
        partial |= set(split_axes)
        names = ", ".join(f"'{layout.dims[i]}'" for i in split)
        origin = f"reduced {names} split"
        if kind == "mean":
            shards = rw.mesh.size(split_axes)
            new = cst.BinaryOperation(new, cst.Divide(), int_node(shards), lpar=[cst.LeftParen()],
                                      rpar=[cst.RightParen()])
            rw._comments.append(f"mean over split {names}: local mean / {shards} shards, summed later")
    elif split:
        # One runtime call rather than pmax(local max): its derivative shares ties across devices.
        fn = "pmax" if kind == "max" else "pmin"
        template = "{mr}.%s({x}, axis={axis}, axis_name={axes}%s)" % (kind, ", keepdims=True" if keepdims else "")
        axis_node = int_node(reduced[0]) if len(reduced) == 1 else cst.Tuple([cst.Element(int_node(i))
                                                                               for i in reduced])
        new = call_template(template, mr=cst.Name(rw.ctx.mr), x=x_node, axis=axis_node,
                            axes=axes_node(rw.mesh.order(split_axes)))
        rw.note_custom(fn, rw.mesh.order(split_axes), Layout(tuple(dims), tuple(axes)), layout.dims[split[0]],
                       f"{fn} over {_axes_text(split_axes)}: {kind} over split dim "
                       f"'{layout.dims[split[0]]}' of {rw.ctx.code(x.original)!r}")
    result = Array(Layout(tuple(dims), tuple(axes), frozenset(partial)), origin)
    return result, new


def _axes_text(axes) -> str:
    return " x ".join(f"'{a}'" for a in axes)


_REDUCE_READS = ("a", "axis", "dtype", "out", "keepdims", "initial", "where")  # promote_integers: static, passed
for _kind in ("sum", "mean", "max", "min"):
    op(f"jax.numpy.{_kind}", method=_kind, kind=_kind, reads=_REDUCE_READS, passthrough=True)(_reduce_rule)
op("jax.numpy.amax", kind="max", reads=_REDUCE_READS)(_reduce_rule)
op("jax.numpy.amin", kind="min", reads=_REDUCE_READS)(_reduce_rule)


# -- softmax family ---------------------------------------------------------------------------


def _softmax_rule(rw, call: Call, kind: str):
    x = call.arg(0, "x") if kind != "logsumexp" else call.arg(0, "a")
    if x is None or not isinstance(x.value, Array):
        return _unknown_call(rw, call)
    layout = x.value.layout
    default_all = kind == "logsumexp"
    axis_op = call.arg(1, "axis")
    reduced = _reduced_dims(rw, call, layout, axis_op, default_all=default_all)
    if axis_op is None and not default_all:
        reduced = [layout.rank - 1]
    x_node = rw.convert(x, layout.with_partial(()), kind)
    split = [i for i in reduced if layout.axes[i]]
    keepdims = False
    if kind == "logsumexp":
        keep_op = call.arg(3, "keepdims")
        if keep_op is not None:
            if not (isinstance(keep_op.value, Static) and keep_op.value.known):
                raise rw.error(UnsupportedError, keep_op.original, "keepdims must be a literal True/False",
                               "write keepdims=True or keepdims=False")
            keepdims = bool(keep_op.value.literal)
        dims = tuple(BROADCAST if i in reduced else d for i, d in enumerate(layout.dims) if keepdims or i not in reduced)
        axes = tuple(() if i in reduced else a for i, a in enumerate(layout.axes) if keepdims or i not in reduced)
        result = Array(Layout(dims, axes))
    else:
        result = Array(layout.with_partial(()))
    extras = [(name, o) for name in ("where", "b") if (o := call.params.get(name)) is not None and not _is_none(o)]
    if not split:
        replaced = {call.position(x): x_node}
        for name, o in extras:  # a mask or weights: elementwise with x, so in x's layout
            if isinstance(o.value, Array) and o.value.dims != layout.dims:
                raise rw.error(UnsupportedError, o.original,
                               f"{call.name}({name}=...) with dims {list(o.value.dims)} beside {list(layout.dims)}",
                               f"give {name}= the dims of the array it weighs, in the same order")
            if isinstance(o.value, Array):
                replaced[call.position(o)] = rw.convert(o, layout.with_partial(()), f"{kind}'s {name}=")
            elif not isinstance(o.value, Static):
                raise rw.error(UnsupportedError, o.original, f"{call.name}({name}=...) of unknown dims",
                               f"name its dims first: {name}: Tensor[...] = ...")
        return result, call.rebuild(rw, replaced)
    for name, o in extras:
        raise rw.error(UnsupportedError, o.original, f"{call.name}({name}=...) over a split dim "
                       f"{layout.dims[split[0]]!r}", f"drop {name}=, or map {layout.dims[split[0]]!r} to no mesh axis")
    split_axes = rw.mesh.order(a for i in split for a in layout.axes[i])
    axis_value = reduced[0] if len(reduced) == 1 else tuple(reduced)
    template = "{mr}.%s({x}, axis={axis}, axis_name={axes}%s)" % (kind, ", keepdims=True" if keepdims else "")
    axis_node = int_node(axis_value) if isinstance(axis_value, int) else \
        cst.Tuple([cst.Element(int_node(a)) for a in axis_value])
    new = call_template(template, mr=cst.Name(rw.ctx.mr), x=x_node, axis=axis_node,
                        axes=axes_node(split_axes))
    names = ", ".join(f"'{layout.dims[i]}'" for i in split)
    statistic = Layout(tuple(BROADCAST if i in reduced else d for i, d in enumerate(layout.dims)),
                       tuple(() if i in reduced else a for i, a in enumerate(layout.axes)))
    rw.note_custom(kind, split_axes, statistic, layout.dims[split[0]],
                   f"{kind} over split {names}: local max, pmax, local sum of exp, psum over "
                   f"{_axes_text(split_axes)}")
    return result, new


op("jax.nn.softmax", kind="softmax", reads=("x", "axis", "where"))(_softmax_rule)
op("jax.nn.log_softmax", kind="log_softmax", reads=("x", "axis", "where"))(_softmax_rule)
# return_sign=True returns a pair: not modelled (closed world: it must stay False).
op("jax.nn.logsumexp", "jax.scipy.special.logsumexp", kind="logsumexp",
   reads=("a", "axis", "b", "keepdims", "where"))(_softmax_rule)
