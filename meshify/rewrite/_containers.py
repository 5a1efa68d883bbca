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

A list the function builds by appending (``hidden = []``, then ``hidden.append(x)`` in a Python
loop) is followed the same way (:func:`appending`): item by item while its appends run once, a
sequence of one item's value where a loop it is carried into appends to it.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import json

import libcst as cst

from meshify.annotate._types import Layout, hint_dims, unify_dims
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._hints import ITEMS
from meshify.rewrite._mappings import mapping_item, stored_in_mapping
from meshify.rewrite._names import read_again
from meshify.rewrite._values import (
    Array,
    Opaque,
    Operand,
    Static,
    StructValue,
    TupleValue,
    Value,
    holds_partial,
    is_none,
)

__all__ = ["TREE_MAP", "TREE_MAP_WITH_PATH", "appending", "closure_names", "common_item", "concatenated", "enumerated",
           "listed_items", "listed_names", "mutating", "one_layout", "own_dict", "popping", "removed", "sequence_index",
           "sequence_item", "sequence_len", "sequence_of", "shares", "stored", "tree_map", "zipped"]

#: ``jax.tree.map`` under its spellings.
TREE_MAP = frozenset({"jax.tree.map", "jax.tree_util.tree_map", "jax.tree_map"})
#: ``jax.tree_util.tree_map_with_path(lambda path, p: ..., params)``: the function also takes each leaf's key path.
TREE_MAP_WITH_PATH = frozenset({"jax.tree_util.tree_map_with_path", "jax.tree.map_with_path"})
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


def appending(rw, node: cst.BaseExpression) -> cst.BaseExpression | None:
    """``xs.append(v)`` as a statement, ``xs`` a list this function built (``xs = []``): the call with ``v``
    rewritten, ``xs`` bound to what it holds now.  Outside a loop that carries ``xs`` (or in the loop that made
    it) each append runs once: ``xs`` holds its items one by one.  In a Python loop ``xs`` is carried into, the
    body runs many times: ``xs`` becomes a sequence of one item's value, so every item it holds (those before
    the loop too) must have that value's layout.  A partial sum is completed before it is appended (the list's
    items are whole arrays, whatever reads them).  None: not such a call."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name) and node.func.attr.value in ("append", "extend", "insert")):
        return None
    name = node.func.value.value
    held = rw.env.get(name)
    if node.func.attr.value != "append":
        return _extending(rw, node, name, held)
    numbers = isinstance(held, Static) and held.known and isinstance(held.literal, tuple | list)
    if not numbers and not isinstance(held, TupleValue) and sequence_item(held) is None:
        return None  # not a list of values meshify follows: as written
    passed = name not in rw.env or name in _param_names(rw.fn)
    if name not in rw.own_lists and numbers and not passed:
        # dims = list(x.shape); dims.append(4): a list of Python values meshify no longer knows
        op = rw.expr(node.args[0].value) if len(node.args) == 1 and not node.args[0].star else None
        if op is not None and isinstance(op.value, Static):
            rw.rebind_list(name, Static())
            return node.with_changes(args=[node.args[0].with_changes(value=op.node)])
    _own_list(rw, node, name, f"{rw.ctx.code(node.func)}(...)", "append to it")
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node.func)}(...) with other than one argument",
                       f"append one value: {name}.append(v)")
    op = rw.expr(node.args[0].value)
    value, new = op.value, op.node
    carried = any(name in names for names in rw.loop_carried)
    if numbers and isinstance(value, Static):  # sizes.append(3): a list of Python values, known while its items are
        assert isinstance(held, Static)
        known = value.known and not carried
        rw.rebind_list(name, Static.of((*held.literal, value.literal)) if known else Static())
        return node.with_changes(args=[node.args[0].with_changes(value=new)])
    if numbers:  # xs = [] (a Python value), then an array appended: its items from here on
        assert isinstance(held, Static)
        held = TupleValue(tuple(Static.of(v) for v in held.literal), "list")
    value, new = _whole_item(rw, op, name, f"appending {rw.ctx.code(op.original)!r} to {name!r}",
                             "append its arrays one by one, or add the items to the list as arrays")
    if isinstance(held, TupleValue) and not carried:
        rw.rebind_list(name, held.of((*held.items, value)))
    else:
        items = _held_items(held)
        common = common_item([*items, value])  # (items differing only by names meshify inferred: the user's)
        other = one_layout(items, like=value) if common is None else None
        if other is not None:
            where = (f"{name}.append(...) in a loop: the list holds {_text(other)} and this iteration appends "
                     f"{_text(value)}; the loop's body is rewritten once, so every item must have one layout"
                     if carried else f"{name}.append(...) of {_text(value)}: {name!r} holds a number of items "
                     f"meshify does not know (a loop or a branch appended them), each {_text(other)}, so every "
                     "item must have one layout")
            raise rw.error(LayoutError, node, where, f"append values of one layout (the list's items: "
                           f"{_text(other)}; a hint pins one: v: Tensor[{_dims(other)}] = ...), or stack them with "
                           "jax.lax.scan")
        rw.rebind_list(name, sequence_of(common if common is not None else value))
    return node.with_changes(args=[node.args[0].with_changes(value=new)])


def _literal_index(rw, arg: cst.Arg | None) -> int | None:
    """A Python int index meshify knows (``0``, ``-1``, ``i`` of a known value), else None."""
    if arg is None or arg.keyword is not None or arg.star:
        return None
    value = rw.expr(arg.value).value
    return value.literal if isinstance(value, Static) and value.known and type(value.literal) is int else None


def _own_list(rw, node: cst.CSTNode, name: str, what: str, verb: str = "change it") -> None:
    """Refuses changing ``name`` in place (``what``, as ``verb`` says it) unless this function made it and no
    other name holds it."""
    if name in rw.shared_lists and name in rw.own_lists:
        raise rw.error(UnsupportedError, node, f"{what} after {name!r} was handed on (another name, a tuple, a helper "
                       "or a nested function holds the same list): what they hold changes too, which meshify does "
                       f"not follow", f"hand on a copy (list({name})), or {verb} before handing it on")
    if name not in rw.own_lists:
        raise rw.error(UnsupportedError, node, f"{what} on a list this function did not make with a list display "
                       f"({name!r} is a parameter or holds another name's list): the list it changes is not followed",
                       f"make the list here ({name} = []) and {verb} here, or build a new one ({name} = "
                       f"[*{name}, v])")


def _held_items(held: Value) -> list[Value]:
    """The items a list meshify follows holds: one by one, or the one item's value of a sequence."""
    return list(held.items) if isinstance(held, TupleValue) else [sequence_item(held)]  # type: ignore[list-item]


