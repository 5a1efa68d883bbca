"""Dicts of keys known only when traced: ``outs = {}``, then ``outs[f"layer{i}"] = h`` in a Python loop.

A dict display's keys are known while rewriting, and steer what it holds key by key (a
:class:`StructValue` of kind ``"dict"``).  A key meshify cannot read (an f-string of a loop's counter,
a loop variable over a list it does not know) leaves it a *mapping*: a :class:`StructValue` of kind
``"mapping"`` whose one field (:data:`ITEMS`) is every value's value, as a list appended to in a loop
is a sequence of one item's value (``_containers``).  Every value must then share that layout,
which is what makes the rewrite hold for every key:

- ``outs[k] = v`` (any key) stores a whole value of the mapping's layout (the caller completes a
  partial sum first); one of another layout, or a tuple or pytree holding a partial sum, is refused;
- ``outs[k]`` (any key) reads that value; ``len(outs)``, ``k in outs``: Python values;
- ``for k in outs``, ``outs.keys()``: keys, Python values; ``outs.values()``: a sequence of the
  value; ``outs.items()``: a sequence of ``(key, value)`` pairs; ``sorted``, ``list``, ``tuple`` and
  ``reversed`` of them the same (``sorted(outs.items())`` compares keys only: they differ).  The loop
  over them is kept as written (Python runs it when traced);
- returned, one PartitionSpec is the out_spec of the whole dict (a pytree prefix of it);
- handed to a helper, the helper is rewritten for a mapping of that layout.

What changes a mapping in place other than a store (``update``, ``pop``, ``setdefault``, ``get``, ``del``)
is refused: which keys it touches, and whether they are there, is known only when traced.
"""

from __future__ import annotations

import libcst as cst

from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._hints import ITEMS
from meshify.rewrite._values import Operand, Static, StructValue, TupleValue, Value, holds_partial

__all__ = ["listed_mapping", "mapping_index", "mapping_item", "mapping_of", "mapping_view", "stored_in_mapping"]

#: The views of a dict meshify follows (``for k, v in outs.items()``).
_VIEWS = ("items", "keys", "values")


def mapping_of(item: Value) -> StructValue:
    """A dict of keys meshify does not know while rewriting, every value ``item``'s value."""
    return StructValue("dict", ((ITEMS, item),), "mapping")


def mapping_item(value: Value | None) -> Value | None:
    """The value of every key of a mapping, or None where ``value`` is not one."""
    if isinstance(value, StructValue) and value.kind == "mapping":
        return value.field(ITEMS)
    return None


def stored_in_mapping(rw, target: cst.Subscript, name: str, held: StructValue, key: Value, value: Value) -> Value:
    """``outs[k] = v`` where ``k`` is a key meshify does not know (or ``outs`` already a mapping): ``outs`` a
    mapping of the one layout its values and ``v`` share.  ``held``: the dict (its keys known) or the mapping
    ``outs`` holds; the caller has checked this function made it and no other name holds it."""
    from meshify.rewrite._containers import _text, common_item, one_layout

    code = rw.ctx.code(target)
    if not isinstance(key, Static):
        raise rw.error(UnsupportedError, target, f"{code} = ...: a key that is an array", f"key {name!r} by a "
                       "Python value (a string, an f-string of a loop's counter)")
    if holds_partial(value):  # (an array was completed by the caller: a tuple or pytree of them is not)
        raise rw.error(UnsupportedError, target, f"{code} = ... stores a tuple or pytree holding a partial sum "
                       "at a key meshify does not know", f"store whole arrays: complete it first, or store its "
                       f"arrays one by one ({name}[k] = a)")
    item = mapping_item(held)
    values = [item] if item is not None else [v for _, v in held.fields]
    common = common_item([*values, value])  # (values differing only by names meshify inferred: the user's)
    other = one_layout(values, like=value) if common is None else None
    if other is not None or (common is None and values):
        other = other if other is not None else values[0]
        raise rw.error(LayoutError, target, f"{code} = ... stores {_text(value)} at a key meshify does not know "
                       f"while rewriting, in the dict {name!r} holding {_text(other)}: every value of such a dict "
                       "must have one layout (its keys, and so which value is which, are known only when traced)",
                       f"give the values one layout (a hint pins one: v: Tensor[...] = ...), or keep them in two "
                       f"dicts, or store at string literals ({name}['k'] = v)")
    result = mapping_of(common if common is not None else value)
    rw.rebind_list(name, result)
    return result


