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

- ``outs.get(k, default)``, ``outs.pop(k, default)``, ``outs.setdefault(k, default)``: the value every key
  holds, the default given that layout first (a partial sum completed, a split changed); ``outs.get(k)`` (or a
  default of None): that value *or None*, known only when traced, so ``if prev is not None:`` keeps both
  branches (:func:`maybe_none`; handed to a helper or returned from one, it is an array or None there too);
- ``outs.update(...)`` (a dict, a dict of keys known only when traced, keywords), ``{**outs, "k": v}``,
  ``dict(outs, k=v)``: a mapping of the values' one layout (a partial sum completed before it goes in);
- ``jax.tree.leaves(outs)``, ``jax.tree.map(fn, outs)``: a sequence of the value, a mapping of ``fn``'s.

``del outs[k]`` and ``outs.popitem()`` are refused.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._hints import ITEMS
from meshify.rewrite._values import Array, Operand, Static, StructValue, TupleValue, Value, holds_partial

__all__ = ["changed_mapping", "first_read", "joined_mapping", "listed_mapping", "mapping_get", "mapping_index", "mapping_item",
           "mapping_of", "mapping_view", "maybe_none", "maybe_none_paths", "maybe_pytree", "refuse_maybe_none", "stored_in_mapping",
           "whole_value", "with_maybe_none"]

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
    if method == "get":
        return mapping_get(rw, node, receiver, item)
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


def maybe_none(rw, value: Value | None) -> bool:
    """Whether ``value`` is or holds what ``outs.get(k)`` gave: an array or None, known only when traced (the
    very object: a value built from it is an array, or Python's error)."""
    if any(value is v for v in rw.maybe_none):
        return True
    if isinstance(value, TupleValue):
        return any(maybe_none(rw, v) for v in value.items)
    return isinstance(value, StructValue) and any(maybe_none(rw, v) for _, v in value.fields)


def maybe_pytree(rw, value: Value | None) -> bool:
    """Whether ``value`` is or holds a tuple or pytree that is None or not, known only when traced (what ``.get(k)``
    gave of a dict of dicts)."""
    if any(value is v for v in rw.maybe_none):
        return isinstance(value, TupleValue | StructValue)
    if isinstance(value, TupleValue):
        return any(maybe_pytree(rw, v) for v in value.items)
    return isinstance(value, StructValue) and any(maybe_pytree(rw, v) for _, v in value.fields)


def maybe_none_paths(rw, value: Value | None, path: tuple = ()) -> frozenset[tuple]:
    """Where ``value`` holds an array or None known only when traced (:func:`maybe_none`): each one's path of
    item indices and field names (``()``: ``value`` itself).  A helper's version notes them in what it returns,
    and its caller marks them in the value it gets (:func:`with_maybe_none`)."""
    if any(value is v for v in rw.maybe_none):
        return frozenset({path})
    if isinstance(value, TupleValue):
        return frozenset().union(*(maybe_none_paths(rw, v, (*path, i)) for i, v in enumerate(value.items)))
    if isinstance(value, StructValue):
        return frozenset().union(*(maybe_none_paths(rw, v, (*path, k)) for k, v in value.fields))
    return frozenset()


def with_maybe_none(rw, value: Value, paths: frozenset[tuple]) -> Value:
    """``value`` (a helper's result) with what sits at ``paths`` (:func:`maybe_none_paths`) an array or None
    known only when traced in ``rw``, each its own object (``if mask is not None:`` then keeps both branches)."""
    if not paths:
        return value
    if () in paths:
        fresh = replace(value)  # type: ignore[type-var]
        rw.maybe_none.append(fresh)
        return fresh

    def below(key) -> frozenset[tuple]:
        return frozenset(p[1:] for p in paths if p[0] == key)

    if isinstance(value, TupleValue):
        return value.of(with_maybe_none(rw, v, below(i)) for i, v in enumerate(value.items))
    if isinstance(value, StructValue):
        return replace(value, fields=tuple((k, with_maybe_none(rw, v, below(k))) for k, v in value.fields))
    return value