def _whole_item(rw, op: Operand, name: str, what: str, fix: str) -> tuple[Value, cst.BaseExpression]:
    """``op`` as an item a list holds, and its node: a partial sum completed first (a list's items are whole
    arrays, whatever reads them); a tuple or pytree holding one refused (``what``, ``fix``)."""
    value, node = op.value, op.node
    if isinstance(value, Array) and value.layout.partial:
        whole = value.layout.with_partial(())
        return Array(whole, value.origin), rw.convert(op, whole, f"an item of the list {name!r}")
    if holds_partial(value):
        raise rw.error(UnsupportedError, op.original, f"{what}: a tuple or pytree holding a partial sum", fix)
    return value, node


def _in_loop(rw, name: str, value: Value, node: cst.CSTNode, what: str) -> Value:
    """``value`` (a list's new items) as a list ``name`` holds: in a loop it is carried into, a sequence of
    one item's value (every item must share that layout), since the body is rewritten once."""
    if not any(name in names for names in rw.loop_carried) or not isinstance(value, TupleValue):
        return value
    if not value.items:
        return value
    common = common_item(value.items)
    other = one_layout(value.items) if common is None else None
    if common is None and other is not None:
        raise rw.error(LayoutError, node, f"{what} in a loop: {name!r} holds items of different layouts "
                       f"({_text(value.items[0])}, {_text(other)}); the loop's body is rewritten once, so every item "
                       "must have one layout", "give the items one layout (a hint where each is made), or collect "
                       "them with jax.lax.scan")
    return sequence_of(common if common is not None else value.items[0])


def _extending(rw, node: cst.Call, name: str, held: Value | None) -> cst.BaseExpression | None:
    """``hs.extend(more)`` and ``hs.insert(i, v)`` on a list this function made: its items as
    ``hs += more`` (:func:`concatenated`) and ``hs[i:i] = [v]`` leave them (a partial sum completed first)."""
    method = node.func.attr.value  # type: ignore[attr-defined]
    if isinstance(held, Static) and held.known and isinstance(held.literal, list | tuple) and name in rw.own_lists:
        # hs = [] (a Python value), then arrays added: its items from here on (numbers only: a list of numbers)
        added = [a.value for a in node.args[-1:]]
        if not any(isinstance(rw.expr(a).value, Array | TupleValue | StructValue) for a in added):
            return None
        held = TupleValue(tuple(Static.of(v) for v in held.literal), "list")
    if not isinstance(held, TupleValue) and sequence_item(held) is None:
        return None  # not a list of values meshify follows: as written
    what = f"{name}.{method}(...)"
    _own_list(rw, node, name, what)
    if method == "extend":
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            raise rw.error(UnsupportedError, node, f"{what} with other than one argument", f"{name}.extend(values)")
        more = rw.expr(node.args[0].value)
        joined = concatenated(rw, Operand(held, node.func.value, node.func.value), more, node)  # type: ignore[attr-defined]
        if joined is None:
            raise rw.error(UnsupportedError, node.args[0].value, f"{what} of {rw.ctx.code(node.args[0].value)!r}, "
                           "which is not a list, tuple or sequence of arrays meshify follows",
                           f"extend it with a list display ({name}.extend([a, b]))")
        value, new = joined[:2]  # (the held list never converted: not a literal here)
        rw.rebind_list(name, _in_loop(rw, name, value, node, what))
        return node.with_changes(args=[node.args[0].with_changes(value=new)])
    if len(node.args) != 2 or any(a.keyword is not None or a.star for a in node.args):
        raise rw.error(UnsupportedError, node, f"{what} with other than two arguments", f"{name}.insert(i, v)")
    index = _literal_index(rw, node.args[0])
    op = rw.expr(node.args[1].value)
    value, new = _whole_item(rw, op, name, f"inserting {rw.ctx.code(op.original)!r} into {name!r}",
                             "insert its arrays one by one")
    if isinstance(held, TupleValue) and index is not None:
        items = list(held.items)
        items.insert(index, value)
        result: Value = held.of(items)
    else:
        items = _held_items(held)
        other = one_layout(items, like=value)
        if other is not None:
            raise rw.error(LayoutError, node, f"{what} of {_text(value)} at a place meshify does not know, into a "
                           f"list holding {_text(other)}: every item must then have one layout",
                           "insert at a Python int meshify knows (0, -1), or give the items one layout")
        result = sequence_of(value)
    rw.rebind_list(name, _in_loop(rw, name, result, node, what))
    return node.with_changes(args=[node.args[0], node.args[1].with_changes(value=new)])


def removed(rw, node: cst.Del) -> bool:
    """``del hs[i]`` / ``del hs[a:b]`` of a list this function made: its items without those; False where
    ``node`` deletes anything else (refused by the caller)."""
    target = node.target
    if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(target.slice) == 1):
        return False
    name = target.value.value
    held = rw.env.get(name)
    if not isinstance(held, TupleValue) and sequence_item(held) is None:
        return False
    _own_list(rw, node, name, f"del {rw.ctx.code(target)}")
    element = target.slice[0].slice
    if isinstance(held, TupleValue):
        if isinstance(element, cst.Index):
            index = _literal_index(rw, cst.Arg(element.value))
            if index is not None and -len(held.items) <= index < len(held.items):
                items = list(held.items)
                del items[index]
                rw.rebind_list(name, held.of(items))
                return True
        elif isinstance(element, cst.Slice):
            bounds = [None if b is None else _literal_index(rw, cst.Arg(b)) for b in (element.lower, element.upper,
                                                                                       element.step)]
            if all(b is not None or part is None for b, part in zip(bounds, (element.lower, element.upper,
                                                                             element.step))):
                items = list(held.items)
                del items[slice(*bounds)]
                rw.rebind_list(name, held.of(items))
                return True
    items = _held_items(held)
    if not items or one_layout(items) is not None:
        raise rw.error(LayoutError, node, f"del {rw.ctx.code(target)}: which items go is known only when the code "
                       f"runs, and the items of {name!r} have different layouts", "delete at a Python int meshify "
                       "knows, or give the items one layout")
    rw.rebind_list(name, sequence_of(items[0]))
    return True