def mapping_index(rw, node: cst.Subscript, base: Operand) -> Operand:
    """``outs[k]`` of a mapping, ``k`` any Python value: the value every key holds."""
    element = node.slice[0].slice if len(node.slice) == 1 else None
    key = rw.expr(element.value) if isinstance(element, cst.Index) else None
    if key is None or not isinstance(key.value, Static):
        raise rw.error(UnsupportedError, node, f"indexing the dict {rw.ctx.code(node.value)!r} with a slice, an "
                       "array or several indices", "read one key: outs[k], k a Python value")
    return Operand(mapping_item(base.value), node, node.with_changes(  # type: ignore[arg-type]
        value=base.node, slice=[node.slice[0].with_changes(slice=element.with_changes(value=key.node))]))


def mapping_view(rw, node: cst.Call, receiver: Operand) -> Operand | None:
    """``outs.items()``, ``outs.keys()``, ``outs.values()`` of a mapping (what a kept loop goes over): a sequence
    of (key, value) pairs, Python values, a sequence of values; a method that changes it in place, or
    ``outs.get(k)`` (a value or None, known only when traced), refused.  None: not a mapping."""
    from meshify.rewrite._containers import sequence_of

    item = mapping_item(receiver.value)
    if item is None:
        return None
    assert isinstance(node.func, cst.Attribute)
    method, code = node.func.attr.value, rw.ctx.code(node.func.value)
    if method not in _VIEWS:
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node)}: {code!r} is a dict whose keys meshify knows "
                       f"only when traced; .{method}() of it is not modelled", f"read it by key ({code}[k]) or go "
                       f"over {code}.items(); build a new dict where it changes ({{**{code}, k: v}} is refused "
                       "too: store into it, a key at a time)")
    if node.args:
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node)} with arguments", f"{code}.{method}()")
    new = node.with_changes(func=node.func.with_changes(value=receiver.node))
    if method == "keys":
        return Operand(Static(), node, new)
    return Operand(sequence_of(TupleValue((Static(), item)) if method == "items" else item), node, new)



def listed_mapping(rw, node: cst.Call) -> Operand | None:
    """``sorted(outs)``, ``list(outs.keys())`` (Python values: its keys), ``list(outs.values())``,
    ``sorted(outs.items())`` (the sequence the view is) of a mapping ``outs`` (Python's own builtins).  None:
    not such a call (``sorted(outs.values())`` compares arrays: left to the rules, which refuse it)."""
    func = node.func
    if not (isinstance(func, cst.Name) and func.value in ("list", "tuple", "sorted", "reversed")
            and func.value not in rw.env and not rw.ctx.binds(func.value) and len(node.args) == 1
            and node.args[0].keyword is None and not node.args[0].star):
        return None
    argument = node.args[0].value
    viewed = isinstance(argument, cst.Call) and isinstance(argument.func, cst.Attribute) and not argument.args \
        and argument.func.attr.value in _VIEWS
    base = argument.func.value if viewed else argument  # type: ignore[attr-defined]
    if not (isinstance(base, cst.Name) and mapping_item(rw.env.get(base.value)) is not None):
        return None
    method = argument.func.attr.value if viewed else "keys"  # type: ignore[attr-defined]
    if func.value == "sorted" and method == "values":
        return None
    op = rw.expr(argument)
    new = node.with_changes(args=[node.args[0].with_changes(value=op.node)])
    return Operand(Static() if method == "keys" else op.value, node, new)
