"""Expression evaluation: each sub-expression to its value (dims and layout, or a static) and
its rewritten node; calls go to the op rules (:mod:`meshify.rewrite.rules`).
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypeGuard

import libcst as cst

from meshify._unary import UNARY
from meshify.annotate._types import BROADCAST, INFERRED, Layout, hint_dims, unify_dims
from meshify.errors import LayoutError, MeshifyError, UnsupportedError
from meshify.rewrite._containers import (
    TREE_MAP,
    TREE_MAP_WITH_PATH,
    common_item,
    concatenated,
    enumerated,
    listed_names,
    mutating,
    one_layout,
    popping,
    sequence_index,
    sequence_item,
    sequence_len,
    sequence_of,
    tree_map,
    zipped,
)
from meshify.rewrite._context import _STATIC_MODULES
from meshify.rewrite._helpers import call_helper, function_ref, imported_helper
from meshify.rewrite._mappings import (
    changed_mapping,
    first_read,
    joined_mapping,
    listed_mapping,
    mapping_get,
    mapping_index,
    mapping_item,
    mapping_view,
    maybe_none,
)
from meshify.rewrite._names import dotted_name, read_again
from meshify.rewrite._nested import LocalDef, call_local, local_def, refuse_value
from meshify.rewrite._sums import evaluated_sum
from meshify.rewrite._templates import call_template, int_node
from meshify.rewrite._transforms import TRANSFORMS, transformed_call
from meshify.rewrite._values import (
    Array,
    FunctionRef,
    LambdaRef,
    LocalRef,
    Opaque,
    Operand,
    Static,
    StructValue,
    TupleValue,
    Value,
    holds_partial,
)
from meshify.rewrite._values import (
    is_none as none_value,  # (is_none here is the subscript helper of rules.lookups)
)
from meshify.rewrite.rules._api import (
    ADD,
    BODY_OPS,
    DIV,
    METHODS,
    MUL,
    NEG,
    NONLINEAR,
    REGISTRY,
    Call,
    Lowering,
    RuleContext,
    closed_world,
    unknown_call,
    unsplit_fix,
)
from meshify.rewrite.rules.contractions import forms_partial, matmul
from meshify.rewrite.rules.control import _axes_code
from meshify.rewrite.rules.elementwise import elementwise
from meshify.rewrite.rules.lookups import _is_ellipsis, array_index, basic_index, lookup, multi_index, scatter
from meshify.rewrite.rules.lookups import _is_none as is_none
from meshify.rewrite.rules.spatial import slice_split_dims

__all__ = ["BranchLayouts", "binary_operator", "evaluate", "index_array", "is_reshape", "none_test", "reshape_call"]


# -- evaluation -----------------------------------------------------------------------------


def evaluate(rw, node: cst.BaseExpression):
    if isinstance(node, cst.Name):
        return Operand(rw.lookup(node), node, node)
    if isinstance(node, cst.Integer | cst.Float | cst.Imaginary):
        return Operand(Static.of(_number(node)), node, node)
    if isinstance(node, cst.SimpleString):
        return Operand(Static.of(_string(node)), node, node)
    if isinstance(node, cst.FormattedString):
        return _formatted(rw, node)
    if isinstance(node, cst.ConcatenatedString):
        return Operand(Static(), node, node)
    if isinstance(node, cst.UnaryOperation):
        return _unary(rw, node)
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, _NUMBER_OPERATORS):
            rw.number_reads.update({id(node.left): node.left, id(node.right): node.right})
        if isinstance(node.operator, cst.Add | cst.Subtract) and node not in rw.plain_sums:
            return evaluated_sum(rw, node)  # partial sums over one axis completed together (_sums)
        left, right = rw.expr(node.left), rw.expr(node.right)
        value, (l, r) = binary_operator(rw, type(node.operator), left, right, node)
        value = number_or_array(rw, value, left, right, l, r)
        value = _int_arithmetic(node.operator, left.value, right.value) or value
        if isinstance(node.operator, cst.MatrixMultiply) and forms_partial(value, [left, right]) \
                and isinstance(value, Array) and all(rw.dtypes.of(o.original) == ("bool",) for o in (left, right)):
            # a matmul of booleans: its blocks' results are or-ed (mr.psum of a bool), never summed; completed
            # here, so that nothing of another dtype (x @ w + (m @ n), (m @ n) * 2.0) is summed with them
            formed = Operand(value, node, node.with_changes(left=l, right=r))
            whole = value.layout.with_partial(())
            return Operand(Array(whole, value.origin), node,
                           rw.convert(formed, whole, "a matmul of booleans (or-ed across devices, never summed)"))
        if isinstance(node.operator, cst.MatrixMultiply) and forms_partial(value, [left, right]):
            # a @ b forming a partial sum: jnp.matmul, to accumulate low-precision operands in float32
            call = cst.Call(cst.parse_expression(_numpy(rw) + ".matmul"),
                            [cst.Arg(l, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(r)])
            new = rw.accumulating(node, call, "preferred_element_type", [left, right])
            if new is not call:
                return Operand(value, node, new.with_changes(lpar=node.lpar, rpar=node.rpar))
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
        if node is rw._returning:  # a helper's returned tuple: which records each item makes
            items = []
            for e in node.elements:
                items.append(rw.expr(e.value))
                rw._item_ends.append(len(rw.records))
            return _sequence(rw, node, items)
        return _sequence(rw, node, [rw.expr(e.value) for e in node.elements])
    if isinstance(node, cst.IfExp):
        return _if_exp(rw, node)
    if isinstance(node, cst.Dict) and _string_keys(node) is not None:
        return _dict_literal(rw, node)
    if isinstance(node, cst.Dict) and any(isinstance(e, cst.StarredDictElement) and isinstance(e.value, cst.Name)
                                          and mapping_item(rw.env.get(e.value.value)) is not None
                                          for e in node.elements):
        return joined_mapping(rw, node)  # {**outs, "extra": y}, outs a dict of keys known only when traced
    if isinstance(node, cst.Dict) and any(isinstance(e, cst.StarredDictElement) for e in node.elements):
        merged = _merged_dict(rw, node)  # {**cache, "k": k}: a new dict of the values by key
        if merged is not None:
            return merged
    if isinstance(node, cst.BooleanOperation):
        return _boolean(rw, node)
    if isinstance(node, cst.Ellipsis):
        return Operand(Static.of(...), node, node)
    if isinstance(node, cst.ListComp | cst.GeneratorExp):
        made = rw.comprehension(node)  # [f(h) for h in hs]: as a Python loop's body
        if made is not None:
            return made
    if isinstance(node, cst.DictComp):
        made = rw.dict_comprehension(node)  # {k: v - lr * g[k] for k, v in params.items()}: a dict literal
        if made is not None:
            return made
    return _opaque_construct(rw, node)


_INT_OPS = {cst.Add: int.__add__, cst.Subtract: int.__sub__, cst.Multiply: int.__mul__,
            cst.FloorDivide: int.__floordiv__, cst.Modulo: int.__mod__}


def _int_arithmetic(operator: cst.BaseBinaryOp, left: Value, right: Value) -> Static | None:
    """``x.ndim - 1``, ``2 * k`` of known ints: the int (an axis meshify must know); ``(1,) * k``, ``a + b`` of
    known tuples: the tuple; ``a + b`` of known strings: the string; None otherwise."""
    fn = _INT_OPS.get(type(operator))
    if fn is None or not (isinstance(left, Static) and isinstance(right, Static) and left.known and right.known):
        return None
    a, b = left.literal, right.literal
    if isinstance(a, tuple) and isinstance(b, tuple) and fn is int.__add__:
        return Static.of(a + b)  # (1, 1) + (2,)
    if isinstance(a, str) and isinstance(b, str) and fn is int.__add__:
        return Static.of(a + b)  # "mean/" + k: a key made from a key
    if fn is int.__mul__ and (isinstance(a, tuple) and type(b) is int or type(a) is int and isinstance(b, tuple)):
        return Static.of(a * b)  # (1,) * (x.ndim - 1): a size-1 dim per other dim
    if type(a) is not int or type(b) is not int or (b == 0 and fn in (int.__floordiv__, int.__mod__)):
        return None
    return Static.of(fn(a, b))


def _namedtuple_fields(rw, func: cst.Name) -> list[tuple[str, cst.BaseExpression | None]] | None:
    """The fields (and default values) of a NamedTuple class (or a dataclass) the module defines, called by its
    name; None for anything else."""
    from meshify.rewrite._hints import _struct_kind

    if func.value in rw.env or func.value in rw.ctx.imports.imports or func.value in rw.ctx.enclosing_names(rw.fn):
        return None
    cls = rw.ctx.classes.get(func.value)
    if cls is None or not (any("typing.NamedTuple" in rw.ctx.qualified_names(b.value) for b in cls.bases)
                           or _struct_kind(rw.ctx, cls) == "dataclass"):
        return None
    fields = []
    for stmt in cls.body.body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else []:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                fields.append((small.target.value, small.value))
    return fields


def _namedtuple_construct(rw, node: cst.Call, func: cst.Name, fields) -> Operand:
    """``Out(logits=h, loss=jnp.mean(h))``: a pytree of the values passed (each in its own layout), read as a
    hinted NamedTuple parameter is (``out.loss``, returned, passed to helpers); a field left out takes its
    default (a literal, else a whole value of unknown dims).  ``Out(*xs)`` / ``Out(**d)``: not read here."""
    names = [n for n, _ in fields]
    given: dict[str, Operand] = {}
    args = []
    for i, a in enumerate(node.args):
        name = a.keyword.value if a.keyword is not None else names[i] if i < len(names) else None
        if name is None or name not in names or name in given:
            raise rw.error(LayoutError, a, f"{func.value}() takes the fields {', '.join(names)}",
                           f"pass each field once: {func.value}({', '.join(f'{n}=...' for n in names)})")
        # a partial sum formed in float32 is completed here, where its dtype is known (read back as out.a, its
        # dtype could not be: the psum would leave it float32)
        given[name] = rw.complete_widened(rw.expr(a.value), f"{func.value}'s field {name!r} (a float32-formed "
                                          "partial sum is completed where its dtype is known)")
        args.append(a.with_changes(value=given[name].node))
    values = []
    for name, default in fields:
        if name in given:
            values.append((name, given[name].value))
            continue
        try:
            literal = ast.literal_eval(rw.ctx.code(default)) if default is not None else ...
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            literal = ...
        if default is None:
            raise rw.error(LayoutError, node, f"{func.value}() leaves out field {name!r}, which has no default",
                           f"pass {name}= in the call")
        # a default that is no literal (dtype=jnp.float32, an array): a whole value of unknown dims
        values.append((name, Static.of(literal) if literal is not ... else Opaque()))
    from meshify.rewrite._hints import _meta_fields, _struct_kind

    cls = rw.ctx.classes[func.value]
    kind = "dataclass" if _struct_kind(rw.ctx, cls) == "dataclass" else "namedtuple"
    meta = _meta_fields(rw.ctx, cls) if kind == "dataclass" else set()
    for name in meta:  # a static field: part of the pytree's structure, a Python value here (never a result)
        if name in given and not isinstance(given[name].value, Static):
            raise rw.error(UnsupportedError, given[name].original, f"{func.value}'s static field {name!r} given "
                           f"{rw.ctx.code(given[name].original)!r}, an array", f"pass a Python value for {name!r}, or "
                           "make it an array field (with a Tensor hint)")
    return Operand(StructValue(func.value, tuple((k, v) for k, v in values if k not in meta), kind,
                               tuple(k for k, _ in values if k in meta)), node, node.with_changes(args=args))


def _string_keys(node: cst.Dict) -> list[str] | None:
    """The keys of a dict literal whose keys are all distinct string literals (``{"loss": l, "acc": a}``), else
    None."""
    keys = []
    for e in node.elements:
        if not (isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)):
            return None
        keys.append(e.key.evaluated_value)
    return keys if len(set(keys)) == len(keys) and all(isinstance(k, str) for k in keys) else None


def _dict_literal(rw, node: cst.Dict) -> Operand:
    """``{"loss": loss, "acc": acc}``: a dict of values by key, read as a dict parameter is
    (``d["loss"]``; returned as a dict of results)."""
    keys = _string_keys(node)
    assert keys is not None
    items = [rw.expr(e.value) for e in node.elements]  # type: ignore[union-attr]
    new = node.with_changes(elements=[e.with_changes(value=i.node) for e, i in zip(node.elements, items)])
    return Operand(StructValue("dict", tuple(zip(keys, (i.value for i in items))), "dict"), node, new)


def _merged_dict(rw, node: cst.Dict) -> Operand | None:
    """``{**cache, "k": k}`` where each ``**`` unpacks a dict of arrays meshify follows (a dict parameter, a dict
    this function built) and the other keys are string literals: the dict it builds, keys in Python's order (a
    later value replaces an earlier one in its place); None where it builds a dict of Python values."""
    fields: dict[str, Value] = {}
    elements = []
    arrays = False
    for e in node.elements:
        if isinstance(e, cst.StarredDictElement):
            op = rw.expr(e.value)
            if isinstance(op.value, StructValue) and op.value.kind == "dict":
                fields.update(op.value.fields)
                arrays = True
            elif isinstance(op.value, Static) and op.value.known and isinstance(op.value.literal, dict) and all(
                    isinstance(k, str) for k in op.value.literal):
                fields.update((k, Static.of(v)) for k, v in op.value.literal.items())
            else:
                return None
            elements.append(e.with_changes(value=op.node))
            continue
        if not (isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                and isinstance(e.key.evaluated_value, str)):
            return None
        op = rw.expr(e.value)
        arrays = arrays or not isinstance(op.value, Static)
        fields[e.key.evaluated_value] = op.value
        elements.append(e.with_changes(value=op.node))
    if not arrays:
        return None
    return Operand(StructValue("dict", tuple(fields.items()), "dict"), node, node.with_changes(elements=elements))


def _number_dim(item: Operand) -> str | None:
    """The inferred dim a number in a shape names: a literal's size (``4?``), a name's or attribute's name
    (``steps?``, ``max_len?`` of ``cfg.max_len``); None for anything else."""
    value = item.value
    if isinstance(value, Static) and value.known and type(value.literal) is int and value.literal > 1:
        return f"{value.literal}{INFERRED}"
    node = item.original
    if isinstance(value, Static) and not value.known and value.shape_of is None and isinstance(node, cst.Name | cst.Attribute):
        return f"{node.value if isinstance(node, cst.Name) else node.attr.value}{INFERRED}"
    return None


def _uncounted(rw, node: cst.Tuple | cst.List, element: cst.StarredElement) -> MeshifyError:
    code = rw.ctx.code(element.value)
    return rw.error(UnsupportedError, element, f"*{code} in a {'list' if isinstance(node, cst.List) else 'tuple'} "
                     f"holding arrays: meshify does not know how many items {code!r} holds",
                     f"spell its items out ({code}[0], {code}[1], ...), or concatenate lists ({code} + [...])")


def _sequence(rw, node: cst.Tuple | cst.List, items: list[Operand], strict: bool = True) -> Operand:
    """A tuple or list literal of evaluated items (a starred one's items spliced in; ``strict``: one of unknown
    count refused, else kept as one item, as a call's rule reads a literal with a starred item as no literal)."""
    new = node.with_changes(elements=[e.with_changes(value=i.node) for e, i in zip(node.elements, items)])
    statics = [i.value for i in items if isinstance(i.value, Static)]
    if len(statics) == len(items):
        known = all(v.known for v in statics)
        # (B, L) of dims' sizes is their shape; a literal 1 beside them a size-1 dim: jnp.full((B, 1), pos)
        sizes = [v.size_of or (BROADCAST if v.known and type(v.literal) is int and v.literal == 1 else None)
                 for v in statics]
        if any(v.size_of for v in statics):
            # (B, steps), (B, 4): beside dims' sizes, a number names a dim of its own (steps?, 4?), as a buffer
            # the function fills (out = jnp.zeros((B, steps)); out.at[:, i].set(tok)) has
            sizes = [s or _number_dim(i) for s, i in zip(sizes, items)]
        shape_of = tuple(sizes) if statics and all(sizes) and any(v.size_of for v in statics) else None  # type: ignore[arg-type]
        return Operand(Static(tuple(v.literal for v in statics), known, shape_of=shape_of), node, new)
    if any(isinstance(e, cst.StarredElement) and sequence_item(i.value) is not None
           for e, i in zip(node.elements, items)):
        return _spliced_sequence(rw, node, items)
    values: list[Value] = []
    for e, i in zip(node.elements, items):
        if not isinstance(e, cst.StarredElement):
            values.append(i.value)
        elif isinstance(i.value, TupleValue):  # [*a, x]: a's items, one by one
            values.extend(i.value.items)
        elif isinstance(i.value, Static) and i.value.known and isinstance(i.value.literal, tuple | list):
            values.extend(Static.of(v) for v in i.value.literal)
        elif strict:  # (a list of a length meshify does not know, an array's rows: how many items is not known)
            raise _uncounted(rw, node, e)
        else:
            values.append(i.value)
    return Operand(TupleValue(tuple(values), "list" if isinstance(node, cst.List) else "tuple"), node, new)


def _spliced_sequence(rw, node: cst.Tuple | cst.List, items: list[Operand]) -> Operand:
    """``[*hs, x]``, ``(x, *hs)``, ``[*hs, *gs]`` where a starred list's length is not known while rewriting (built
    by appending in a loop, a filtered comprehension): a list of a length meshify does not know, as ``hs + [x]``
    is, so every item must have the one layout of the list's items.  A partial sum spelled out as an item is
    completed there (the list's items are whole arrays, whatever reads them); one inside a starred tuple is
    refused.  (A tuple display makes a tuple: the sequence stands for either, as ``tuple(hs)`` does.)"""
    known: list[Value] = []
    spliced: list[Value] = []
    elements = []
    for e, i in zip(node.elements, items):
        value, new = i.value, i.node
        if isinstance(e, cst.StarredElement):
            listed = sequence_item(value)
            if listed is not None:
                spliced.append(listed)
            elif isinstance(value, TupleValue) and not holds_partial(value):
                known.extend(value.items)
            elif isinstance(value, Static) and value.known and isinstance(value.literal, tuple | list):
                known.extend(Static.of(v) for v in value.literal)
            elif isinstance(value, TupleValue):
                raise rw.error(UnsupportedError, e, f"*{rw.ctx.code(e.value)} holds a partial sum, beside a list "
                               "whose length meshify does not know", "complete it first (a hint pins it: "
                               "v: Tensor[...] = ...), or spell its items out")
            else:
                raise _uncounted(rw, node, e)
        elif isinstance(value, Array) and value.layout.partial:  # [*hs, h @ w2]: completed where it is written
            whole = value.layout.with_partial(())
            new = rw.convert(i, whole, "an item of a list whose length meshify does not know")
            known.append(Array(whole, value.origin))
        elif holds_partial(value):
            raise rw.error(UnsupportedError, e, f"{rw.ctx.code(e.value)!r} holds a partial sum, beside a list whose "
                           "length meshify does not know", "complete it first (a hint pins it: v: Tensor[...] = ...)")
        else:
            known.append(value)
        elements.append(e.with_changes(value=new))
    common = common_item([*spliced, *known])
    if common is None:
        from meshify.rewrite._containers import _text

        other = next((v for v in [*spliced[1:], *known] if one_layout([spliced[0], v]) is not None), known[0])
        item = spliced[0]
        pin = f"v: Tensor[{hint_dims(item.dims)}] = ... where each is made" if isinstance(item, Array) else \
            "a hint where each is made"
        raise rw.error(LayoutError, node, f"{rw.ctx.code(node)!r} joins a list of {_text(item)} (its length "
                       f"not known while rewriting) with {_text(other)}: such a list holds one layout",
                       f"give the items of {rw.ctx.code(node)} one layout ({pin}), or keep them in separate lists")
    return Operand(sequence_of(common), node, node.with_changes(elements=elements))


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
    free = _free_names(node)
    names = [n for n in dict.fromkeys(_names_in(node)) if n in free]
    local = next((d for d in (local_def(rw, n) for n in names) if d is not None), None)
    if local is not None:
        raise refuse_value(rw, node, local)
    arrays = [n for n in names if isinstance(rw.env.get(n), Array)
              or _holds_split(rw.env[n] if n in rw.env else rw.free.get(n))]
    if arrays:
        held = rw.env.get(arrays[0])
        if isinstance(held, StructValue):  # {k: "lora" in k for k in params}: a pytree's keys, not an array
            raise rw.error(UnsupportedError, node, f"{type(node).__name__} over the pytree {arrays[0]!r} (its keys "
                           "or items) is not modelled", _PYTREE_LOOP_FIX.format(name=arrays[0]))
        raise rw.error(UnsupportedError, node, f"{type(node).__name__} over array {arrays[0]!r} is not supported "
                       "in a @mesh function", "compute it with jax.numpy operations on whole arrays")
    return Operand(Static(), node, node)


#: The fix for a loop or comprehension over a hinted pytree's keys or items.
_PYTREE_LOOP_FIX = ("go over it sorted, as JAX orders a dict (for k in sorted({name}), for k, v in sorted({name}.items()): "
                    "unrolled key by key; a dict comprehension may take it in any order), read its fields by name "
                    "({name}[\"lora_a\"]), or go over its leaves with their paths: mask = "
                    "jax.tree_util.tree_map_with_path(lambda path, p: \"lora\" in jax.tree_util.keystr(path), {name}), "
                    "then zip(jax.tree.leaves({name}), jax.tree.leaves(mask))")


def _holds_split(value) -> bool:
    """Whether ``value`` (a struct or tuple, or a closure's array) holds a split or partial array: a
    lambda closing over it computes on each device's block, which no unknown call can know."""
    if isinstance(value, Array):
        return value.layout.is_split or bool(value.layout.partial)
    if isinstance(value, StructValue):
        return any(_holds_split(v) for _, v in value.fields)
    if isinstance(value, TupleValue):
        return any(_holds_split(v) for v in value.items)
    return False


def _names_in(node: cst.CSTNode) -> list[str]:
    found: list[str] = []

    class _Gather(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n.value)

    node.visit(_Gather())
    return found


def _numpy(rw) -> str:
    """How the module names ``jax.numpy`` (``jnp``, or ``jax.numpy``)."""
    imports = rw.ctx.imports.imports
    alias = next((name for name, target in sorted(imports.items()) if target == "jax.numpy"), None)
    if alias is not None and alias not in rw.env:
        return alias
    return "jax.numpy"


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
    value, converts = elementwise(rw.rule_context(), [operand], linear, node,
                                  "unary " + rw.ctx.code(node.operator).strip())
    nodes = rw.converted([operand], converts)
    return Operand(value, node, node.with_changes(expression=nodes[0]))


def binary_operator(rw, operator: type[cst.BaseBinaryOp], left, right, node
                    ) -> tuple[Value, list[cst.BaseExpression]]:
    """Value and rewritten operands of ``left <op> right``."""
    if operator is cst.MatrixMultiply:
        value, converts, contraction = matmul(rw.rule_context(), [left, right], node, "@")
        rw.observe_contraction(contraction)
        return value, rw.converted([left, right], converts)
    if operator is cst.Add:
        joined = concatenated(rw, left, right, node)  # all_hidden_states + (x,): a longer tuple
        if joined is not None:  # (a third: the left side's items converted, [dense] + pooled)
            return joined[0], [joined[2] if len(joined) > 2 else left.node, joined[1]]
        shape = _joined_shape(left.value, right.value)
        if shape is not None:  # (x.shape[0],) + (1,) * (x.ndim - 1): a drop-path mask's shape
            return shape, [left.node, right.node]
    linear = {cst.Add: ADD, cst.Subtract: ADD, cst.Multiply: MUL, cst.Divide: DIV}.get(operator, NONLINEAR)
    symbol = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.Power: "**",
              cst.FloorDivide: "//", cst.Modulo: "%"}.get(operator, operator.__name__)
    value, converts = elementwise(rw.rule_context(), [left, right], linear, node, f"'{symbol}'")
    if operator is cst.Multiply and isinstance(value, Static):
        value = _size_product(value, left.value, right.value)
    return value, rw.converted([left, right], converts)


def _size_product(value: Static, a: Value, b: Value) -> Static:
    """``value`` (``a * b``) knowing which dims' sizes it multiplies, where ``a`` and ``b`` are sizes read off dims
    or such products (``B * T``: a reshape to it merges batch and length)."""
    def factors(v: Value) -> tuple[str, ...] | None:
        if not isinstance(v, Static):
            return None
        return (v.size_of,) if v.size_of is not None else v.product_of

    left, right = factors(a), factors(b)
    return value if left is None or right is None else replace(value, product_of=(*left, *right))