def stored(rw, target: cst.Subscript, value: Value) -> Value | None:
    """``hs[i] = v`` for a list this function made: its items with item ``i`` replaced (a partial sum must be
    completed first: the caller's conversion); None where ``target`` is not such a store."""
    if not (isinstance(target.value, cst.Name) and len(target.slice) == 1
            and isinstance(target.slice[0].slice, cst.Index)):
        return None
    name = target.value.value
    held = rw.env.get(name)
    if isinstance(held, StructValue) and held.kind in ("dict", "mapping"):
        return _stored_item(rw, target, name, held, value)
    if isinstance(held, Static) and held.known and isinstance(held.literal, list | tuple) and name in rw.own_lists \
            and isinstance(value, Array | TupleValue | StructValue):
        # hs = [None] * n (a Python value), then arrays stored: its items from here on
        held = TupleValue(tuple(Static.of(v) for v in held.literal), "list")
    if not isinstance(held, TupleValue) and sequence_item(held) is None:
        return None
    _own_list(rw, target, name, f"{rw.ctx.code(target)} = ...")
    index = _literal_index(rw, cst.Arg(target.slice[0].slice.value))  # type: ignore[attr-defined]
    if isinstance(held, TupleValue) and index is not None and -len(held.items) <= index < len(held.items):
        items = list(held.items)
        items[index] = value
        result: Value = held.of(items)
    else:
        # (hs = [None] * n, stored into in a loop: the Nones are placeholders; one left unwritten is None, which no
        # array op takes, so the items' one layout is the value's)
        items = [i for i in _held_items(held) if not is_none(i)]
        other = one_layout(items, like=value)
        if other is not None:
            raise rw.error(LayoutError, target, f"{rw.ctx.code(target)} = ... stores {_text(value)} at a place meshify "
                           f"does not know, in a list holding {_text(other)}: every item must then have one layout",
                           "store at a Python int meshify knows, or give the items one layout")
        result = held if isinstance(held, TupleValue) and index is None else sequence_of(value)
    rw.rebind_list(name, _in_loop(rw, name, result, target, f"{rw.ctx.code(target)} = ..."))
    return result


def own_dict(rw, node: cst.CSTNode, name: str, key: str) -> None:
    """Refuses changing the dict of arrays ``name`` holds in place (``name[k] = v``, ``name.update(...)``) where
    this function did not make it, or another name (a helper, a nested function) also holds it."""
    if name in rw.shared_lists and name in rw.own_lists or name not in rw.own_lists:
        what = f"{rw.ctx.code(node)} = ..." if isinstance(node, cst.Subscript) else rw.ctx.code(node)
        raise rw.error(UnsupportedError, node, f"{what} changes {name!r} in place, a dict holding "
                       "arrays " + ("that another name (or a helper, or a nested function) also holds"
                                    if name in rw.own_lists else "this function did not make (a parameter, or "
                                    "another name's dict)"),
                       f"copy it first ({name} = dict({name})), or build a new one ({name} = {{**{name}, {key}: ...}})")


def _stored_item(rw, target: cst.Subscript, name: str, held: StructValue, value: Value) -> Value:
    """``cache["k"] = v`` for a dict of arrays this function made (a dict display, ``dict(cache)``,
    ``cache.copy()``): its items with ``"k"`` replaced, or added last.  At a key meshify does not know (``outs[
    f"layer{i}"] = h``), or into a dict that is already one of such keys: a mapping (:mod:`_mappings`)."""
    key = rw.expr(target.slice[0].slice.value).value  # type: ignore[attr-defined]
    literal = isinstance(key, Static) and key.known and isinstance(key.literal, str)
    own_dict(rw, target, name, repr(key.literal) if literal else "k")  # type: ignore[union-attr]
    if not literal or held.kind == "mapping":
        return stored_in_mapping(rw, target, name, held, key, value)
    fields = dict(held.fields)
    fields[key.literal] = value
    result = StructValue(held.cls, tuple(fields.items()), "dict")
    rw.rebind_list(name, result)
    return result


def sequence_of(item: Value) -> StructValue:
    """A list of a length meshify does not know, every item ``item``'s value (appended to in a loop)."""
    return StructValue("list", ((ITEMS, item),), "sequence")


def one_layout(items, like: Value | None = None) -> Value | None:
    """The first of ``items`` that does not share ``like``'s layout (default: the first item's), or None."""
    from meshify.rewrite._helpers import signature_of

    items = list(items)
    key = signature_of(like if like is not None else items[0]) if items or like is not None else None
    return next((i for i in items if signature_of(i) != key), None)


def common_item(items) -> Value | None:
    """The one value a loop over ``items`` binds each iteration: the first item where all share its layout,
    or where they differ only by names meshify inferred (``d_model?`` beside the user's ``d_model``: the
    user's names, as a hint would give them); None where their layouts differ otherwise."""
    items = list(items)
    if not items or one_layout(items) is None:
        return items[0] if items else None
    arrays = [i for i in items if isinstance(i, Array)]
    if arrays and len(arrays) < len(items) and all(
            isinstance(i, Opaque) and i.shape is not None and len(i.shape) == arrays[0].layout.rank
            for i in items if not isinstance(i, Array)) and not any(
            a.layout.is_split or a.layout.partial for a in arrays):
        items = arrays  # jnp.full((8,), c) beside the whole arrays a loop makes of it: one whole value
    if all(isinstance(i, Opaque) for i in items):  # whole arrays of dims meshify cannot name: one whole value
        shapes = {i.shape for i in items}
        return Opaque(shapes.pop() if len(shapes) == 1 else None)
    if not all(isinstance(i, Array) for i in items):
        return None
    first = items[0].layout
    dims = list(first.dims)
    for item in items[1:]:
        layout = item.layout
        if (layout.rank, layout.axes, layout.partial) != (first.rank, first.axes, first.partial):
            return None
        for k, d in enumerate(layout.dims):
            joined = unify_dims(dims[k], d)
            if joined is None:
                return None
            dims[k] = joined
    return Array(Layout(tuple(dims), first.axes, first.partial), items[0].origin)


def listed_items(value: Value | None) -> tuple[Value, ...] | None:
    """The items of a tuple or list value (a sequence: its one item), None where ``value`` is not one."""
    listed = _listed(value)
    return (sequence_item(listed),) if isinstance(listed, StructValue) else listed  # type: ignore[return-value]


def _listed(value: Value | None) -> tuple[Value, ...] | StructValue | None:
    """A tuple or list's items one by one, the sequence itself where only one item's value is known
    (appended to in a loop), or None where ``value`` is neither."""
    if isinstance(value, TupleValue):
        return value.items
    if isinstance(value, Static) and value.known and isinstance(value.literal, tuple | list):
        return tuple(Static.of(v) for v in value.literal)
    return value if isinstance(value, StructValue) and sequence_item(value) is not None else None