def whole_value(rw, op: Operand, item: Value, what: str) -> cst.BaseExpression:
    """``op``'s node given ``item``'s layout (a partial sum completed, a split changed), for a value that goes
    into (or stands for one of) a dict of keys known only when traced; refused where its dims differ."""
    from meshify.annotate._types import unify_dims
    from meshify.rewrite._containers import _text, common_item

    value = op.value
    if isinstance(value, Array) and isinstance(item, Array) and value.layout.rank == item.layout.rank \
            and all(unify_dims(a, b) is not None for a, b in zip(value.dims, item.dims)):
        return rw.convert(op, item.layout, what)
    if not holds_partial(value) and common_item([item, value]) is not None:
        return op.node
    raise rw.error(LayoutError, op.original, f"{rw.ctx.code(op.original)!r} is {_text(value)}, {what} whose "
                   f"every value is {_text(item)} (its keys, and so which value is which, are known only when "
                   "traced)", "give it that layout (a hint pins one: v: Tensor[...] = ...), or keep it apart")


def _plain_args(rw, node: cst.Call, least: int, most: int) -> list[cst.Arg]:
    args = list(node.args)
    if not least <= len(args) <= most or any(a.keyword is not None or a.star for a in args):
        method = node.func.attr.value  # type: ignore[attr-defined]
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node)}: .{method}() with these arguments",
                       f".{method}(k" + (", default)" if most > 1 else ")") + " (positional, a Python key)")
    return args


def _key(rw, arg: cst.Arg) -> Operand:
    key = rw.expr(arg.value)
    if not isinstance(key.value, Static):
        raise rw.error(UnsupportedError, arg.value, f"a dict keyed by {rw.ctx.code(arg.value)!r}, an array",
                       "key it by a Python value (a string, an f-string of a loop's counter)")
    return key


def mapping_get(rw, node: cst.Call, receiver: Operand, item: Value) -> Operand:
    """``outs.get(k)``, ``outs.get(k, default)`` of a dict every value of which is ``item``'s (a mapping, or a
    dict of known keys read at a key meshify does not know): ``item``, the default given its layout; without a
    default (or None), ``item`` or None, known only when traced (:func:`maybe_none`)."""
    args = _plain_args(rw, node, 1, 2)
    key = _key(rw, args[0])
    new_args = [args[0].with_changes(value=key.node)]
    code = rw.ctx.code(node.func.value)  # type: ignore[attr-defined]
    value = item
    if len(args) == 2 and not (isinstance(args[1].value, cst.Name) and args[1].value.value == "None"):
        default = rw.expr(args[1].value)
        new_args.append(args[1].with_changes(value=whole_value(rw, default, item, f"the default of {code}.get(), a "
                                                                             "dict")))
    else:
        value = replace(item)  # (its own object: told apart from the values of outs[k])
        rw.maybe_none.append(value)
        new_args += args[1:]
    func = node.func.with_changes(value=receiver.node)  # type: ignore[attr-defined]
    return Operand(value, node, node.with_changes(func=func, args=new_args))


def changed_mapping(rw, node: cst.Call) -> Operand | None:
    """``outs.pop(k[, default])``, ``outs.setdefault(k, default)``, ``outs.update(...)`` of a dict this function
    made whose keys meshify does not know (or, for ``update``, any dict of arrays it made, updated by a dict
    of keys it does not know): the value it gives, ``outs`` a mapping of its values' one layout.  None: not
    such a call."""
    from meshify.rewrite._containers import own_dict

    func = node.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.attr.value in ("pop", "setdefault", "update", "popitem")):
        return None
    name, method = func.value.value, func.attr.value
    held = rw.env.get(name)
    item = mapping_item(held)
    if not (item is not None or method == "update" and isinstance(held, StructValue) and held.kind == "dict"):
        return None
    own_dict(rw, node, name, "k")
    if method == "popitem":
        raise rw.error(UnsupportedError, node, f"{rw.ctx.code(node)}: which key it takes is known only when traced",
                       f"take a key you name: {name}.pop(k)")
    if method == "update" and item is None and not _updates_unknown(rw, node):
        return _updated_by_key(rw, node, name, held)  # type: ignore[arg-type]
    if method == "update":
        return _updated(rw, node, name, held)  # type: ignore[arg-type]
    args = _plain_args(rw, node, 1 if method == "pop" else 2, 2)
    key = _key(rw, args[0])
    new_args = [args[0].with_changes(value=key.node)]
    if len(args) == 2:
        default = rw.expr(args[1].value)
        new_args.append(args[1].with_changes(value=whole_value(rw, default, item, f"the default of {name}."
                                                                             f"{method}(), a dict")))
    return Operand(item, node, node.with_changes(args=new_args))  # type: ignore[arg-type]