def _joined_shape(a: Value, b: Value) -> Static | None:
    """``a + b`` of two shapes, at least one holding dims' sizes (``x.shape[:1] + (1, 1)``): the shape of
    those dims (a literal 1: a size-1 dim); None where either is not a shape meshify reads."""
    def entries(v: Value) -> tuple[str, ...] | None:
        if not isinstance(v, Static):
            return None
        if v.shape_of is not None:
            return v.shape_of
        if v.known and isinstance(v.literal, tuple) and all(type(n) is int and n == 1 for n in v.literal):
            return (BROADCAST,) * len(v.literal)
        return None

    left, right = entries(a), entries(b)
    if left is None or right is None or not any(d != BROADCAST for d in (*left, *right)):
        return None
    assert isinstance(a, Static) and isinstance(b, Static)
    known = a.known and b.known and isinstance(a.literal, tuple) and isinstance(b.literal, tuple)
    literal = (*a.literal, *b.literal) if known else None  # type: ignore[misc]
    return Static(literal, known, shape_of=(*left, *right))


_COMPARE = {cst.Equal: operator.eq, cst.NotEqual: operator.ne, cst.LessThan: operator.lt,
            cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge,
            cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b}  # ("b" in keystr(path): known strings)


def _comparison(rw, node: cst.Comparison):
    if len(node.comparisons) != 1:
        left = rw.expr(node.left)
        if isinstance(left.value, Static):
            return Operand(Static(), node, node)
        raise rw.error(UnsupportedError, node, "chained comparison of arrays", "compare two arrays at a time")
    target = node.comparisons[0]
    if isinstance(target.operator, cst.Is | cst.IsNot):  # identity: a Python bool at trace time
        known = none_test(rw, node)
        return Operand(Static() if known is None else Static.of(known), node, node)
    if isinstance(target.operator, _NUMBER_COMPARISONS):  # (m > 0.5: m a number or an array)
        rw.number_reads.update({id(node.left): node.left, id(target.comparator): target.comparator})
    left, right = rw.expr(node.left), rw.expr(target.comparator)
    if isinstance(target.operator, cst.In | cst.NotIn) and isinstance(left.value, Static) and (
            mapping_item(right.value) is not None or isinstance(right.value, StructValue)
            and right.value.kind == "dict" and not left.value.known):
        # k in outs: its keys (or k) known only when traced, a Python bool then
        new = node.with_changes(left=left.node, comparisons=[target.with_changes(comparator=right.node)])
        return Operand(Static(), node, new)
    if isinstance(target.operator, cst.In | cst.NotIn) and isinstance(right.value, StructValue) \
            and right.value.kind == "dict" and isinstance(target.comparator, cst.Name) \
            and any(target.comparator.value in names for names in rw.loop_carried) \
            and target.comparator.value in listed_names(rw.fn):
        # "prev" in outs, outs a dict a kept loop carries and stores into: the body is walked once, with the keys
        # of its first iteration, and the answer would steer every iteration's if
        name = target.comparator.value
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node)}: the keys of {name!r} change in the loop "
                       "around it (its body stores into it), which meshify rewrites once", f"test a Python value "
                       f"of your own (a flag set where the key is stored), or key {name!r} by the loop's counter "
                       f"({name}[f\"layer{{i}}\"]: a dict of one layout, whose keys are known only when traced)")
    if isinstance(target.operator, cst.In | cst.NotIn) and isinstance(right.value, StructValue) \
            and right.value.kind in ("dict", "namedtuple") and isinstance(left.value, Static) and left.value.known:
        # if "proj" in block: a key of a pytree meshify holds field by field (a NamedTuple: its fields, as
        # `in` reads its values, is not modelled)
        if right.value.kind != "dict":
            raise rw.error(UnsupportedError, node, f"`in` on the NamedTuple {rw.ctx.code(target.comparator)!r} (it "
                           "reads its values)", "test a field: hasattr, or a dict's key")
        found = any(k == left.value.literal for k, _ in right.value.fields)
        new = node.with_changes(left=left.node, comparisons=[target.with_changes(comparator=right.node)])
        return Operand(Static.of(found if isinstance(target.operator, cst.In) else not found), node, new)
    compare = _COMPARE.get(type(target.operator))
    if compare is not None and isinstance(left.value, Static) and isinstance(right.value, Static) \
            and left.value.known and right.value.known:
        # if x.ndim == 4: (a rank, a config's field, a literal): the answer, so that the if takes its branch
        new = node.with_changes(left=left.node, comparisons=[target.with_changes(comparator=right.node)])
        try:
            return Operand(Static.of(bool(compare(left.value.literal, right.value.literal))), node, new)
        except Exception:  # noqa: BLE001  (Python's error, raised again when the program runs)
            return Operand(Static(), node, new)
    value, converts = elementwise(rw.rule_context(), [left, right], NONLINEAR, node, "comparison")
    l, r = rw.converted([left, right], converts)
    new = node.with_changes(left=l, comparisons=[target.with_changes(comparator=r)])
    return Operand(number_or_array_of(rw, value, [left, right], [l, r]), node, new)


def _formatted(rw, node: cst.FormattedString):
    """An f-string (an assert's or a raise's message): its fields rewritten, so that ``{x.shape[-1]}``
    of a split dim still shows the global size."""
    parts = []
    quote = node.start.lstrip("rRfFbBuU")[:1]
    text: str | None = "" if node.start.lower() in ("f'", 'f"') else None  # (its value, where Python's it is)
    for part in node.parts:
        if isinstance(part, cst.FormattedStringExpression):
            done = rw.expr(part.expression)
            new = done.node
            if quote not in cst.Module(body=[]).code_for_node(new):  # a quote there would end the string (< 3.12)
                part = part.with_changes(expression=new)
            plain = part.conversion is None and part.format_spec is None and isinstance(done.value, Static) \
                and done.value.known and isinstance(done.value.literal, str | int | bool)
            text = text + str(done.value.literal) if text is not None and plain else None  # type: ignore[union-attr]
        elif text is not None:
            text += part.value.replace("{{", "{").replace("}}", "}")  # type: ignore[union-attr]
        parts.append(part)
    # f"{k}_norm" of a key meshify knows (a dict comprehension's computed keys): a known string
    return Operand(Static.of(text) if text is not None else Static(), node, node.with_changes(parts=parts))


def _boolean(rw, node: cst.BooleanOperation):
    """``a and b`` / ``a or b`` on static values (``x.shape[-1] % cfg.heads == 0 and cfg.bias``): its
    operands rewritten (a split dim's size stays global); near an array, refused as before."""
    left, right = rw.expr(node.left), rw.expr(node.right)
    if isinstance(left.value, Array) or isinstance(right.value, Array):
        return _opaque_construct(rw, node)
    new = node.with_changes(left=left.node, right=right.node)
    if isinstance(left.value, Static) and isinstance(right.value, Static) and left.value.known and right.value.known:
        a, b = left.value.literal, right.value.literal
        return Operand(Static.of((a and b) if isinstance(node.operator, cst.And) else (a or b)), node, new)
    return Operand(Static(), node, new)


def _field_held(rw, node: cst.BaseExpression | None):
    """What a name, or a field of a pytree read by name (``p.q.b``, ``p["bias"]``), holds; None if not that."""
    if isinstance(node, cst.Name):
        return rw.env.get(node.value, rw.free.get(node.value))
    key = node.attr.value if isinstance(node, cst.Attribute) else None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            and isinstance(node.slice[0].slice.value, cst.SimpleString):
        key = node.slice[0].slice.value.evaluated_value
    held = _field_held(rw, node.value) if key is not None else None  # type: ignore[union-attr]
    return held.field(key) if isinstance(held, StructValue) else None


def none_test(rw, node: cst.BaseExpression) -> bool | None:
    """``pos is None`` / ``pos is not None`` where meshify knows the answer: an array (a hinted
    parameter, a helper's array argument) is never None; a helper called without it (a literal None
    default) always is.  Helper versions are specialised on it.  None where it cannot tell."""
    if not (isinstance(node, cst.Comparison) and len(node.comparisons) == 1):
        return None
    target = node.comparisons[0]
    if not isinstance(target.operator, cst.Is | cst.IsNot):
        return None
    sides = [node.left, target.comparator]
    if not any(isinstance(n, cst.Name) and n.value == "None" for n in sides):
        return None
    other = next((n for n in sides if not (isinstance(n, cst.Name) and n.value == "None")), None)
    value = _field_held(rw, other)
    if maybe_none(rw, value):  # prev = outs.get(k): an array or None, known only when traced
        return None
    if isinstance(value, Array | TupleValue | StructValue):
        is_none = False
    elif isinstance(value, Static) and value.known:
        is_none = value.literal is None
    else:
        return None
    return is_none if isinstance(target.operator, cst.Is) else not is_none


class BranchLayouts(LayoutError):
    """The branches of ``a if flag else b`` have different layouts (``node``): a ``return`` of one may be
    chosen by a static flag (see ``FunctionRewriter._return_as_if``)."""

    node: cst.IfExp | None = None


def _if_exp(rw, node: cst.IfExp):
    test = rw.expr(node.test)
    if not isinstance(test.value, Static):
        body, orelse = node.body, node.orelse
        if isinstance(body, cst.Tuple | cst.List) and isinstance(orelse, cst.Tuple | cst.List) \
                and len(body.elements) == len(orelse.elements):  # (h, x) if c else (x, h): item by item
            code = rw.ctx.code(node.test)
            items = ", ".join(f"jnp.where({code}, {rw.ctx.code(x.value)}, {rw.ctx.code(y.value)})"
                              for x, y in zip(body.elements, orelse.elements))
            raise rw.error(UnsupportedError, node.test, "a conditional expression on a traced array (JAX raises a "
                           "TracerBoolConversionError for it under jit), choosing between tuples",
                           f"choose each item with jnp.where: ({items}{',' if len(body.elements) == 1 else ''})")
        raise rw.error(UnsupportedError, node.test, "a conditional expression on a traced array",
                       "use jnp.where(cond, a, b)")
    known = none_test(rw, node.test)
    if known is not None:  # b if pos is None else a + pos: only the branch Python takes runs
        taken = rw.expr(node.body if known else node.orelse)
        new = node.with_changes(body=taken.node) if known else node.with_changes(orelse=taken.node)
        return Operand(taken.value, node, new)
    if test.value.known:  # a flag meshify reads (a module constant): the branch Python skips may not fit
        mark = rw.mark()
        try:
            both = _both(rw, node)
            if not (isinstance(both.value, Static) and not both.value.known):
                return both
            rw.rollback(mark)  # two Python values (() if flag else None): the one Python takes
        except MeshifyError:
            rw.rollback(mark)
        taken = rw.expr(node.body if test.value.literal else node.orelse)
        new = node.with_changes(body=taken.node) if test.value.literal else node.with_changes(orelse=taken.node)
        return Operand(taken.value, node, new)
    return _both(rw, node)


def _both(rw, node: cst.IfExp) -> Operand:
    body, orelse = rw.expr(node.body), rw.expr(node.orelse)
    if isinstance(body.value, Static) and isinstance(orelse.value, Static) and body.value != orelse.value:
        # two Python values (cfg.window if i % 2 == 0 else None): one of them, meshify does not know which
        return Operand(Static(), node, node.with_changes(body=body.node, orelse=orelse.node))
    arrays = [b for b in (body, orelse) if isinstance(b.value, Array | Opaque)]
    nones = [b for b in (body, orelse) if isinstance(b.value, Static) and b.value.known and b.value.literal is None]
    if len(arrays) == 1 and len(nones) == 1:
        # Swin's mask = make_mask(...) if shift > 0 else None: an array or None, as the flag is when traced; the
        # array's layout where it is one (``mask is None`` is then not known: both branches of an if on it run)
        from dataclasses import replace as _replaced

        value = _replaced(arrays[0].value)  # (its own object: maybe_none goes by identity)
        rw.maybe_none.append(value)
        rw.none_arms[node] = arrays[0]  # (converted in that arm: rw.convert)
        return Operand(value, node, node.with_changes(body=body.node, orelse=orelse.node))
    trees = [b for b in (body, orelse) if isinstance(b.value, TupleValue | StructValue)]
    if len(trees) == 1 and len(nones) == 1:  # aux = {"m": m} if flag else None: a tuple or pytree, or None
        from dataclasses import replace as _replaced

        value = _replaced(trees[0].value)  # (its own object; its arrays are converted where they are read)
        rw.maybe_none.append(value)
        return Operand(value, node, node.with_changes(body=body.node, orelse=orelse.node))
    numbers = [b for b in (body, orelse) if isinstance(b.value, Static) and b.value.known
               and type(b.value.literal) in (int, float)]
    scalars = [b for b in (body, orelse) if isinstance(b.value, Array) and b.value.layout.rank == 0]
    if isinstance(body.value, Array) and isinstance(orelse.value, Array) \
            and body.value.layout.partial != orelse.value.layout.partial:
        wholes = [Array(b.value.layout.with_partial(()), b.value.origin) for b in (body, orelse)]  # type: ignore[union-attr]
        joined = common_item(wholes)
        if isinstance(joined, Array):
            # bias if bias is not None else jnp.ones_like(x), bias a partial sum: completed in its arm
            what = "a conditional expression whose other branch is whole"
            arms = {k: rw.convert(b, joined.layout, what) if b.value.layout.partial else b.node  # type: ignore[union-attr]
                    for k, b in (("body", body), ("orelse", orelse))}
            return Operand(joined, node, node.with_changes(**arms))
    dimmed = [b for b in (body, orelse) if isinstance(b.value, Array) and b.value.layout.rank]
    if len(numbers) == 1 and len(dimmed) == 1:
        # m if m is not None else 1.0, m of dims: the array (a partial sum completed in its arm) or a number that
        # broadcasts; read only beside an array of its layout (number_or_array), where both give that array's
        layout = dimmed[0].value.layout.with_partial(())
        arm = rw.convert(dimmed[0], layout, "a conditional expression whose other branch is a Python number")
        arms = {"body": arm, "orelse": orelse.node} if dimmed[0] is body else {"body": body.node, "orelse": arm}
        value = Array(layout, dimmed[0].value.origin)
        rw.ctx.root.maybe_numbers.append(value)
        return Operand(value, node, node.with_changes(**arms))
    if len(numbers) == 1 and len(scalars) == 1:
        # 0.0 if bias is None else jnp.sum(bias): a Python number or a scalar array, known only when traced; every
        # JAX function treats the two alike where the array is whole (a partial sum completed in its arm; a number
        # taken for a partial sum would be counted once per device)
        whole = Layout.replicated(())
        arm = rw.convert(scalars[0], whole, "a conditional expression whose other branch is a Python number")
        arms = {"body": arm, "orelse": orelse.node} if scalars[0] is body else {"body": body.node, "orelse": arm}
        return Operand(Array(whole), node, node.with_changes(**arms))
    if body.value != orelse.value:
        joined = _joined_arms(rw, body, orelse)
        if joined is not None:  # (h, x) if swap else (x, h); m if m is not None else jnp.ones((4, 16))
            value, arms = joined
            return Operand(value, node, node.with_changes(body=arms[0], orelse=arms[1]))
        error = rw.error(BranchLayouts, node, "the branches of this conditional expression have different layouts",
                         "give both branches the same dims, or annotate the result")
        error.node = node
        raise error
    return Operand(body.value, node, node.with_changes(body=body.node, orelse=orelse.node))


def _joined_layout(a: Layout, b: Layout) -> Layout | None:
    """The layout both arms of ``a if flag else b`` are converted to, arrays of one rank whose dims unify: a dim
    split in one arm and whole in the other split (the whole arm sliced locally: no communication, where gathering
    the split one would move its blocks), a partial sum completed (whole, or split where the other arm splits that
    dim); None where the arms split a dim over different axes."""
    if a.rank != b.rank:
        return None
    dims = []
    for x, y in zip(a.dims, b.dims):
        joined = unify_dims(x, y)
        if joined is None:
            return None
        dims.append(joined)
    axes = []
    for x, y in zip(a.axes, b.axes):
        if x and y and x != y:
            return None
        axes.append(x or y)
    used = [axis for dim_axes in axes for axis in dim_axes]
    if len(used) != len(set(used)):
        return None
    return Layout(tuple(dims), tuple(axes), (a.partial & b.partial) - set(used))


def _joined_arms(rw, body: Operand, orelse: Operand
                 ) -> tuple[Value, tuple[cst.BaseExpression, cst.BaseExpression]] | None:
    """The one value ``a if flag else b`` holds, its arms ``body`` and ``orelse`` converted to it, where they differ:
    arrays of one rank and dims (:func:`_joined_layout`); an array and a whole one of dims meshify cannot name of
    the same rank (``jnp.ones((4, 16))``: taken as whole of the named one's dims, each entry a size it gives, so
    neither is 1, a broadcast); tuples (or lists) written out in both arms, of one length, item by item.  None
    where no such value is."""
    a, b = body.value, orelse.value
    if a == b:
        return a, (body.node, orelse.node)
    if isinstance(a, Static) and isinstance(b, Static) and not any(isinstance(v.literal, LocalDef) for v in (a, b)):
        return Static(), (body.node, orelse.node)  # (two Python values: known only when traced)
    if isinstance(a, Array) and isinstance(b, Opaque) or isinstance(a, Opaque) and isinstance(b, Array):
        array = a if isinstance(a, Array) else b
        shape = (b if array is a else a).shape  # type: ignore[union-attr]
        if shape is None or len(shape) != array.layout.rank or 1 in shape or not array.layout.rank:
            return None
        whole = Operand(Array(Layout.replicated(array.dims)), *((orelse.original, orelse.node) if array is a
                                                                else (body.original, body.node)))
        body, orelse = (body, whole) if array is a else (whole, orelse)
        a, b = body.value, orelse.value
    if isinstance(a, Array) and isinstance(b, Array):
        layout = _joined_layout(a.layout, b.layout)
        if layout is None:
            return None
        what = "a conditional expression whose other branch has another layout"
        arms = tuple(o.node if o.value.layout == layout else rw.convert(o, layout, what)  # type: ignore[union-attr]
                     for o in (body, orelse))
        return Array(layout, a.origin), arms  # type: ignore[return-value]
    displays = (cst.Tuple, cst.List)
    if isinstance(a, TupleValue) and isinstance(b, TupleValue) and len(a.items) == len(b.items) \
            and isinstance(body.node, displays) and isinstance(orelse.node, displays) \
            and isinstance(body.original, displays) and isinstance(orelse.original, displays) \
            and len(body.node.elements) == len(a.items) and len(orelse.node.elements) == len(b.items) \
            and len(body.original.elements) == len(a.items) and len(orelse.original.elements) == len(b.items) \
            and not any(isinstance(e, cst.StarredElement) for o in (body, orelse)
                        for e in (*o.node.elements, *o.original.elements)):  # type: ignore[union-attr]
        items, left, right = [], [], []
        for i, (x, y) in enumerate(zip(a.items, b.items)):
            ops = [Operand(v, o.original.elements[i].value, o.node.elements[i].value)  # type: ignore[union-attr]
                   for v, o in ((x, body), (y, orelse))]
            joined = _joined_arms(rw, *ops)
            if joined is None:
                return None
            items.append(joined[0])
            left.append(body.node.elements[i].with_changes(value=joined[1][0]))  # type: ignore[union-attr]
            right.append(orelse.node.elements[i].with_changes(value=joined[1][1]))  # type: ignore[union-attr]
        return a.of(items), (body.node.with_changes(elements=left),  # type: ignore[union-attr]
                             orelse.node.with_changes(elements=right))  # type: ignore[union-attr]
    return None


#: The operators a value a Python number or an array (``m if m is not None else 1.0``) may be an operand of.
_NUMBER_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)
#: The comparisons it may be an operand of (elementwise on an array, a Python bool of a number).
_NUMBER_COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal,
                       cst.NotEqual)
#: The elementwise functions it may be an argument of (positionally): a number broadcasts in each as the array would.
NUMBER_CALLS = frozenset({"jax.numpy.where", "jax.numpy.maximum", "jax.numpy.minimum", "jax.numpy.power",
                          "jax.numpy.exp", "jax.numpy.log", "jax.numpy.sqrt", "jax.numpy.abs", "jax.numpy.tanh",
                          "jax.numpy.clip", "jax.nn.sigmoid", "jax.nn.relu"})


def _number_or_array(rw, value: Value) -> bool:
    return any(value is v for v in rw.ctx.root.maybe_numbers)


def number_or_array(rw, value: Value, left: Operand, right: Operand, l: cst.BaseExpression,
                    r: cst.BaseExpression) -> Value:
    """``y * m`` (``+``, ``-``, ``/``), ``m`` a Python number or an array known only when traced (``m = mask if
    mask is not None else 1.0``): ``value`` where ``y`` is an array of the result's layout and neither operand is
    converted, so that a number in place of ``m`` broadcasts to what the array gives (else refused: a reduction,
    a collective or a broadcast to more dims would treat the number as the array of that layout)."""
    return number_or_array_of(rw, value, [left, right], [l, r])


def number_or_array_of(rw, value: Value, operands: Sequence[Operand], nodes: Sequence[cst.BaseExpression]) -> Value:
    """``value``, what an elementwise op (``*``, ``**``, ``>``, ``jnp.where``) of ``operands`` (written as
    ``nodes``) gives, where some are a Python number or an array known only when traced: an array of the result's
    layout where another operand is one and none is converted (a number in place of ``m`` broadcasts to what the
    array gives); again a number or an array of that layout where the others are Python values (``m ** 2``, ``m >
    0.5``: a number where ``m`` is one); else refused (a reduction, a collective or a broadcast to more dims would
    treat the number as the array of that layout)."""
    maybe = [o for o in operands if _number_or_array(rw, o.value)]
    if not maybe:
        return value
    if not isinstance(value, Array) or any(n is not o.node for o, n in zip(operands, nodes)) \
            or any(o.value.layout != value.layout for o in maybe):  # type: ignore[union-attr]
        refuse_number_or_array(rw, maybe[0])
    others = [o for o in operands if not any(o is m for m in maybe)]
    if any(isinstance(o.value, Array) and o.value.layout == value.layout for o in others):
        return replace(value) if any(value is m.value for m in maybe) else value  # (an array, whichever m is)
    if not all(isinstance(o.value, Static) and not isinstance(o.value.literal, LocalDef) for o in others):
        refuse_number_or_array(rw, maybe[0])
    value = replace(value)  # (its own object: a number or an array still)
    rw.ctx.root.maybe_numbers.append(value)
    return value


def refuse_number_or_array(rw, op: Operand) -> None:
    """Refuses a read of ``op``, a Python number or an array known only when traced, where it is not an operand
    of ``+``, ``-``, ``*``, ``/`` beside an array of its layout (:func:`number_or_array`)."""
    code = rw.ctx.code(op.original)
    raise rw.error(UnsupportedError, op.original, f"{code!r} is a Python number or an array of layout "
                   f"{op.value.layout.describe()}, known only when traced, read where meshify cannot rewrite it for "
                   "both (anything but y * m, y + m beside an array y of its layout: a reduction, a collective, a "
                   "helper or a return would take the number for that array)", "give it an array in both cases (m "
                   f"if m is not None else jnp.ones_like(x), x of its dims), or read it only as y * {code}, y + "
                   f"{code} with y an array of its layout")


def chosen(rw, node: cst.BaseExpression) -> cst.BaseExpression:
    """The branch of ``a if flag else b`` Python takes where meshify reads ``flag`` (a module constant),
    in turn; else ``node``."""
    while isinstance(node, cst.IfExp):
        test = rw.expr(node.test)
        if not (isinstance(test.value, Static) and test.value.known):
            break
        node = node.body if test.value.literal else node.orelse
    return node


# -- attributes and subscripts ----------------------------------------------------------------