def concatenated(rw, left: Operand, right: Operand, node: cst.CSTNode
                 ) -> tuple[Value, cst.BaseExpression] | tuple[Value, cst.BaseExpression, cst.BaseExpression] | None:
    """``hidden_states + (x,)`` (or ``hs + [x]``, ``hs += [x]``) of tuples or lists holding arrays: the items of
    both, one by one; a sequence where one is (every item must then have its item's layout); and the right
    side's node, its partial sums completed where it spells them out (``outs + (x @ w,)``, as an append
    completes them).  None: not a concatenation of sequences of arrays (two tuples of numbers add as Python
    adds them)."""
    a, b = _listed(left.value), _listed(right.value)
    if a is None or b is None or (isinstance(left.value, Static) and isinstance(right.value, Static)):
        return None
    new = right.node
    if isinstance(a, tuple) and isinstance(b, tuple) and not isinstance(right.original, cst.Tuple | cst.List):
        # a[:1] + a[2:], first + rest: items known one by one on both sides, partial sums kept in them (as a list
        # literal keeps them; completed where they leave)
        return TupleValue((*a, *b), _kind(left.value)), new
    if isinstance(b, tuple) and any(holds_partial(i) for i in b):
        written, rewritten = right.original, right.node
        if not (isinstance(written, cst.Tuple | cst.List) and isinstance(rewritten, cst.Tuple | cst.List)
                and len(written.elements) == len(b) and all(isinstance(i, Array) or not holds_partial(i) for i in b)):
            partial = next(i for i in b if holds_partial(i))
            raise rw.error(UnsupportedError, right.original, f"joining {rw.ctx.code(right.original)!r}, which holds "
                           f"{_text(partial)}, to a tuple or list", "complete the partial sum first (a hint pins "
                           "it: v: Tensor[...] = ...), then add it to the tuple")
        items, elements = [], []
        for v, e, n in zip(b, written.elements, rewritten.elements):
            if isinstance(v, Array) and v.layout.partial:
                whole = v.layout.with_partial(())
                n = n.with_changes(value=rw.convert(Operand(v, e.value, n.value), whole, "an item of a tuple or list"))
                v = Array(whole, v.origin)
            items.append(v)
            elements.append(n)
        b, new = tuple(items), rewritten.with_changes(elements=elements)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return TupleValue((*a, *b), _kind(left.value)), new
    seq = a if isinstance(a, StructValue) else b
    item = sequence_item(seq)
    other = one_layout([i for side in (a, b) if isinstance(side, tuple) for i in side], like=item)
    if other is not None and isinstance(a, tuple):  # [dense] + pooled: its items gathered to the list's layout
        left_node = _items_gathered(rw, left, a, item)
        if left_node is not None:
            return seq, new, left_node
    if other is not None and isinstance(b, tuple):  # pooled + [dense]
        right_node = _items_gathered(rw, Operand(right.value, right.original, new), b, item)
        if right_node is not None:
            return seq, right_node
    if other is not None:
        raise rw.error(LayoutError, node, f"joining a list of {_text(item)} with {_text(other)}: a list whose "
                       "length meshify does not know holds one layout", "give the items one layout (a hint where "
                       "each is made)")
    return seq, new


def _items_gathered(rw, side: Operand, items: tuple[Value, ...], item: Value | None) -> cst.BaseExpression | None:
    """``[dense] + pooled`` (a list literal joined to a list of a length meshify does not know, whose items have one
    layout): the literal's arrays converted to that layout where the conversion only gathers split dims (the
    list's are whole there: ``jnp.stack([dense] + pooled, 1)`` then stacks one layout), each named in a comment;
    None where an item is not an array of the same dims, would have to be split or stay a partial sum, or the
    side is not written as a literal here."""
    from meshify.rewrite._helpers import signature_of

    written, rewritten = side.original, side.node
    if not (isinstance(item, Array) and isinstance(written, cst.List | cst.Tuple)
            and isinstance(rewritten, cst.List | cst.Tuple) and len(written.elements) == len(items)
            == len(rewritten.elements)) or item.layout.partial:
        return None
    target = item.layout
    elements = []
    for v, e, n in zip(items, written.elements, rewritten.elements):
        if signature_of(v) == signature_of(item):
            elements.append(n)
            continue
        if not (isinstance(v, Array) and isinstance(e, cst.Element) and isinstance(n, cst.Element)
                and v.layout.rank == target.rank
                and all(unify_dims(d, t) is not None for d, t in zip(v.layout.dims, target.dims))
                and all(t in ((), s) for s, t in zip(v.layout.axes, target.axes))):
            return None
        whole = Layout(v.layout.dims, target.axes)
        purpose = f"joining it to a list of {_text(item)}"
        elements.append(n.with_changes(value=rw.convert(Operand(v, e.value, n.value), whole, purpose)))
    return rewritten.with_changes(elements=elements)


def _kind(value: Value) -> str:
    """Whether a joined sequence is a list or a tuple: its left side's kind."""
    if isinstance(value, TupleValue):
        return value.kind
    return "list" if isinstance(value, Static) and isinstance(value.literal, list) else "tuple"


#: Methods that change a list, dict or set in place.
_MUTATORS = frozenset({"append", "extend", "insert", "remove", "clear", "reverse", "sort", "pop", "update",
                       "setdefault", "popitem", "add", "discard", "difference_update", "intersection_update"})