def _updates_unknown(rw, node: cst.Call) -> bool:
    """Whether ``d.update(...)`` gives ``d`` keys meshify does not know: a dict of such keys, or a display
    with a key that is not a literal (the argument's value read from the names it holds, not evaluated)."""
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    return any(isinstance(argument, cst.Name) and mapping_item(rw.env.get(argument.value)) is not None
               or isinstance(argument, cst.Dict) and any(
                   isinstance(e, cst.StarredDictElement) and isinstance(e.value, cst.Name)
                   and mapping_item(rw.env.get(e.value.value)) is not None
                   or isinstance(e, cst.DictElement) and not isinstance(e.key, cst.SimpleString)
                   for e in argument.elements) for argument in positional)


def _updated_by_key(rw, node: cst.Call, name: str, held: StructValue) -> Operand:
    """``cache.update({"k": v})``, ``cache.update(other)``, ``cache.update(k=v)`` of a dict of known keys, by
    keys meshify knows: its items with those replaced, or added last (as ``cache["k"] = v`` does)."""
    fields = dict(held.fields)
    args = []
    for arg in node.args:
        op = rw.expr(arg.value)
        if arg.keyword is not None and not arg.star:
            fields[arg.keyword.value] = op.value
        elif not arg.star and isinstance(op.value, StructValue) and op.value.kind == "dict":
            fields.update(op.value.fields)
        else:
            raise rw.error(UnsupportedError, arg.value, f"{name}.update({rw.ctx.code(arg.value)}): not a dict of "
                           "arrays meshify follows", f"update it from a dict display ({name}.update({{'k': v}})), "
                           f"or store a key at a time ({name}['k'] = v)")
        args.append(arg.with_changes(value=op.node))
    rw.rebind_list(name, StructValue(held.cls, tuple(fields.items()), "dict", held.meta))
    rw.dtypes.updated(name, node, partial=True)
    return Operand(Static.of(None), node, node.with_changes(args=args))


def _updated(rw, node: cst.Call, name: str, held: StructValue) -> Operand:
    """``outs.update(other)``, ``outs.update({"k": v, **m})``, ``outs.update(k=v)``: ``outs`` a mapping of the
    one layout every value shares (partial sums completed before they go in)."""
    values: list[Value] = [mapping_item(held)] if mapping_item(held) is not None else [v for _, v in held.fields]
    args = []
    for arg in node.args:
        if arg.star:
            raise rw.error(UnsupportedError, arg, f"{name}.update(*...)", f"{name}.update(other_dict)")
        if arg.keyword is None and isinstance(arg.value, cst.Dict):
            joined = joined_mapping(rw, arg.value, values)
            args.append(arg.with_changes(value=joined.node))
            values = [mapping_item(joined.value)]  # type: ignore[list-item]
            continue
        op = rw.expr(arg.value)
        if arg.keyword is None:
            more = [mapping_item(op.value)] if mapping_item(op.value) is not None else [
                v for _, v in op.value.fields] if isinstance(op.value, StructValue) and op.value.kind == "dict" \
                else None
            if more is None or any(holds_partial(v) for v in more):
                raise rw.error(UnsupportedError, arg.value, f"{name}.update({rw.ctx.code(arg.value)}): not a dict of "
                               "whole arrays meshify follows", f"update it from a dict of arrays ({name}.update("
                               f"{{'k': v}}), or store a key at a time ({name}[k] = v)")
            values, new = [*values, *more], op.node
        else:
            new = whole_value(rw, op, _one_item(rw, arg.value, [*values, op.value], name), f"a value of {name!r}, "
                              "a dict")
            values = [*values, op.value]
        args.append(arg.with_changes(value=new))
    result = mapping_of(_one_item(rw, node, values, name))
    rw.rebind_list(name, result)
    rw.dtypes.updated(name, node, partial=False)
    return Operand(Static.of(None), node, node.with_changes(args=args))