def _attribute(rw, node: cst.Attribute):
    if _is_module_path(rw, node):
        if isinstance(node.value, cst.Name) and rw.ctx.imports.imports[node.value.value].split(".")[0] \
                not in _STATIC_MODULES:
            # tables.TABLE of a module of the user's: may be an array, rebound from outside (keyed by identity)
            rw.globals_read.add(rw.ctx.code(node))
        return Operand(Static(), node, node)
    base = rw.expr(node.value)
    attr = node.attr.value
    new = node.with_changes(value=base.node)
    if isinstance(base.value, StructValue):
        value = base.value.field(attr)
        if value is None and attr in base.value.meta:  # a static field: a Python value when traced
            return Operand(Static(), node, new)
        prop = _struct_property(rw, node, base.value) if value is None else None
        if prop is not None:  # m.width, a @property of m's class: its body, self the pytree
            return prop
        if value is None:
            raise rw.error(LayoutError, node, f"{base.value.cls} has no field {attr!r}",
                           f"its fields are {', '.join(k for k, _ in base.value.fields)}")
        return Operand(value, node, new)
    if isinstance(base.value, Static) and base.value.param is not None:
        rw.static_reads.add((base.value.param, attr))
    literal = base.value.literal if isinstance(base.value, Static) and base.value.known else None
    if isinstance(literal, tuple) and attr in getattr(type(literal), "_fields", ()):
        return Operand(Static.of(getattr(literal, attr)), node, new)  # a field of a config explain knows
    if attr in ("name", "key", "idx") and _is_key_entry(literal) and hasattr(literal, attr):
        return Operand(Static.of(getattr(literal, attr)), node, new)  # path[-1].name of tree_map_with_path's key
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
        if attr == "dtype" and layout.partial and rw.dtypes.contains_widened(node.value):
            # a partial sum accumulated in float32 for float16/bfloat16 values: the dtype it has once summed
            carriers = rw.dtypes.of(node.value)
            if carriers is None:
                raise rw.error(UnsupportedError, node, f"cannot tell the dtype of {rw.ctx.code(node.value)!r}, a "
                               "partial sum accumulated in float32 for float16/bfloat16 operands",
                               f"complete it first (pin it: v: Tensor[...] = {rw.ctx.code(node.value)})")
            dtype = cst.Call(cst.Attribute(cst.Name(rw.ctx.mr), cst.Name("dtype_of")),
                             [cst.Arg(cst.parse_expression(c)) for c in carriers])
            return Operand(Static(), node, dtype)
        if attr == "ndim":  # the rank: the same on every device, known here (x.ndim - 1 is an axis)
            return Operand(Static.of(layout.rank), node, new)
        if attr == "dtype":
            return Operand(Static(), node, new)
        if attr == "T":
            return _transpose_attr(rw, base, node, new)
        if attr == "mT" and layout.rank >= 2:  # the last two dims swapped (a batch of matrices transposed)
            perm = Layout((*layout.dims[:-2], layout.dims[-1], layout.dims[-2]),
                          (*layout.axes[:-2], layout.axes[-1], layout.axes[-2]), layout.partial)
            return Operand(Array(perm, base.value.origin), node, new)
        if attr in ("real", "imag"):  # elementwise and linear over the reals: splits and a partial sum stay
            return Operand(Array(layout, base.value.origin), node, new)
        raise rw.error(UnsupportedError, node, f"attribute .{attr} of array {rw.ctx.code(node.value)!r}",
                       "use jax.numpy functions")
    if isinstance(base.value, Opaque):
        return Operand(Static() if attr in ("shape", "ndim", "dtype", "size") else Opaque(), node, new)
    return Operand(Static(), node, new)


def _is_module_path(rw, node: cst.Name | cst.Attribute) -> bool:
    root: cst.BaseExpression = node
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
    spread = _tuple_index(rw, node)
    if spread is not None:  # table[(ids,)], x[(i, j)]: NumPy reads a tuple index as the indices it holds
        return _subscript(rw, spread)
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
        size = Static()
        if shape_of and index is not None and -len(shape_of) <= index < len(shape_of):
            size = Static(size_of=shape_of[index])
        bounds = _literal_slice(rw, node.slice[0]) if shape_of and index is None and len(node.slice) == 1 else None
        if bounds is not None and bounds[2] in (None, 1):  # x.shape[:-1]: the shape of those dims
            size = Static(shape_of=tuple(shape_of[slice(*bounds)]))  # type: ignore[index]
        literal = base.value.literal if base.value.known and not shape_of else None
        at = _literal_int(rw, node.slice[0]) if isinstance(literal, tuple | str) and len(node.slice) == 1 else None
        if at is not None and -len(literal) <= at < len(literal):  # type: ignore[arg-type]
            size = Static.of(literal[at])  # type: ignore[index]  (path[-1] of tree_map_with_path's key path)
        return Operand(size, node, node.with_changes(value=base.node))
    if sequence_item(base.value) is not None:
        return sequence_index(rw, node, base)
    if mapping_item(base.value) is not None:  # outs[k]: the value every key of the dict holds
        return mapping_index(rw, node, base)
    if isinstance(base.value, StructValue):
        element = node.slice[0].slice if len(node.slice) == 1 else None
        key = rw.expr(element.value).value if isinstance(element, cst.Index) else None
        if base.value.kind == "dict" and isinstance(key, Static) and not key.known:
            return _unknown_key(rw, node, base)
        if base.value.kind != "dict" or not (isinstance(key, Static) and isinstance(key.literal, str)):
            raise rw.error(UnsupportedError, node, f"indexing {base.value.cls} {rw.ctx.code(node.value)!r}",
                           "read a field by its literal name: p[\"w\"] for a TypedDict, p.w for a NamedTuple or "
                           "dataclass")
        value = base.value.field(key.literal)
        if value is None:
            raise rw.error(LayoutError, node, f"{base.value.cls} has no field {key.literal!r}",
                           f"its fields are {', '.join(k for k, _ in base.value.fields)}")
        return Operand(value, node, node.with_changes(value=base.node))
    if isinstance(base.value, TupleValue) and isinstance(node.value, cst.Call) and len(node.slice) == 1:
        at = _literal_int(rw, node.slice[0])
        n = len(base.value.items)
        _item_read(rw, node.value, at % n if at is not None and -n <= at < n else None)
    if isinstance(base.value, TupleValue):
        index = _literal_int(rw, node.slice[0]) if len(node.slice) == 1 else None
        bounds = _literal_slice(rw, node.slice[0]) if len(node.slice) == 1 and index is None else None
        if bounds is not None:  # xs[1:]: the tuple of those items
            return Operand(base.value.of(base.value.items[slice(*bounds)]), node, node.with_changes(value=base.node))
        if index is None:
            raise rw.error(UnsupportedError, node, "indexing a tuple of arrays with a non-literal index",
                           "index it with an int literal, or unpack it: a, b = pair")
        if not -len(base.value.items) <= index < len(base.value.items):
            raise rw.error(LayoutError, node, f"index {index} of {rw.ctx.code(node.value)!r}, a tuple of "
                           f"{len(base.value.items)} item{'s' * (len(base.value.items) != 1)} here",
                           "index an item the tuple holds")
        return Operand(base.value.items[index], node, node.with_changes(value=base.node))
    if isinstance(base.value, Array):
        picked = _per_row_pick(rw, node, base)
        return picked if picked is not None else index_array(rw, node, base)
    looked_up = _vector_lookup(rw, node, base)
    if looked_up is not None:
        return looked_up
    _whole_indices(rw, node, base)
    shape = _indexed_shape(rw, node, base.value.shape) if isinstance(base.value, Opaque) and base.value.shape \
        is not None else None
    return Operand(Opaque(shape), node, node.with_changes(value=base.node))


def _vector_lookup(rw, node: cst.Subscript, base: Operand) -> Operand | None:
    """``alphas_cumprod[t]``: a whole vector the function made (a noise schedule from ``jnp.linspace``,
    ``jnp.cumprod``: the same on every device), indexed by an array of ids, split or not: each device looks
    its own ids up, and the result has the ids' dims and layout (JAX's clamping as on one device).  None
    where the table is not a vector meshify knows to be one, or the index is not one array of ids."""
    shape = base.value.shape if isinstance(base.value, Opaque) else None
    if shape is None or len(shape) != 1 or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    index = rw.expr(node.slice[0].slice.value)
    if not isinstance(index.value, Array) or index.value.layout.partial:
        return None
    rw.mark_index(index)
    new = node.with_changes(value=base.node, slice=[node.slice[0].with_changes(
        slice=node.slice[0].slice.with_changes(value=index.node))])
    return Operand(Array(index.value.layout, index.value.origin), node, new)


def _tuple_index(rw, node: cst.Subscript) -> cst.Subscript | None:
    """``table[(ids,)]`` of a name (or a field, ``params.embedding``) holding an array, as ``table[ids]``
    (positioned at the original); else None."""
    if not (len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.Tuple) and node.slice[0].slice.value.elements
            and read_again(node.value)):
        return None
    mark = rw.mark()
    held = rw.expr(node.value).value  # (a name or a field: read again below, where it is rewritten)
    rw.rollback(mark)
    if not isinstance(held, Array):
        return None
    items = node.slice[0].slice.value.elements
    if any(isinstance(e, cst.StarredElement) for e in items):
        return None
    spread = node.with_changes(slice=[cst.SubscriptElement(cst.Index(e.value), comma=cst.Comma()
                                                           if k < len(items) - 1 else cst.MaybeSentinel.DEFAULT)
                                      for k, e in enumerate(items)])
    rw.ctx.anchors[spread] = rw.ctx.anchors.get(node, node)
    return spread


def _indexed_shape(rw, node: cst.Subscript, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape of an array of literal shape indexed with literal ints, slices, ``None`` and ``...``
    (``jnp.arange(8)[:, None]`` is ``(8, 1)``): it is named where it meets named dims; else None."""
    out: list[int] = []
    rest = list(shape)
    elements = list(node.slice)
    if sum(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Ellipsis) for e in elements) > 1:
        return None
    for k, element in enumerate(elements):
        index = element.slice.value if isinstance(element.slice, cst.Index) else None
        if isinstance(index, cst.Ellipsis):
            used = sum(1 for e in elements[k + 1:] if not (isinstance(e.slice, cst.Index)
                                                          and isinstance(e.slice.value, cst.Name)
                                                          and e.slice.value.value == "None"))
            if used > len(rest):
                return None
            out += rest[:len(rest) - used]
            rest = rest[len(rest) - used:]
            continue
        if isinstance(index, cst.Name) and index.value == "None":
            out.append(1)
            continue
        if not rest:
            return None
        size = rest.pop(0)
        if isinstance(element.slice, cst.Slice):
            bounds = _literal_slice(rw, element)
            if bounds is None:
                return None
            out.append(len(range(*slice(*bounds).indices(size))))
            continue
        at = _literal_int(rw, element)
        if at is None or not -size <= at < size:
            return None
    return (*out, *rest)


def _item_read(rw, call: cst.Call, index: int | None) -> None:
    """``f(...)[index]``: the records made for ``call`` that feed only other items of its tuple result are
    dropped (XLA drops what nothing reads: ``jax.lax.top_k(x, k)[0]`` gathers no index)."""
    kept = []
    for r in rw.records:
        if r.items is not None and r.items[0] is call:
            if index is not None and index not in r.items[1]:
                continue
            r = replace(r, items=None)
        kept.append(r)
    rw.records[:] = kept


def _per_row_pick(rw, node: cst.Subscript, base) -> Operand | None:
    """``logp[jnp.arange(B), labels]`` (``logp[jnp.arange(B)[:, None], jnp.arange(L)[None, :], labels]``): each
    row's entry at its label, as cross-entropy code picks it; the leading indices are ``jnp.arange`` over
    the leading dims, broadcast in their places.  Evaluated as ``jnp.take_along_axis(logp,
    jnp.expand_dims(labels, -1), axis=-1, mode="index")[..., 0]``, a mode of meshify's own: as indexing
    reads (negative labels wrap, the rest out of range read the clamped entry and get no gradient), run
    by ``mr.take_along_axis`` (over a split last dim a masked local lookup); written out in the rewritten
    code; None for any other indexing."""
    layout = base.value.layout
    grid = _row_grid(rw, node.slice, layout)
    if grid is None or layout.rank < len(grid[0]) or dotted_name(node.value) is None or grid[1] > 1:
        return None
    indices, extra = grid
    k = len(indices) - 1
    ids = indices[-1]
    if read_again(ids):
        if not isinstance(rw.expr(ids).value, Array):
            return None  # (a name, attribute or kw["ids"]: read again by the definition below, it evaluates the same)
    elif not any(isinstance(rw.env.get(n), Array | StructValue) for n in _free_names(ids)):
        # x[arange(B), ids.argmax(-1)], lengths - 1, kw.get("ids"): of arrays (evaluated once, by the definition)
        return None
    jnp_alias = _alias_of(rw, "jax.numpy")
    if jnp_alias is None:
        return None
    after = layout.rank - k - 1  # x[arange(B), pos] of x [batch, seq, d]: the rows' d kept
    if extra:  # x[arange(B)[:, None], pos] of pos [batch, k]: k entries per row, in pos's place
        expanded = "" if not after else ", (" + ", ".join(str(k + 1 + i) for i in range(after)) + ",)"
        code = (f"{jnp_alias}.take_along_axis({rw.ctx.code(node.value)}, "
                + (f"{jnp_alias}.expand_dims({rw.ctx.code(ids)}{expanded})" if after else rw.ctx.code(ids))
                + f", axis={k - layout.rank}, mode=\"index\")")
    else:
        expanded = "-1" if not after else "(" + ", ".join(str(k + i) for i in range(after + 1)) + ")"
        code = (f"{jnp_alias}.take_along_axis({rw.ctx.code(node.value)}, {jnp_alias}.expand_dims("
                f"{rw.ctx.code(ids)}, {expanded}), axis={k - layout.rank}, mode=\"index\")"
                f"[{', '.join([':'] * k + ['0'])}]")  # as indexing reads what is out of range
    definition = cst.parse_expression(code)
    _anchor_all(rw, definition, node)
    found = rw.expr(definition)
    picked = found.value.dims[k:k + extra] if isinstance(found.value, Array) else ()
    if not (isinstance(found.value, Array) and found.value.dims == (*layout.dims[:k], *picked, *layout.dims[k + 1:])):
        per = "one entry" if not extra else "entries"
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node)!r} picks {per} per row, but its index "
                       f"{rw.ctx.code(ids)!r} does not have the rows' dims {list(layout.dims[:k])} first",
                       f"index with an array of dims {list(layout.dims[:k])}"
                       + (" and one more" if extra else "") + ", or use jnp.take_along_axis")
    rw.dtypes.calls[node] = rw.dtypes.of(definition)
    return Operand(found.value, node, found.node)


def _row_grid(rw, elements: Sequence[cst.SubscriptElement], layout) -> tuple[list[cst.BaseExpression], int] | None:
    """The index expressions of ``[jnp.arange(B), ids]`` (``[jnp.arange(B)[:, None], jnp.arange(L)[None, :],
    ids]``): every element an index, all but the last ``jnp.arange`` over the leading dims of ``layout``
    in their places; with the number of trailing dims the grids leave to the positions (``[jnp.arange(B)[:,
    None], pos]``: one, several positions per row); None for any other index."""
    k = len(elements) - 1
    if k < 1 or layout.rank < k + 1 or not all(isinstance(e.slice, cst.Index) for e in elements):
        return None
    indices = [e.slice.value for e in elements if isinstance(e.slice, cst.Index)]
    first = indices[0]
    width = len(first.slice) if isinstance(first, cst.Subscript) else rw.aranges[first.value][3] \
        if isinstance(first, cst.Name) and first.value in rw.aranges else 1
    if width < k or any(_arange_at(rw, index, j, width) != layout.dims[j] for j, index in enumerate(indices[:-1])):
        return None
    return indices, width - k


def _arange_at(rw, index: cst.BaseExpression, j: int, width: int) -> str | None:
    """The dim ``jnp.arange(n)`` in ``index`` runs over, where ``index`` is it (``width`` 1) or it indexed with
    ``:`` at position ``j`` of ``width`` and ``None`` elsewhere (``jnp.arange(B)[:, None]``); else None."""
    if isinstance(index, cst.Name):  # b = jnp.arange(n); logp[b, b] (rows = jnp.arange(B)[:, None]; x[rows, pos])
        version, dim, at, rank = rw.aranges.get(index.value, (None, None, None, None))
        return dim if version is not None and version == rw.versions.get(index.value) and (at, rank) == (j, width) \
            else None
    call = index
    if isinstance(index, cst.Subscript):
        if width == 1 or len(index.slice) != width:
            return None
        for i, element in enumerate(index.slice):
            s = element.slice
            full = isinstance(s, cst.Slice) and s.lower is None and s.upper is None and s.step is None
            none = isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and s.value.value == "None"
            if not (full if i == j else none):
                return None
        call = index.value
    elif width != 1:
        return None
    if not (isinstance(call, cst.Call) and len(call.args) == 1 and call.args[0].keyword is None
            and rw.ctx.called_as(call.func) & {"jax.numpy.arange", "numpy.arange"}):
        return None
    size = rw.expr(call.args[0].value).value
    return size.size_of if isinstance(size, Static) else None


def _whole_indices(rw, node: cst.Subscript, base) -> None:
    """An array of unknown dims indexed by arrays: fine where they are whole; a split (or partial)
    index would select from every device's copy with its own block of ids, a result meshify
    would take for a whole array (wrong numbers), so it is refused."""
    for element in node.slice:
        if not isinstance(element.slice, cst.Index):
            continue
        index = rw.expr(element.slice.value)
        if isinstance(index.value, Array) and (index.value.layout.is_split or index.value.layout.partial):
            table = rw.ctx.code(node.value)
            raise rw.error(UnsupportedError, element.slice.value,
                           f"cannot infer the dims of {table!r}, indexed by {rw.ctx.code(element.slice.value)!r} of "
                           f"layout {index.value.layout.describe()} (each device would look its own ids up)",
                           f"name the table's dims first ({_bound_name(table)}: Tensor[\"rows\", ...] = {table}), so "
                           "that the lookup follows the index's split")


def _bound_name(table: str) -> str:
    """A name to bind a table to in a fix: its own where it is one, else ``table`` (never the index's)."""
    return table if table.isidentifier() else "table"


def _literal_slice(rw, element: cst.SubscriptElement) -> tuple[int | None, int | None, int | None] | None:
    """``1:``, ``:-1``, ``::2``: a slice whose bounds are int literals (or left out); else None."""
    if not isinstance(element.slice, cst.Slice):
        return None
    bounds = []
    for part in (element.slice.lower, element.slice.upper, element.slice.step):
        value = rw.expr(part).value if part is not None else Static.of(None)
        if not (isinstance(value, Static) and value.known and (value.literal is None or type(value.literal) is int)):
            return None
        bounds.append(value.literal)
    return bounds[0], bounds[1], bounds[2]


def _literal_int(rw, element: cst.SubscriptElement) -> int | None:
    index = element.slice
    if not isinstance(index, cst.Index):
        return None
    value = rw.expr(index.value).value
    if isinstance(value, Static) and value.known and isinstance(value.literal, int):
        return value.literal
    return None


# -- calls ----------------------------------------------------------------------------------------


def _copied_sequence(rw, node: cst.Call) -> Operand | None:
    """``tuple(xs)`` / ``list(xs)`` (Python's own) of a tuple, list or sequence of values meshify follows (a
    comprehension, a list it built): the same items, in a new tuple or list.  None for anything else."""
    func = node.func
    if not (isinstance(func, cst.Name) and func.value in ("tuple", "list", "reversed") and func.value not in rw.env
            and not rw.ctx.binds(func.value) and len(node.args) == 1 and node.args[0].keyword is None
            and not node.args[0].star):
        return None
    argument = node.args[0].value
    if isinstance(argument, cst.Name) and argument.value in rw.env and not isinstance(
            rw.env[argument.value], TupleValue | StructValue):
        return None  # (tuple(x.shape), list(sizes): Python values, evaluated as before)
    zip_ = isinstance(argument, cst.Call) and isinstance(argument.func, cst.Name) \
        and argument.func.value in ("zip", "enumerate")
    if not isinstance(argument, cst.Name | cst.ListComp | cst.GeneratorExp | cst.List | cst.Tuple) and not (
            func.value == "reversed" and read_again(argument)) and not (zip_ and func.value != "reversed"):
        return None  # (list(zip(hs, gs)) of lists whose length meshify does not know: a list of their pairs)
    op = rw.expr(argument)
    value = op.value
    if not (isinstance(value, TupleValue) or (isinstance(value, StructValue) and value.kind == "sequence")):
        return None
    if func.value == "reversed" and isinstance(value, TupleValue):  # for layer in reversed(p.layers)
        value = TupleValue(tuple(reversed(value.items)))
    return Operand(value, node, node.with_changes(args=[node.args[0].with_changes(value=op.node)]))




def _map_as_generator(rw, node: cst.Call) -> cst.GeneratorExp | None:
    """Python's ``map(lambda t: body, items)`` of a lambda of one parameter over one iterable, as the generator
    ``(body for t in items)`` it equals (lucidrains' ``q, k, v = map(lambda t: rearrange(t, ...), (q, k, v))``);
    None for any other call."""
    func = node.func
    if not (isinstance(func, cst.Name) and func.value == "map" and func.value not in rw.env
            and not rw.ctx.binds("map") and len(node.args) == 2 and not any(a.star or a.keyword for a in node.args)):
        return None
    fn = node.args[0].value
    if not isinstance(fn, cst.Lambda):
        return None
    params = fn.params
    if len(params.params) != 1 or params.posonly_params or params.kwonly_params or params.params[0].default \
            or not isinstance(params.star_arg, cst.MaybeSentinel) or params.star_kwarg is not None:
        return None
    return cst.GeneratorExp(elt=fn.body, for_in=cst.CompFor(target=params.params[0].name, iter=node.args[1].value))


def _call(rw, node: cst.Call):
    func = node.func
    if _is_at_update(rw, func):  # x.at[:, 0].set(v), mask.at[i].add(1)
        return _at_update(rw, node)
    popped = changed_mapping(rw, node) or popping(rw, node) or mutating(rw, node)  # skip = hs.pop() (a U-Net's skips); kw.update(...)
    if popped is not None:
        return popped
    local = local_def(rw, func.value) if isinstance(func, cst.Name) else None
    if local is not None and isinstance(func, cst.Name):  # a def nested in the function: rewritten for it (_nested)
        call = _evaluate_args(rw, node, func.value, None, helper=True)  # it may be passed functions too
        value, new = call_local(rw, local, call)
        return Operand(value, node, _lambdas_walked(rw, call, new))
    if isinstance(func, cst.Call) and isinstance(func.func, cst.Name | cst.Attribute):
        kind = next((n for n in sorted(rw.ctx.qualified_names(func.func)) if n in TRANSFORMS), None)
        if kind is not None:  # jax.checkpoint(block)(x, w), jax.vmap(row)(x): f rewritten for these operands
            return transformed_call(rw, node, kind)
    if isinstance(func, cst.Name) and func.value == "dict" and func.value not in rw.env and node.args \
            and not rw.ctx.binds("dict") and all(a.keyword is not None and not a.star for a in node.args):
        return _dict_call(rw, node)  # dict(last=h, pooled=p): the dict literal it builds
    if isinstance(func, cst.Name) and func.value == "dict" and func.value not in rw.env and node.args \
            and not rw.ctx.binds("dict") and not node.args[0].star and node.args[0].keyword is None \
            and all(a.keyword is not None and not a.star for a in node.args[1:]):
        copied = _dict_copy(rw, node, node.args[0].value, node.args[1:])  # dict(cache), dict(cache, k=k)
        if copied is not None:
            return copied
    if isinstance(func, cst.Attribute) and func.attr.value == "copy" and not node.args:
        copied = _dict_copy(rw, node, func.value, [])  # cache.copy()
        if copied is not None:
            return copied
    if _is_getattr_of_module(rw, func):  # getattr(jax.nn, cfg.activation)(h)
        return _getattr_call(rw, node, func)  # type: ignore[arg-type]
    if isinstance(func, cst.Subscript):
        table = _function_table(rw, func)
        if table is not None:  # ACT[cfg.act](h): a module-level dict of jax functions
            return _table_call(rw, node, func, table)
        entries = _entry_table(rw, func)
        if entries is not None:  # ACT2FN[cfg.act](h) of defs, functools.partial(...)s, lambdas
            return _entries_call(rw, node, func, entries)
    if isinstance(func, cst.Name) and func.value in rw.ctx.partial_aliases and func.value not in rw.env \
            and func.value not in rw.free:  # einsum(...), einsum = partial(jnp.einsum, precision=...) in the module
        rw.ctx.aliases_read.add(func.value)
        return _partial_alias_call(rw, node, rw.ctx.partial_aliases[func.value])
    if not isinstance(func, cst.Name | cst.Attribute):  # f(g)(x): a nested def inside is a value
        local = next((d for d in (local_def(rw, n) for n in _names_in(func)) if d is not None), None)
        if local is not None:
            raise refuse_value(rw, func, local)
    names = rw.ctx.qualified_names(func) if isinstance(func, cst.Name | cst.Attribute) else set()
    if isinstance(func, cst.Name) and func.value in rw.ctx.shadowed_aliases and func.value not in rw.env \
            and func.value not in rw.free and func.value not in rw.ctx.enclosing_names(rw.enclosing or rw.fn):
        # total(x), total = jnp.sum at module level and a parameter named total elsewhere: here the module's
        rw.ctx.aliases_read.add(func.value)
        names = {rw.ctx.shadowed_aliases[func.value]}
    if isinstance(func, cst.Name) and f"builtins.{func.value}" in REGISTRY and func.value not in rw.env \
            and not rw.ctx.binds(func.value) and func.value not in rw.ctx.imports.imports:
        names = {f"builtins.{func.value}"}  # Python's own sum(), not a module's (or a local's) of that name
    if names & (TREE_MAP | TREE_MAP_WITH_PATH):  # jax.tree.map(lambda *xs: jnp.stack(xs), *params.blocks) (_containers)
        return tree_map(rw, node)
    mapped = _map_as_generator(rw, node)
    if mapped is not None:  # map(lambda t: t.reshape(b, -1, h, d), (q, k, v)): the generator it is
        out = rw.expr(mapped)
        return Operand(out.value, node, out.node)
    if isinstance(func, cst.Name) and func.value in ("list", "tuple") and not rw.ctx.binds(func.value) \
            and func.value not in rw.env and len(node.args) == 1 and not node.args[0].star:
        items = rw.expr(node.args[0].value)
        if isinstance(items.value, TupleValue) and isinstance(node.args[0].value, cst.ListComp | cst.GeneratorExp) \
                and isinstance(items.node, cst.Tuple | cst.List):
            # a comprehension meshify unrolled (items of other layouts): the tuple or list literal it made
            made = cst.Tuple if func.value == "tuple" else cst.List
            if node.args[0].value in rw.dtypes.call_items:  # each item's own dtype, as the comprehension's
                rw.dtypes.call_items[node] = rw.dtypes.call_items[node.args[0].value]
            return Operand(TupleValue(items.value.items, func.value), node,
                           made(items.node.elements) if items.node.elements or made is cst.List else cst.Tuple([]))
        if isinstance(items.value, TupleValue):  # list(jnp.split(x, 3, -1)): the same values, item by item
            return Operand(TupleValue(items.value.items, func.value), node,
                           node.with_changes(args=[node.args[0].with_changes(value=items.node)]))
    fields = _namedtuple_fields(rw, func) if isinstance(func, cst.Name) and not any(a.star for a in node.args) \
        else None
    if fields is not None:  # Out(logits=h, loss=l), Cache(k, v): a NamedTuple of the module, built of values
        return _namedtuple_construct(rw, node, func, fields)
    optax_loss = next((n for n in sorted(names) if n in _OPTAX_LOSSES), None)
    if optax_loss is not None:  # optax.softmax_cross_entropy_with_integer_labels(logits, labels): its definition
        return _optax_loss(rw, node, optax_loss)
    if names & (_TREE_REDUCE | _TREE_SUM):  # jax.tree.reduce(fn, params, 0.0): written out leaf by leaf
        reduced = _tree_reduce(rw, node, next(iter(names & (_TREE_REDUCE | _TREE_SUM))))
        if reduced is not None:
            return reduced
    if "dataclasses.replace" in names:  # dataclasses.replace(params, w=new_w): the same fields, some replaced
        replaced = _dataclass_replace(rw, node)
        if replaced is not None:
            return replaced
    if names & _TREE_LEAVES:  # sum(jnp.sum(p ** 2) for p in jax.tree.leaves(params)): the leaves, in JAX's order
        return _tree_leaves(rw, node)
    if names & _TREE_FLATTEN:  # leaves, treedef = jax.tree.flatten(params): the leaves and the structure
        return _tree_flatten(rw, node, next(iter(names & _TREE_FLATTEN)))
    if names & _TREE_UNFLATTEN:  # jax.tree.unflatten(treedef, new_leaves): the structure holding them
        return _tree_unflatten(rw, node)
    if isinstance(func, cst.Attribute) and func.attr.value == "unflatten" and isinstance(func.value, cst.Name) \
            and isinstance(held := rw.env.get(func.value.value), Static) and isinstance(held.literal, TreeShape):
        # treedef.unflatten(new_leaves): the method form
        return _tree_unflatten(rw, node, receiver=func.value)
    if names & _GLOBAL_NORMS:  # optax.global_norm(grads): each leaf's sum of squares, completed over its splits
        return _global_norm(rw, node)
    length = sequence_len(rw, node) if isinstance(func, cst.Name) and func.value == "len" \
        and "len" not in rw.env else None
    if length is not None:
        return length
    listed = listed_mapping(rw, node)
    if listed is not None:  # sorted(outs.items()), list(outs.values()), sorted(outs): outs of keys known when traced
        return listed
    copied = _copied_sequence(rw, node)
    if copied is not None:  # tuple(h for h in hs), list(blocks): the same items
        return copied
    zips = zipped(rw, node) or enumerated(rw, node)
    if zips is not None:  # hs, xs = zip(*pairs): the same items regrouped; list(enumerate(hs)): numbered
        return zips
    pure = _pure_static_call(rw, node, func, names)
    if pure is not None:  # jax.tree_util.keystr(path), str(path): of Python values meshify knows
        return pure
    sizes = _size_query(rw, node, func, names)
    if sizes is not None:  # len(x), jnp.shape(x), jnp.size(x, 1): x.shape[0], x.shape, x.shape[1] (global)
        rw.ctx.anchors[sizes] = node
        got = rw.expr(sizes)
        return Operand(got.value, node, got.node)
    rule_name = next((n for n in sorted(names) if n in REGISTRY), None)
    if node.args and isinstance(node.args[0].value, cst.Name) and any(n.startswith("jax.random.") for n in names):
        rw.key_names.add(node.args[0].value.value)  # a key: verify feeds it jax.random.key(...)
    mask = _mask_argument(node, rule_name)
    if isinstance(mask, cst.Name):
        rw.mask_names.add(mask.value)  # a mask: verify feeds it booleans
    imported = imported_helper(rw, func) if rule_name is None and isinstance(func, cst.Name | cst.Attribute) else None
    if imported is not None:  # from .layers import mlp: a helper of another module of the package (_imports)
        home, helper = imported
        value, new = call_helper(rw, _evaluate_args(rw, node, rw.ctx.code(func), None), helper, home)
        return Operand(value, node, new)
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
        if isinstance(receiver.value, Static) and func.attr.value == "astype":
            return _static_cast(rw, node, receiver)
        if isinstance(receiver.value, Static) and func.attr.value == "_replace":
            replaced = _static_replace(rw, node, receiver)
            if replaced is not None:
                return replaced
        viewed = mapping_view(rw, node, receiver)
        if viewed is not None:  # for k, v in outs.items(), outs a dict of keys known only when traced
            return viewed
        if isinstance(receiver.value, StructValue) and receiver.value.kind == "dict" and func.attr.value == "get":
            return _dict_get(rw, node, receiver)
        if isinstance(receiver.value, StructValue) and func.attr.value in ("items", "keys", "values"):
            code = rw.ctx.code(func.value)
            raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node)}: the keys or items of the pytree {code!r} "
                           "are not modelled", _PYTREE_LOOP_FIX.format(name=code))
        if isinstance(receiver.value, StructValue) and receiver.value.kind == "namedtuple" \
                and func.attr.value == "_replace":
            return _replace(rw, node, receiver)
        if isinstance(receiver.value, Array | Opaque):
            method = func.attr.value
            if method in METHODS and isinstance(receiver.value, Array):
                call = _evaluate_args(rw, node, method, receiver)
                closed_world(rw.rule_context(), call, f"jax.Array.{method}")
                value, new = rw.lower(call, METHODS[method](rw.rule_context(), call))
                return Operand(value, node, new)
            if isinstance(receiver.value, Array) and (receiver.value.layout.is_split or receiver.value.layout.partial):
                raise rw.error(UnsupportedError, node,
                               f"method .{method}() on {rw.ctx.code(func.value)!r}, which has layout "
                               f"{receiver.value.layout.describe()}", unsplit_fix(receiver.value.layout))
    ref = rw.env.get(func.value) if isinstance(func, cst.Name) and rule_name is None else None
    if isinstance(ref, Static) and isinstance(ref.literal, LambdaRef):  # fn(h), fn=lambda y: ... passed in
        return _call_lambda(rw, node, ref.literal)
    if isinstance(ref, Static) and isinstance(ref.literal, LocalRef):  # fn(h), fn a nested def passed in
        return _call_passed_def(rw, node, ref.literal)
    held = held_method(rw, func) if isinstance(func, cst.Name) and rule_name is None else None
    if held is not None:  # f = self.norm; f(x): the method, as self.norm(x) calls it
        return _call_method(rw, node, held)
    if isinstance(ref, Static) and isinstance(ref.literal, FunctionRef):  # act(h), act=jax.nn.gelu passed in
        ref = ref.literal
        if ref.helper and ref.path == rw.ctx.path and ref.helper in rw.ctx.functions:
            value, new = call_helper(rw, _evaluate_args(rw, node, ref.helper, None), rw.ctx.functions[ref.helper])
            return Operand(value, node, new)
        rule_name = next((n for n in sorted(ref.names) if n in REGISTRY), None)
        if rule_name is not None:
            call = _evaluate_args(rw, node, rule_name, None)
            closed_world(rw.rule_context(), call, rule_name)
            value, new = rw.lower(call, REGISTRY[rule_name](rw.rule_context(), call))
            if rule_name in UNARY:
                rw.elementwise_calls.add(node)  # its dtype is its operand's
            return Operand(value, node, new)
    method = own_method(rw, func) if rule_name is None and (receiver is None or isinstance(
        receiver.value, Static | StructValue)) else None
    if method is not None:  # self.norm(x), Model.norm(self, x): a method of a class, specialised as a helper
        return _call_method(rw, node, method)
    held = _held_elementwise(rw, node, func) \
        if rule_name is None and (receiver is None or isinstance(receiver.value, Static | Opaque)) else None
    if held is not None:  # cfg.act(h): a function a static value holds, on a split block
        return held
    if isinstance(func, cst.Name) and func.value in rw.env and rule_name is None:
        raise rw.error(UnsupportedError, node, f"calling local value {func.value!r}",
                       "call the function by its module name (jnp.exp(x)), pass a module-level def or a "
                       "jax/jnp function for it (act=jax.nn.gelu), or define it at module level")
    if isinstance(func, cst.Name) and rule_name is None and func.value in rw.ctx.functions \
            and func.value not in rw.ctx.imports.imports and func.value not in rw.ctx.held_aliases:
        # helper(m, x): m a number or an array, the version rewritten for both
        rw.number_reads.update((id(a.value), a.value) for a in node.args)
        call = _evaluate_args(rw, node, func.value, None, helper=True)
        value, new = call_helper(rw, call, rw.ctx.functions[func.value])
        return Operand(value, node, _lambdas_walked(rw, call, new))
    numbers = rule_name in NUMBER_CALLS and receiver is None \
        and not any(a.star or a.keyword is not None for a in node.args)
    if numbers:  # jnp.where(m > 0.5, x, -x): m a number or an array
        rw.number_reads.update((id(a.value), a.value) for a in node.args)
    call = _evaluate_args(rw, node, rule_name or (sorted(names)[0] if names else rw.ctx.code(func)), receiver)
    if rule_name is not None:
        closed_world(rw.rule_context(), call, rule_name)
        value, new = rw.lower(call, REGISTRY[rule_name](rw.rule_context(), call))
        if numbers:
            written = [a.value for a in new.args] if isinstance(new, cst.Call) and len(new.args) == len(call.args) \
                else [None] * len(call.args)  # (rewritten otherwise: refused where m is one)
            value = number_or_array_of(rw, value, call.args, written)
        return Operand(value, node, new)
    value, new = rw.lower(call, unknown_call(rw.rule_context(), call))
    return Operand(value, node, new)