def mutating(rw, node: cst.Call) -> Operand | None:
    """``kw.update(mode="mean")``, ``dims.reverse()``, ``opts.pop("mode")``: a list, dict or set of Python values
    changed in place is unknown to meshify from here on (its keys and items steer branches and shapes); one
    holding arrays, or one another name also holds, is refused.  None: not such a call."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in _MUTATORS):
        return None
    name = func.value.value
    held = rw.env.get(name)
    python = isinstance(held, Static) and held.known and isinstance(held.literal, list | dict | set | tuple)
    if not python and not (isinstance(held, StructValue) and held.kind in ("dict", "mapping")):
        return None
    if isinstance(held, StructValue) or name in rw.shared_lists or name not in rw.own_lists:
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(func)}(...) changes {name!r} in place"
                       + (", a dict holding arrays" if isinstance(held, StructValue) else
                          ", which another name (or a helper, or the caller) also holds"),
                       f"build a new one where it changes ({name} = {{**{name}, ...}} for a dict, {name} = "
                       f"{name} + [...] for a list)")
    args = [a.with_changes(value=rw.expr(a.value).node) for a in node.args]
    rw.rebind_list(name, Static())
    return Operand(Static(), node, node.with_changes(args=args))


def popping(rw, node: cst.Call) -> Operand | None:
    """``hs.pop()`` of a list this function built (a U-Net's skip connections, appended on the way down): the
    last item, ``hs`` holding the others; in a loop ``hs`` is carried into (or of a list appended to in one),
    any item, so the items must share one layout.  None: not such a call."""
    if not (isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name)
            and node.func.attr.value == "pop"):
        return None
    name = node.func.value.value
    held = rw.env.get(name)
    if not isinstance(held, TupleValue) and sequence_item(held) is None:
        return None  # not a list of values meshify follows: as written
    _own_list(rw, node, name, f"{rw.ctx.code(node.func)}()", "take its items")
    index = -1 if not node.args else _literal_index(rw, node.args[0]) if len(node.args) == 1 else None
    if len(node.args) > 1 or (node.args and (node.args[0].keyword is not None or node.args[0].star)):
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node.func)}(...) with other than one index",
                       f"take one item: {name}.pop() or {name}.pop(i)")
    carried = any(name in names for names in rw.loop_carried)
    if isinstance(held, TupleValue) and not carried and index is not None:
        if not -len(held.items) <= index < len(held.items):
            raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node)} of a list that holds {len(held.items)} "
                           "items here", f"append to {name} before taking items from it")
        items = list(held.items)
        taken = items.pop(index)
        rw.rebind_list(name, held.of(items))
        return Operand(taken, node, node)
    items = _held_items(held)
    if not items or one_layout(items) is not None:
        raise rw.error(LayoutError, node, f"{name}.pop() in a loop: each iteration takes another item, and the "
                       f"items of {name!r} have different layouts ({', '.join(_text(i) for i in items) or 'none'})",
                       f"give the items of {name!r} one layout (a hint where each is made), or unroll the loop")
    rw.rebind_list(name, sequence_of(items[0]))
    return Operand(items[0], node, node)


@functools.lru_cache(maxsize=256)
def listed_names(fn: cst.FunctionDef) -> frozenset[str]:
    """The names ``fn``'s own body (not a nested def's) grows or shrinks as lists: ``hs.append(x)``, ``hs.pop()``,
    ``hs += [x]``, ``hs = hs + [x]``."""
    names: set[str] = set()

    class _Appends(cst.CSTVisitor):
        def visit_AugAssign(self, n: cst.AugAssign) -> None:  # hs += [x]
            if isinstance(n.operator, cst.AddAssign) and isinstance(n.target, cst.Name):
                names.add(n.target.value)

        def visit_Assign(self, n: cst.Assign) -> None:  # hs = hs + [x]
            value = n.value
            if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) \
                    and isinstance(value.left, cst.Name) and any(
                        isinstance(t.target, cst.Name) and t.target.value == value.left.value for t in n.targets):
                names.add(value.left.value)

        def visit_Call(self, n: cst.Call) -> None:
            if isinstance(n.func, cst.Attribute) and n.func.attr.value in ("append", "pop", "extend", "insert") \
                    and isinstance(n.func.value, cst.Name):
                names.add(n.func.value.value)

        def visit_Del(self, n: cst.Del) -> None:  # del hs[0]
            if isinstance(n.target, cst.Subscript) and isinstance(n.target.value, cst.Name):
                names.add(n.target.value.value)

        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:  # hs[i] = v
            if isinstance(n.target, cst.Subscript) and isinstance(n.target.value, cst.Name):
                names.add(n.target.value.value)

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            return n is fn

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

    fn.visit(_Appends())
    return frozenset(names)


@functools.lru_cache(maxsize=256)
def _parents(fn: cst.FunctionDef) -> dict[int, cst.CSTNode]:
    """``id(node) -> parent`` for every node of ``fn`` (its own body and nested ones)."""
    parents: dict[int, cst.CSTNode] = {}

    class _Parents(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            for child in node.children:
                parents[id(child)] = node
            return True

    fn.visit(_Parents())
    return parents


@functools.lru_cache(maxsize=256)
def closure_names(fn: cst.FunctionDef) -> frozenset[str]:
    """The names a def or lambda nested in ``fn`` reads (it may run later, holding the object)."""
    names: set[str] = set()

    class _Nested(cst.CSTVisitor):
        def __init__(self) -> None:
            self.depth = 0

        def visit_FunctionDef(self, n: cst.FunctionDef) -> None:
            self.depth += n is not fn

        def leave_FunctionDef(self, n: cst.FunctionDef) -> None:
            self.depth -= n is not fn

        def visit_Lambda(self, n: cst.Lambda) -> None:
            self.depth += 1

        def leave_Lambda(self, n: cst.Lambda) -> None:
            self.depth -= 1

        def visit_Name(self, n: cst.Name) -> None:
            if self.depth:
                names.add(n.value)

    fn.visit(_Nested())
    return frozenset(names)


#: Functions that read a list without keeping it (their module's prefix, or the builtin's name).
_READERS = ("jax.", "numpy.", "math.", "builtins.")
_BUILTINS = frozenset(dir(builtins))


def shares(rw, node: cst.Name) -> bool:
    """Whether this read of a list the function built hands the object to something that may keep it (``gs =
    hs``, ``(hs, 1)``, a helper's argument): its later appends would change what that holds, which meshify
    does not follow.  Reading its items (``hs[-1]``, ``jnp.stack(hs)``, ``for h in hs``, ``len(hs)``, a return)
    does not."""
    parent = _parents(rw.fn).get(id(node))
    if isinstance(parent, cst.Attribute | cst.Subscript) and parent.value is node:
        return False
    if isinstance(parent, cst.For | cst.BinaryOperation | cst.Comparison | cst.ComparisonTarget  # k in outs
                  | cst.UnaryOperation | cst.AugAssign | cst.If | cst.BooleanOperation | cst.Return):
        return False
    if isinstance(parent, cst.Element):
        display = _parents(rw.fn).get(id(parent))
        return not isinstance(_parents(rw.fn).get(id(display)), cst.Return)  # return x, hs
    if isinstance(parent, cst.StarredDictElement):  # {**outs, "k": v}: a new dict of its items
        return False
    if isinstance(parent, cst.Arg) and not parent.star:
        call = _parents(rw.fn).get(id(parent))
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "update" \
                and isinstance(call.func.value, cst.Name) and isinstance(rw.env.get(call.func.value.value), StructValue):
            return False  # known.update(outs): its items copied into another dict
        if isinstance(call, cst.Call):
            names = rw.ctx.qualified_names(call.func)
            if isinstance(call.func, cst.Name) and not names:
                names = {f"builtins.{call.func.value}"}
            names = {f"builtins.{n}" if "." not in n and n in _BUILTINS else n for n in names}  # len(hs)
            return not names or not all(n.startswith(_READERS) for n in names)
    return True


def _param_names(fn: cst.FunctionDef) -> set[str]:
    p = fn.params
    star = [a for a in (p.star_arg, p.star_kwarg) if isinstance(a, cst.Param)]
    return {a.name.value for a in (*p.posonly_params, *p.params, *p.kwonly_params, *star)}


def _dims(value: Value) -> str:
    return hint_dims(value.layout.dims) if isinstance(value, Array) else "..."


def _text(value: Value) -> str:
    return f"an array of layout {value.layout.describe()}" if isinstance(value, Array) else \
        f"a {type(value).__name__}"


def sequence_len(rw, node: cst.Call) -> Operand | None:
    """``len(params.blocks)``: a static int (each call's length; the program is built per length);
    ``len(xs)`` of a tuple meshify holds item by item: its length; ``len(x.shape)``: x's rank."""
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star \
            or not read_again(node.args[0].value):  # evaluated again if not one
        return None
    sequence = rw.expr(node.args[0].value)
    new = node.with_changes(args=[node.args[0].with_changes(value=sequence.node)])
    if isinstance(sequence.value, TupleValue):  # len(xs), a helper's *args: this call's count
        return Operand(Static.of(len(sequence.value.items)), node, new)
    if isinstance(sequence.value, Static) and sequence.value.shape_of is not None:  # len(x.shape): the rank
        return Operand(Static.of(len(sequence.value.shape_of)), node, new)
    if sequence_item(sequence.value) is None and mapping_item(sequence.value) is None:
        return None
    return Operand(Static(), node, new)  # (a dict of keys known only when traced: as many as it holds then)


def tree_map(rw, node: cst.Call) -> Operand:
    """``jax.tree.map(lambda *xs: jnp.stack(xs), *blocks)``: the item, each array stacked along a new
    leading dim; ``jax.tree.map(lambda w, g: w - lr * g, params, grads)``: see :func:`_leafwise`;
    ``jax.tree_util.tree_map_with_path(lambda path, p: ..., params)``: the same, each leaf's key path (JAX's
    own key objects) a Python value the lambda reads.  ``is_leaf=None`` is JAX's default: as if not given."""
    kept = [a for a in node.args if not (a.keyword is not None and a.keyword.value == "is_leaf"
                                         and isinstance(a.value, cst.Name) and a.value.value == "None")]
    if len(kept) != len(node.args):  # (tree_map = functools.partial(jax.tree.map, is_leaf=None))
        original, node = node, node.with_changes(args=[*kept[:-1], kept[-1].with_changes(
            comma=cst.MaybeSentinel.DEFAULT)] if kept else [])
        rw.ctx.anchors[node] = rw.ctx.anchors.get(original, original)
    fn = node.args[0].value if node.args and node.args[0].keyword is None else None
    if rw.ctx.qualified_names(node.func) & TREE_MAP_WITH_PATH:
        trees = node.args[1:]
        if not isinstance(fn, cst.Lambda) or not trees or any(a.star or a.keyword is not None for a in trees):
            raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node.func)}(...) with a function other than a "
                           "lambda, or with keywords or unpacked trees", "map a lambda over hinted pytrees: "
                           f"{rw.ctx.code(node.func)}(lambda path, p: p.ndim > 1, params)")
        return _leafwise(rw, node, fn, [rw.expr(a.value) for a in trees], with_path=True)
    if len(node.args) == 2 and node.args[1].star == "*" and fn is not None and _stacks(rw, fn):
        return _stacked_items(rw, node, node.args[1])
    trees = node.args[1:]
    if isinstance(fn, cst.Name | cst.Attribute) and trees and not any(a.star or a.keyword is not None for a in trees):
        # jax.tree.map(jnp.zeros_like, params), jax.tree.map(jnp.add, a, b): as the lambda calling it
        names = [f"leaf{i}" for i in range(len(trees))]
        wrapper = cst.parse_expression(f"lambda {', '.join(names)}: f({', '.join(names)})")
        assert isinstance(wrapper, cst.Lambda) and isinstance(wrapper.body, cst.Call)
        wrapper = wrapper.with_changes(body=wrapper.body.with_changes(func=fn))
        rw.ctx.anchors[wrapper] = fn
        out = _leafwise(rw, node, wrapper, [rw.expr(a.value) for a in trees])
        new_fn = out.node.args[0].value  # type: ignore[attr-defined]
        if rw.ctx.code(new_fn) == rw.ctx.code(wrapper):  # unchanged: the function as written
            out = Operand(out.value, node, out.node.with_changes(args=[node.args[0], *out.node.args[1:]]))  # type: ignore[attr-defined]
        return out
    if not isinstance(fn, cst.Lambda) or not trees or any(a.star or a.keyword is not None for a in trees):
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node.func)}(...) with a function other than a lambda, "
                       "or with keywords or unpacked trees", "map a lambda over hinted pytrees: jax.tree.map(lambda "
                       "w, g: w - 0.1 * g, params, grads); stack a sequence: jax.tree.map(lambda *xs: "
                       "jnp.stack(xs), *params.blocks)")
    return _leafwise(rw, node, fn, [rw.expr(a.value) for a in trees])


