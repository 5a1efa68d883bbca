"""What a value's dtype is, written as code: so that float16/bfloat16 partial sums are exact.

Hints name dims, not dtypes, so the rewriter cannot know whether ``x @ w`` runs in float32 or
bfloat16.  On one device ``jnp.sum`` and ``x @ w`` of low-precision floats accumulate in float32
and round once; a sharded program that rounds each device's partial sum to bfloat16 before the
psum overflows (float16) or cancels (bfloat16) where the single-device program does not.  So a
partial sum is formed in float32 when its operands are low-precision (``dtype=mr.sum_dtype(x)``,
``preferred_element_type=mr.sum_dtype(x, w)``) and cast back by the psum that completes it
(``mr.psum(h, "model", like=(x, w))``): both need the dtype the single-device op would have, as an
expression valid where the code runs.

A *carrier* is such an expression's text: ``jnp.result_type(*carriers)`` is the value's dtype.
Carriers are the function's parameters (a parameter the body rebinds is read once at the top:
``x_dtype = x.dtype``), struct fields (``p.w``), names bound once, dtypes the code spells
(``x.astype(jnp.bfloat16)``), and ``bool`` for comparisons; a name bound to an expression of
known carriers stands for those carriers, so they stay valid after the name is rebound.  What
cannot be told is None: no float32 accumulation is asked for (the psum still adds in float32).

A tuple's items (``t = (x @ w, y)``, a helper's ``return v0, v1``) keep their own carriers and
widened-ness (:data:`Items`): ``t[0]``, and ``a, b = helper(...)`` in the caller, read their item's,
so the psum completing one casts it back.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from typing import Self

import libcst as cst

from meshify.rewrite._names import dotted_name, read_again
from meshify.rewrite._signatures import BINARY, STATS, UNARY
from meshify.rewrite._values import Array, FunctionRef, Opaque, Static, StructValue, TupleValue, holds_partial
from meshify.rewrite.rules._api import BODY_OPS

__all__ = ["DTYPE_BYTES", "Dtypes", "Carriers", "Items"]

#: Bytes per element of the dtypes explain names (64-bit ones as JAX's default keeps them: 32-bit).
DTYPE_BYTES = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 4,
               "uint64": 4, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 4, "complex64": 8,
               "complex128": 8}
#: What JAX makes of a 64-bit dtype with ``jax_enable_x64`` off.
_X32 = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}


#: Sorted, unique carrier texts; () for a weakly typed Python scalar; None when unknown.
Carriers = tuple[str, ...] | None
#: A tuple's items, in order: each one's carriers and whether it is a partial sum formed in float32.
Items = tuple[tuple[Carriers, bool], ...]

_BOOLEAN = frozenset({"isnan", "isinf", "isfinite", "signbit", "logical_and", "logical_or", "logical_not",
                      "logical_xor", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                      "isclose", "isposinf", "isneginf", "isreal", "iscomplex", "eq", "ne", "lt", "le", "gt",
                      "ge"})
#: Elementwise functions whose result dtype is not their operands' (float_power computes in the widest
#: float; angle of a complex is real; lax.complex and wofz make complex numbers of real ones): their dtype is
#: unknown here.
_OWN_DTYPE = frozenset({"float_power", "angle", "real", "imag", "bitwise_count", "population_count",
                        "complex", "wofz"})
#: einops calls: the dtype of their tensor.
_EINOPS = frozenset({"einops.rearrange", "einops.repeat", "einops.reduce"})
#: Calls whose result has the dtype of their first array argument (and ``dtype=``, where given).
_SAME_AS_FIRST = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "prod", "cumsum", "cumprod", "var", "std", "nansum", "nanmean",
    "nanvar", "nanstd", "nanmax", "nanmin", "nancumsum", "nancumprod",
    "reshape", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to", "ravel", "flatten",
    "take", "take_along_axis", "dot_product_attention", "softmax", "log_softmax", "logsumexp", "tril", "triu",
    "zeros_like", "ones_like",
    "empty_like", "roll", "flip", "pad", "repeat", "tile", "split", "array_split", "sort", "diff", "linalg.norm",
    "norm", "real", "imag", "conj", "astype", "asarray", "array", "stop_gradient", "T", "mT", "clip",
    "dynamic_update_slice", "dynamic_update_slice_in_dim", "dynamic_slice_in_dim", "dynamic_index_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_slice", "top_k", "segment_sum", "segment_max", "segment_min", "segment_prod", "diagonal", "diag",
    "trace",
})
#: Calls whose result has the promoted dtype of all their array arguments.
_PROMOTED = frozenset({"matmul", "dot", "einsum", "tensordot", "inner", "outer", "vdot", "kron", "where",
                       "concatenate", "concat", "stack", "hstack", "vstack", "column_stack", "full_like", "select",
                       "huber_loss", "l2_loss", "squared_error", "hinge_loss"})
#: Calls joining the arrays of a list (their first argument): their leaves' promoted dtype, see ``_joined``.
_JOINS = frozenset({"array", "asarray", "stack", "concatenate", "concat", "hstack", "vstack", "column_stack"})
#: Calls whose result has the promoted dtype of their first two arguments (the image and the kernel).
_FIRST_TWO = frozenset({"jax.lax.conv_general_dilated", "jax.lax.conv", "jax.lax.conv_with_general_padding",
                        "jax.lax.conv_transpose"})
#: Keywords naming the result's dtype.
_DTYPE_KEYWORDS = ("dtype", "preferred_element_type")


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


@functools.cache
def _dtype_position(name: str) -> int | None:
    """Where a dtype parameter of ``name``'s declared signature stands among its positional ones, or None."""
    from meshify.rewrite._signatures import signature

    sig = signature(name)
    if sig is None:
        return None
    positional = [p.name for p in sig.params if p.kind in ("positional", "either")]
    return next((i for i, p in enumerate(positional) if p in _DTYPE_KEYWORDS), None)
#: Keywords and positions of non-array parameters of the calls above (ignored when promoting).
_NON_ARRAY_KEYWORDS = frozenset({"axis", "axes", "keepdims", "ddof", "shape", "newshape", "order", "mode",
                                 "fill_value", "indices", "precision", "optimize", "approximate", "initial",
                                 "where", "out", "k", "repeats", "reps", "pad_width", "constant_values",
                                 "shift", "a_min", "a_max", "min", "max", "ord", "b", "return_sign"})