@dataclass(frozen=True)
class MethodRef:
    """A method of a top-level class that a call names: ``self.norm`` (``receiver`` the caller's ``self``),
    ``self.snorm`` of a staticmethod, ``Model.norm`` / ``Model.snorm`` named by the class (no receiver: no
    dispatch, its arguments as written), ``self(...)`` (``__call__``)."""

    owner: cst.ClassDef
    method: cst.FunctionDef
    receiver: cst.Name | None
    static: bool


def own_method(rw, func: cst.BaseExpression) -> MethodRef | None:
    """The method ``func`` names where it is a plain def (or a staticmethod) of a top-level class: through
    the caller's own ``self`` (its first parameter, not rebound, in a method of that class), or through the
    class's module-level name; else None."""
    receiver: cst.BaseExpression | None = None
    called = _struct_class(rw, func) if isinstance(func, cst.Name | cst.Attribute | cst.Subscript) or isinstance(
        func, cst.Call) and isinstance(func.func, cst.Name) and func.func.value in rw.ctx.classes else None
    if called is not None:  # m(x), self.mlp(x), m.blocks[0](x): the pytree's __call__
        owner, receiver, attr = called, func, "__call__"
    elif isinstance(func, cst.Attribute) and not isinstance(func.value, cst.Name):  # self.block.mlp.scaled(x)
        owner = _struct_class(rw, func.value)
        receiver, attr = func.value, func.attr.value
    elif isinstance(func, cst.Name):  # self(x): __call__
        receiver, attr = func, "__call__"
        owner = _caller_class(rw, func.value)
    elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        receiver, attr = func.value, func.attr.value
        owner = _caller_class(rw, func.value.value) or _struct_class(rw, func.value) \
            or _config_class(rw, func.value.value)
    else:
        return None
    if owner is None and not isinstance(receiver, cst.Name):
        return None
    if owner is None:  # Model.norm(self, x): the class named
        assert isinstance(receiver, cst.Name)
        if attr == "__call__" or receiver.value not in rw.ctx.classes or receiver.value in rw.ctx.assignments \
                or receiver.value in rw.ctx.functions or receiver.value in rw.env or receiver.value in rw.free:
            return None
        owner, receiver = rw.ctx.classes[receiver.value], None
    method = _method_def(owner, attr)
    if method is None or method is rw.fn:
        return None
    static = [d for d in method.decorators if rw.ctx.code(d.decorator) in ("staticmethod", "builtins.staticmethod")]
    if len(method.decorators) != len(static):
        return None  # a property, classmethod or jitted method: not followed
    return MethodRef(owner, method, receiver, bool(static))


def _size_query(rw, node: cst.Call, func, names: set[str]) -> cst.BaseExpression | None:
    """``len(x)``, ``jnp.shape(x)``, ``jnp.size(x)``, ``jnp.size(x, 1)``, ``jnp.ndim(x)`` of an array held in a
    name (or a field): the attribute that says the same (``x.shape[0]``, ``x.shape``, ``x.size``,
    ``x.shape[1]``, ``x.ndim``), which meshify reads as global sizes; else None."""
    args = node.args
    if not args or any(a.star or a.keyword is not None for a in args) \
            or not isinstance(args[0].value, cst.Name | cst.Attribute):
        return None
    builtin_len = isinstance(func, cst.Name) and func.value == "len" and "len" not in rw.env \
        and not rw.ctx.binds("len")
    kind = "len" if builtin_len else next((n.rsplit(".", 1)[1] for n in sorted(names) if n in (
        "jax.numpy.shape", "jax.numpy.size", "jax.numpy.ndim", "numpy.shape", "numpy.size", "numpy.ndim")), None)
    if kind is None or len(args) > (2 if kind == "size" else 1):
        return None
    x = args[0].value
    if not isinstance(rw.expr(x).value, Array):
        return None
    if kind == "len":
        return cst.Subscript(cst.Attribute(x, cst.Name("shape")), [cst.SubscriptElement(cst.Index(int_node(0)))])
    if kind == "size" and len(args) == 2:
        return cst.Subscript(cst.Attribute(x, cst.Name("shape")), [cst.SubscriptElement(cst.Index(args[1].value))])
    return cst.Attribute(x, cst.Name(kind))


def held_method(rw, name: cst.Name) -> MethodRef | None:
    """The method a name holds (``f = self.norm``), as :func:`own_method` found it when the name was bound;
    else None."""
    ref = rw.env.get(name.value, rw.free.get(name.value))
    if not (isinstance(ref, Static) and isinstance(ref.literal, FunctionRef) and ref.literal.owner
            and ref.literal.path == rw.ctx.path):
        return None
    held = ref.literal
    owner = rw.ctx.classes[held.owner]
    method = _method_def(owner, held.helper)
    assert method is not None  # (own_method found it when the name was bound)
    return MethodRef(owner, method, cst.Name(held.receiver) if held.receiver else None, held.static)


def _method_def(owner: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    """The def ``name`` in ``owner``'s body, or None."""
    return next((m for m in owner.body.body if isinstance(m, cst.FunctionDef)  # type: ignore[union-attr]
                 and m.name.value == name), None)


def _receiver_check(rw, ref: MethodRef, check: str, *rest: cst.BaseExpression) -> cst.Call:
    """``mr.<check>(self, Model, "norm", *rest)``: the receiver checked when traced (see runtime.ops)."""
    assert ref.receiver is not None
    return cst.Call(cst.Attribute(cst.Name(rw.ctx.mr), cst.Name(check)), [
        cst.Arg(ref.receiver), cst.Arg(cst.Name(ref.owner.name.value)),
        cst.Arg(cst.SimpleString(f'"{ref.method.name.value}"')), *(cst.Arg(r) for r in rest)])


def _caller_class(rw, name: str) -> cst.ClassDef | None:
    """The class whose instance ``name`` is: the caller's own ``self`` (the first parameter of a plain method
    of a top-level class, not rebound; read in a lambda or nested def of it too)."""
    fn = rw.enclosing or rw.fn
    owner = rw.ctx.owners.get(fn)
    params = [*fn.params.posonly_params, *fn.params.params]
    if owner is None or not params or params[0].name.value != name or any(
            rw.ctx.code(d.decorator) in ("staticmethod", "classmethod") for d in fn.decorators):
        return None
    value = rw.env.get(name, rw.free.get(name))
    return owner if isinstance(value, Static) and value.param == name else None


def _struct_property(rw, node: cst.Attribute, struct: StructValue) -> Operand | None:
    """``m.width`` where ``width`` is a plain ``@property`` of the module's class of the pytree ``m`` holds
    (a name): the property's body called as the method it is, ``self`` the pytree; else None."""
    owner = rw.ctx.classes.get(struct.cls)
    method = _method_def(owner, node.attr.value) if owner is not None and isinstance(node.value, cst.Name) else None
    if method is None or [rw.ctx.code(d.decorator) for d in method.decorators] != ["property"] \
            or rw.ctx.binds("property"):
        return None
    call = cst.Call(node, [])
    rw.ctx.anchors[call] = node
    called = _call_method(rw, call, MethodRef(owner, method, node.value, False))
    return Operand(called.value, node, called.node)


def _config_class(rw, name: str) -> cst.ClassDef | None:
    """The module's class of a static parameter ``name`` (``cfg: Config``, a NamedTuple or frozen dataclass of
    Python values): ``cfg.scale()`` calls its method, ``self`` the config; None for anything else."""
    value = rw.env.get(name)
    if not isinstance(value, Static) or value.param != name:
        return None
    param = next((p for p in (*rw.fn.params.posonly_params, *rw.fn.params.params, *rw.fn.params.kwonly_params)
                  if p.name.value == name), None)
    hint = param.annotation.annotation if param is not None and param.annotation is not None else None
    if not isinstance(hint, cst.Name) or hint.value in rw.env or hint.value in rw.ctx.imports.imports:
        return None
    return rw.ctx.classes.get(hint.value)


def _struct_class(rw, node: cst.BaseExpression) -> cst.ClassDef | None:
    """The module's class of the pytree ``node`` evaluates to (``m: MLP``, ``self.mlp``, ``m.blocks[0]``: a
    dataclass or NamedTuple of hinted fields, as Equinox modules are): ``m(x)`` calls its ``__call__``,
    ``m.scaled(x)`` its method, with ``self`` the pytree; None for anything else."""
    root = node
    while isinstance(root, cst.Attribute | cst.Subscript):
        root = root.value
    made = isinstance(root, cst.Call) and isinstance(root.func, cst.Name) and root.func.value in rw.ctx.classes \
        and root.func.value not in rw.env and root.func.value not in rw.free  # MLP(*layer)(h): the module made there
    if not made and (not isinstance(root, cst.Name) or not isinstance(rw.env.get(root.value, rw.free.get(root.value)),
                                                                      StructValue | TupleValue)):
        return None
    mark = rw.mark()
    try:
        value = rw.expr(node).value
    except MeshifyError:
        value = None
    finally:
        rw.rollback(mark)
    if not isinstance(value, StructValue) or value.kind not in ("namedtuple", "dataclass"):
        return None
    return rw.ctx.classes.get(value.cls)


def method_call(rw, node: cst.Call, ref: MethodRef, call: Call | None = None) -> tuple[Value, cst.Call, Call]:
    """The version of ``ref``'s method for this call's operands: (its result, the rewritten call of the
    version with the receiver first where it takes one, the evaluated call).  ``call``: the operands already
    evaluated (a transform's), else ``node``'s."""
    name = ref.method.name.value
    receives = ref.receiver is not None and not ref.static
    synthetic = cst.Call(func=cst.Name(name), args=[*([cst.Arg(ref.receiver)] if receives else []), *node.args])
    rw.ctx.anchors[synthetic] = node  # (errors and records point at the user's call)
    if call is None:
        evaluated = _evaluate_args(rw, synthetic, f"{ref.owner.name.value}.{name}", None, helper=True)
    else:
        evaluated = replace(call, node=synthetic, args=(*([rw.expr(ref.receiver)] if receives else []),
                                                        *call.args))
    value, new = call_helper(rw, evaluated, ref.method, owner=ref.owner.name.value)
    for table in (rw.dtypes.calls, rw.dtypes.call_items):
        if synthetic in table:
            table[node] = table[synthetic]  # the dtype of the user's self.norm(x)
    if synthetic in rw.dtypes.widened:
        rw.dtypes.widened.add(node)
    return value, _lambdas_walked(rw, evaluated, new), evaluated  # type: ignore[return-value]


def method_function(rw, ref: MethodRef, version: cst.BaseExpression) -> cst.BaseExpression:
    """What stands for the method as a function in the rewritten code: ``mr.method(self, Model, "norm",
    norm__v1)``, the version with the receiver bound, checked when traced to be the method the instance has
    (a subclass overriding it, or an instance attribute of that name, would run other code: refused);
    the version itself where the class is named (``Model.norm``)."""
    return version if ref.receiver is None else _receiver_check(rw, ref, "method", version)


def _call_method(rw, node: cst.Call, ref: MethodRef) -> Operand:
    """``self.norm(x)``: ``norm__v1(mr.method_receiver(self, Model, "norm"), x)``, the method's version for
    these layouts (a function of the module after the class), its receiver checked at the call (see
    :func:`method_function`); ``self.snorm(x)`` of a staticmethod: ``mr.method(self, Model, "snorm",
    snorm__v1)(x)``; ``Model.norm(self, x)``: ``norm__v1(self, x)``."""
    value, new, _ = method_call(rw, node, ref)
    if ref.receiver is None:
        return Operand(value, node, new)
    if ref.static:
        return Operand(value, node, new.with_changes(func=method_function(rw, ref, new.func)))
    receiver = _receiver_check(rw, ref, "method_receiver")
    return Operand(value, node, new.with_changes(args=[new.args[0].with_changes(value=receiver), *new.args[1:]]))


def _held_elementwise(rw, node: cst.Call, func: cst.BaseExpression, checked: bool = False) -> Operand | None:
    """``cfg.act(h)`` / ``act(h)`` / ``CFG.act(h)``: a function held in a static value of unknown literal (a
    config field, a parameter, an object of the module), called on one split or partial array: taken for an elementwise function of one array
    (the layout kept, a partial sum completed first), and checked when JAX traces the call
    (``mr.elementwise(cfg.act)(h)`` raises unless it is one meshify has a rule for).  None where it does
    not apply (a whole array: the call runs as written)."""
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        return None
    module_object = False
    if not checked:
        if not isinstance(func, cst.Name | cst.Attribute) or _is_module_path(rw, func):
            return None
        root: cst.BaseExpression = func
        while isinstance(root, cst.Attribute):
            root = root.value
        base = rw.env.get(root.value, rw.free.get(root.value)) if isinstance(root, cst.Name) else None
        if base is None and isinstance(root, cst.Name) and (root.value in rw.ctx.assignments
                                                            or root.value in rw.ctx.branch_bound) \
                and (root.value not in rw.ctx.functions or root.value in rw.ctx.held_aliases):
            # CFG.act(h): an object of the module (Opaque: it might be an array); ACT(h), ACT = jax.nn.gelu
            module_object = True
            base = Static()
        if not isinstance(base, Static) or base.known or (isinstance(func, cst.Name) and func.value not in rw.env
                                                          and not module_object):
            return None
    mark = rw.mark()
    held = rw.expr(func) if not checked else Operand(Static(), func, func)  # getattr(jax.nn, name): as written
    call = _evaluate_args(rw, node, "jax.numpy.tanh", None)
    call = replace(call, name=rw.ctx.code(func))  # what its comments call it
    x = call.args[0].value
    # (act = jax.nn.gelu, an alias of an elementwise function: its result has the argument's dims on a whole
    # array too, checked all the same when traced; run as written, it would be a value of unknown dims)
    alias = not checked and isinstance(func, cst.Name) and module_object and (
        func.value in rw.ctx.held_aliases or _unary_partial(rw, func.value))
    if not (isinstance(held.value, Static) and not held.value.known or module_object and isinstance(held.value, Opaque)) \
            or not isinstance(x, Array) or not (x.layout.is_split or x.layout.partial or alias):
        rw.rollback(mark)
        return None
    closed_world(rw.rule_context(), call, "jax.numpy.tanh")
    value, new = rw.lower(call, REGISTRY["jax.numpy.tanh"](rw.rule_context(), call))
    if not isinstance(new, cst.Call):  # pragma: no cover - the unary rule keeps the call
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(func)}(...) on {rw.ctx.code(node.args[0].value)!r}",
                       "call a jax function by its name")
    rw.elementwise_calls.add(node)
    if module_object:  # the program is keyed on the function it holds now (CFG = Cfg(act=...) later)
        rw.globals_read.add(rw.ctx.code(func))
    check = cst.Call(cst.Attribute(cst.Name(rw.ctx.mr), cst.Name("elementwise")), [cst.Arg(held.node)])
    return Operand(value, node, new.with_changes(func=check))