def _stacked_items(rw, node: cst.Call, items: cst.Arg) -> Operand:
    sequence = rw.expr(items.value)
    item = sequence_item(sequence.value)
    if item is None:
        raise rw.error(UnsupportedError, items.value, f"stacking {rw.ctx.code(items.value)!r}, which is not a "
                       "sequence parameter", "hint it as a field of a parameter: blocks: tuple[Block, ...]")
    dim = _stack_dim(rw.ctx.code(items.value), _dims_in(item))
    return Operand(_stacked(item, dim), node, node.with_changes(args=[node.args[0], items.with_changes(
        value=sequence.node)]))


def _leafwise(rw, node: cst.Call, fn: cst.Lambda, trees: list[Operand], with_path: bool = False) -> Operand:
    """The lambda walked once per leaf (the leaves at one path of every tree: their values; ``with_path``: the
    leaf's key path first), as JAX calls it; its rewritten code must be the same for every leaf, since the
    call keeps one lambda (else each leaf's own, ``mr.tree_map_each``).  The result has the first tree's
    structure with each leaf's result."""
    from meshify.rewrite._bodies import walk_lambda

    paths = [_leaves(t.value, "") for t in trees]
    static = next((t for t in trees if isinstance(t.value, Static)), None)
    if static is not None and len(trees) > 1:  # jax.tree.map(f, params, mask) of a mask passed in (optax.masked's)
        raise rw.error(UnsupportedError, static.original, f"{rw.ctx.code(node.func)}(...) over "
                       f"{rw.ctx.code(static.original)!r}, a static value whose structure meshify cannot read when "
                       "rewriting", "build it inside the function from the hinted pytree (mask = "
                       "jax.tree_util.tree_map_with_path(lambda path, p: ..., params)), or write it as a literal "
                       "there")
    if any([p for p, _ in leaves] != [p for p, _ in paths[0]] for leaves in paths[1:]):
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node.func)}(...) over pytrees of different structures",
                       "map over pytrees of one class (params and its gradients)")
    if with_path and any(_in_sequence(t.value) for t in trees):
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node.func)}(...) over a list of a length each call "
                       "gives (its leaves' paths are not known before the call)", "map over pytrees of fields")
    keys = _key_paths(trees[0].value, ()) if with_path else []
    results, lambdas = [], []
    params = [p.name.value for p in fn.params.params][1 if with_path else 0:]
    for at, leaves in enumerate(zip(*paths)):
        mark = rw.mark()
        args = [v for _, v in leaves]
        with _leaf_dtypes(rw, params, trees, at, len(paths[0])):
            value, new = walk_lambda(rw, fn, [Static.of(keys[at]), *args] if with_path else args,
                                     what="jax.tree.map's function")
        results.append(value)
        lambdas.append((rw.ctx.code(trees[0].original) + leaves[0][0], rw.ctx.code(new), new))
        if at:  # the same code again: keep what it runs (its collectives), not a second set of comments
            records = rw.records[mark.records:]
            rw.rollback(mark)
            rw.records.extend(records)
    different = next((other for other in lambdas[1:] if other[1] != lambdas[0][1]), None)
    if different is not None:
        if any(_in_sequence(t.value) for t in trees):
            raise rw.error(UnsupportedError, fn, f"the function of {rw.ctx.code(node.func)}(...) needs other code "
                           f"for {different[0]!r} than for {lambdas[0][0]!r} (their layouts differ), over a list of "
                           "a length each call gives", "write the per-leaf code out field by field where the layouts "
                           "differ")
        # jax.tree.map(lambda x: x.reshape(n, B // n, *x.shape[1:]), batch) over leaves split differently: each
        # leaf's own rewritten function, by its path (mr.tree_map_each)
        entries = [cst.DictElement(cst.SimpleString(json.dumps(path)), new)
                   for path, (_, _, new) in zip([p for p, _ in paths[0]], lambdas)]
        call = cst.parse_expression(f"{rw.ctx.mr}.tree_map_each(fns, with_path=True)")
        assert isinstance(call, cst.Call)
        args = [call.args[0].with_changes(value=cst.Dict(entries)),
                *(a.with_changes(value=t.node) for a, t in zip(node.args[1:], trees)), *call.args[1:] * with_path]
        return Operand(_rebuilt(trees[0].value, iter(results)), node, call.with_changes(args=args))
    new_lambda = lambdas[0][2] if lambdas else fn
    args = [node.args[0].with_changes(value=new_lambda), *(a.with_changes(value=t.node)
                                                           for a, t in zip(node.args[1:], trees))]
    return Operand(_rebuilt(trees[0].value, iter(results)), node, node.with_changes(args=args))