def _one_item(rw, where: cst.CSTNode, values: list[Value], name: str) -> Value:
    """The one value every value of the dict ``name`` of keys known only when traced has (partial sums taken
    as completed), or refused."""
    from meshify.rewrite._containers import _text, common_item

    whole = [Array(v.layout.with_partial(()), v.origin) if isinstance(v, Array) else v for v in values]
    common = common_item(whole)
    if common is None or isinstance(common, Static):
        shown = ", ".join(dict.fromkeys(_text(v) for v in whole))
        raise rw.error(LayoutError, where, f"the dict {name!r} would hold values of different layouts ({shown}) at "
                       "keys meshify does not know while rewriting: every value of such a dict must have one layout",
                       "give the values one layout (a hint pins one: v: Tensor[...] = ...), or keep them in two dicts")
    return common


def joined_mapping(rw, node: cst.Dict, values: list[Value] = (), where: cst.CSTNode | None = None  # type: ignore[assignment]
                   ) -> Operand:
    """``{**outs, "extra": y}``, ``{f"l{i}": h, **m}``: a dict display some of whose keys meshify does not know
    (a ``**`` of a mapping, a key that is not a literal): a mapping of the one layout of its values (and of
    ``values``, what it joins), each value completed and given it.  ``where``: the code it stands for, where
    ``node`` was made here (``dict(outs, k=v)``)."""
    where = where if where is not None else node
    parts: list[tuple[cst.BaseDictElement, Operand]] = []
    values = list(values)
    for e in node.elements:
        if isinstance(e, cst.StarredDictElement):
            op = rw.expr(e.value)
            more = [mapping_item(op.value)] if mapping_item(op.value) is not None else [
                v for _, v in op.value.fields] if isinstance(op.value, StructValue) and op.value.kind == "dict" \
                else None
            if more is None or any(holds_partial(v) for v in more):
                raise rw.error(UnsupportedError, e.value, f"**{rw.ctx.code(e.value)} beside keys meshify does not know "
                               "while rewriting: not a dict of whole arrays meshify follows", "unpack a dict of "
                               "arrays this function made, or store a key at a time (d[k] = v)")
            values += more
        else:
            assert isinstance(e, cst.DictElement)
            key = rw.expr(e.key)
            if not isinstance(key.value, Static):
                raise rw.error(UnsupportedError, e.key, f"a dict keyed by {rw.ctx.code(e.key)!r}, an array",
                               "key it by a Python value (a string, an f-string of a loop's counter)")
            op = rw.expr(e.value)
            values.append(op.value)
            e = e.with_changes(key=key.node)
        parts.append((e, op))
    item = _one_item(rw, where, values, rw.ctx.code(where))
    elements = [e.with_changes(value=op.node if isinstance(e, cst.StarredDictElement) else
                               whole_value(rw, op, item, "a value of a dict")) for e, op in parts]
    return Operand(mapping_of(item), node, node.with_changes(elements=elements))


def refuse_maybe_none(rw, operands, what: str) -> None:
    """Refuses handing on what ``outs.get(k)`` gave (an array or None, known only when traced) to a helper, or
    returning it from one: there it would be taken for an array, and ``if v is None:`` decided while rewriting."""
    for op in operands:
        if maybe_none(rw, op.value):
            code = rw.ctx.code(op.original)
            raise rw.error(UnsupportedError, op.original, f"{code!r}, an array or None known only when traced (what "
                           f"a dict's .get() gave, or 'a if flag else None'), is {what}",
                           "test it first (if v is not None: ...) and hand on the array in that branch, read a dict by "
                           "key where it is there (d[k]), or give .get() a default array (d.get(k, jnp.zeros_like(h)))")


def first_read(rw, base: cst.BaseExpression, held: StructValue) -> bool:
    """``outs[f"l{i - 1}"]`` (or ``.get``) of ``outs = {}`` in a kept loop that carries it: its body is walked
    first with the empty dict it found before the loop, and again with a dict of keys known only when traced
    where the body stores into it at such keys (``_interp._check_carried``); the first walk reads an unknown
    Python value, and the loop is refused where the second walk does not come (``rw.first_reads``)."""
    if not (isinstance(base, cst.Name) and held.kind == "dict" and not held.fields
            and any(base.value in names for names in rw.loop_carried)):
        return False
    rw.first_reads.add(base.value)
    return True