#: ``x.at[...].op(...)`` updates meshify models (``get`` reads; ``apply`` runs a function of the user's).
_AT_OPS = frozenset({"set", "add", "multiply", "mul", "divide", "min", "max", "power", "get"})


def _is_at_update(rw, func: cst.BaseExpression) -> bool:
    return isinstance(func, cst.Attribute) and func.attr.value in _AT_OPS and isinstance(func.value, cst.Subscript) \
        and isinstance(func.value.value, cst.Attribute) and func.value.value.attr.value == "at" \
        and not (isinstance(func.value.value.value, cst.Name | cst.Attribute) and _is_module_path(rw, func.value.value.value))


def _at_update(rw, node: cst.Call) -> Operand:
    """``x.at[idx].set(v)`` (``add``, ``multiply``, ``divide``, ``min``, ``max``, ``power``; ``get``): on a
    named array, an update of the elements its basic index picks (ints, slices, ``...`` on unsplit
    dims): each device updates its own block, the value converted to the picked region's layout first
    (a partial sum completed first: an update is not linear); the result has ``x``'s layout.  On a
    whole array of unknown dims the call runs as written, with whole values only.  ``get`` is
    ``x[idx]``."""
    func = node.func
    assert isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript)
    sub = func.value
    at = sub.value
    assert isinstance(at, cst.Attribute)
    op = func.attr.value
    base = rw.expr(at.value)
    read = cst.Subscript(at.value, sub.slice)
    rw.ctx.anchors[read] = sub
    if op == "get":
        taken = _get_filled(rw, node, at.value, sub) if node.args else None
        if taken is not None:  # alphas_cumprod.at[t].get(mode="fill", fill_value=-1.0): jnp.take's fill
            return taken
        if node.args:
            raise rw.error(UnsupportedError, node, f"{rw.ctx.code(func)}() with arguments",
                           "index as x[idx] (modes: jnp.take(x, ids, axis, mode=...))")
        found = rw.expr(read) if not isinstance(base.value, Array) else index_array(rw, read, base)
        new_base = found.node.value if isinstance(found.node, cst.Subscript) else base.node
        return Operand(found.value, node, node.with_changes(func=func.with_changes(value=sub.with_changes(
            value=at.with_changes(value=new_base)))))
    values = [a for a in node.args if a.keyword is None]
    if len(values) != 1 or any(a.star for a in node.args):
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(func)}() with {len(values)} values",
                       f"pass one value: x.at[idx].{op}(v)")
    keywords = {a.keyword.value: rw.expr(a.value) for a in node.args if a.keyword is not None}
    for name, operand in keywords.items():
        if not isinstance(operand.value, Static):
            raise rw.error(UnsupportedError, node, f"{rw.ctx.code(func)}({name}=...) with an array",
                           "pass Python values for mode=, indices_are_sorted=, unique_indices=")
    update = rw.expr(values[0].value)
    if not isinstance(base.value, Array):
        if isinstance(update.value, Array) and (update.value.layout.is_split or update.value.layout.partial):
            raise rw.error(UnsupportedError, values[0].value,
                           f"{rw.ctx.code(func)}({rw.ctx.code(values[0].value)}) puts an array of layout "
                           f"{update.value.layout.describe()} into {rw.ctx.code(at.value)!r}, whose dims meshify "
                           "cannot infer", f"bind it to a name with a hint first (v: Tensor[...] = "
                           f"{rw.ctx.code(at.value)}) and update that")
        for element in sub.slice:  # the indices are read whole
            if isinstance(element.slice, cst.Index):
                index = rw.expr(element.slice.value).value
                if isinstance(index, Array) and (index.layout.is_split or index.layout.partial):
                    raise rw.error(UnsupportedError, element, f"index {rw.ctx.code(element.slice.value)!r} of "
                                   f"layout {index.layout.describe()} into an array whose dims meshify cannot infer",
                                   "name the array's dims where it is made")
        new = node.with_changes(func=func.with_changes(value=sub.with_changes(value=at.with_changes(value=base.node))),
                                args=[a.with_changes(value=update.node) if a is values[0] else a for a in node.args])
        return Operand(base.value, node, new)
    layout = base.value.layout
    operands = _subscript_operands(rw, read)
    rows = _per_row_update(rw, node, base, update, keywords, operands)
    if rows is not None:
        return rows
    scattered = _scatter(rw, node, base, update, keywords, operands)
    if scattered is not None:
        return scattered
    ctx = rw.rule_context(operands)
    elements = []  # for the layout: a traced scalar index (cache.at[:, pos]) picks like an int
    literals: dict[cst.CSTNode, Operand] = {}
    for element in sub.slice:
        index = ctx.operand(element.slice.value).value if isinstance(element.slice, cst.Index) \
            and not isinstance(element.slice.value, cst.Ellipsis) and not is_none(ctx, element) else None
        if isinstance(element.slice, cst.Index) and is_none(ctx, element):
            raise rw.error(UnsupportedError, element, f"{rw.ctx.code(func)}() with None in its index",
                           "index the array's own dims only")
        if index is not None and not isinstance(index, Static):
            scalar = isinstance(index, Array) and index.layout.rank == 0 and not index.layout.partial \
                or isinstance(index, Opaque) and index.shape == ()
            if not scalar:
                raise rw.error(UnsupportedError, element, f"{rw.ctx.code(func)}() with the array index "
                               f"{rw.ctx.code(element.slice.value)!r} (a scatter)",
                               "index with ints, slices and scalars, or scatter with jnp functions on whole arrays")
            zero = cst.Integer("0")
            literals[zero] = Operand(Static.of(0), zero, zero)
            element = element.with_changes(slice=cst.Index(zero))
        elements.append(element)
    picked = read.with_changes(slice=elements)
    rw.ctx.anchors[picked] = sub
    region = basic_index(rw.rule_context({**operands, **literals}), picked, base)  # (each index evaluated once)
    assert isinstance(region, Array)
    target = base
    if layout.partial:  # an update of a partial sum: each device would update its own part
        target = Operand(Array(layout.with_partial(())), base.original,
                         rw.convert(base, layout.with_partial(()), f"{rw.ctx.code(func)}() (an update needs it whole)"))
    value = update
    if isinstance(update.value, Array):
        u = update.value.layout
        picked_dims = region.layout.dims[region.layout.rank - u.rank:] if u.rank <= region.layout.rank else ()
        if u.rank <= region.layout.rank and u.dims != picked_dims and all(
                unify_dims(d, r) is not None for d, r in zip(u.dims, picked_dims)):
            # dims meshify inferred line up with the picked ones (x.at[..., 1::2].set(e + o) of the even entries'
            # e: JAX checks the sizes): the value takes the picked names
            u = Layout(picked_dims, u.axes, u.partial)
            update = Operand(Array(u, update.value.origin), update.original, update.node)
        if u.rank > region.layout.rank or u.dims != region.layout.dims[region.layout.rank - u.rank:]:
            raise rw.error(LayoutError, values[0].value,
                           f"{rw.ctx.code(values[0].value)!r} has dims {list(u.dims)} but "
                           f"{rw.ctx.code(read)!r} picks {list(region.layout.dims)}",
                           "give the value the picked elements' dims (or the trailing ones of them)")
        offset = region.layout.rank - u.rank
        wanted = Layout(u.dims, region.layout.axes[offset:])
        value = Operand(Array(wanted), update.original, rw.convert(update, wanted, f"the value {op} puts into "
                                                                    f"{rw.ctx.code(at.value)!r}"))
    elif isinstance(update.value, Opaque) and region.layout.is_split:
        raise rw.error(UnsupportedError, values[0].value,
                       f"{rw.ctx.code(values[0].value)!r} is an array whose dims meshify cannot infer, put into "
                       f"elements of layout {region.layout.describe()}",
                       f"name its dims where it is made: v: Tensor[...] = {rw.ctx.code(values[0].value)}")
    new = node.with_changes(func=func.with_changes(value=sub.with_changes(value=at.with_changes(value=target.node))),
                            args=[a.with_changes(value=value.node) if a is values[0] else a for a in node.args])
    return Operand(Array(layout.with_partial(()), base.value.origin), node, new)


def _get_filled(rw, node: cst.Call, table: cst.BaseExpression, sub: cst.Subscript) -> Operand | None:
    """``x.at[ids].get(mode="fill", fill_value=v)``: ``jnp.take(x, ids, axis=0, mode="fill", fill_value=v)``,
    which reads the same (negative ids wrap from -size, the rest out of range give the fill), run by the take
    rule; ``mode="clip"``: ``jnp.take(x, jnp.where(ids < 0, ids + x.shape[0], ids), axis=0, mode="clip")`` (the
    ids wrapped as ``get`` wraps them, then clamped; the gradient scattered to the clamped rows as ``get``'s is);
    None for any other ``get``."""
    kwargs = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    if len(kwargs) != len(node.args) or set(kwargs) - {"mode", "fill_value"} or len(sub.slice) != 1 \
            or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    mode = rw.expr(kwargs["mode"]).value if "mode" in kwargs else None
    if not (isinstance(mode, Static) and mode.known and mode.literal in ("fill", "clip")) \
            or mode.literal == "clip" and "fill_value" in kwargs:
        return None
    ids = sub.slice[0].slice.value
    jnp_alias = _alias_of(rw, "jax.numpy")
    mark = rw.mark()  # (an array index? evaluated for good by the take below)
    index = rw.expr(ids).value
    rw.rollback(mark)
    if jnp_alias is None or not isinstance(index, Array):
        return None
    if mode.literal == "clip":
        # x.at[ids].get(mode="clip") wraps negative ids from the end before it clamps (jnp.take's clip does
        # not): written so, its ids read once (a name or a read of one), the take rule runs it
        if not isinstance(ids, cst.Name | cst.Attribute | cst.Subscript):
            return None
        call = call_template(f'{jnp_alias}.take({{x}}, {jnp_alias}.where({{i}} < 0, {{i}} + {{x}}.shape[0], {{i}}), '
                             'axis=0, mode="clip")', x=table, i=ids)
        rw.ctx.anchors[call] = node
        found = rw.expr(call)
        return Operand(found.value, node, found.node)
    call = cst.parse_expression(f'{jnp_alias}.take(x, ids, axis=0, mode="fill")')
    assert isinstance(call, cst.Call)
    args = [call.args[0].with_changes(value=table), call.args[1].with_changes(value=ids), *call.args[2:]]
    if "fill_value" in kwargs:
        args.append(cst.Arg(kwargs["fill_value"], keyword=cst.Name("fill_value")))
    call = call.with_changes(args=args)
    rw.ctx.anchors[call] = node
    found = rw.expr(call)
    return Operand(found.value, node, found.node)


def _scatter(rw, node: cst.Call, base: Operand, update: Operand, keywords: dict, operands: dict) -> Operand | None:
    """``x.at[:, ids].set(v)`` (``add``, ...): a scatter along the one dim an index array (of rank one or
    more) picks, ``:`` (or one ``...``) everywhere else (:func:`~meshify.rewrite.rules.lookups.scatter`);
    None where no index is an array of rank one or more."""
    func = node.func
    assert isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript) and isinstance(base.value, Array)
    sub, op = func.value, func.attr.value
    at = sub.value
    assert isinstance(at, cst.Attribute)
    elements = list(sub.slice)

    def array_at(element: cst.SubscriptElement) -> bool:
        index = operands.get(element.slice.value) if isinstance(element.slice, cst.Index) else None
        return index is not None and isinstance(index.value, Array) and index.value.layout.rank > 0

    arrays = [j for j, e in enumerate(elements) if array_at(e)]
    if not arrays:
        return None
    j = arrays[0]
    code = rw.ctx.code(elements[j].slice.value)
    ellipses = [k for k, e in enumerate(elements) if isinstance(e.slice, cst.Index)
                and isinstance(e.slice.value, cst.Ellipsis)]
    full = [isinstance(e.slice, cst.Slice) and e.slice.lower is None and e.slice.upper is None
            and e.slice.step is None for e in elements]
    rank = base.value.layout.rank
    if len(arrays) > 1 or len(ellipses) > 1 or len(elements) - len(ellipses) > rank or not all(
            full[k] for k in range(len(elements)) if k != j and k not in ellipses):
        raise rw.error(UnsupportedError, elements[j], f"{rw.ctx.code(func)}() with the array index {code!r} beside "
                       "indices other than ':'", f"scatter along one dim: one index array and ':' (or one ...) "
                       f"elsewhere, x.at[:, ids].{op}(v); index the other dims with ints or slices first")
    axis = j if not ellipses or ellipses[0] > j else rank - (len(elements) - j)
    unknown = sorted(set(keywords) - {"mode", "indices_are_sorted", "unique_indices"})
    if unknown:
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(func)}({unknown[0]}=...)",
                       "pass only mode=, indices_are_sorted= and unique_indices=")
    mode = keywords.get("mode")
    drops = mode is None or not mode.value.known or mode.value.literal in (None, "drop", "fill")
    if mode is not None and not (mode.value.known and mode.value.literal in (None, "drop", "fill", "clip",
                                                                               "promise_in_bounds")):
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(func)}(mode=...) that is not a literal",
                       "write mode=\"drop\", \"clip\" or \"promise_in_bounds\"")
    unique = keywords.get("unique_indices")
    lowering = scatter(rw.rule_context(operands), base, operands[elements[j].slice.value], axis, update, op, node,
                       split_ok=drops, unique=unique is not None and unique.value.known and unique.value.literal is True)
    nodes = rw.carry_out(lowering)
    if lowering.template is not None:
        return Operand(lowering.result, node, rw.replacement(lowering, nodes))
    values = [a for a in node.args if a.keyword is None]
    value = nodes[2] if len(nodes) == 3 else update.node
    picked = [e.with_changes(slice=cst.Index(nodes[1])) if k == j else e for k, e in enumerate(elements)]
    new = node.with_changes(func=func.with_changes(value=sub.with_changes(value=at.with_changes(value=nodes[0]),
                                                                          slice=picked)),
                            args=[a.with_changes(value=value) if a is values[0] else a for a in node.args])
    return Operand(lowering.result, node, new)


def _per_row_update(rw, node: cst.Call, base: Operand, update: Operand, keywords: dict,
                    operands: dict) -> Operand | None:
    """``cache.at[jnp.arange(B), pos].set(new)``: each row updated at its own position (batched decoding's
    cache, one position per sequence); the leading indices ``jnp.arange`` over the leading dims (``[:, None]``
    / ``[None, :]`` grids for two), then the positions, of the rows' dims, along an unsplit dim; the dims
    after it whole.  Each device updates its own rows (``mr.rows_at``: the same index built from its block's
    shape, so JAX's scatter drops or wraps positions as on one device), the positions and the value
    converted to the rows' splits; a partial sum completed first.  None for any other index."""
    func = node.func
    assert isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript) and isinstance(base.value, Array)
    op = func.attr.value
    layout = base.value.layout
    grid = _row_grid(rw, func.value.slice, layout) \
        if op in ("set", "add", "multiply", "divide", "min", "max") and not keywords else None
    if grid is None or grid[1] > 1:
        return None
    indices, extra = grid
    k = len(indices) - 1
    pos = operands.get(indices[-1])
    if pos is None or not isinstance(pos.value, Array) or pos.value.dims[:k] != layout.dims[:k] \
            or pos.value.layout.rank != k + extra:
        return None
    what = rw.ctx.code(func)
    # (x.at[jnp.arange(B)[:, None], pos] of pos [batch, k]: k positions per row, the value one row per position)
    each = pos.value.dims[k:]
    rows = Layout((*layout.dims[:k], *each), (*layout.axes[:k], *(() for _ in each)))
    wanted = Layout((*layout.dims[:k], *each, *layout.dims[k + 1:]),
                    (*layout.axes[:k], *(() for _ in each), *layout.axes[k + 1:]))
    if isinstance(update.value, Array) and update.value.layout.rank == 0:
        wanted = Layout((), ())  # one value for every position
    if isinstance(update.value, Array) and update.value.dims != wanted.dims and len(update.value.dims) == len(
            wanted.dims) and all(unify_dims(d, w) == w for d, w in zip(update.value.dims, wanted.dims)):
        # dims meshify named itself (a rotary concatenate's d_head?) take the rows' names
        update = Operand(Array(Layout(wanted.dims, update.value.layout.axes, update.value.layout.partial),
                               update.value.origin), update.original, update.node)
    if isinstance(update.value, Array) and update.value.dims != wanted.dims:
        raise rw.error(LayoutError, update.original, f"{rw.ctx.code(update.original)!r} has dims "
                       f"{list(update.value.dims)} but {what} puts one row of dims {list(wanted.dims)} per position",
                       f"give the value the dims {list(wanted.dims)}")
    if isinstance(update.value, Opaque | TupleValue | StructValue):
        raise rw.error(UnsupportedError, update.original, f"{rw.ctx.code(update.original)!r} is a value whose "
                       f"dims meshify cannot infer, put one row per position by {what}",
                       f"name its dims where it is made: v: Tensor[...] = {rw.ctx.code(update.original)}")
    target = rw.convert(base, layout.with_partial(()), f"{what}() (an update needs it whole)")
    rw.mark_index(pos)
    index = rw.convert(pos, rows, f"the positions {what} writes at")
    value = rw.convert(update, wanted, f"the rows {what} puts") if isinstance(update.value, Array) else update.node
    # (positions along a split dim: each device writes those in its block, the others dropped)
    split = f", axis_name={_axes_code(layout.axes[k])}" if layout.axes[k] else ""
    call = cst.parse_expression(f'{rw.ctx.mr}.rows_at(x, ids, v, "{op}"' + (f", rows={k}" if extra else "")
                                + split + ")")
    assert isinstance(call, cst.Call)
    new = call.with_changes(args=[call.args[0].with_changes(value=target), call.args[1].with_changes(value=index),
                                  call.args[2].with_changes(value=value), *call.args[3:]])
    return Operand(Array(layout.with_partial(()), base.value.origin), node, new)


#: optax.cosine_similarity as optax 0.2 defines it: each side over its norm (its squares summed, clipped below
#: at epsilon), their products summed.
_COSINE = "".join(
    f"({{jnp}}.sum(({side} / {{jnp}}.sqrt({{jnp}}.clip({{jnp}}.sum({{jnp}}.square({side}), axis={{axis}}, keepdims=True), "
    f"{{epsilon}})))" if i == 0 else f" * ({side} / {{jnp}}.sqrt({{jnp}}.clip({{jnp}}.sum({{jnp}}.square({side}), "
    f"axis={{axis}}, keepdims=True), {{epsilon}}))), axis={{axis}}))" for i, side in enumerate(("{predictions}", "{targets}")))
#: Parameters of those definitions that optax gives defaults (axis's is -1).
_OPTAX_DEFAULTS = {"epsilon": "0.0"}
#: optax losses meshify runs as optax defines them (over split dims too): name -> parameters, definition.
#: The parameters are read by name or position; those read twice by the definition must be names.
_OPTAX_LOSSES = {
    "optax.softmax_cross_entropy_with_integer_labels": (
        ("logits", "labels", "axis"),
        "({jax}.nn.logsumexp({logits}, axis={axis}) - {jnp}.squeeze({jnp}.take_along_axis({logits}, "
        "{jnp}.expand_dims({labels}, {axis}), axis={axis}), axis={axis}))"),
    "optax.softmax_cross_entropy": (
        ("logits", "labels", "axis"),
        "(-{jnp}.sum({labels} * {jax}.nn.log_softmax({logits}, axis={axis}), axis={axis}))"),
    "optax.sigmoid_binary_cross_entropy": (
        ("logits", "labels"),
        # (optax casts the labels to the logits' dtype first: float32 labels beside float16 logits give float16)
        ("(-{jnp}.astype({labels}, {logits}.dtype) * {jax}.nn.log_sigmoid({logits}) - (1.0 - {jnp}.astype({labels}, "
         "{logits}.dtype)) * {jax}.nn.log_sigmoid(-{logits}))")),
    "optax.safe_softmax_cross_entropy": (
        ("logits", "labels"),
        # (0 log 0 = 0: an entry of label 0 adds nothing, also where its logit is -inf)
        ("(-{jnp}.sum({jnp}.where({labels} != 0.0, {labels} * {jax}.nn.log_softmax({logits}, axis=-1), "
         "{jnp}.zeros_like({jax}.nn.log_softmax({logits}, axis=-1))), axis=-1))")),
    "optax.kl_divergence": (
        ("log_predictions", "targets", "axis"),
        ("{jnp}.sum({targets} * ({jnp}.where({targets} == 0, 0, {jnp}.log({targets})) - {log_predictions}), "
         "axis={axis})")),
    "optax.smooth_labels": (
        ("labels", "alpha"),
        "((1.0 - {alpha}) * {labels} + {alpha} / {labels}.shape[-1])"),
    "optax.cosine_similarity": (("predictions", "targets", "epsilon", "axis"), _COSINE),
    "optax.cosine_distance": (("predictions", "targets", "epsilon", "axis"), f"(1.0 - {_COSINE})"),
}
for _name in list(_OPTAX_LOSSES):
    _OPTAX_LOSSES[_name.replace("optax.", "optax.losses.")] = _OPTAX_LOSSES[_name]


#: The L2 norm of a pytree's leaves together (gradient clipping by global norm).
_GLOBAL_NORMS = frozenset({"optax.global_norm", "optax.tree_utils.tree_l2_norm", "optax.tree.norm"})


_TREE_LEAVES = frozenset({"jax.tree.leaves", "jax.tree_util.tree_leaves", "jax.tree_leaves"})
_TREE_FLATTEN = frozenset({"jax.tree.flatten", "jax.tree_util.tree_flatten", "jax.tree.structure",
                           "jax.tree_util.tree_structure"})
_TREE_UNFLATTEN = frozenset({"jax.tree.unflatten", "jax.tree_util.tree_unflatten"})


@dataclass(frozen=True, slots=True)
class TreeShape:
    """A pytree's structure, as ``jax.tree.flatten`` / ``jax.tree.structure`` give it (a Static's literal): the
    pytree meshify held, whose leaves ``jax.tree.unflatten`` replaces in JAX's order."""

    tree: object
    count: int


#: Functions of Python values evaluated where meshify knows their arguments (a key path's spelling).
_PURE_STATIC = frozenset({"jax.tree_util.keystr", "builtins.str"})


def _alias_of(rw, module: str) -> str | None:
    """The name the module imports ``module`` as (``jnp`` for ``jax.numpy``), if it does."""
    return next((alias for alias, full in rw.ctx.imports.imports.items() if full == module), None)


def _key_entries() -> tuple[type, ...]:
    """jax.tree_util's key path entries, whose ``name`` / ``key`` / ``idx`` a tree_map_with_path function reads
    (imported when a path is read: the rewrite itself runs without jax)."""
    from jax.tree_util import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

    return GetAttrKey, DictKey, SequenceKey, FlattenedIndexKey


def _pure_static_call(rw, node: cst.Call, func: cst.BaseExpression, names: set[str]) -> Operand | None:
    """``jax.tree_util.keystr(path)``, ``str(path)``: a Python value, where every argument is one meshify knows
    (a path ``tree_map_with_path`` gives); None for any other call."""
    name = next((n for n in sorted(names) if n in _PURE_STATIC), None)
    if name is None and isinstance(func, cst.Name) and func.value == "str" and "str" not in rw.env \
            and not rw.ctx.binds("str"):
        name = "builtins.str"
    if name is None or any(a.star for a in node.args):
        return None
    mark = rw.mark()
    values = [(a.keyword.value if a.keyword is not None else None, rw.expr(a.value).value) for a in node.args]
    if not all(isinstance(v, Static) and v.known and (name != "builtins.str" or _key_path(v.literal))
               for _, v in values):
        rw.rollback(mark)
        return None
    args = [v.literal for k, v in values if k is None]  # type: ignore[union-attr]
    kwargs = {k: v.literal for k, v in values if k is not None}  # type: ignore[union-attr]
    try:
        if name == "builtins.str":
            result = str(*args, **kwargs)
        else:
            from jax.tree_util import keystr

            result = keystr(*args, **kwargs)
    except (TypeError, ValueError):
        rw.rollback(mark)
        return None
    return Operand(Static.of(result), node, node)


