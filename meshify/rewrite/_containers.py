"""Sequences of hinted pytrees: a ``blocks: tuple[Block, ...]`` (or ``list[Block]``) parameter field.

A sequence's length is known only at each call (the runtime builds one program per length, see
``runtime/_bind.py``), so the rewriter sees one item: a :class:`StructValue` of kind
``"sequence"`` whose one field (:data:`ITEMS`) is the item's value.  Every item has the item
hint's layout, which is what makes the rewrite hold for every length:

- ``for block in blocks:`` binds ``block`` to the item; the body is rewritten once and Python
  unrolls it (``_interp``);
- ``blocks[i]`` (any static index) is the item, ``blocks[a:b]`` the sequence, ``len(blocks)`` static;
- ``jax.tree.map(lambda *xs: jnp.stack(xs), *blocks)`` is the item with a new leading, unsplit
  dim on every array, named after the sequence, which ``jax.lax.scan`` runs over.  Each device
  stacks its own blocks, which is its block of the stacked arrays: the call stays as written.

Elsewhere a sequence goes where any pytree goes (a helper's argument, a scan's ``xs``, an
unknown call that refuses split arrays inside it).
"""

from __future__ import annotations

import libcst as cst

from meshify.annotate._types import Layout
from meshify.errors import UnsupportedError
from meshify.rewrite._hints import ITEMS
from meshify.rewrite._values import Array, Operand, Static, StructValue, TupleValue, Value

__all__ = ["TREE_MAP", "sequence_index", "sequence_item", "sequence_len", "tree_map"]

#: ``jax.tree.map`` under its spellings.
TREE_MAP = frozenset({"jax.tree.map", "jax.tree_util.tree_map", "jax.tree_map"})
_STACK = frozenset({"jax.numpy.stack"})


def sequence_item(value: Value) -> Value | None:
    """The value of each item of a sequence parameter, or None when ``value`` is not one."""
    if isinstance(value, StructValue) and value.kind == "sequence":
        return value.field(ITEMS)
    return None


def sequence_index(rw, node: cst.Subscript, base: Operand) -> Operand:
    """``blocks[i]`` with a static ``i``: the item (every item has its layout); ``blocks[a:b]``: the sequence."""
    element = node.slice[0].slice if len(node.slice) == 1 else None
    new = node.with_changes(value=base.node)
    if isinstance(element, cst.Slice):
        return Operand(base.value, node, new)
    index = rw.expr(element.value) if isinstance(element, cst.Index) else None
    if index is None or not isinstance(index.value, Static):
        raise rw.error(UnsupportedError, node, f"indexing the sequence {rw.ctx.code(node.value)!r} with an array "
                       "or with several indices", "index it with a Python int (blocks[0], blocks[i] in a loop)")
    return Operand(sequence_item(base.value), node, node.with_changes(value=base.node, slice=[
        node.slice[0].with_changes(slice=element.with_changes(value=index.node))]))


def sequence_len(rw, node: cst.Call) -> Operand | None:
    """``len(params.blocks)``: a static int (each call's length; the program is built per length)."""
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star \
            or not isinstance(node.args[0].value, cst.Name | cst.Attribute):  # evaluated again if not one
        return None
    sequence = rw.expr(node.args[0].value)
    if sequence_item(sequence.value) is None:
        return None
    return Operand(Static(), node, node.with_changes(args=[node.args[0].with_changes(value=sequence.node)]))


def tree_map(rw, node: cst.Call) -> Operand:
    """``jax.tree.map(lambda *xs: jnp.stack(xs), *blocks)``: the item, each array stacked along a new
    leading dim.  Other tree maps are refused: their function would run once per leaf, each leaf with
    a layout of its own, which one rewritten lambda cannot serve."""
    fn, items = node.args if len(node.args) == 2 else (None, None)
    if fn is None or items is None or items.star != "*" or fn.keyword is not None or not _stacks(rw, fn.value):
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node.func)}(...) other than stacking a sequence of "
                       "pytrees", "stack a sequence parameter: jax.tree.map(lambda *xs: jnp.stack(xs), "
                       "*params.blocks); or write the per-leaf code out field by field")
    sequence = rw.expr(items.value)
    item = sequence_item(sequence.value)
    if item is None:
        raise rw.error(UnsupportedError, items.value, f"stacking {rw.ctx.code(items.value)!r}, which is not a "
                       "sequence parameter", "hint it as a field of a parameter: blocks: tuple[Block, ...]")
    dim = _stack_dim(rw.ctx.code(items.value), _dims_in(item))
    return Operand(_stacked(item, dim), node, node.with_changes(args=[fn, items.with_changes(value=sequence.node)]))


def _stacks(rw, fn: cst.BaseExpression) -> bool:
    """``lambda *xs: jnp.stack(xs)`` (or ``jnp.stack(xs, 0)``, ``axis=0``): stacks its arguments on a new axis 0."""
    if not isinstance(fn, cst.Lambda) or fn.params.params or fn.params.kwonly_params or fn.params.posonly_params \
            or not isinstance(fn.params.star_arg, cst.Param) or fn.params.star_kwarg is not None:
        return False
    body = fn.body
    if not (isinstance(body, cst.Call) and rw.ctx.qualified_names(body.func) & _STACK and body.args):
        return False
    first, rest = body.args[0], body.args[1:]
    return isinstance(first.value, cst.Name) and first.value.value == fn.params.star_arg.name.value \
        and first.keyword is None and first.star == "" and len(rest) <= 1 and all(map(_axis_zero, rest))


def _axis_zero(arg: cst.Arg) -> bool:
    return (arg.keyword is None or arg.keyword.value == "axis") and isinstance(arg.value, cst.Integer) \
        and arg.value.value == "0"


def _stack_dim(code: str, taken: set[str]) -> str:
    """The stacked dim's name: the sequence's own (``params.blocks`` -> ``blocks``), unless an item's dim has it."""
    name = code.rsplit(".", 1)[-1].strip("[]\"' ")
    name = name if name.isidentifier() else "stacked"
    while name in taken:
        name += "_stacked"
    return name


def _dims_in(value: Value) -> set[str]:
    if isinstance(value, Array):
        return set(value.dims)
    if isinstance(value, StructValue):
        return {d for _, v in value.fields for d in _dims_in(v)}
    if isinstance(value, TupleValue):
        return {d for v in value.items for d in _dims_in(v)}
    return set()


def _stacked(value: Value, dim: str) -> Value:
    """``value`` with a leading, unsplit ``dim`` on every array."""
    if isinstance(value, Array):
        layout = value.layout
        return Array(Layout((dim, *layout.dims), ((), *layout.axes), layout.partial), value.origin)
    if isinstance(value, StructValue):
        return StructValue(value.cls, tuple((k, _stacked(v, dim)) for k, v in value.fields), value.kind)
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_stacked(v, dim) for v in value.items))
    return value