@contextlib.contextmanager
def _leaf_dtypes(rw, params: list[str], trees: list[Operand], at: int, count: int):
    """While the lambda is walked for leaf ``at``: each parameter fed from a list whose items meshify knows
    (``a = [jnp.sum(x), ...]``, float16 sums formed in float32) carries that item's dtype and widened-ness."""
    dtypes = rw.dtypes
    saved = [(p, dtypes.names.get(p, _UNSET), p in dtypes.wide_names) for p in params]
    for p, tree in zip(params, trees):
        items = dtypes.tuples.get(tree.original.value) if isinstance(tree.original, cst.Name) else None
        if items is None or len(items) != count:
            if isinstance(tree.original, cst.Name) and dtypes.holds_widened(tree.original.value):
                dtypes.wide_names.add(p)  # (items not known one by one: the dtype to cast back to is unknown)
                dtypes.names[p] = None
            continue
        carriers, widened = items[at]
        if widened:
            dtypes.wide_names.add(p)
            dtypes.names[p] = carriers
    try:
        yield
    finally:
        for p, names, wide in saved:
            if names is _UNSET:
                dtypes.names.pop(p, None)
            else:
                dtypes.names[p] = names
            (dtypes.wide_names.add if wide else dtypes.wide_names.discard)(p)


_UNSET = object()


def _key_paths(value: Value, path: tuple) -> list[tuple]:
    """Each leaf's key path as ``jax.tree_util.tree_map_with_path`` gives it (``GetAttrKey`` of a NamedTuple's or
    a dataclass's field, ``DictKey`` of a dict's, ``SequenceKey`` of a tuple's), in :func:`_leaves`'s order."""
    from jax.tree_util import DictKey, GetAttrKey, SequenceKey

    if isinstance(value, StructValue):
        make = DictKey if value.kind == "dict" else GetAttrKey
        return [leaf for k, v in value.fields for leaf in _key_paths(v, (*path, make(k)))]
    if isinstance(value, TupleValue):
        return [leaf for i, v in enumerate(value.items) for leaf in _key_paths(v, (*path, SequenceKey(i)))]
    return [] if is_none(value) else [path]


def _in_sequence(value: Value) -> bool:
    """Whether a pytree holds a list of a length each call gives (its leaves' paths are not spelled out)."""
    if isinstance(value, StructValue):
        return value.kind in ("sequence", "mapping") or any(_in_sequence(v) for _, v in value.fields)
    if isinstance(value, TupleValue):
        return any(_in_sequence(v) for v in value.items)
    return False


def _leaves(value: Value, path: str) -> list[tuple[str, Value]]:
    """(path, leaf) of each leaf of a pytree (a sequence: its one item, which stands for every item)."""
    if isinstance(value, StructValue):
        return [leaf for k, v in value.fields for leaf in _leaves(v, f"{path}.{k}")]
    if isinstance(value, TupleValue):
        return [leaf for i, v in enumerate(value.items) for leaf in _leaves(v, f"{path}[{i}]")]
    return [] if is_none(value) else [(path, value)]


def _rebuilt(value: Value, results) -> Value:
    if isinstance(value, StructValue):
        return StructValue(value.cls, tuple((k, _rebuilt(v, results)) for k, v in value.fields), value.kind, value.meta)
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_rebuilt(v, results) for v in value.items))
    return value if is_none(value) else next(results)


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
        return StructValue(value.cls, tuple((k, _stacked(v, dim)) for k, v in value.fields), value.kind, value.meta)
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_stacked(v, dim) for v in value.items))
    return value