def _is_key_entry(literal: object) -> bool:
    """Whether ``literal`` is one entry of a key path (jax is imported only for a value of its own)."""
    return type(literal).__module__.split(".")[0] in ("jax", "jaxlib") and isinstance(literal, _key_entries())


def _key_path(literal: object) -> bool:
    """Whether ``literal`` is a key path (or one of its entries): ``str`` of it is JAX's spelling."""
    return _is_key_entry(literal) or isinstance(literal, tuple) and bool(literal) \
        and all(_is_key_entry(e) for e in literal)


def tree_leaf_reads(rw, node: cst.Call) -> list[cst.BaseExpression] | None:
    """``jax.tree.leaves(params)`` of a name (or attribute chain): each leaf read off it (``params.w``,
    ``params["b"]``), in JAX's order, for a comprehension over the leaves unrolled leaf by leaf; else None."""
    if not (rw.ctx.qualified_names(node.func) & _TREE_LEAVES) or len(node.args) != 1 \
            or node.args[0].keyword is not None or node.args[0].star or not read_again(node.args[0].value) \
            or _holds_mapping(_field_held(rw, node.args[0].value)):  # (keys known only when traced: a sequence)
        return None
    return _leaf_reads(rw, node.args[0].value)


_TREE_REDUCE = frozenset({"jax.tree.reduce", "jax.tree_util.tree_reduce"})
#: The operator module's functions a reduction writes out as the binary operation they are.
_OPERATORS = {"operator.add": cst.Add, "operator.mul": cst.Multiply, "operator.sub": cst.Subtract,
              "operator.truediv": cst.Divide}
_TREE_SUM = frozenset({"optax.tree_utils.tree_sum", "optax.tree.sum"})


def _tree_reduce(rw, node: cst.Call, name: str) -> Operand | None:
    """``jax.tree.reduce(fn, params, 0.0)`` (``functools.reduce`` over the leaves in JAX's order) and
    ``optax.tree_utils.tree_sum(params)`` of a pytree held in a name: written out leaf by leaf
    (``fn(fn(0.0, params.b), params.w)``, ``0 + jnp.sum(params.b) + ...``), each leaf in its own layout; None
    where the call is not one of these (then refused as before)."""
    args = [a for a in node.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    if any(a.star for a in node.args) or set(keywords) - {"initializer", "function", "tree"}:
        return None
    if name in _TREE_SUM:
        tree = keywords.get("tree", args[0].value if len(args) == 1 else None)
        jnp = _alias_of(rw, "jax.numpy")
        found = _tree_items(rw, tree) if tree is not None and len(args) + len(keywords) == 1 and jnp else None
        if found is None:
            return None
        reads = [code for _, code in found]
        code = "(" + " + ".join(["0", *(f"{jnp}.sum({rw.ctx.code(leaf)})" for leaf in reads)]) + ")"
    else:
        given = [*(a.value for a in args), *(keywords[k] for k in ("function", "tree", "initializer") if k in keywords)]
        found = _tree_items(rw, given[1]) if len(given) in (2, 3) else None
        if found is None:
            return None
        items: list[cst.BaseExpression] = [code for _, code in found]
        if len(given) == 3:
            items.insert(0, given[2].deep_clone())
        if not items:
            return None
        fn, acc = given[0], _parenthesized(items[0])
        if isinstance(fn, cst.Lambda):  # lambda acc, q: acc + jnp.sum(q ** 2): its body, the names replaced
            from meshify.rewrite._interp import _Put

            params = [p.name.value for p in fn.params.params]
            if len(params) != 2 or fn.params.star_arg is not cst.MaybeSentinel.DEFAULT and fn.params.star_arg \
                    or sum(1 for n in _names_in(fn.body) if n == params[0]) > 1:
                return None  # (the running value read twice would be written out twice per leaf)
            for item in items[1:]:
                acc = _parenthesized(fn.body.deep_clone().visit(_Put({params[0]: acc, params[1]: item})))
        else:
            operator = next((_OPERATORS[q] for q in rw.ctx.qualified_names(fn) if q in _OPERATORS), None)
            for item in items[1:]:  # (operator.add: written acc + leaf, as Python runs it)
                acc = _parenthesized(cst.BinaryOperation(acc, operator(), _parenthesized(item))) if operator \
                    else cst.Call(fn.deep_clone(), [cst.Arg(acc), cst.Arg(item)])
        code = rw.ctx.code(acc)  # (in parentheses where it is an operation: it may stand inside another, / 32)
    written = cst.parse_expression(code)
    _anchor_all(rw, written, node)
    made = rw.expr(written)
    return Operand(made.value, node, made.node)


def _tree_items(rw, tree: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression]] | None:
    """The leaves of the pytree a reduction folds, each as its path and code: of a name or attribute chain, read
    off it (:func:`_leaf_reads`); of ``jax.tree.map(fn, params)`` (``tree_reduce(operator.add, jax.tree.map(jnp.sum,
    p))``), ``fn`` applied to each of ``params``'s leaves, where each result is one array (so the mapped tree's
    leaves are these, in the same order); of several trees of the same paths, ``fn`` of their leaves side by side;
    of a map of a map, the same inside out. None where the tree is none of these (then refused as before)."""
    if read_again(tree):
        base = rw.ctx.code(tree)
        return [(rw.ctx.code(leaf)[len(base):], leaf) for leaf in _leaf_reads(rw, tree)]
    if not isinstance(tree, cst.Call) or not rw.ctx.qualified_names(tree.func) & TREE_MAP or len(tree.args) < 2 \
            or any(a.keyword is not None or a.star for a in tree.args):
        return None
    fn, trees = tree.args[0].value, [a.value for a in tree.args[1:]]
    if isinstance(fn, cst.Lambda):  # lambda q: jnp.sum(q ** 2): its body, the names replaced by each leaf
        from meshify.rewrite._interp import _Put

        params = fn.params
        if len(params.params) != len(trees) or any(p.default is not None for p in params.params) \
                or params.posonly_params or params.kwonly_params or isinstance(params.star_arg, cst.Param) \
                or params.star_kwarg:
            return None
        names = [p.name.value for p in params.params]
        apply = lambda *leaves: _parenthesized(fn.body.deep_clone().visit(_Put(dict(zip(names, leaves)))))
    elif read_again(fn):
        apply = lambda *leaves: cst.Call(fn.deep_clone(), [cst.Arg(leaf) for leaf in leaves])
    else:
        return None
    reads = [_tree_items(rw, t) for t in trees]
    if any(r is None for r in reads) or len({tuple(p for p, _ in r) for r in reads}) != 1:  # type: ignore[union-attr]
        return None  # (trees of other structures, or one a prefix of another: not written out)
    items = [(leaves[0][0], apply(*(code for _, code in leaves))) for leaves in zip(*reads)]  # type: ignore[arg-type]
    for _, item in items:  # (a function giving a pytree or None per leaf would change the leaves: not written out)
        mark = rw.mark()
        try:
            one = isinstance(rw.expr(item).value, Array)
        except MeshifyError:
            one = False
        rw.rollback(mark)
        if not one:
            return None
    return items