class Dtypes:
    """Carriers of the values one function binds (see the module docstring)."""

    def __init__(self, rw, unknown: frozenset[str] = frozenset()) -> None:
        self.rw = rw
        #: Parameters whose dtypes the caller cannot express (a helper's argument of unknown dtype).
        self.unknown = unknown
        #: Calls (original nodes) that form a partial sum in float32 for low-precision operands, and
        #: the names holding such a partial sum until its psum.
        self.widened: set[cst.CSTNode] = set()
        self.wide_names: set[str] = set()
        fn = rw.fn
        p = fn.params
        self.params = [q.name.value for q in (*p.posonly_params, *p.params, *p.kwonly_params)]
        counts = Counter(_bindings(fn.body))  # a copy: the cached count is shared
        for name in self.params:
            counts[name] += 1
        #: Names bound more than once in the body (a parameter reassigned counts).
        self.rebound = {name for name, n in counts.items() if n > 1}
        #: Name -> the carriers of what the body last bound to it.
        self.names: dict[str, Carriers] = {}
        #: Rebound parameter -> the name its dtype is read into at the top of the body.
        self.captures: dict[str, str] = {}
        #: Helper calls (by node) -> the carriers of their result, in the caller's terms.
        self.calls: dict[cst.CSTNode, Carriers] = {}
        #: Rewritten nodes standing for an expression of the user's (an unrolled comprehension's items, read by
        #: the rules as written out) -> that expression, whose carriers they have.
        self.aliases: dict[cst.CSTNode, cst.BaseExpression] = {}
        #: ``f(*xs)``, ``g(**kw)`` -> the call with its items spelled out (whose dtype is recorded).
        self.spelled: dict[cst.CSTNode, cst.Call] = {}
        #: Helper calls (by node) returning a tuple -> its items, in the caller's terms.
        self.call_items: dict[cst.CSTNode, Items] = {}
        #: Comprehensions a sum adds up (``sum(h @ w for h in hs)``) -> the carriers of their items outside them.
        self.comprehensions: dict[cst.CSTNode, Carriers] = {}
        #: Name -> the items of the tuple the body last bound to it (a name of no entry: not known).
        self.tuples: dict[str, Items] = {}
        self._taken = counts.keys() | set(self.params)

    # -- binding ------------------------------------------------------------------------------

    def bind(self, name: str, node: cst.BaseExpression | None, value: object = None, held: bool = False) -> None:
        """``name`` is bound to ``node`` (None: a value of no expression), whose value is ``value``; ``held``: a
        lambda's parameter the rewrite made (``labels_held``), not in scope where its carriers are read."""
        carriers = self.of(node) if node is not None else None
        partial = isinstance(value, Array) and bool(value.layout.partial)
        items = self.items_of(node, value) if isinstance(value, TupleValue) and node is not None else None
        if isinstance(value, StructValue) and value.kind == "dict" and node is not None:
            items = self._dict_items(node)
        if items is not None:
            self.tuples[name] = items
        else:
            self.tuples.pop(name, None)
        if partial and node is not None and self.contains_widened(node):
            self.wide_names.add(name)
        elif items is None and isinstance(value, StructValue | TupleValue) and holds_partial(value) \
                and node is not None and self.contains_widened(node):
            # m = dict(d), {**d}: a pytree holding a float32-formed partial sum whose items meshify does not
            # know: an item read from it has unknown carriers (refused where completed, never left float32)
            self.wide_names.add(name)
        else:
            self.wide_names.discard(name)
        if (carriers is None or (not held and any(not re.fullmatch(r"[A-Za-z_][\w.]*", c) for c in carriers))) \
                and name not in self.rebound and not partial:
            # the name itself (a partial sum's own dtype may be float32 where its sum's is not): an expression's
            # text would be traced again where it is read, on operands whose blocks may not broadcast as written
            carriers = (name,)
        if isinstance(value, Static):
            self.names.pop(name, None)
        else:
            self.names[name] = carriers

    def loop_targets(self, sources: list[tuple[str, cst.BaseExpression]]) -> dict[str, Carriers]:
        """``for w, v in zip(ws, vs)``: inside the body ``w`` and ``v`` carry their own dtypes (this iteration's
        items); returns what each stands for after the loop (``*ws``: a value built from every iteration's items
        has their promoted dtype; None where the sequence has no carriers), for :meth:`left_loop`."""
        after: dict[str, Carriers] = {}
        for name, sequence in sources:
            carriers = self.of(sequence)
            after[name] = None if not carriers else tuple(f"*{c}" for c in carriers)
            self.names[name] = (name,)
            self.bind_item(name, sequence)
        return after

    def bind_item(self, name: str, sequence: cst.BaseExpression) -> None:
        """``name`` bound to each item of ``sequence`` in turn (a loop's or a comprehension's target): where an
        item holds a float32-formed partial sum, so does ``name``, its carriers every item's."""
        known = self.tuples.get(sequence.value) if isinstance(sequence, cst.Name) else None
        item = self.rw.env.get(name)
        if known is None and not isinstance(sequence, cst.Name) and isinstance(item, Array) \
                and item.layout.partial and self.contains_widened(sequence):
            # for t in jnp.split(x @ w, 2): each item a float32-formed partial sum of the sequence's dtype (none
            # known: refused where it is completed, never left float32)
            self.wide_names.add(name)
            if isinstance(sequence, cst.Tuple | cst.List):  # for t in (a @ w, b @ w): each item's, where all agree
                each = {self.of(e.value) for e in sequence.elements if not isinstance(e, cst.StarredElement)}
                self.names[name] = each.pop() if len(each) == 1 and all(
                    isinstance(e, cst.Element) for e in sequence.elements) else None
            else:
                self.names[name] = self.of(sequence)
            return
        if known is None and not (isinstance(sequence, cst.Name) and sequence.value in self.wide_names):
            return
        if known is not None and not any(w for _, w in known):
            return
        self.wide_names.add(name)
        # the body runs once per item, each completed with one like=: the items' dtypes must agree (a bfloat16
        # and a float32 partial sum promoted together would give the bfloat16 one float32)
        each = {c for c, wide in known or ((None, True),) if wide}
        self.names[name] = each.pop() if len(each) == 1 else None

    def bind_columns(self, target: cst.BaseExpression, sequence: cst.BaseExpression) -> None:
        """``for y, x in zip(*pairs)`` (a loop's or a comprehension's target unpacking each row of ``sequence``, a
        tuple whose rows' items are known, :class:`NestedItems`): where a position's items hold a float32-formed
        partial sum, so does its name, its carriers every row's item there (a whole item's name keeps carriers
        of its own where it has them)."""
        rows = self.call_items.get(sequence) or self._spelled_items(sequence)
        if not (isinstance(rows, NestedItems) and isinstance(target, cst.Tuple | cst.List)):
            return
        width = len(target.elements)
        if any(r is None or len(r) != width for r in rows.inner):
            return
        for j, e in enumerate(target.elements):
            column = [r[j] for r in rows.inner]  # type: ignore[index]
            if not isinstance(e.value, cst.Name):
                continue
            carriers: Carriers = ()
            for c, _ in column:
                carriers = _union(carriers, c)
            if any(w for _, w in column):
                self.wide_names.add(e.value.value)
                self.names[e.value.value] = carriers
            elif carriers is not None and self.names.get(e.value.value) is None:  # (a whole item: its own name's)
                self.names[e.value.value] = carriers

    def left_loop(self, after: dict[str, Carriers]) -> None:
        """After the loop :meth:`loop_targets` bound: carriers naming its targets stand for every item."""
        def outside(carriers: Carriers) -> Carriers:
            if carriers is None:
                return None
            out: Carriers = ()
            for text in carriers:
                if text in after:
                    out = _union(out, after[text])
                elif any(n in after for n in _names_in(text)):
                    return None
                else:
                    out = _union(out, (text,))
            return out

        for name in list(self.names):
            self.names[name] = None if name in after else outside(self.names[name])
        def mapped(items: Items) -> Items:
            flat = tuple((outside(c), w) for c, w in items)
            if isinstance(items, NestedItems):  # (pairs' items' own items, for zip(*pairs) after the loop)
                return NestedItems(flat, tuple(None if i is None else mapped(i) for i in items.inner))
            if isinstance(items, KeyedItems):  # (a dict's values, by key: d["acc"] after the loop)
                return KeyedItems(flat, items.keys)
            return flat

        for name, items in list(self.tuples.items()):
            self.tuples[name] = mapped(items)

    def completed(self, name: str) -> None:
        """``name``'s partial sum was completed by a psum in place (its dtype is cast back)."""
        self.wide_names.discard(name)

    def stored(self, target: cst.Subscript, node: cst.BaseExpression | None, partial: bool) -> None:
        """``d["k"] = node``, ``hs[0] = node`` (a dict's or list's item replaced or added; ``partial``: it is stored a
        partial sum, not completed first): that item's carriers and widened-ness from here on.  At a key or index
        meshify does not read here, the items are no longer known one by one (where one held a float32-formed
        partial sum, reading any is refused where it is completed: never the stale dtype of the one replaced)."""
        if not (isinstance(target.value, cst.Name) and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index)):
            return
        name, index = target.value.value, target.slice[0].slice.value
        entry = (None, partial) if node is None else (self.of(node), partial and self.contains_widened(node))
        known = self.tuples.get(name)
        if isinstance(known, KeyedItems) and isinstance(index, cst.SimpleString):
            self._keyed(name, known, {index.evaluated_value: entry})
            return
        at = _int_literal(index)
        if known is not None and not isinstance(known, KeyedItems) and at is not None and -len(known) <= at < len(known):
            items = list(known)
            items[at] = entry
            self.tuples[name] = tuple(items)
            return
        self._forget(name, entry[1])

    def updated(self, name: str, node: cst.Call, partial: bool) -> None:
        """``d.update({"k": v})``, ``d.update(k=v)``, ``d.update(other)`` (``partial``: partial sums go in as they
        are, not completed first): the carriers of the values it replaces or adds, where its keys are read here;
        else its items are no longer known one by one."""
        known = self.tuples.get(name)
        changes: dict[str, tuple[Carriers, bool]] = {}
        for arg in node.args:
            more = self._dict_items(arg.value) if arg.keyword is None and not arg.star else None
            if arg.keyword is not None and not arg.star:
                changes[arg.keyword.value] = (self.of(arg.value), partial and self.contains_widened(arg.value))
            elif isinstance(more, KeyedItems):
                changes.update(zip(more.keys, more))
            else:
                changes = None  # type: ignore[assignment]
                break
        if isinstance(known, KeyedItems) and changes is not None:
            self._keyed(name, known, changes)
        else:
            self._forget(name, partial and any(self.contains_widened(a.value) for a in node.args))

    def _keyed(self, name: str, known: KeyedItems, changes: dict[str, tuple[Carriers, bool]]) -> None:
        items = dict(zip(known.keys, known))
        items.update(changes)
        self.tuples[name] = KeyedItems(tuple(items.values()), tuple(items))

    def _forget(self, name: str, widened: bool) -> None:
        """``name``'s items are no longer known one by one; ``widened``: one may hold a float32-formed partial
        sum (or did: its reads are then refused where completed)."""
        held = self.tuples.pop(name, None)
        if widened or (held is not None and any(w for _, w in held)):
            self.wide_names.add(name)

    def completed_value(self, node: cst.BaseExpression) -> None:
        """``d["k"]``'s partial sum was completed in place (stored back, its dtype cast back): no longer widened."""
        if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1
                and isinstance(node.slice[0].slice, cst.Index)
                and isinstance(node.slice[0].slice.value, cst.SimpleString)):
            return
        known = self.tuples.get(node.value.value)
        key = node.slice[0].slice.value.evaluated_value
        if isinstance(known, KeyedItems) and key in known.keys:
            self.tuples[node.value.value] = KeyedItems(
                tuple((c, w and k != key) for (c, w), k in zip(known, known.keys)), known.keys)

    def contains_widened(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` holds a partial sum formed in float32 (a call or a name of one)."""
        node = self.aliases.get(node, node)
        if not self.widened and not self.wide_names and not any(
                w for items in (*self.tuples.values(), *self.call_items.values()) for _, w in items):
            return False  # none formed yet (a float32 program's every partial sum)
        found = False
        widened, names, item, tuples = self.widened, self.wide_names, self._item, self.tuples

        class _Find(cst.CSTVisitor):
            def on_visit(self, n: cst.CSTNode) -> bool:
                nonlocal found
                if found:  # (a sibling of where it was found: x @ w * d["n"] is widened, whatever d["n"] is)
                    return False
                if n in widened or (isinstance(n, cst.Name) and (n.value in names or any(
                        w for _, w in tuples.get(n.value, ())))):  # sum(terms) of a list holding one
                    found = True
                elif isinstance(n, cst.Subscript):
                    known = item(n)
                    if known is not None:  # t[0], helper(x)[1]: that item alone says
                        found = known[1]
                        return False
                return not found

        node.visit(_Find())
        return found

    def holds_widened(self, name: str) -> bool:
        """Whether ``name`` holds a tuple, list or dict with a float32-formed partial sum in it."""
        return any(w for _, w in self.tuples.get(name, ())) or (
            name in self.wide_names and isinstance(self.rw.env.get(name), TupleValue | StructValue))

    def snapshot(self) -> tuple[dict[str, Carriers], frozenset[str], dict[str, Items]]:
        return dict(self.names), frozenset(self.wide_names), dict(self.tuples)

    def restore(self, state: tuple[dict[str, Carriers], frozenset[str], dict[str, Items]]) -> None:
        self.names, self.wide_names, self.tuples = dict(state[0]), set(state[1]), dict(state[2])

    def merge(self, branches: list[tuple[dict[str, Carriers], frozenset[str], dict[str, Items]]]) -> None:
        """After an ``if``: a name the branches bind to different dtypes is unknown; a tuple's item is
        widened if it is in any branch."""
        if not branches:
            return
        merged = dict(branches[0][0])
        for other, _, _ in branches[1:]:
            for name in set(merged) | set(other):
                if merged.get(name, other.get(name)) != other.get(name, merged.get(name)):
                    merged[name] = None
        self.names = merged
        self.wide_names = set().union(*(wide for _, wide, _ in branches))
        tuples: dict[str, Items] = {}
        for name in set().union(*(t for _, _, t in branches)):
            found = [t.get(name) for _, _, t in branches]
            if all(f is not None and len(f) == len(found[0]) for f in found):  # type: ignore[arg-type]
                tuples[name] = merge_items(found)  # type: ignore[arg-type]
            elif any(f is not None and any(w for _, w in f) for f in found):
                # bound to a tuple holding a float32 partial sum in one branch only: unknown items, widened
                n = max(len(f) for f in found if f is not None)
                tuples[name] = tuple((None, True) for _ in range(n))
        self.tuples = tuples

    # -- tuples --------------------------------------------------------------------------------------

    def items_of(self, node: cst.BaseExpression, value: object) -> Items | None:
        """Each item's (carriers, widened) of ``node``, a tuple-valued expression; None when unknown."""
        if not isinstance(value, TupleValue):
            return None
        n = len(value.items)
        if isinstance(node, cst.Tuple | cst.List) and len(node.elements) == n \
                and not any(isinstance(e, cst.StarredElement) for e in node.elements):
            flat = tuple((self.of(e.value), self.contains_widened(e.value)) for e in node.elements)
            # [(x @ w, x), ...]: each tuple item's own items too (pairs[0][0], zip(*pairs) read them)
            inner = tuple(self.items_of(e.value, v) for e, v in zip(node.elements, value.items))
            return NestedItems(flat, inner) if any(i is not None for i in inner) else flat
        inner = self._inner(node)
        if inner is not None:  # pairs[0], zip(*pairs)[1]: an item of a tuple whose items' items are known
            return inner if len(inner) == n else None
        if isinstance(node, cst.Tuple | cst.List):  # [*a, x]: a's items spliced in
            spliced = self._spelled_items(node)
            if spliced is not None and len(spliced) == n:
                return spliced
        if isinstance(node, cst.Name) and node.value in self.tuples:
            known = self.tuples[node.value]
            return known if len(known) == n else None
        sliced = self._sliced(node)
        if sliced is not None:  # a[:1], a[2:]: those items of a tuple whose items are known
            return sliced if len(sliced) == n else None
        copied = self._copied(node)
        if copied is not None:  # tuple(a), list(a): a's items
            return copied if len(copied) == n else None
        if node in self.call_items:
            known = self.call_items[node]
            return known if len(known) == n else None
        if isinstance(node, cst.IfExp):  # (h, a) if output_attentions else (h,): the branch of this length
            sides = [side for side in (node.body, node.orelse)
                     if isinstance(side, cst.Tuple | cst.List) and len(side.elements) == n]
            found = [self.items_of(side, value) for side in sides]
            if found and all(f is not None for f in found):
                return merge_items(found)  # type: ignore[arg-type]
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):  # s + [x]: both sides' items
            left = self._count(node.left)
            if left is not None and left <= n:
                sides = [self.items_of(side, TupleValue(value.items[:left] if k == 0 else value.items[left:]))
                         for k, side in enumerate((node.left, node.right))]
                if all(side is not None for side in sides):
                    return (*sides[0], *sides[1])  # type: ignore[misc]
        # jnp.split(x @ w, 2), a loop's results: every item has the whole expression's dtype and widened-ness
        return tuple((self.of(node), self.contains_widened(node)) for _ in range(n))

    def _dict_items(self, node: cst.BaseExpression) -> KeyedItems | None:
        """``{"loss": l, "acc": a}`` (string keys), ``{**m, "acc": a}``, ``dict(m)``: each value's (carriers,
        widened), by key; None where a key or a spread dict's items are not known."""
        if isinstance(node, cst.Name):
            known = self.tuples.get(node.value)
            return known if isinstance(known, KeyedItems) else None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict" \
                and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            return self._dict_items(node.args[0].value)
        if isinstance(node, cst.IfExp):  # {"m": x @ w} if flag else None: the dict's (each dict's, of the same keys)
            found = [self._dict_items(side) for side in (node.body, node.orelse) if not _is_none(side)]
            if not found or any(f is None for f in found) or len({f.keys for f in found}) != 1:  # type: ignore[union-attr]
                return None
            return merge_items(found)  # type: ignore[arg-type]
        if not isinstance(node, cst.Dict):
            return None
        items: dict[str, tuple[Carriers, bool]] = {}
        for e in node.elements:
            if isinstance(e, cst.StarredDictElement):
                spread = self._dict_items(e.value)
                if spread is None:
                    return None
                items.update(zip(spread.keys, spread))
            elif isinstance(e.key, cst.SimpleString):
                items[e.key.evaluated_value] = (self.of(e.value), self.contains_widened(e.value))
            else:
                return None
        return KeyedItems(tuple(items.values()), tuple(items))

    def _count(self, node: cst.BaseExpression) -> int | None:
        """How many items ``node`` holds where a literal or a name of known items tells."""
        if isinstance(node, cst.Tuple | cst.List) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
            return len(node.elements)
        if isinstance(node, cst.Name) and node.value in self.tuples:
            return len(self.tuples[node.value])
        sliced = self._sliced(node)
        return len(sliced) if sliced is not None else None

    def _sliced(self, node: cst.BaseExpression) -> Items | None:
        """``a[1:]``, ``a[:-1]``, ``a[::-1]`` (int literal bounds and step) of a tuple or list whose items are known
        (a name, a literal, a zip, ...): those items, each with its own items where known."""
        if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice)):
            return None
        s = node.slice[0].slice
        bounds = [None if b is None else _int_literal(b) for b in (s.lower, s.upper, s.step)]
        if any(b is None and given is not None for b, given in zip(bounds, (s.lower, s.upper, s.step))) \
                or bounds[2] == 0:
            return None
        base = node.value
        items = self.tuples.get(base.value) if isinstance(base, cst.Name) \
            else self.call_items.get(base) or self._spelled_items(base)
        return _taken(items, slice(*bounds))

    def _item(self, node: cst.Subscript) -> tuple[Carriers, bool] | None:
        """``t[i]`` (an int literal) of a tuple whose items are known: that item's carriers and widened-ness;
        ``m["k"]`` of a dict whose items are known: that key's."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        index = node.slice[0].slice.value
        if isinstance(index, cst.SimpleString):
            known = self._dict_items(node.value)
            if isinstance(known, KeyedItems) and index.evaluated_value in known.keys:
                return known[known.keys.index(index.evaluated_value)]
            return None
        negative = isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus)
        literal = index.expression if negative else index  # type: ignore[attr-defined]
        if not isinstance(literal, cst.Integer):
            return None
        base = node.value
        i = -int(literal.value) if negative else int(literal.value)
        if isinstance(base, cst.Tuple | cst.List) and not any(isinstance(e, cst.StarredElement) for e in base.elements):
            if not -len(base.elements) <= i < len(base.elements):  # [x, x @ w][1]: that item's own
                return None
            item = base.elements[i].value
            return self.of(item), self.contains_widened(item)
        items = self.tuples.get(base.value) if isinstance(base, cst.Name) else self.call_items.get(base)
        if items is None and isinstance(base, cst.BinaryOperation | cst.Subscript | cst.Call):  # (a[:1] + a[2:])[0]
            items = self._spelled_items(base)
        if items is None and isinstance(base, cst.Subscript):  # pairs[0][1]: an item of an item
            items = self._inner(base)
        if items is None:
            return None
        return items[i] if -len(items) <= i < len(items) else None

    def _spelled_items(self, node: cst.BaseExpression) -> Items | None:
        """The items of ``a[:1] + a[2:]``, ``s + [x]``, ``[*a, x]``: each side's, where a literal, a name of known
        items or a slice of one tells them; else None."""
        if isinstance(node, cst.Tuple | cst.List):
            out: list[tuple[Carriers, bool]] = []
            inner: list[Items | None] = []  # (each item's own items, where it is a tuple: [ys, xs] of zip(*...))
            for e in node.elements:
                if isinstance(e, cst.StarredElement):
                    spliced = self._spelled_items(e.value)
                    if spliced is None:
                        return None
                    out.extend(spliced)
                    inner.extend(spliced.inner if isinstance(spliced, NestedItems) else (None,) * len(spliced))
                else:
                    out.append((self.of(e.value), self.contains_widened(e.value)))
                    inner.append(self.call_items.get(e.value) or self._spelled_items(e.value))
            return NestedItems(out, tuple(inner)) if any(i is not None for i in inner) else tuple(out)
        if isinstance(node, cst.Name):
            return self.tuples.get(node.value)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            left, right = self._spelled_items(node.left), self._spelled_items(node.right)
            return None if left is None or right is None else (*left, *right)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "zip":
            return self.zipped(node)
        if _builtin_call(self.rw, node, "reversed", 1):  # reversed(a): a's items, last first
            return _taken(self._spelled_items(node.args[0].value), slice(None, None, -1))
        if any(_builtin_call(self.rw, node, "enumerate", n, keywords=("start",)) for n in (1, 2)) \
                and node.args[0].keyword is None:  # type: ignore[attr-defined]
            # enumerate(a[, start]): rows (i, a[i]), i a Python int
            items = self._spelled_items(node.args[0].value)
            if items is None or isinstance(items, KeyedItems):
                return None
            inner = items.inner if isinstance(items, NestedItems) else (None,) * len(items)
            rows = tuple(NestedItems((((), False), item), (None, own)) if own is not None else (((), False), item)
                         for item, own in zip(items, inner))
            return NestedItems(tuple(items), rows)
        copied = self._copied(node)
        return copied if copied is not None else self._sliced(node)

    def _inner(self, node: cst.BaseExpression) -> Items | None:
        """The items of ``t[i]`` (an int literal) where ``t``'s items are known with their own items
        (:class:`NestedItems`: ``pairs = [(x @ w, x), ...]``, a zip of known tuples); else None."""
        if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)):
            return None
        index = node.slice[0].slice.value
        negative = isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus)
        literal = index.expression if negative else index  # type: ignore[attr-defined]
        if not isinstance(literal, cst.Integer):
            return None
        base = node.value
        outer = self.tuples.get(base.value) if isinstance(base, cst.Name) else self.call_items.get(base)
        if outer is None:
            outer = self._spelled_items(base) if not isinstance(base, cst.Name) else None
        if outer is None and isinstance(base, cst.Subscript):
            outer = self._inner(base)
        i = -int(literal.value) if negative else int(literal.value)
        if not isinstance(outer, NestedItems) or not -len(outer) <= i < len(outer):
            return None
        return outer.inner[i]

    def zipped(self, node: cst.Call) -> Items | None:
        """The rows of ``zip(a, b)``, ``zip(*pairs)`` (Python's own) of tuples whose items are known: each row's
        items (see :class:`NestedItems`); None where some item is not known."""
        columns: list[Items | None] = []
        for arg in node.args:
            if arg.keyword is not None:
                continue
            known = self.call_items.get(arg.value) or self._spelled_items(arg.value)
            if not arg.star:
                columns.append(known)
            elif isinstance(known, NestedItems):  # zip(*pairs): each pair's items a column
                columns.extend(known.inner)
            else:
                return None
        if not columns or any(c is None for c in columns):
            return None
        rows = [tuple(row) for row in zip(*columns)]  # type: ignore[misc]
        flat = []
        for row in rows:  # (a row as one value: every item's carriers)
            carriers: Carriers = ()
            for c, _ in row:
                carriers = _union(carriers, c)
            flat.append((carriers, any(w for _, w in row)))
        return NestedItems(tuple(flat), tuple(rows))

    def _copied(self, node: cst.BaseExpression) -> Items | None:
        """``tuple(a)``, ``list(a)`` of a sequence whose items are known (a name, a literal, a slice): its items."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("tuple", "list") \
                and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            return self._spelled_items(node.args[0].value)
        return None

    # -- carriers of an expression ---------------------------------------------------------------

    def of(self, node: cst.BaseExpression) -> Carriers:
        node = self.aliases.get(node, node)
        if isinstance(node, cst.Integer | cst.Float | cst.Imaginary | cst.SimpleString):
            return ()
        if isinstance(node, cst.Name):
            return self._name(node.value)
        if isinstance(node, cst.BinaryOperation):
            both = _union(self.of(node.left), self.of(node.right))
            if isinstance(node.operator, cst.Divide) and both and any(
                    not re.fullmatch(r"[A-Za-z_]\w*", t) or t in self.rw.index_names for t in both):
                # an integer array divided is a float (jnp.arange(24) / 24): where a carrier may be an integer
                # (an expression, an index), the quotient's dtype says so; a hinted array is taken for a float
                return (f"{self.rw.ctx.mr}.quotient_dtype({', '.join(both)})",)
            return both
        if isinstance(node, cst.UnaryOperation):
            return None if isinstance(node.operator, cst.Not) else self.of(node.expression)
        if isinstance(node, cst.Comparison | cst.BooleanOperation):
            return ("bool",)
        if isinstance(node, cst.IfExp):
            from meshify.rewrite._evaluate import chosen

            mark = self.rw.mark()
            picked = chosen(self.rw, node)  # act(y) if act is not None else y: the branch Python takes
            self.rw.rollback(mark)
            if picked is not node:
                return self.of(picked)
            return _union(self.of(node.body), self.of(node.orelse))
        if isinstance(node, cst.Attribute | cst.Subscript):
            return self._access(node)
        if isinstance(node, cst.Call):
            return self._call(node)
        if isinstance(node, cst.GeneratorExp | cst.ListComp):
            return self.comprehensions.get(node)
        return None

    @staticmethod
    def outside(carriers: Carriers, lifted: dict[str, Carriers], bound: set[str]) -> Carriers:
        """``carriers`` read where the names a loop or comprehension binds are not: a name of ``lifted`` stands
        for its carriers there (``*hs`` for ``h`` of ``for h in hs``); any other of ``bound`` leaves it unknown."""
        if carriers is None:
            return None
        out: Carriers = ()
        for text in carriers:
            if text in lifted:
                out = _union(out, lifted[text])
            elif any(n in bound or n in lifted for n in _names_in(text)):
                return None
            else:
                out = _union(out, (text,))
        return out

    def _name(self, name: str) -> Carriers:
        if name in ("True", "False", "None"):
            return ()
        if name in self.names:
            return self.names[name]
        value = self.rw.env.get(name)
        if isinstance(value, Static):
            return ()  # a Python scalar (weakly typed) or a config; arrays never come in as statics
        if name in self.params:
            # (a parameter whose dtype the caller cannot express is named by itself here: a partial sum it
            # forms accumulates in float32 all the same, and is completed before it returns, see expressible)
            return (self._capture(name),) if name in self.rebound else (name,)
        if isinstance(value, Array) and name not in self.rebound:
            return (name,)  # a lambda's parameter
        if value is None and name not in self.rebound:
            return (name,)  # a module-level array or constant
        return None

    def _capture(self, param: str) -> str:
        if param not in self.captures:
            name = f"{param}_dtype"
            while name in self._taken:
                name += "_"
            self._taken.add(name)
            self.captures[param] = name
        return self.captures[param]

    def _access(self, node: cst.Attribute | cst.Subscript) -> Carriers:
        if isinstance(node, cst.Attribute) and node.attr.value in ("T", "mT", "real", "imag"):
            return self.of(node.value)
        if isinstance(node, cst.Subscript):
            item = self._item(node)
            if item is not None:
                return item[0] if item[0] is not None or item[1] else self._read_again(node)
        base = node.value if isinstance(node, cst.Subscript) else node
        if isinstance(base, cst.Attribute) and base.attr.value in ("shape", "ndim", "size"):
            return ()  # Python ints (weakly typed)
        root = node
        while isinstance(root, cst.Attribute | cst.Subscript):
            root = root.value
        if not isinstance(root, cst.Name):  # (x @ w)[:, 0], f(x)[..., 0]: indexing keeps the dtype
            return self.of(node.value) if isinstance(node, cst.Subscript) else None
        value = self.rw.env.get(root.value)
        if isinstance(value, Array | Opaque):
            return self.of(node.value) if isinstance(node, cst.Subscript) else None
        if isinstance(value, Static) and value.shape_of is not None and root.value not in self.rebound:
            return ()  # shape = x.shape; shape[-1]: a Python int (weakly typed)
        if isinstance(value, TupleValue) and isinstance(node, cst.Subscript) and node.value is root \
                and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
            return self._sliced_items(root.value, node.slice[0].slice, len(value.items))  # xs[1:] of *xs
        if isinstance(value, StructValue | TupleValue) and root.value in self.wide_names:
            return None  # an item of a pytree holding a float32-formed partial sum meshify does not follow
        if isinstance(value, StructValue | TupleValue | Static) and root.value not in self.rebound \
                and read_again(node):
            return (self.rw.ctx.code(node),)  # p.w, params["w"], self.w, cfg.eps
        if isinstance(value, StructValue | TupleValue) and isinstance(node, cst.Subscript) and node.value is not root:
            return self.of(node.value)  # p.embed[tokens]: indexing a field's array keeps its dtype
        if value is None and dotted_name(node) is not None and isinstance(node, cst.Attribute):
            return (self.rw.ctx.code(node),)  # a module attribute: jnp.bfloat16
        return None

    def _read_again(self, node: cst.Subscript) -> Carriers:
        """``ws[1]``, an item of a tuple whose items' dtypes meshify cannot name (``ws = jax.tree.map(f, (w,
        v))``): the item itself, read where its carriers are, as a name of unknown dtype is (``ws`` bound once,
        the item a whole array or one split, never a partial sum whose block may be float32); else None."""
        base = node.value
        value = self.rw.env.get(base.value) if isinstance(base, cst.Name) else None
        index = node.slice[0].slice.value if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            else None
        if not isinstance(value, TupleValue) or not isinstance(index, cst.Integer) or base.value in self.rebound \
                or base.value in self.wide_names or not read_again(node):
            return None
        i = int(index.value)
        item = value.items[i] if i < len(value.items) else None
        return (self.rw.ctx.code(node),) if isinstance(item, Array) and not item.layout.partial else None

    def _sliced_items(self, name: str, s: cst.Slice, count: int) -> Carriers:
        """The carriers of ``name[a:b:c]`` of a tuple of ``count`` items meshify holds item by item (a helper's
        ``*xs``): those of each item it takes, where its bounds are int literals; else None."""
        bounds = []
        for b in (s.lower, s.upper, s.step):
            if b is None:
                bounds.append(None)
                continue
            try:
                bounds.append(int(self.rw.ctx.code(b), 0))
            except ValueError:
                return None
        out: Carriers = ()
        for i in range(count)[slice(*bounds)]:
            carriers = self.of(cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))]))
            if carriers is None:
                return None
            out = _union(out, carriers)
        return out

    def _call(self, node: cst.Call) -> Carriers:
        node = self.spelled.get(node, node)
        if node in self.calls:
            return self.calls[node]
        if node in self.rw.elementwise_calls:  # cfg.act(h), checked elementwise when traced: h's dtype
            return self.of(node.args[0].value)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _DTYPE_KEYWORDS and not _is_none(arg.value):
                return self._dtype(arg.value)
        func = node.func
        if isinstance(func, cst.Name) and func.value == "len" and "len" not in self.rw.env \
                and not self.rw.ctx.binds("len"):
            return ()  # a Python int (weakly typed)
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript) \
                and isinstance(func.value.value, cst.Attribute) and func.value.value.attr.value == "at":
            return self.of(func.value.value.value)  # x.at[i].set(v): x's dtype (v is cast to it)
        if isinstance(func, cst.Attribute) and not (isinstance(root, cst.Name) and root.value not in self.rw.env):
            method = func.attr.value  # x.sum(), (a + b).astype(...), self.norm(x)
            if method == "astype" and node.args:
                return self._dtype(node.args[0].value)
            at = _dtype_position(f"jax.Array.{method}")  # x.mean(0, jnp.float32)
            if at is not None and len(positional) > at and not _is_none(positional[at]):
                return self._dtype(positional[at])
            return _reduced(method, self.of(func.value)) if method in _SAME_AS_FIRST else None
        names = self.rw.ctx.qualified_names(func) if isinstance(func, cst.Name | cst.Attribute) else set()
        for name in names:  # jnp.mean(x, 0, jnp.float32): a dtype given by position
            at = _dtype_position(name)
            if at is not None and len(positional) > at and not _is_none(positional[at]):
                return self._dtype(positional[at])
        if names & BODY_OPS:
            # a scan, loop or branch walks its functions and may convert its operands (a carry entering in
            # its body's layout): its text, traced again for a dtype, is not what runs, and may not trace
            return None
        passed = self.rw.env.get(func.value) if isinstance(func, cst.Name) else None
        if isinstance(passed, Static) and isinstance(passed.literal, FunctionRef):
            names = set(passed.literal.names)  # act(h) with act=jax.nn.gelu passed in: gelu's dtype
        for name in names:
            short = name.rsplit(".", 1)[-1]
            if short in _BOOLEAN or name == "jax.random.bernoulli":
                return ("bool",)
            if short in _OWN_DTYPE:
                return self._stable_text(node)
            if name == "builtins.sum" or (name == "sum" and not self.rw.ctx.binds("sum")):
                return self._sum(node)
            if name == "functools.reduce" and len(node.args) >= 2:  # (reduce(f, xs, init): xs's and init's)
                return self._sum(node.with_changes(args=node.args[1:]))
            if short in ("where", "select") and len(node.args) == 3:
                return _union(self.of(node.args[1].value), self.of(node.args[2].value))  # not the condition
            if name in _FIRST_TWO and len(node.args) >= 2 and all(a.keyword is None for a in node.args[:2]):
                return _union(self.of(node.args[0].value), self.of(node.args[1].value))
            if short in _JOINS and positional:
                return self._joined(positional[0])
            if name in UNARY or name in BINARY or name in STATS or short in _PROMOTED:
                return self._promoted(node)
            if name in _EINOPS and node.args and node.args[0].keyword is None:
                return self.of(node.args[0].value)  # rearrange/repeat/reduce keep the tensor's dtype
            if short in _SAME_AS_FIRST or name.endswith("linalg.norm"):
                arrays = [a for a in node.args if a.keyword is None]
                return _reduced(short, self.of(arrays[0].value)) if arrays else None
        return self._stable_text(node)

    def _sum(self, node: cst.Call) -> Carriers:
        """Python's ``sum([a, b], start)`` is ``start + a + b``; ``sum(terms)`` of a list bound before
        reads its items' carriers."""
        out: Carriers = ()
        for arg in node.args:
            value = arg.value
            items = self.tuples.get(value.value) if isinstance(value, cst.Name) else None
            if items is not None:
                for carriers, _ in items:
                    out = _union(out, carriers)
            else:
                for item in [e.value for e in value.elements] if isinstance(value, cst.List | cst.Tuple) else [value]:
                    out = _union(out, self.of(item))
        return out

    def _joined(self, seq: cst.BaseExpression) -> Carriers:
        """The carriers of ``jnp.stack(seq)``, ``jnp.array(seq)``: JAX promotes the leaves of a (nested) list or
        tuple; None where a leaf's are unknown.  Float32-formed partial sums joined with items that may have other
        dtypes: ``mr.joined_dtype``, which refuses the call where they do (one device rounds each item to its own
        dtype, the psum completing the join could cast all of them back only to the promoted one)."""
        leaves = self._leaves(seq)
        if leaves is None:
            return None
        out: Carriers = ()
        groups: dict[frozenset[str], tuple[str, ...]] = {}
        for carriers, _ in leaves:
            out = _union(out, carriers)
            if carriers:  # (a weakly typed number changes no item's dtype)
                groups.setdefault(frozenset(carriers), carriers)
        if out is None or len(groups) < 2 or not any(widened for _, widened in leaves):
            return out
        likes = [c[0] if len(c) == 1 and not c[0].startswith("*") else f"({', '.join(c)}{',' * (len(c) == 1)})"
                 for c in groups.values()]
        return (f"{self.rw.ctx.mr}.joined_dtype({', '.join(likes)})",)

    def _leaves(self, node: cst.BaseExpression) -> list[tuple[Carriers, bool]] | None:
        """Each leaf's (carriers, widened) of a (nested) list or tuple, spelled out or spliced from one of known
        items (``[*a, b]``); a node of another kind is one leaf; None where spliced items are unknown."""
        if isinstance(node, cst.Name) and self.tuples.get(node.value) is not None:
            return list(self.tuples[node.value])  # (ys = (a, b) bound before: its items, as spelled there)
        if not isinstance(node, cst.List | cst.Tuple):
            return [(self.of(node), self.contains_widened(node))]
        out: list[tuple[Carriers, bool]] = []
        for e in node.elements:
            found = self._spelled_items(e.value) if isinstance(e, cst.StarredElement) else self._leaves(e.value)
            if found is None:
                return None
            out.extend(found)
        return out

    def _stable_text(self, node: cst.BaseExpression) -> Carriers:
        """A call of no known dtype (``jnp.eye(3)``, ``f(y)``) as its own carrier, when every name it
        reads means the same wherever the psum runs (module names, parameters and names bound once,
        none a partial sum): ``jnp.result_type`` of it re-traces it for its dtype only (XLA drops it)."""
        names: list[str] = []
        lambdas = False

        class _Names(cst.CSTVisitor):
            def visit_Name(self, n: cst.Name) -> None:
                names.append(n.value)

            def visit_Attribute(self, n: cst.Attribute) -> bool:
                # x.shape, x.ndim, x.size: Python ints, whatever x holds (a partial sum, a rebound name):
                # jnp.arange(0, v.shape[-1], 2) has an int dtype of its own
                return not (n.attr.value in ("shape", "ndim", "size") and isinstance(n.value, cst.Name))

            def visit_Lambda(self, n: cst.Lambda) -> bool:
                nonlocal lambdas
                lambdas = True
                return False

        node.visit(_Names())
        if lambdas:
            return None
        splits = set()
        for name in names:
            value = self.rw.env.get(name)
            if name in self.rebound or name in self.unknown or (isinstance(value, Array) and value.layout.partial):
                return None
            if isinstance(value, Array):
                splits.add(frozenset((d, a) for d, a in zip(value.layout.dims, value.layout.axes) if a))
        if len(splits) > 1:  # (arrays of other splits: their blocks may not broadcast as the code writes them)
            return None
        return (self.rw.ctx.code(node),)

    def _promoted(self, node: cst.Call) -> Carriers:
        out: Carriers = ()
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _NON_ARRAY_KEYWORDS:
                continue
            value = arg.value
            items = [e.value for e in value.elements] if isinstance(value, cst.List | cst.Tuple) else [value]
            for item in items:
                out = _union(out, self.of(item))
        return out

    def _dtype(self, node: cst.BaseExpression) -> Carriers:
        """A dtype written in the code (``jnp.bfloat16``, ``x.dtype``, ``cfg.dtype``, ``"bfloat16"``)."""
        if isinstance(node, cst.Name) and node.value == "None":
            return None
        if isinstance(node, cst.SimpleString):
            return (self.rw.ctx.code(node),)
        if isinstance(node, cst.Name) and node.value in ("float", "complex") \
                and node.value not in self.rw.env and not self.rw.ctx.binds(node.value):
            # x.astype(float) is float32 (with 64-bit off), where jnp.result_type(float, ...) is a weak type
            return (f"{self.rw.ctx.mr}.canonical_dtype({node.value})",)
        if isinstance(node, cst.Attribute) and node.attr.value == "dtype":
            of = self.of(node.value)
            if of:  # x.dtype of an array: x's carriers (cfg.dtype of a config is a dtype written there)
                return of
        if isinstance(node, cst.Name | cst.Attribute):
            root = node
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name) and root.value not in self.rebound \
                    and not isinstance(self.rw.env.get(root.value), Array):
                return (self.rw.ctx.code(node),)
        return None

    # -- concrete dtypes, for explain's bytes ------------------------------------------------------

    def concrete(self, node: cst.BaseExpression) -> str | None:
        """The dtype ``node`` has where the code says it without the function's float inputs: a
        comparison's ``bool``, an integer parameter's (an ``Int[...]`` hint, or used as indices) ``int32``,
        a dtype spelled out (``x.astype(jnp.bfloat16)``, ``dtype=jnp.int8``), promoted as JAX promotes
        them; None where it follows the float inputs (explain's ``--itemsize`` then) or is unknown.
        64-bit dtypes are their 32-bit halves (JAX's default, ``jax_enable_x64`` off)."""
        carriers = self.of(node)
        if not carriers:
            return None
        named = [self._concrete_carrier(text) for text in carriers]
        if any(d is None for d in named):
            return None
        return _promote(named)  # type: ignore[arg-type]

    def _concrete_carrier(self, text: str) -> str | None:
        if text == "bool":
            return "bool"
        name = text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'" else None
        for prefix in ("jax.numpy.", "jnp.", "numpy.", "np."):
            if name is None and text.startswith(prefix):
                name = text[len(prefix):]
        if name is not None:
            name = name.rstrip("_")  # jnp.bool_
            return _X32.get(name, name) if name in DTYPE_BYTES else None
        param = next((p for p, capture in self.captures.items() if capture == text), text)
        return self.rw.param_dtype(param) if param in self.params else None


    # -- helpers' results in their caller ---------------------------------------------------------

    def expressible(self, carriers: Carriers) -> bool:
        """Whether a caller can name these carriers: parameters (whole) and module-level names only."""
        if carriers is None:
            return False
        for text in carriers:
            captured = self._captured_param(text)  # (a rebound parameter's dtype, read at the top: the argument's)
            if captured != text and captured not in self.unknown:
                continue
            if text in self.params and text not in self.rebound and text not in self.unknown:
                continue
            if any(self._local(name) for name in _names_in(text)):
                return False
        return True

    def in_caller(self, carriers: Carriers, passed: dict[str, Carriers]) -> Carriers:
        """A helper's result carriers (in the helper's names) in its caller's names, or None."""
        if carriers is None:
            return None
        out: Carriers = ()
        quotient = f"{self.rw.ctx.mr}.quotient_dtype("
        for text in carriers:
            text = self._captured_param(text)  # (x_dtype, a rebound parameter's read at the top: the argument's)
            if text.startswith(quotient):  # mr.quotient_dtype(a, b): its arguments in the caller's names
                call = cst.parse_expression(text)
                assert isinstance(call, cst.Call)
                inner = self.in_caller(tuple(cst.Module([]).code_for_node(a.value) for a in call.args), passed)
                if inner is None:
                    return None
                out = _union(out, (f"{quotient}{', '.join(inner)})",) if inner else ())
            elif text in self.params or text in passed:  # (xs[0], kw["b"]: an item of *args, **kwargs)
                if passed.get(text) is None:
                    return None
                out = _union(out, passed[text])
            elif any(self._local(name) for name in _names_in(text)):
                text = self._numbers_spelled(text)  # (jnp.arange(n) of a helper's n = nodes.shape[0])
                if text is None:
                    return None  # a helper-local name, or a parameter inside an expression
                out = _union(out, (text,))
            else:
                out = _union(out, (text,))
        return out

    def _numbers_spelled(self, text: str) -> str | None:
        """``text`` (a carrier read only by ``jnp.result_type``) with the helper's names of Python numbers
        spelled as numbers of their kind, valid in a caller (``jnp.arange(n)`` -> ``jnp.arange(1)``: an int
        array's dtype, whatever ``n`` is); None where another local name remains."""
        locals_ = {name for name in _names_in(text) if self._local(name)}
        numbers = {name: _number_text(self.rw.env.get(name)) for name in locals_ if name not in self.rebound}
        if any(numbers.get(name) is None for name in locals_):
            return None

        class _Spell(cst.CSTTransformer):
            def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
                return original  # (jnp.int32, cfg.n: an attribute's name is not a local one)

            def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
                return cst.parse_expression(numbers[original.value]) if original.value in numbers else updated

        return cst.Module([]).code_for_node(cst.parse_expression(text).visit(_Spell()))

    def _captured_param(self, text: str) -> str:
        """The parameter whose dtype carrier ``text`` reads at the top of the body (``cos`` for ``cos_dtype``, where
        the helper rebinds ``cos = cos[None, :, None, :]``), or ``text`` itself."""
        return next((p for p, capture in self.captures.items() if capture == text), text)

    def _local(self, name: str) -> bool:
        return name in self.params or name in self.rw.env or name in self.names or name in self.captures.values()

    # -- code ----------------------------------------------------------------------------------

    def captured(self, body: str) -> list[cst.BaseStatement]:
        """``x_dtype = x.dtype`` for each rebound parameter whose dtype the rewritten ``body`` reads,
        for the top of the body."""
        return [cst.parse_statement(f"{name} = {param}.dtype") for param, name in self.captures.items()
                if re.search(rf"(?<![\w.]){name}(?!\w)", body)]


#: Reductions that make a bool an int32 (``mask.sum()``: JAX promotes integers) and those that make it a float.
_COUNTS = frozenset({"sum", "cumsum", "prod", "cumprod", "nansum", "nancumsum", "nancumprod"})
_AVERAGES = frozenset({"mean", "var", "std", "nanmean", "nanvar", "nanstd"})


def _number_text(value: object) -> str | None:
    """A Python number of ``value``'s kind, as code: a size read off a dim is an int; a literal int, float or
    bool its own repr; None for anything else (an array, a config, a number meshify cannot read)."""
    if not isinstance(value, Static):
        return None
    if value.size_of is not None or value.product_of is not None:
        return "1"
    literal = value.literal
    return repr(literal) if type(literal) in (int, float, bool) else None


def _reduced(name: str, carriers: Carriers) -> Carriers:
    """The dtype of reduction ``name`` of a value of ``carriers``: a sum of booleans counts in int32, their
    mean is a float32 (JAX's defaults, 64-bit off); otherwise the operand's."""
    if carriers == ("bool",) and name in _COUNTS:
        return ("'int32'",)
    if carriers == ("bool",) and name in _AVERAGES:
        return ("'float32'",)
    return carriers


class KeyedItems(tuple):
    """The items of a dict (``m = {"loss": ..., "acc": ...}``), as a tuple's, with their keys in order."""

    keys: tuple[str, ...]

    def __new__(cls, items, keys: tuple[str, ...]) -> Self:
        out = super().__new__(cls, items)
        out.keys = keys
        return out


class NestedItems(tuple):
    """The items of a tuple or list some of whose items are tuples themselves (``pairs = [(x @ w, x), (y, x)]``,
    the rows of a zip), as a tuple's (a tuple item's carriers: all its items'), with each item's own items in
    ``inner`` (None: not a tuple, or not known): ``pairs[0][0]`` and ``hs, xs = zip(*pairs)`` read them."""

    inner: tuple[Items | None, ...]

    def __new__(cls, items, inner: tuple[Items | None, ...]) -> Self:
        out = super().__new__(cls, items)
        out.inner = inner
        return out


def merge_items(found: list[Items]) -> Items:
    """The items of a tuple bound (or returned) on several paths: carriers joined, widened on any."""
    out = []
    for parts in zip(*found):
        carriers: Carriers = ()
        for c, _ in parts:
            carriers = _union(carriers, c)
        out.append((carriers, any(w for _, w in parts)))
    keys = {f.keys if isinstance(f, KeyedItems) else None for f in found}
    if len(keys) == 1 and None not in keys:  # a dict of the same keys on every path
        return KeyedItems(out, keys.pop())
    return tuple(out)


def _int_literal(node: cst.BaseExpression) -> int | None:
    """The value of an int literal, negative or not (``2``, ``-1``); None for anything else."""
    negative = isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
    literal = node.expression if negative else node  # type: ignore[attr-defined]
    if not isinstance(literal, cst.Integer):
        return None
    return -int(literal.value, 0) if negative else int(literal.value, 0)


def _taken(items: Items | None, at: slice) -> Items | None:
    """``items[at]`` of a tuple's or list's items, each one's own items kept (a dict's: None, it has no slices)."""
    if items is None or isinstance(items, KeyedItems):
        return None
    if isinstance(items, NestedItems):
        return NestedItems(tuple(items)[at], items.inner[at])
    return tuple(items)[at]


def _builtin_call(rw, node: cst.BaseExpression, name: str, count: int, keywords: tuple[str, ...] = ()) -> bool:
    """Whether ``node`` is ``name(a)`` (``count`` arguments, none starred, keywords only of ``keywords``) of
    Python's own ``name``."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name \
        and len(node.args) == count and not any(a.star for a in node.args) \
        and all(a.keyword is None or a.keyword.value in keywords for a in node.args) \
        and name not in rw.env and not rw.ctx.binds(name)


def like_node(carriers: tuple[str, ...]) -> cst.BaseExpression:
    """``x`` or ``(x, w)``: the ``like=`` of a psum, the arguments of ``mr.sum_dtype``."""
    if len(carriers) == 1:
        return cst.parse_expression(f"({carriers[0]},)" if carriers[0].startswith("*") else carriers[0])
    return cst.parse_expression("(" + ", ".join(carriers) + ")")


def _names_in(text: str) -> list[str]:
    """The names an expression's text reads (not attributes, not keywords' names: close enough,
    erring towards more names)."""
    return re.findall(r"(?<![\w.'\"])([A-Za-z_]\w*)", text)


def _union(a: Carriers, b: Carriers) -> Carriers:
    if a is None or b is None:
        return None
    return tuple(dict.fromkeys((*a, *b)))


@functools.lru_cache(maxsize=1024)
def _bindings(body: cst.CSTNode) -> Counter:
    """How many times the body binds each name (assignments, loop targets, with/except names).
    Cached by node (libcst nodes are immutable and hash by identity): every rewrite of a function, one
    per layout plan tries, walks the same body."""
    counts: Counter = Counter()

    class _Visitor(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node.body is body

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            _names(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            _names(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            _names(node.target)

        def visit_For(self, node: cst.For) -> None:
            _names(node.target)
            _names(node.target)  # bound once per iteration: never a stable carrier

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            _names(node.target)
            _names(node.target)

    def _names(target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            counts[target.value] += 1
        elif isinstance(target, cst.Tuple | cst.List):
            for e in target.elements:
                _names(e.value)
        elif isinstance(target, cst.StarredElement):
            _names(target.value)

    body.visit(_Visitor())
    return counts


def _promote(dtypes: list[str]) -> str:
    """JAX's promotion of concrete dtypes, as far as explain needs it: the widest kind (bool < integer <
    float < complex), the widest of that kind; float16 with bfloat16 is float32."""
    def kind(d: str) -> int:
        return 0 if d == "bool" else 1 if "int" in d else 3 if d.startswith("complex") else 2
    top = max(kind(d) for d in dtypes)
    same = sorted({d for d in dtypes if kind(d) == top}, key=lambda d: DTYPE_BYTES[d])
    if top == 2 and {"float16", "bfloat16"} <= set(same) and same[-1] in ("float16", "bfloat16"):
        return "float32"
    return same[-1]