def zipped(rw, node: cst.Call) -> Operand | None:
    """``zip(a, b)``, ``zip(*pairs)``, ``zip(*pairs, strict=True)`` (Python's own) of tuples or lists holding
    arrays: a static restructuring, so its value is the same items regrouped (the call stays as written; each
    device zips its own blocks).  Of known lengths: a tuple of tuples, as long as the shortest.  Where a list of
    a length meshify does not know is zipped (``zip(hs, gs)``): a sequence of tuples, every known list's items of
    one layout; ``zip(*hs)`` of such a list of tuples: one sequence per position of its tuples.  Partial sums go
    through where the lengths are known (completed where they leave, as a list literal's are).  None: not a zip
    of values holding arrays (a zip of Python values is evaluated as before)."""
    func = node.func
    if not (isinstance(func, cst.Name) and func.value == "zip" and "zip" not in rw.env and not rw.ctx.binds("zip")):
        return None
    columns: list[tuple[Value, ...] | StructValue] = []
    args, strict = [], False
    for arg in node.args:
        op = rw.expr(arg.value)
        args.append(arg.with_changes(value=op.node))
        if arg.keyword is not None:
            if arg.keyword.value != "strict" or not isinstance(op.value, Static):
                raise rw.error(UnsupportedError, arg, f"zip(..., {rw.ctx.code(arg)})", _ZIP_FIX)
            strict = bool(op.value.literal) if op.value.known else True  # (unknown: lengths must agree either way)
            continue
        listed = _listed(op.value)
        if not arg.star:
            columns.append(_zip_column(rw, arg, op.value, listed))
        elif isinstance(listed, tuple):  # zip(*pairs): each pair a column
            columns.extend(_zip_column(rw, arg, v, _listed(v)) for v in listed)
        elif isinstance(listed, StructValue):  # zip(*hs), hs of a length meshify does not know
            return _zip_unknown_rows(rw, node, arg, listed, args)
        else:
            raise rw.error(UnsupportedError, arg, f"zip(*{rw.ctx.code(arg.value)}) of {_text(op.value)}", _ZIP_FIX)
    new = node.with_changes(args=args)
    if not columns or all(isinstance(c, tuple) and all(isinstance(i, Static) for i in c) for c in columns):
        return Operand(Static(), node, new) if not columns else None  # zip(): empty; Python values: as before
    known = [c for c in columns if isinstance(c, tuple)]
    if len(known) == len(columns):
        lengths = {len(c) for c in known}
        if strict and len(lengths) > 1:
            raise rw.error(LayoutError, node, f"zip(..., strict=True) of lists of {sorted(lengths)} items (Python "
                           "raises ValueError)", "zip lists of one length")
        rows = zip(*known)  # (the shortest's length, as Python's zip)
        items = rw.dtypes.zipped(node)
        if items is not None:  # each row's items' own dtypes (hs, xs = zip(*pairs) reads them)
            rw.dtypes.call_items[node] = items
        return Operand(TupleValue(tuple(TupleValue(row) for row in rows)), node, new)
    items = []
    for column in columns:  # (a list of unknown length among them: one item's value stands for every row)
        item = sequence_item(column) if isinstance(column, StructValue) else common_item(column)
        if item is None or any(holds_partial(i) for i in listed_items(column) or ()):
            what = "partial sums" if item is not None else "items of different layouts"
            raise rw.error(LayoutError, node, f"zip of a list whose length meshify does not know with one holding "
                           f"{what}: every row it yields must have one layout",
                           f"give the items zipped by {rw.ctx.code(node)} one layout (a hint where each is made), "
                           "or spell out the rows")
        items.append(item)
    return Operand(sequence_of(TupleValue(tuple(items))), node, new)


def enumerated(rw, node: cst.Call) -> Operand | None:
    """``enumerate(a)``, ``enumerate(a, 1)`` (Python's own) of a tuple or list holding arrays, outside a loop's
    header (``pairs = list(enumerate(hs))``): its rows ``(i, a[i])``, ``i`` a Python int, the call as written.
    Of a list of a length meshify does not know: a sequence of such rows (its items whole, as zip's).  None:
    not such a call (a loop's or comprehension's ``enumerate`` is read where it is iterated)."""
    func = node.func
    if not (isinstance(func, cst.Name) and func.value == "enumerate" and "enumerate" not in rw.env
            and not rw.ctx.binds("enumerate") and 1 <= len(node.args) <= 2 and not any(a.star for a in node.args)
            and node.args[0].keyword is None
            and all(a.keyword is None or a.keyword.value == "start" for a in node.args[1:])):
        return None
    op = rw.expr(node.args[0].value)
    listed = _listed(op.value)
    if listed is None or (isinstance(listed, tuple) and all(isinstance(i, Static) for i in listed)):
        return None  # (Python values: evaluated as before)
    args = [node.args[0].with_changes(value=op.node)]
    start = 0
    if len(node.args) == 2:
        given = rw.expr(node.args[1].value)
        args.append(node.args[1].with_changes(value=given.node))
        if not (isinstance(given.value, Static) and given.value.known and isinstance(given.value.literal, int)):
            start = None
        else:
            start = given.value.literal
    new = node.with_changes(args=args)
    if isinstance(listed, tuple):
        counters = [Static() if start is None else Static.of(start + i) for i in range(len(listed))]
        return Operand(TupleValue(tuple(TupleValue((c, item)) for c, item in zip(counters, listed))), node, new)
    item = sequence_item(listed)
    if item is None or holds_partial(item):
        raise rw.error(LayoutError, node, f"enumerate of a list whose length meshify does not know, holding "
                       f"{'partial sums' if item is not None else 'items of different layouts'}: every row it "
                       "yields must have one layout",
                       f"loop over it (for i, h in {rw.ctx.code(node)}), or give its items one layout")
    return Operand(sequence_of(TupleValue((Static(), item))), node, new)


#: What a refused zip can be written as instead.
_ZIP_FIX = "zip tuples or lists (zip(a, b), zip(*pairs)), or index the items (pairs[0][1])"


def _zip_column(rw, arg: cst.Arg, value: Value, listed) -> tuple[Value, ...] | StructValue:
    """One sequence a zip takes items from: its items one by one, or the sequence of unknown length; a Python
    value of unknown items (``range(n)``, a list of ints) is a sequence of Python values, an array whole along
    its first dim a sequence of its rows (``zip(keys, hs)``, ``keys = jax.random.split(key, n)``); anything else
    (the rows of a split or partial array, a pytree's keys) is refused."""
    if listed is not None:
        return listed
    if isinstance(value, Static):
        return sequence_of(Static())
    if isinstance(value, Array) and value.layout.rank and not value.layout.axes[0] and not value.layout.partial:
        return sequence_of(Array(Layout(value.dims[1:], value.layout.axes[1:]), value.origin))
    if isinstance(value, Opaque):
        return sequence_of(Opaque(value.shape[1:] if value.shape else None))
    raise rw.error(UnsupportedError, arg, f"zip of {rw.ctx.code(arg.value)!r}, {_text(value)}: meshify zips tuples "
                   "and lists", _ZIP_FIX)


def _zip_unknown_rows(rw, node: cst.Call, arg: cst.Arg, rows: StructValue, args: list) -> Operand:
    """``zip(*hs)`` of a list of tuples whose count meshify does not know: one sequence per position of the
    tuples (every row has the item's layout, so every column has its position's)."""
    item = sequence_item(rows)
    if len(node.args) != 1 or not isinstance(item, TupleValue) or holds_partial(item):
        raise rw.error(UnsupportedError, arg, f"zip(*{rw.ctx.code(arg.value)}) of a list whose length meshify does "
                       f"not know, {'beside other lists' if len(node.args) != 1 else 'holding ' + _text(item)}",
                       "zip tuples or lists of known length, or loop over the list (for a, b in pairs)")
    return Operand(TupleValue(tuple(sequence_of(i) for i in item.items)), node, node.with_changes(args=args))