def _parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` in parentheses where it is an operation (so that it can stand inside another)."""
    if isinstance(node, cst.BinaryOperation | cst.UnaryOperation | cst.BooleanOperation | cst.Comparison
                  | cst.IfExp | cst.Lambda) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def _leaf_reads(rw, tree: cst.BaseExpression) -> list[cst.BaseExpression]:
    """Each leaf of the pytree ``tree`` (a name or attribute chain) read off it, in JAX's order (checked first
    when the function runs: ``mr.tree_leaves`` before the statement)."""
    mark = rw.mark()
    value = rw.expr(tree).value
    rw.rollback(mark)
    base = rw.ctx.code(tree)
    leaves = _ordered_leaves(rw, tree, value, "")
    # (read field by field: that JAX flattens it in this order is checked first, as mr.tree_leaves checks it)
    paths = tuple(p for p, _, _ in leaves)
    rw.check_before(f"{rw.ctx.mr}.tree_leaves({base}, {json.dumps(paths) if paths else '()'})",
                    f"{base}'s leaves are read one by one below, in this order: checked to be JAX's")
    return [cst.parse_expression(base + code) for _, _, code in leaves]


def _one_tree(rw, node: cst.Call) -> tuple[Operand, list]:
    """The one pytree argument of ``jax.tree.leaves(p)`` / ``jax.tree.flatten(p)``, evaluated, and its leaves in
    JAX's order (:func:`_ordered_leaves`); other arguments (``is_leaf=``) refused."""
    short = rw.ctx.code(node.func)
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        raise rw.error(UnsupportedError, node, f"{short}() with other than one pytree (is_leaf= is not modelled)",
                       f"{short}(params)")
    tree = rw.expr(node.args[0].value)
    return tree, _ordered_leaves(rw, node.args[0].value, tree.value, "")


def _tree_leaves(rw, node: cst.Call) -> Operand:
    """``jax.tree.leaves(params)`` of a hinted pytree (an L2 penalty over the parameters): the tuple of its
    leaves, each in its layout, in JAX's order (a dict's keys sorted; None fields have no leaf), which
    ``mr.tree_leaves`` checks against the paths meshify read when the function runs.  Of a dict of keys known
    only when traced, its values' one array each: a sequence of that array, the call as written (JAX's order,
    keys sorted, whatever they are)."""
    argument = node.args[0].value if len(node.args) == 1 and node.args[0].keyword is None \
        and not node.args[0].star else None
    if argument is not None and not isinstance(argument, cst.Name):  # jax.tree.leaves(jax.tree.map(f, outs))
        mark = rw.mark()
        tried = rw.expr(argument).value
        rw.rollback(mark)
    else:
        tried = rw.env.get(argument.value) if argument is not None else None
    if argument is not None and isinstance(mapping_item(tried), Array):
        op = rw.expr(argument)
        return Operand(sequence_of(mapping_item(op.value)), node,  # type: ignore[arg-type]
                       node.with_changes(args=[node.args[0].with_changes(value=op.node)]))
    tree, leaves = _one_tree(rw, node)
    paths = tuple(p for p, _, _ in leaves)
    call = cst.parse_expression(f"{rw.ctx.mr}.tree_leaves(tree, {json.dumps(paths) if paths else '()'})")
    assert isinstance(call, cst.Call)
    new = call.with_changes(args=[call.args[0].with_changes(value=tree.node), *call.args[1:]])
    _leaf_dtypes(rw, node, node, leaves)
    return Operand(TupleValue(tuple(v for _, v, _ in leaves), "list"), node, new)  # (a list, as JAX gives it)


def _leaf_dtypes(rw, node: cst.Call, key: cst.CSTNode, leaves) -> None:
    """Each leaf's dtype, read as its path reads it (``leaves[0]`` of ``params.w``; ``a[1]`` of a held list,
    a float32-formed partial sum there too), recorded as the items of ``key``."""
    if read_again(node.args[0].value):
        base = rw.ctx.code(node.args[0].value)
        reads = [cst.parse_expression(base + code) for _, _, code in leaves]
        rw.dtypes.call_items[key] = tuple((rw.dtypes.of(r), rw.dtypes.contains_widened(r)) for r in reads)


def _tree_flatten(rw, node: cst.Call, name: str) -> Operand:
    """``leaves, treedef = jax.tree.flatten(params)`` (a hand-written optimizer's update over the leaves), and
    ``jax.tree.structure(params)``: the leaves as ``jax.tree.leaves`` gives them (checked by ``mr.tree_flatten``
    when the function runs), the structure a :class:`TreeShape` that ``jax.tree.unflatten`` fills again."""
    tree, leaves = _one_tree(rw, node)
    shape = Static(TreeShape(tree.value, len(leaves)), True)
    if name.endswith("structure"):  # (the structure alone: the same on every device, the call as written)
        return Operand(shape, node, node.with_changes(args=[node.args[0].with_changes(value=tree.node)]))
    paths = tuple(p for p, _, _ in leaves)
    call = cst.parse_expression(f"{rw.ctx.mr}.tree_flatten(tree, {json.dumps(paths) if paths else '()'})")
    assert isinstance(call, cst.Call)
    new = call.with_changes(args=[call.args[0].with_changes(value=tree.node), *call.args[1:]])
    return Operand(TupleValue((TupleValue(tuple(v for _, v, _ in leaves), "list"), shape)), node, new)


def _tree_unflatten(rw, node: cst.Call, receiver: cst.Name | None = None) -> Operand:
    """``jax.tree.unflatten(treedef, leaves)`` (or ``treedef.unflatten(leaves)``: ``receiver``) of a structure
    :func:`_tree_flatten` gave: that pytree with these leaves in JAX's order (each leaf's layout its own; a partial
    sum completed first is the user's to write)."""
    short = rw.ctx.code(node.func)
    wanted = 1 if receiver is not None else 2
    if len(node.args) != wanted or any(a.keyword is not None or a.star for a in node.args):
        raise rw.error(UnsupportedError, node, f"{short}() with other than a structure and its leaves",
                       f"{short}(leaves)" if receiver is not None else f"{short}(treedef, leaves)")
    given = receiver if receiver is not None else node.args[0].value
    shape, leaves = rw.expr(given), rw.expr(node.args[-1].value)
    if not (isinstance(shape.value, Static) and isinstance(shape.value.literal, TreeShape)):
        raise rw.error(UnsupportedError, given, f"{short}() of a structure meshify did not see made: "
                       f"{rw.ctx.code(given)!r}", "make it in the function: leaves, treedef = "
                       "jax.tree.flatten(params) (or jax.tree.structure(params))")
    held: TreeShape = shape.value.literal
    items = leaves.value.items if isinstance(leaves.value, TupleValue) else None
    if items is None or len(items) != held.count:
        raise rw.error(UnsupportedError, node.args[-1].value, f"{short}() of {rw.ctx.code(node.args[-1].value)!r}, "
                       + (f"{len(items)} values for a structure of {held.count} leaves" if items is not None else
                          "whose items meshify does not hold one by one"),
                       "pass a list or tuple with one value per leaf, built in the function")
    partial = next((i for i, v in enumerate(items) if isinstance(v, Array) and v.layout.partial), None)
    done = rw.completed_in_place(node.args[-1].value, leaves, "leaf") if partial is not None else None
    if done is not None:  # each partial leaf completed as it enters the structure (a pytree holds whole arrays)
        leaves, items, partial = done, list(done.value.items), None  # type: ignore[union-attr]
        items = [Array(v.layout.with_partial(()), v.origin) if isinstance(v, Array) else v for v in items]
    if partial is not None:
        raise rw.error(UnsupportedError, node.args[-1].value, f"{short}() of leaf {partial}, a partial sum over "
                       f"{_axes_text(items[partial].layout.partial)}", "complete it before it is put in the list "
                       "(name it with a hint: v: Tensor[...] = ...)")
    fill = iter(items)
    args = [*node.args[:-1], node.args[-1].with_changes(value=leaves.node)]
    if receiver is None:
        args[0] = node.args[0].with_changes(value=shape.node)
    return Operand(_refilled(held.tree, fill), node, node.with_changes(args=args))


def _refilled(value, leaves):
    """``value`` (a pytree meshify holds) with its leaves replaced, in JAX's order, by the next of ``leaves``."""
    if isinstance(value, StructValue):
        order = sorted(value.fields) if value.kind == "dict" else list(value.fields)
        new = {k: _refilled(v, leaves) for k, v in order}
        return replace(value, fields=tuple((k, new[k]) for k, _ in value.fields))
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_refilled(v, leaves) for v in value.items))
    if none_value(value):
        return value
    return next(leaves)


def _ordered_leaves(rw, where: cst.BaseExpression, value, path: str, code: str = "") -> list:
    """(path, leaf, the code reading it off the tree: ``.w``, ``["k"]``, ``[0]``) of each leaf of a pytree in
    ``jax.tree.leaves``'s order."""
    if isinstance(value, StructValue):
        if value.kind in ("sequence", "mapping"):
            raise rw.error(UnsupportedError, where, f"jax.tree.leaves of {rw.ctx.code(where)!r}, which holds a list as "
                           "long as each call's, or a dict of keys known only when traced", "read the leaves field by "
                           "field (a dict's: for k, v in d.items())")
        fields = sorted(value.fields) if value.kind == "dict" else value.fields
        return [leaf for k, v in fields for leaf in _ordered_leaves(
            rw, where, v, f"{path}.{k}", f"{code}[{json.dumps(k)}]" if value.kind == "dict" else f"{code}.{k}")]
    if isinstance(value, TupleValue):
        return [leaf for i, v in enumerate(value.items)
                for leaf in _ordered_leaves(rw, where, v, f"{path}[{i}]", f"{code}[{i}]")]
    if none_value(value):
        return []  # (None: a pytree node without leaves)
    if isinstance(value, Array | Opaque) or isinstance(value, Static) and value.known \
            and type(value.literal) in (bool, int, float, str):  # (a mask's Python bools are leaves too)
        return [(path, value, code)]
    leaf = path or "(the value)"
    raise rw.error(UnsupportedError, where, f"jax.tree.leaves of {rw.ctx.code(where)!r}, whose leaf {leaf} is a "
                   "Python value meshify does not know", "pass a pytree of hinted arrays")


def _global_norm(rw, node: cst.Call) -> Operand:
    """``optax.global_norm(grads)`` of a pytree whose leaves are split differently (a Megatron MLP's weights over
    'model', its norms whole): ``mr.global_norm(grads, {leaf path: the mesh axes it is split over})``, each
    leaf's local sum of squares, summed per set of axes and completed by one psum per set (a list of blocks:
    its items' path ``.blocks.*.w``, every item split alike); a partial sum among the leaves is refused."""
    from meshify.rewrite._containers import _leaves
    from meshify.rewrite.rules._api import Emitted

    short = rw.ctx.code(node.func)
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        raise rw.error(UnsupportedError, node, f"{short}() with other than one pytree", f"{short}(grads)")
    tree = rw.expr(node.args[0].value)
    if _holds_mapping(tree.value):  # (its leaves' paths, which mr.global_norm reads the axes by, are not known)
        raise rw.error(UnsupportedError, node.args[0].value, f"{short}() of {rw.ctx.code(node.args[0].value)!r}, "
                       "which holds a dict of keys known only when traced", "take the norm of each value (for k, v in "
                       "d.items()) and sum their squares")
    axes_of: dict[str, tuple[str, ...]] = {}
    for path, leaf in _leaves(tree.value, ""):
        if isinstance(leaf, Static):
            continue  # (None fields: no leaf)
        if not isinstance(leaf, Array):
            raise rw.error(UnsupportedError, node.args[0].value, f"{short}() of {rw.ctx.code(node.args[0].value)!r}, "
                           f"whose leaf {path or '(the array)'} has dims meshify cannot infer",
                           "pass a pytree of hinted arrays (the parameters' gradients)")
        if leaf.layout.partial:
            raise rw.error(UnsupportedError, node.args[0].value, f"{short}() of {rw.ctx.code(node.args[0].value)!r}, "
                           f"whose leaf {path} is a partial sum", "complete it first (a hint on it), then take the norm")
        axes_of[path] = tuple(a for axes in leaf.layout.axes for a in axes)
    groups = sorted({axes for axes in axes_of.values() if axes})
    code = "{" + ", ".join(f"{json.dumps(p)}: {_axes_literal(a)}" for p, a in axes_of.items()) + "}"
    call = cst.parse_expression(f"{rw.ctx.mr}.global_norm(tree, {code})")
    assert isinstance(call, cst.Call)
    new = call.with_changes(args=[call.args[0].with_changes(value=tree.node), *call.args[1:]])
    emitted = tuple(Emitted("psum", axes, Layout.replicated(()), "", f"psum over {_axes_text(axes)}: {short}() sums "
                            f"the squares of the leaves split over {_axes_text(axes)} on every device, then across "
                            "them") for axes in groups)
    from meshify.rewrite.rules._api import Lowering

    rw.carry_out(Lowering(Array(Layout.replicated(())), emitted=emitted))
    return Operand(Array(Layout.replicated(())), node, new)


def _unknown_key(rw, node: cst.Subscript, base: Operand) -> Operand:
    """``d[k]`` of a dict whose keys meshify knows, ``k`` a key it does not: the one layout its values share
    (whichever ``k`` is, if ``d`` has it); refused where they differ, or where it holds none yet."""
    from meshify.rewrite._containers import common_item

    assert isinstance(base.value, StructValue)
    values = [v for _, v in base.value.fields]
    common = common_item(values) if values else None
    if common is None and first_read(rw, node.value, base.value):
        return Operand(Static(), node, node.with_changes(value=base.node))
    if common is None:
        code = rw.ctx.code(node.value)
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node)}: a key meshify does not know while rewriting, of "
                       f"the dict {code!r}, which holds " + ("no values here (a loop's body is walked first with the "
                                                            "dict it found before the loop)" if not values else
                                                            "values of different layouts"),
                       "read it by a string literal, or keep the value read in a name of its own (prev = h)")
    return Operand(common, node, node.with_changes(value=base.node))


def _holds_mapping(value: Value) -> bool:
    """Whether a pytree is or holds a dict of keys known only when traced (``_mappings``)."""
    if isinstance(value, StructValue):
        return value.kind == "mapping" or any(_holds_mapping(v) for _, v in value.fields)
    return isinstance(value, TupleValue) and any(_holds_mapping(v) for v in value.items)


def _axes_literal(axes: tuple[str, ...]) -> str:
    return "()" if not axes else f'("{axes[0]}",)' if len(axes) == 1 else "(" + ", ".join(f'"{a}"' for a in axes) + ")"


def _axes_text(axes: tuple[str, ...]) -> str:
    return " x ".join(repr(a) for a in axes)


def _optax_loss(rw, node: cst.Call, name: str) -> Operand:
    """``optax.softmax_cross_entropy_with_integer_labels(logits, labels)`` (``softmax_cross_entropy``):
    evaluated as optax defines it (``logsumexp(logits) - take_along_axis(logits, labels)``, each with its
    rule: over a split vocab a masked local lookup and psums), written out in the rewritten code."""
    params, template = _OPTAX_LOSSES[name]
    short = name.rsplit(".", 1)[-1]
    bound: dict[str, cst.BaseExpression] = {}
    for i, arg in enumerate(node.args):
        key = arg.keyword.value if arg.keyword is not None else params[i] if i < len(params) and not arg.star else None
        if key not in params:
            given = arg.keyword.value if arg.keyword is not None else "an argument past those"
            raise rw.error(UnsupportedError, arg, f"optax.{short}() with {rw.ctx.code(arg)!r}",
                           f"pass {', '.join(params)} only ({given}= is not modelled"
                           + (": mask the loss yourself, jnp.where(mask, loss, 0.0))" if given == "where" else ")"))
        bound[key] = arg.value
    for key in params:
        if key not in bound and key in _OPTAX_DEFAULTS:
            bound[key] = cst.parse_expression(_OPTAX_DEFAULTS[key])
    needed = [p for p in params if p != "axis"]
    if any(p not in bound for p in needed):
        raise rw.error(UnsupportedError, node, f"optax.{short}() without {' and '.join(needed)}", "pass them")
    # read twice by the definition: a name reads nothing again (a number is read as it is); an expression is
    # evaluated once, held by a parameter of a lambda called with it: (lambda labels: <definition>)(one_hot(...))
    held: dict[str, Operand] = {}
    for key in needed:
        if template.count("{" + key + "}") > 1 and not read_again(bound[key]) \
                and not isinstance(bound[key], cst.Integer | cst.Float):
            op = rw.expr(bound[key])
            if isinstance(op.value, Array) and op.value.layout.partial:  # (a @ w over a split d: made whole first,
                whole = op.value.layout.with_partial(())                 # outside the lambda that holds it)
                op = Operand(Array(whole, op.value.origin), op.original,
                             rw.convert(op, whole, f"optax.{short}()'s {key} (held for its definition)"))
            held[key] = op
    axis = rw.expr(bound["axis"]).value if "axis" in bound else Static.of(-1)
    if "axis" in params and not (isinstance(axis, Static) and axis.known and type(axis.literal) is int):
        raise rw.error(UnsupportedError, node, f"optax.{short}() with an axis that is not an int literal",
                       "pass one int axis (a tuple of axes is not modelled)")
    spelled = {q: _alias_of(rw, q) for q in ("jax", "jax.numpy")}
    if None in spelled.values():
        # written with jax.numpy's full name, and `import jax` carried into the file (neither module may bind
        # the name jax to anything else)
        if any(c.binds("jax") and c.imports.imports.get("jax") != "jax" for c in (rw.ctx, rw.ctx.root)):
            raise rw.error(UnsupportedError, node, f"optax.{short}() in a module that binds the name jax to "
                           "something else and does not import jax.numpy (meshify writes optax's definition with "
                           "them)", "import jax and jax.numpy (import jax.numpy as jnp)")
        spelled = {"jax": "jax", "jax.numpy": "jax.numpy"}
        if not rw.ctx.root.binds("jax"):
            rw.ctx.root.carried["jax"] = "import jax"
    names = {key: f"{key}_" if key not in rw.env else f"{key}_held" for key in held}
    operands = {key: names[key] if key in held else rw.ctx.code(bound[key]) if read_again(bound[key])
                else f"({rw.ctx.code(bound[key])})" for key in needed}
    code = template.format(jax=spelled["jax"], jnp=spelled["jax.numpy"], axis=axis.literal, **operands)
    definition = cst.parse_expression(code)
    _anchor_all(rw, definition, node)
    saved = {names[k]: rw.env.get(names[k]) for k in held}
    for key, op in held.items():
        rw.env[names[key]] = op.value
        rw.dtypes.bind(names[key], bound[key], op.value, held=True)
    try:
        found = rw.expr(definition)
        rw.dtypes.calls[node] = rw.dtypes.of(definition)
    finally:
        for held_name, value in saved.items():
            if value is None:
                rw.env.pop(held_name, None)
            else:
                rw.env[held_name] = value
    if not held:
        return Operand(found.value, node, found.node)
    fn = cst.Lambda(cst.Parameters([cst.Param(cst.Name(names[k])) for k in held]), found.node,
                    lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return Operand(found.value, node, cst.Call(fn, [cst.Arg(op.node) for op in held.values()]))


def _static_replace(rw, node: cst.Call, receiver: Operand) -> Operand | None:
    """``cfg._replace(clip=0.3)`` of a static config (a NamedTuple of Python values) with static values: a static
    config still (computed where every value is known); None where a value is an array (a pytree of arrays)."""
    values = {}
    for arg in node.args:
        if arg.keyword is None or arg.star:
            return None
        value = rw.expr(arg.value).value
        if not isinstance(value, Static):
            return None
        values[arg.keyword.value] = value
    config = receiver.value
    new = node.with_changes(func=node.func.with_changes(value=receiver.node))  # type: ignore[union-attr]
    if config.known and all(v.known for v in values.values()) and hasattr(config.literal, "_replace"):
        try:
            return Operand(Static.of(config.literal._replace(**{k: v.literal for k, v in values.items()})), node, new)
        except (TypeError, ValueError):
            return None
    return Operand(Static(param=config.param), node, new)


def _anchor_all(rw, tree: cst.CSTNode, anchor: cst.CSTNode) -> None:
    """Every node of a written-out definition reports errors at ``anchor`` (the user's call)."""
    class _Anchors(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            rw.ctx.anchors[node] = anchor
            return True

    tree.visit(_Anchors())


def _replace(rw, node: cst.Call, receiver: Operand) -> Operand:
    """``cache._replace(k=new_k)`` of a NamedTuple meshify holds field by field: the same fields, those named
    taking the values passed."""
    struct = receiver.value
    assert isinstance(struct, StructValue)
    names = [k for k, _ in struct.fields]
    given: dict[str, Value] = {}
    args = []
    for a in node.args:
        if a.keyword is None or a.keyword.value not in names or a.keyword.value in given:
            raise rw.error(LayoutError, a, f"{rw.ctx.code(node.func)}() takes fields of {struct.cls} by name "
                           f"({', '.join(names)})", f"write {rw.ctx.code(node.func)}({names[0]}=...)")
        op = rw.expr(a.value)
        given[a.keyword.value] = op.value
        args.append(a.with_changes(value=op.node))
    fields = tuple((k, given.get(k, v)) for k, v in struct.fields)
    return Operand(replace(struct, fields=fields), node,
                   node.with_changes(func=node.func.with_changes(value=receiver.node), args=args))


def _dataclass_replace(rw, node: cst.Call) -> Operand | None:
    """``dataclasses.replace(params, w=new_w)`` of a dataclass meshify holds field by field: as a NamedTuple's
    ``_replace``, the fields named taking the values passed; None where the first argument is no such struct."""
    if not node.args or node.args[0].keyword is not None or node.args[0].star:
        return None
    receiver = rw.expr(node.args[0].value)
    if not (isinstance(receiver.value, StructValue) and receiver.value.kind == "dataclass"):
        return None
    rest = node.with_changes(args=node.args[1:])
    made = _replace(rw, rest, receiver)
    new = node.with_changes(args=[node.args[0].with_changes(value=receiver.node), *made.node.args])  # type: ignore[attr-defined]
    return Operand(made.value, node, new)


def _dict_get(rw, node: cst.Call, receiver: Operand) -> Operand:
    """``kwargs.get("act", jax.nn.gelu)`` on a dict meshify holds key by key (a helper's ``**kwargs``, a
    dict parameter): the value under that key, else the default (a function it names is that function)."""
    struct = receiver.value
    assert isinstance(struct, StructValue)
    args = [a for a in node.args if a.keyword is None and not a.star]
    key = rw.expr(args[0].value).value if args and len(node.args) == len(args) <= 2 else None
    common = common_item([v for _, v in struct.fields]) if struct.fields else None
    if isinstance(key, Static) and not key.known and isinstance(common, Array) and not common.layout.partial:
        # cache.get(f"l{i}"), its values of one layout: the one it gives, or the default (or None) in it
        return mapping_get(rw, node, receiver, common)
    if isinstance(key, Static) and not key.known and first_read(rw, node.func.value, struct):  # type: ignore[attr-defined]
        if len(args) == 2 and not (isinstance(args[1].value, cst.Name) and args[1].value.value == "None"):
            # outs.get(i - 1, x) in the first walk of a loop carrying outs = {}: empty, so the default (the next walk
            # reads a dict of the values the body stores, the default given their layout: mapping_get)
            key_node, default = rw.expr(args[0].value).node, rw.expr(args[1].value)
            return Operand(default.value, node, node.with_changes(func=node.func.with_changes(value=receiver.node),
                                                                  args=[args[0].with_changes(value=key_node),
                                                                        args[1].with_changes(value=default.node)]))
        if len(node.args) == len(args) <= 2:  # outs.get(i - 1) there: None (if prev is None: takes that branch)
            new_args = [a.with_changes(value=rw.expr(a.value).node) for a in node.args]
            return Operand(Static.of(None), node, node.with_changes(func=node.func.with_changes(value=receiver.node),
                                                                    args=new_args))
        return mapping_get(rw, node, receiver, Static())
    if not (isinstance(key, Static) and key.known and isinstance(key.literal, str)):
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node.func)}() with a key meshify cannot read",
                       f"read it by a literal key: {rw.ctx.code(node.func.value)}.get(\"name\", default)")  # type: ignore[attr-defined]
    value = struct.field(key.literal)
    new_args = list(node.args)
    absent = value is None and isinstance(node.func.value, cst.Name) \
        and any(node.func.value.value in names for names in rw.loop_carried)  # type: ignore[attr-defined]
    if value is None:
        if len(args) < 2:
            value = Static.of(None)
        else:
            default = rw.expr(args[1].value)
            shadowed = set(rw.env) | set(rw.free) | set(rw.ctx.enclosing_names(rw.fn))
            ref = function_ref(rw.ctx, args[1].value, shadowed) \
                if isinstance(default.value, Static | Opaque) and not getattr(default.value, "known", False) else None
            value = Static.of(ref) if ref is not None and not ref.helper else default.value
            new_args[1] = node.args[1].with_changes(value=default.node)
    if absent:  # (checked against what the loop's body stores there: _interp._check_absent_reads)
        rw.absent_reads.setdefault((node.func.value.value, key.literal), (node, value))  # type: ignore[attr-defined]
    return Operand(value, node, node.with_changes(func=node.func.with_changes(value=receiver.node), args=new_args))


def _is_getattr_of_module(rw, func: cst.BaseExpression) -> bool:
    return isinstance(func, cst.Call) and isinstance(func.func, cst.Name) and func.func.value == "getattr" \
        and "getattr" not in rw.env and not rw.ctx.binds("getattr") and len(func.args) == 2 \
        and not any(a.keyword or a.star for a in func.args) and isinstance(func.args[0].value, cst.Name | cst.Attribute) \
        and _is_module_path(rw, func.args[0].value)


def _getattr_call(rw, node: cst.Call, func: cst.Call) -> Operand:
    """``getattr(jax.nn, name)(h)``: the function of that module ``name`` reads where meshify reads it (a
    constant); else taken for an elementwise function of one array, checked when JAX traces the call."""
    name = rw.expr(func.args[1].value)
    if not isinstance(name.value, Static):
        raise rw.error(UnsupportedError, func, "getattr with a name that is an array", "pass a string")
    modules = sorted(rw.ctx.qualified_names(func.args[0].value))
    if name.value.known and isinstance(name.value.literal, str):
        rule_name = next((f"{m}.{name.value.literal}" for m in modules
                          if f"{m}.{name.value.literal}" in REGISTRY), None)
        if rule_name is not None:
            call = _evaluate_args(rw, node, rule_name, None)
            closed_world(rw.rule_context(), call, rule_name)
            value, new = rw.lower(call, REGISTRY[rule_name](rw.rule_context(), call))
            if rule_name in UNARY:
                rw.elementwise_calls.add(node)  # its dtype is its operand's
            return Operand(value, node, new)
    held = _held_elementwise(rw, node, func, checked=True)
    if held is not None:
        return held
    call = _evaluate_args(rw, node, rw.ctx.code(func), None)
    value, new = rw.lower(call, unknown_call(rw.rule_context(), call))
    return Operand(value, node, new)


def _mask_argument(node: cst.Call, rule_name: str | None) -> cst.BaseExpression | None:
    """The argument a call reads as a boolean mask: ``jnp.where``'s condition, ``mask=`` of attention, the
    ``where=`` of a reduction or softmax (``x.mean(where=m)`` too)."""
    if rule_name == "jax.numpy.where" and node.args and node.args[0].keyword is None:
        return node.args[0].value
    where = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "where"), None)
    if where is not None:
        return where
    if rule_name in ("jax.nn.dot_product_attention", "jax.numpy.where"):
        return next((a.value for a in node.args if a.keyword is not None
                     and a.keyword.value == ("mask" if rule_name != "jax.numpy.where" else "condition")), None)
    return None


def _function_table(rw, func: cst.Subscript) -> dict[object, str] | None:
    """``ACT[...]`` of a module-level dict literal whose every value is a jax function meshify has a rule for
    (``ACT = {"gelu": jax.nn.gelu, "relu": jax.nn.relu}``): key -> that rule's name; else None."""
    import ast

    from meshify.rewrite._helpers import function_ref

    base = func.value
    if not isinstance(base, cst.Name) or base.value in rw.env or base.value in rw.free or len(func.slice) != 1:
        return None
    literal = rw.ctx.assignments.get(base.value)
    if not isinstance(literal, cst.Dict) or not literal.elements or base.value in rw.ctx.declared_global:
        return None
    table: dict[object, str] = {}
    for element in literal.elements:
        if not isinstance(element, cst.DictElement):
            return None
        ref = function_ref(rw.ctx, element.value)
        rule = next((n for n in sorted(ref.names) if n in REGISTRY), None) if ref is not None and not ref.helper else None
        try:
            key = ast.literal_eval(rw.ctx.code(element.key))
        except (ValueError, SyntaxError):
            return None
        if rule is None:
            return None
        table[key] = rule
    return table


def _dict_call(rw, node: cst.Call) -> Operand:
    """``dict(last=h, pooled=p)``: evaluated as the literal ``{"last": h, "pooled": p}`` it builds, written back
    as the call with each value's node."""
    import json

    literal = cst.Dict([cst.DictElement(cst.SimpleString(json.dumps(a.keyword.value)), a.value)  # type: ignore
                        for a in node.args])
    rw.ctx.anchors[literal] = node
    op = rw.expr(literal)
    if not isinstance(op.node, cst.Dict) or len(op.node.elements) != len(node.args):
        return Operand(op.value, node, op.node)
    args = [a.with_changes(value=e.value) for a, e in zip(node.args, op.node.elements)]
    return Operand(op.value, node, node.with_changes(args=args))


def _dict_copy(rw, node: cst.Call, source: cst.BaseExpression, keywords) -> Operand | None:
    """``dict(cache)``, ``dict(cache, k=k)``, ``cache.copy()`` of a name holding a dict of arrays meshify follows:
    evaluated as ``{**cache, "k": k}``, written back as the call with each value's node; None where ``source``
    is no such name."""
    held = rw.env.get(source.value) if isinstance(source, cst.Name) else None
    if mapping_item(held) is not None:  # dict(outs, extra=y), outs a dict of keys known only when traced
        joined = joined_mapping(rw, cst.Dict([cst.StarredDictElement(source), *(cst.DictElement(
            cst.SimpleString(repr(a.keyword.value)), a.value) for a in keywords)]), where=node)
        op = Operand(joined.value, source, joined.node.elements[0].value)  # type: ignore[attr-defined]
        values = [e.value for e in joined.node.elements[1:]]  # type: ignore[attr-defined]
        args = [a.with_changes(value=v) for a, v in zip(keywords, values)]
        new = node.with_changes(func=node.func.with_changes(value=op.node)) if isinstance(node.func, cst.Attribute) \
            else node.with_changes(args=[node.args[0].with_changes(value=op.node), *args])
        return Operand(joined.value, node, new)
    if not (isinstance(held, StructValue) and held.kind == "dict"):
        return None  # (not evaluated here: the call is then evaluated as written)
    op = rw.expr(source)
    fields = dict(held.fields)
    args = []
    for a in keywords:
        item = rw.expr(a.value)
        fields[a.keyword.value] = item.value
        args.append(a.with_changes(value=item.node))
    value = StructValue("dict", tuple(fields.items()), "dict")
    if isinstance(node.func, cst.Attribute):
        return Operand(value, node, node.with_changes(func=node.func.with_changes(value=op.node)))
    return Operand(value, node, node.with_changes(args=[node.args[0].with_changes(value=op.node), *args]))


def _entry_table(rw, func: cst.Subscript) -> list[tuple[object, cst.DictElement]] | None:
    """``ACT2FN[...]`` of a module-level dict literal with literal keys whose values are functions meshify can
    call (a def of the module, ``functools.partial(jax.nn.gelu, approximate=False)``, a lambda, a jax function):
    its (key, element) pairs; None where it is no such table, or names in an entry are bound here otherwise."""
    import ast

    base = func.value
    if not isinstance(base, cst.Name) or base.value in rw.env or base.value in rw.free or len(func.slice) != 1 \
            or not isinstance(func.slice[0].slice, cst.Index):
        return None
    literal = rw.ctx.assignments.get(base.value)
    if not isinstance(literal, cst.Dict) or not literal.elements or base.value in rw.ctx.declared_global:
        return None
    out = []
    for element in literal.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(
                element.value, cst.Name | cst.Attribute | cst.Call | cst.Lambda):
            return None
        if any(n in rw.env or n in rw.free for n in _free_names(element.value)):
            return None  # a name the entry reads is bound otherwise here
        try:
            out.append((ast.literal_eval(rw.ctx.code(element.key)), element))
        except (ValueError, SyntaxError):
            return None
    return out


def _entries_call(rw, node: cst.Call, func: cst.Subscript, entries: list[tuple[object, cst.DictElement]]) -> Operand:
    """``ACT2FN[cfg.act](h)``, the table's entries defs, partials or lambdas: each entry the key may pick called
    with these arguments as the code calls it (a def specialised); their results must agree.  Written as the
    user wrote it where no entry changes; else the table is spelled out inline with each entry's version
    (``{"gelu": _gelu_exact__v1, "relu": jax.nn.relu}[cfg.act](h)``), so a key not in it still raises KeyError."""
    key = rw.expr(func.slice[0].slice.value)  # type: ignore[attr-defined]
    if not isinstance(key.value, Static):
        raise rw.error(UnsupportedError, func, f"{rw.ctx.code(func)} picks a function by a traced array",
                       "pick it by a static value (a string or int from the config)")
    picked = [(k, e) for k, e in entries if not key.value.known or k == key.value.literal]
    if not picked:
        raise rw.error(LayoutError, func, f"{rw.ctx.code(func)}: the key {key.value.literal!r} is not in "
                       f"{rw.ctx.code(func.value)}", f"use one of {', '.join(repr(k) for k, _ in entries)}")
    calls: list[tuple[cst.DictElement, Operand]] = []
    uses: list[str] = []
    for i, (_, element) in enumerate(picked):
        mark = rw.mark()
        calls.append((element, _entry_call(rw, node, element.value)))
        uses.extend(rw.uses[mark.uses:])
        if i < len(picked) - 1:
            rw.rollback(mark)
    rw.uses.extend(u for u in uses if u not in rw.uses)
    value = calls[-1][1].value
    codes = [_code(op.node.args) if isinstance(op.node, cst.Call) else None for _, op in calls]
    if any(op.value != value for _, op in calls) or None in codes or len(set(codes)) != 1:
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(func)}(...) may call any of "
                       f"{', '.join(rw.ctx.code(e.value) for e, _ in calls)}, which need different code or layouts "
                       "for these arguments, and meshify does not know the key when rewriting",
                       "complete the arguments first (pin them with a hint), or call the functions by name under an "
                       "if on the key")
    last = calls[-1][1].node
    assert isinstance(last, cst.Call)
    if len(picked) == 1 and len(entries) > 1 and key.value.known:
        return Operand(value, node, last)  # the key is a constant meshify reads: the entry it picks
    kept = all(_code(_bare(op.node.func)) == _code(_bare(e.value)) for e, op in calls)  # type: ignore[union-attr]
    if kept:
        table = func.with_changes(slice=[func.slice[0].with_changes(slice=cst.Index(key.node))])
    else:
        versions = {id(e): op.node.func for e, op in calls}  # type: ignore[union-attr]
        spelled = cst.Dict([cst.DictElement(e.key, versions.get(id(e), e.value)) for _, e in entries])
        table = cst.Subscript(spelled, [cst.SubscriptElement(cst.Index(key.node))])
    return Operand(value, node, last.with_changes(func=table))


def _entry_call(rw, node: cst.Call, entry: cst.BaseExpression) -> Operand:
    """``node`` (``ACT2FN[k](h)``) calling ``entry`` instead, evaluated; its node ``entry'(h')``.  A
    ``functools.partial(f, *a, **kw)`` entry is evaluated as ``f(*a, h, **kw)`` and written back as the partial
    called with ``h'`` (where the partial's own arguments come back unchanged)."""
    partial_of = entry.args[0].value if isinstance(entry, cst.Call) and entry.args and not entry.args[0].keyword \
        and isinstance(entry.func, cst.Name | cst.Attribute) \
        and rw.ctx.qualified_names(entry.func) & {"functools.partial"} else None
    if isinstance(entry, cst.Lambda):  # walked for the arguments, as a lambda passed to a helper is
        from meshify.rewrite._bodies import walk_lambda

        call = _evaluate_args(rw, node, rw.ctx.code(node.func), None)
        if call.kwargs:
            raise rw.error(UnsupportedError, node, f"keyword arguments to {rw.ctx.code(node.func)}, a lambda",
                           "pass the lambda's arguments by position")
        value, new = walk_lambda(rw, entry, [o.value for o in call.args], what=f"{rw.ctx.code(node.func)}'s",
                                 passed=[o.original for o in call.args])
        lam = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if not new.lpar else new
        return Operand(value, node, cst.Call(lam, [cst.Arg(o.node) for o in call.args]))
    if partial_of is None:
        synthetic = node.with_changes(func=entry)
        rw.ctx.anchors[synthetic] = node
        return rw.expr(synthetic)
    assert isinstance(entry, cst.Call)
    bound = [a for a in entry.args[1:] if a.keyword is None and not a.star]
    named = [a for a in entry.args[1:] if a not in bound]
    synthetic = cst.Call(partial_of, [*bound, *node.args, *named])
    rw.ctx.anchors[synthetic] = node
    op = rw.expr(synthetic)
    if not isinstance(op.node, cst.Call) or len(op.node.args) != len(synthetic.args) or _code(
            [*op.node.args[:len(bound)], *op.node.args[len(bound) + len(node.args):]]) != _code([*bound, *named]):
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node.func)}(...) calls {rw.ctx.code(entry)}, whose "
                       "bound arguments would need other code for these arguments", "call the function by name")
    return Operand(op.value, node, cst.Call(entry, list(op.node.args[len(bound):len(bound) + len(node.args)])))


def _unary_partial(rw, name: str) -> bool:
    """Whether the module binds ``name`` to a ``functools.partial`` of an elementwise function (``elu =
    functools.partial(jax.nn.elu, alpha=1.0)``): called as what it holds when traced, as an alias of one is."""
    from meshify._unary import UNARY

    value = rw.ctx.assignments.get(name)
    return isinstance(value, cst.Call) and bool(rw.ctx.qualified_names(value.func) & {"functools.partial"}) \
        and bool(value.args) and value.args[0].keyword is None and not value.args[0].star \
        and isinstance(value.args[0].value, cst.Name | cst.Attribute) \
        and bool(rw.ctx.qualified_names(value.args[0].value) & UNARY.keys())


def _partial_alias_call(rw, node: cst.Call, partial: cst.Call) -> Operand:
    """``einsum(a, b)`` where the module binds ``einsum = partial(jnp.einsum, precision="highest")``: evaluated
    as ``jnp.einsum(a, b, precision="highest")``, the function's rule; written back as ``einsum(a', b')``
    where the rule keeps the function and the partial's arguments, else as the call the rule wrote."""
    bound = [a for a in partial.args[1:] if a.keyword is None]
    named = [a for a in partial.args[1:] if a.keyword is not None]
    given = {a.keyword.value for a in node.args if a.keyword is not None}
    named = [a for a in named if a.keyword.value not in given]  # (a keyword the call gives replaces the partial's)
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in [*bound, *node.args, *named]]
    synthetic = cst.Call(partial.args[0].value, args)
    rw.ctx.anchors[synthetic] = node
    rw.dtypes.aliases[node] = synthetic
    op = rw.expr(synthetic)
    new = op.node
    if isinstance(new, cst.Call) and len(new.args) == len(args) and _code(new.func) == _code(synthetic.func) \
            and _code([*new.args[:len(bound)], *new.args[len(bound) + len(node.args):]]) == _code([*bound, *named]):
        new = node.with_changes(args=list(new.args[len(bound):len(bound) + len(node.args)]))
    return Operand(op.value, node, new)


def _bare(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.with_changes(lpar=[], rpar=[]) if isinstance(node, cst.Lambda) else node


def _free_names(node: cst.CSTNode) -> set[str]:
    """The names an expression reads from its scope: an attribute path's root, not its attributes; not a
    keyword's name; not a lambda's own parameters, nor a comprehension's targets."""
    found: set[str] = set()

    class _Gather(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)
            return False

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            p = n.params
            own = {q.name.value for q in (*p.posonly_params, *p.params, *p.kwonly_params)} | {
                q.name.value for q in (p.star_arg, p.star_kwarg) if isinstance(q, cst.Param)}
            found.update(_free_names(n.body) - own)
            return False

        def _comprehension(self, n) -> bool:  # (its targets are its own, as a lambda's parameters are)
            own: set[str] = set()
            read: set[str] = set()
            clause = n.for_in
            while clause is not None:
                own |= _free_names(clause.target)
                read |= _free_names(clause.iter).union(*(_free_names(c.test) for c in clause.ifs))
                clause = clause.inner_for_in
            parts = (n.key, n.value) if isinstance(n, cst.DictComp) else (n.elt,)
            found.update((read | set().union(*(_free_names(e) for e in parts))) - own)
            return False

        visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

    node.visit(_Gather())
    return found


def _code(node: object) -> str:
    nodes = node if isinstance(node, list | tuple) else [node]
    return "\x00".join(cst.Module([]).code_for_node(n) for n in nodes)  # type: ignore[arg-type]


def _table_call(rw, node: cst.Call, func: cst.Subscript, table: dict[object, str]) -> Operand:
    """``ACT[key](h)``: the rule of the function the key picks where meshify reads the key; else each
    function's, which must agree on the result and run as written (no collective), so that whichever
    the key picks when the program runs is right."""
    key = rw.expr(func.slice[0].slice.value)  # type: ignore[attr-defined]
    if not isinstance(key.value, Static):
        raise rw.error(UnsupportedError, func, f"{rw.ctx.code(func)} picks a function by a traced array",
                       "pick it by a static value (a string or int from the config)")
    if key.value.known and key.value.literal in table:
        names = [table[key.value.literal]]
    else:
        names = list(dict.fromkeys(table.values()))
    results = []
    for rule_name in names:
        mark = rw.mark()
        call = _evaluate_args(rw, node, rule_name, None)
        closed_world(rw.rule_context(), call, rule_name)
        value, new = rw.lower(call, REGISTRY[rule_name](rw.rule_context(), call))
        results.append((value, new))
        if rule_name != names[-1]:
            rw.rollback(mark)
    value, new = results[-1]
    if len(names) == 1:
        return Operand(value, node, new)
    plain = [isinstance(n, cst.Call) and n.func is node.func for _, n in results]
    if not all(plain) or any(v != value for v, _ in results):
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(func)}(...) may call any of "
                       f"{', '.join(sorted(set(names)))}, which need different code or layouts here, and meshify "
                       "does not know the key when rewriting",
                       "bind the key to a constant meshify reads (a module-level literal), or call the functions "
                       "by name under an if on the key")
    return Operand(value, node, new)


def _call_lambda(rw, node: cst.Call, ref: LambdaRef) -> Operand:
    """``fn(h)`` in a helper, ``fn`` a lambda its caller passed: the lambda walked where it was written, for
    the values passed here (its records and comments are its writer's); the call is kept."""
    from meshify.rewrite._bodies import partial_lambda, walk_lambda

    call = _evaluate_args(rw, node, rw.ctx.code(node.func), None)
    if call.kwargs:
        raise rw.error(UnsupportedError, node, "keyword arguments to a lambda passed in",
                       "pass the lambda's arguments by position")
    # a float16/bfloat16 partial sum accumulated in float32 is completed (cast back) here, where its dtype's
    # names exist: inside the lambda, written elsewhere, they do not
    args = [rw.complete_widened(o, "the lambda passed in") for o in call.args]
    owner = ref.owner
    start = len(owner.records)
    lam = partial_lambda(ref.node, len(args)) if ref.partial else ref.node
    value, new = walk_lambda(owner, lam, [o.value for o in args],
                             what=f"the {'functools.partial' if ref.partial else 'lambda'} passed to "
                                  f"{'.'.join(rw.stack[-1:])}()'s")
    _records_run_here(rw, owner, start, ref.node, list(call.args))
    code = owner.ctx.code(new)
    if ref.walked and ref.walked[0][0] != code:
        raise rw.error(UnsupportedError, node, "a lambda passed in is called with values of other layouts than at "
                       "its first call, so it would need two codes", "pass a module-level def instead (it is "
                       "specialised per call), or call the lambda with values of one layout")
    ref.walked.append((code, new))
    return Operand(value, node, _with_operands(node, args))


def _call_passed_def(rw, node: cst.Call, ref: LocalRef) -> Operand:
    """``fn(h)`` in a helper, ``fn`` a nested def its caller passed: the def rewritten where it was defined,
    for the values passed here (one version: emit_defs refuses a passed def needing two); the call is kept."""
    from meshify.rewrite._nested import _bind, walk_local

    call = _evaluate_args(rw, node, rw.ctx.code(node.func), None)
    completed = [rw.complete_widened(o, f"{ref.local.name}() passed in") for o in (*call.args, *call.kwargs.values())]
    call = replace(call, args=tuple(completed[:len(call.args)]), kwargs=dict(zip(call.kwargs, completed[len(call.args):])))
    local = ref.local
    bound = _bind(ref.owner, local, call, node)
    # blind: the helper cannot name what the def's result dtype is, so a float16/bfloat16 partial sum
    # accumulated in float32 is completed (and cast back) inside the def, as a loop body's is
    start = len(ref.owner.records)
    result, _sub, _name = walk_local(ref.owner, local, bound, node, blind=True)
    _records_run_here(rw, ref.owner, start, local.node, [*call.args, *call.kwargs.values()])
    return Operand(result, node, _with_operands(node, completed))


def _records_run_here(rw, owner, start: int, tag: cst.CSTNode, operands: list) -> None:
    """The records a lambda or nested def passed in (``tag``, its node) made in its writer ``owner`` (from
    ``start``) moved to the helper ``rw`` calling it with ``operands``: its collectives run inside the
    helper's loops (``for _ in range(3): h = fn(h)`` runs them 3 times), and are carried to the writer with
    the helper's other records.  A record of one of the writer's values (it has an identity) is the same
    value at each iteration of the helper's Python loops (not of a scan: XLA runs it again); one the
    function's parameters decide is the same value where the same function gets the same arguments
    (``h = h + fn(x)``: XLA computes ``fn(x)`` once), told apart by its place in the walk."""
    moved = owner.records[start:]
    del owner.records[start:]
    depth = len(owner.loops)
    scopes = [rw._record_scope(o.original) for o in operands]
    known = all(identity is not None for identity, _ in scopes)
    same_args = tuple(all(flags) for flags in zip(*(flags for _, flags in scopes))) if scopes and known \
        else tuple(known for _ in rw.loops)
    python_loops = [names is not None for names in rw._loop_names]
    key = (tag, tuple(identity for identity, _ in scopes))
    for i, r in enumerate(moved):
        value = r.value if r.value is not None else (key, i) if known else None
        outer = (p and (r.value is not None or same) for p, same in zip(python_loops, same_args))
        rw.records.append(replace(r, loops=(*rw.loops, *r.loops[depth:]), value=value, statement=rw._top, binds="",
                                  invariant=(*outer, *(r.invariant or (False,) * len(r.loops))[depth:])))


def _with_operands(node: cst.Call, operands) -> cst.Call:
    """``node`` with each argument's value replaced by its operand's (converted) node, in order."""
    return node.with_changes(args=[a.with_changes(value=o.node) for a, o in zip(node.args, operands)])


def _lambdas_walked(rw, call: Call, new: cst.BaseExpression) -> cst.BaseExpression:
    """A helper's call with each lambda passed to it replaced by its walked code (its collectives converted
    where the helper called it); a lambda the helper never called stays as written."""
    if not isinstance(new, cst.Call):
        return new
    walked = {id(o.original): o.value.literal.walked[0][1] for o in (*call.args, *call.kwargs.values())
              if isinstance(o.value, Static) and isinstance(o.value.literal, LambdaRef) and o.value.literal.walked
              and (o.original is o.value.literal.node  # written here (not a parameter passing one on)
                   or isinstance(o.original, cst.Name)  # a module's partial alias (apply(total, x)) passed here
                   and rw.ctx.partial_aliases.get(o.original.value) is o.value.literal.node)}
    if not walked:
        return new
    return new.with_changes(args=[a.with_changes(value=walked[id(a.value)]) if id(a.value) in walked else a
                                  for a in new.args])


def _static_cast(rw, node: cst.Call, receiver: Operand) -> Operand:
    """``jnp.sqrt(q.shape[-1]).astype(x.dtype)``: a number computed from static values, cast, is the
    same number on every device (a scalar, as the uncast one is)."""
    call = _evaluate_args(rw, node, "astype", receiver)
    args = [a.with_changes(value=o.node) for a, o in zip(node.args, [*call.args, *call.kwargs.values()])]
    return Operand(Static(), node, node.with_changes(func=node.func.with_changes(value=receiver.node), args=args))


#: Joins of a list whose items may stay partial sums (the join is one, over the same axes): ``jnp.stack([h @ w for
#: h in hs])`` is completed once, where its consumer needs it (``jnp.sum(..., 0)`` first: the sum's block).
_LINEAR_JOINS = frozenset({"jax.numpy.stack", "jax.numpy.concatenate", "jax.numpy.concat", "jax.numpy.hstack",
                           "jax.numpy.vstack", "jax.numpy.column_stack"})


def _evaluate_args(rw, node: cst.Call, name: str, receiver, helper: bool = False) -> Call:
    """The call's arguments evaluated, each once: a list or tuple literal item by item (the rule reads
    each item's operand, :attr:`Call.items`), and a shape (``y.shape``) entry by entry as well
    (:attr:`Call.entries`).  ``helper``: the call of a module def, to which a lambda may be passed
    (:class:`LambdaRef`; walked where the helper calls it)."""
    args, kwargs = [], {}
    items: dict[cst.CSTNode, Operand] = {}
    entries: dict[cst.CSTNode, tuple[Operand, ...]] = {}
    if any(a.star for a in node.args):
        node = _stars_spelled_out(rw, node, name)
    if name in ("builtins.sum", "sum") and node.args and isinstance(node.args[0].value, cst.GeneratorExp):
        rw.order_free.add(node.args[0].value)  # sum(jnp.sum(v ** 2) for v in params.values()): any order
    if name in ("builtins.sum", "sum") and node.args and isinstance(node.args[0].value, cst.GeneratorExp | cst.ListComp):
        rw.summed.add(node.args[0].value)  # sum(h @ w for h in hs): one psum after the sum, not one per item
    if name in _LINEAR_JOINS and node.args and node.args[0].keyword is None and not node.args[0].star \
            and isinstance(node.args[0].value, cst.ListComp):
        rw.summed.add(node.args[0].value)  # jnp.stack([h @ w for h in hs]): a join is linear, one psum of the stack
    if name == "functools.reduce" and len(node.args) >= 2 and isinstance(node.args[1].value, cst.GeneratorExp
                                                                          | cst.ListComp):
        from meshify.rewrite.rules.elementwise import fold_linearity

        if fold_linearity(rw.ctx, node.args[0].value) == ADD:  # functools.reduce(operator.add, [x @ w for w in ws])
            rw.summed.add(node.args[1].value)
    if any(isinstance(a.value, cst.BinaryOperation) or (isinstance(a.value, cst.Tuple) and any(
            isinstance(e, cst.StarredElement) for e in a.value.elements)) for a in node.args):
        node = _shape_sums_spelled_out(rw, node)
    for arg in node.args:
        if name in BODY_OPS and (_walked(rw, arg.value) or (isinstance(arg.value, cst.List | cst.Tuple) and any(
                _walked(rw, e.value) for e in arg.value.elements))):
            operand = Operand(Static(), arg.value, arg.value)  # walked as its rule says (a switch: each branch)
        elif helper and isinstance(arg.value, cst.Lambda):
            operand = Operand(Static.of(LambdaRef(arg.value, rw)), arg.value, arg.value)
        elif helper and _partial(rw, arg.value):
            operand = Operand(Static.of(LambdaRef(arg.value, rw, partial=True)), arg.value, arg.value)
        elif helper and isinstance(arg.value, cst.Name) and arg.value.value in rw.ctx.partial_aliases \
                and arg.value.value not in rw.env and arg.value.value not in rw.free:
            # apply(total, x), total = partial(jnp.sum, axis=-1) in the module: the partial it holds, as if written
            rw.ctx.aliases_read.add(arg.value.value)
            partial_node = rw.ctx.partial_aliases[arg.value.value]
            operand = Operand(Static.of(LambdaRef(partial_node, rw, partial=True)), arg.value, arg.value)
        elif helper and isinstance(arg.value, cst.Name) and local_def(rw, arg.value.value) is not None:
            local = local_def(rw, arg.value.value)
            local.passed = arg.value  # type: ignore[union-attr]
            operand = Operand(Static.of(LocalRef(local, rw)), arg.value, arg.value)
        elif isinstance(arg.value, cst.List | cst.Tuple):
            evaluated = [rw.expr(e.value) for e in arg.value.elements]
            items.update((e.value, i) for e, i in zip(arg.value.elements, evaluated))
            operand = _sequence(rw, arg.value, evaluated, strict=False)
        else:
            operand = rw.expr(arg.value)
            shape: tuple[str, ...] | None = operand.value.shape_of if isinstance(operand.value, Static) else None
            if shape and read_again(arg.value, keys=False):  # y.shape[i], read as the user would write it
                entries[arg.value] = tuple(rw.expr(cst.Subscript(arg.value, [cst.SubscriptElement(
                    cst.Index(int_node(i)))])) for i in range(len(shape)))
        if arg.keyword is None:
            args.append(operand)
        else:
            kwargs[arg.keyword.value] = operand
    return Call(node, name, tuple(args), kwargs, receiver, items=items, entries=entries)


def _stars_spelled_out(rw, node: cst.Call, name: str) -> cst.Call:
    """``f(*xs)``, ``g(h, **kw)`` where ``xs`` holds a tuple and ``kw`` a dict of known keys (a helper's
    ``*args``/``**kwargs``): the call with each item passed on its own (``f(xs[0], xs[1])``,
    ``g(h, act=kw["act"])``), which is what Python passes."""
    args: list[cst.Arg] = []
    for arg in node.args:
        if not arg.star:
            args.append(arg)
            continue
        value = rw.expr(arg.value).value if isinstance(arg.value, cst.Name) or arg.star == "*" else None
        if arg.star == "*" and isinstance(value, TupleValue):
            args += [cst.Arg(cst.Subscript(arg.value, [cst.SubscriptElement(cst.Index(int_node(i)))]))
                     for i in range(len(value.items))]
        elif arg.star == "*" and isinstance(value, Static) and value.shape_of is not None:
            # x.reshape(*x.shape[:-1], H, D): each size of the shape on its own, read off its dim
            args += [cst.Arg(cst.Subscript(arg.value, [cst.SubscriptElement(cst.Index(int_node(i)))]))
                     for i in range(len(value.shape_of))]
        elif arg.star == "**" and isinstance(value, StructValue) and value.kind == "dict" \
                and all(isinstance(k, str) and k.isidentifier() for k, _ in value.fields):
            tight = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
            args += [cst.Arg(cst.Subscript(arg.value, [cst.SubscriptElement(cst.Index(cst.SimpleString(repr(k))))]),
                             keyword=cst.Name(k), equal=tight) for k, _ in value.fields]
        else:
            raise rw.error(UnsupportedError, arg, f"*args/**kwargs in a call to {name}",
                           "pass arguments one by one (a helper's own *args or **kwargs may be passed on as they are)")
    spelled = node.with_changes(args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args])
    rw.ctx.anchors[spelled] = node
    rw.dtypes.spelled[node] = spelled  # its dtype is the spelled-out call's
    return spelled


def _shape_sums_spelled_out(rw, node: cst.Call) -> cst.Call:
    """``x.reshape(x.shape[:-1] + (H, D))``, ``jnp.zeros(x.shape[:1] + (n,))``: a shape concatenated with a
    tuple literal (or another shape) is passed as the tuple literal of its entries, ``(x.shape[0], H, D)``,
    which a rule reads entry by entry as it reads a literal shape."""
    args = []
    for arg in node.args:
        entries = _shape_sum_entries(rw, arg.value) if isinstance(arg.value, cst.BinaryOperation) or (
            isinstance(arg.value, cst.Tuple) and any(isinstance(e, cst.StarredElement) for e in arg.value.elements)) \
            else None
        args.append(arg if entries is None else arg.with_changes(
            value=cst.Tuple([cst.Element(e) for e in entries] if len(entries) != 1 else
                            [cst.Element(entries[0], comma=cst.Comma())])))
    if all(a is b for a, b in zip(args, node.args)):
        return node
    spelled = node.with_changes(args=args)
    rw.ctx.anchors[spelled] = node
    rw.dtypes.spelled[node] = spelled
    return spelled


def _shape_sum_entries(rw, node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The entries of ``a + b`` where each side is a shape of known dims (``x.shape[:-1]``) or a tuple
    literal, concatenated; None for anything else (an arithmetic sum)."""
    if isinstance(node, cst.Tuple):  # (n, *x.shape): a starred shape's entries spelled out in their place
        entries: list[cst.BaseExpression] = []
        for e in node.elements:
            inner = _shape_sum_entries(rw, e.value) if isinstance(e, cst.StarredElement) and _is_shape(rw, e.value) \
                else None if isinstance(e, cst.StarredElement) else [e.value]
            if inner is None:
                return None
            entries += inner
        return entries
    if isinstance(node, cst.BinaryOperation):
        if not isinstance(node.operator, cst.Add):
            return None
        left, right = _shape_sum_entries(rw, node.left), _shape_sum_entries(rw, node.right)
        if left is None or right is None or not (_is_shape(rw, node.left) or _is_shape(rw, node.right)):
            return None
        return left + right
    value = rw.expr(node).value if _is_shape(rw, node) else None
    if not (isinstance(value, Static) and value.shape_of is not None):
        return None
    start = None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:  # x.shape[1:] item i is x.shape[1 + i]
        bounds = _literal_slice(rw, node.slice[0])
        if bounds is not None and (bounds[0] or 0) >= 0 and bounds[2] in (None, 1):
            start = bounds[0] or 0
    if start is not None:
        base = node.value  # type: ignore[attr-defined]
        return [cst.Subscript(base, [cst.SubscriptElement(cst.Index(int_node(start + i)))])
                for i in range(len(value.shape_of))]
    return [cst.Subscript(node, [cst.SubscriptElement(cst.Index(int_node(i)))]) for i in range(len(value.shape_of))]


def _is_shape(rw, node: cst.BaseExpression) -> bool:
    """Whether ``node`` is (or sums) a shape of known dims: ``x.shape``, ``x.shape[:-1]``."""
    if isinstance(node, cst.BinaryOperation):
        return _is_shape(rw, node.left) or _is_shape(rw, node.right)
    if not isinstance(node, cst.Attribute | cst.Subscript | cst.Name):
        return False
    value = rw.expr(node).value
    return isinstance(value, Static) and value.shape_of is not None


def is_reshape(rw, node: cst.BaseExpression) -> TypeGuard[cst.Call]:
    """Whether ``node`` is ``x.reshape(...)`` or ``jnp.reshape(x, ...)``."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if rw.ctx.qualified_names(func) & {"jax.numpy.reshape"}:
        return True
    return isinstance(func, cst.Attribute) and func.attr.value == "reshape" and not _is_module_path(rw, func)


def reshape_call(rw, node: cst.Call) -> Call:
    """A reshape (:func:`is_reshape`) under a Tensor hint, evaluated for ``shapes.reshape_named``, its
    arguments bound to jnp.reshape's or the method's signature (``order="F"`` refused)."""
    func = node.func
    receiver = None
    if isinstance(func, cst.Attribute) and func.attr.value == "reshape" and \
            not rw.ctx.qualified_names(func) & {"jax.numpy.reshape"}:
        receiver = rw.expr(func.value)
    call = _evaluate_args(rw, node, "reshape", receiver)
    closed_world(rw.rule_context(), call, "jax.numpy.reshape" if receiver is None else "jax.Array.reshape")
    return call


def _newaxes_apart(rw, ctx: RuleContext, node: cst.Subscript, base: Operand) -> Operand | None:
    """``norm[senders, None]``, ``x[None, ids]``, ``h[ids, None, :]``, ``x[ids, ...]``: one index array beside
    ``None`` / ``jnp.newaxis`` / ``...`` and full slices, as NumPy reads it: the lookup with the ``...``
    spelled out and no new axes (``norm[senders]``), then the new axes where they stand
    (``[:, None]``); None for any other index."""
    elements = list(node.slice)
    special = [e for e in elements if is_none(ctx, e) or _is_ellipsis(e)]
    if not special or sum(1 for e in elements if _is_ellipsis(e)) > 1:
        return None
    arrays = []
    for e in elements:
        if e in special:
            continue
        if isinstance(e.slice, cst.Slice):
            if e.slice.lower is not None or e.slice.upper is not None or e.slice.step is not None:
                return None
            continue
        value = ctx.operand(e.slice.value).value
        if not isinstance(value, Array):
            return None
        arrays.append(value)
    if len(arrays) != 1:
        return None
    full = cst.SubscriptElement(cst.Slice(lower=None, upper=None))
    consumed = sum(1 for e in elements if e not in special)
    rank = base.value.layout.rank
    if consumed > rank:
        return None
    expanded: list[cst.SubscriptElement] = []
    for e in elements:
        expanded += [full] * (rank - consumed) if _is_ellipsis(e) else [e]
    if not any(_is_ellipsis(e) for e in elements):
        expanded += [full] * (rank - consumed)
    lookup_slice = [e for e in expanded if not is_none(ctx, e)]
    none = cst.SubscriptElement(cst.Index(cst.Name("None")))
    after: list[cst.SubscriptElement] = []
    for e in expanded:
        if is_none(ctx, e):
            after.append(none)
        elif isinstance(e.slice, cst.Index):
            after += [full] * arrays[0].layout.rank
        else:
            after.append(full)
    # (the index's own node kept: ctx holds its value, evaluated once)
    inner = node.with_changes(slice=[e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in lookup_slice])
    outer = cst.Subscript(inner, [e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in after])
    rw.ctx.anchors[inner] = rw.ctx.anchors[outer] = node
    looked_up = index_array(rw, inner, base, ctx)
    if not any(is_none(ctx, e) for e in elements):  # (x[ids, ...]: no new axes)
        return Operand(looked_up.value, node, looked_up.node)
    found = index_array(rw, outer, Operand(looked_up.value, inner, looked_up.node), ctx)
    return Operand(found.value, node, found.node)


def index_array(rw, node: cst.Subscript, base: Operand, ctx: RuleContext | None = None) -> Operand:
    """``x[...]`` on an array: each index and slice bound evaluated once, then a lookup when the index is
    an array (``lookups.lookup``), slices of split dims re-blocked (``spatial.slice_split_dims``),
    basic indexing (``lookups.basic_index``)."""
    if ctx is None:
        ctx = rw.rule_context(_subscript_operands(rw, node))
    elements = list(node.slice)
    apart = _newaxes_apart(rw, ctx, node, base)
    if apart is not None:  # norm[senders, None]: the lookup, then the new axes
        return apart
    found = array_index(ctx, elements)
    if found is not None:
        axis, index = found
        lowering = lookup(ctx, base, index, axis, node)
        assert lowering.result is not None
        ids, table = rw.carry_out(lowering)
        if lowering.template is None:
            looked_up = elements[axis].with_changes(slice=elements[axis].slice.with_changes(value=ids))
            new_slice = [*elements[:axis], looked_up, *elements[axis + 1:]]
            return Operand(lowering.result, node, node.with_changes(value=table, slice=new_slice))
        return Operand(lowering.result, node, rw.replacement(lowering, [ids, table]))
    several = multi_index(ctx, node, base)  # z[:, iu, ju]: index arrays on unsplit dims
    if several is not None:
        nodes = rw.carry_out(several)
        if several.template is not None:
            return Operand(several.result, node, rw.replacement(several, nodes))
        table, ids = nodes[0], iter(nodes[1:])
        new_slice = [e.with_changes(slice=e.slice.with_changes(value=next(ids))) if isinstance(e.slice, cst.Index)
                     else e for e in elements]
        return Operand(several.result, node, node.with_changes(value=table, slice=new_slice))
    sliced = slice_split_dims(ctx, node, base)  # x[:, 1:-1] along a split dim: re-blocked (rules/spatial.py)
    if sliced is not None:
        wrapped = base.node
        for lowering in sliced.slices:
            wrapped = rw.replacement(lowering, [wrapped])
        start = len(rw.records)
        rw.carry_out(Lowering(sliced.value, emitted=sliced.emitted))
        rw.records_of(start, node)  # (x[..., 1::2] read twice: one halo exchange to XLA)
        if sliced.rest is None:
            return Operand(sliced.value, node, wrapped)
        return index_array(rw, sliced.rest, Operand(sliced.value, base.original, wrapped), ctx)
    return Operand(basic_index(ctx, node, base), node, node.with_changes(value=base.node,
                                                                         slice=_rewritten_slice(ctx, node)))


def _rewritten_slice(ctx: RuleContext, node: cst.Subscript) -> list[cst.SubscriptElement]:
    """``x[...]``'s indices and slice bounds as rewritten (``b[:h.shape[-1]]`` with ``h`` split: the global
    size, ``h.shape[-1] * 4``, never the block's)."""
    elements = []
    for element in node.slice:
        s = element.slice
        if isinstance(s, cst.Index):
            s = s.with_changes(value=ctx.rewritten(s.value))
        elif isinstance(s, cst.Slice):
            s = s.with_changes(**{k: ctx.rewritten(getattr(s, k)) for k in ("lower", "upper", "step")
                                  if getattr(s, k) is not None})
        elements.append(element.with_changes(slice=s))
    return elements


def _subscript_operands(rw, node: cst.Subscript) -> dict[cst.CSTNode, Operand]:
    """Each index (not ``None``, ``...``) and slice bound of ``x[...]``, evaluated, for the rules."""
    ctx = rw.rule_context()
    operands: dict[cst.CSTNode, Operand] = {}
    for element in node.slice:
        s = element.slice
        if isinstance(s, cst.Index):
            if not is_none(ctx, element) and not isinstance(s.value, cst.Ellipsis):
                operands[s.value] = rw.expr(s.value)
        elif isinstance(s, cst.Slice):
            for bound in (s.lower, s.upper, s.step):
                if bound is not None:
                    operands[bound] = rw.expr(bound)
    return operands




def _walked(rw, node: cst.BaseExpression) -> bool:
    """A lambda, nested def or ``functools.partial`` passed to a loop or branch op, walked in this scope
    (:mod:`._bodies`)."""
    from meshify.rewrite._bodies import unwrapped

    wrappers, node = unwrapped(rw, node)
    return bool(wrappers) or isinstance(node, cst.Lambda) or (
        isinstance(node, cst.Name) and local_def(rw, node.value) is not None) or _partial(rw, node)


def _partial(rw, node: cst.BaseExpression) -> bool:
    from meshify.rewrite._bodies import is_partial

    return is_partial(rw, node)
