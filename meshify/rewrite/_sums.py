"""Sums of partial sums over several axes: the terms partial over the same axes completed by one psum.

``a + b - c + d`` with ``a``, ``b``, ``c`` partial sums over 'model' and ``d`` one over 'data' (or whole):
added left to right, each ``+`` of two different partial sums completes both, a psum per term.  By
linearity ``psum(a) + psum(b) - psum(c) == psum(a + b - c)``: the terms partial over the same axes are
added first, in their order, as one parenthesised term where the first of them stands (``(a + b - c) +
d``), so that one psum completes them.  A whole term never joins such a group (inside the psum it would be
counted once per device).  Where a term before the group's last one may have a wider dtype (a float32
term before float16 partial sums), the group's first term is cast to the dtype the sum had there
(``mr.promoted(a, like=(x, w))``), so that the group adds in the dtype the sum adds in on one device; a
term whose dtype cannot be named keeps the sum as written.

After this pass a ``+``/``-`` chain is evaluated as written unless regrouping it saves a collective.
"""

from __future__ import annotations

import libcst as cst

from meshify.errors import MeshifyError
from meshify.rewrite._values import Array, Operand, Static

__all__ = ["evaluated_sum"]

#: What a term is to the planner: "zero" (a literal 0, adds nothing), "number" (a Python number), or the
#: axes an array is a partial sum over (empty: whole).
Kind = str | frozenset


def evaluated_sum(rw, node: cst.BinaryOperation) -> Operand:
    """``node``, the top of a ``+``/``-`` chain, evaluated with its partial sums regrouped where that
    saves a collective, else as written."""
    terms, chain = _terms(node)
    if len(terms) < 3 or rw.sum_trial:  # (a chain inside a term being tried is evaluated as written)
        return _as_written(rw, node, chain)
    mark = rw.mark()
    rw.sum_trial = True
    try:
        operands = [rw.expr(term) for _, term in terms]
        plan = _plan(rw, terms, operands)
    except MeshifyError:  # written out, the sum raises its error where it meets it
        plan = None
    finally:
        rw.sum_trial = False
    rw.rollback(mark)
    if plan is None:
        return _as_written(rw, node, chain)
    try:
        return _regrouped(rw, node, terms, [rw.expr(term) for _, term in terms], *plan)
    except MeshifyError:  # (regrouped, the terms met in another order: as written, the user's own error)
        rw.rollback(mark)
        return _as_written(rw, node, chain)


def _terms(node: cst.BinaryOperation) -> tuple[list[tuple[bool, cst.BaseExpression]], list[cst.BinaryOperation]]:
    """``a + b - c``: [(True, a), (True, b), (False, c)] (added or subtracted) and the chain's operations;
    a parenthesised left operand is one term."""
    chain: list[cst.BinaryOperation] = []
    terms: list[tuple[bool, cst.BaseExpression]] = []
    current: cst.BaseExpression = node
    while isinstance(current, cst.BinaryOperation) and isinstance(current.operator, cst.Add | cst.Subtract) \
            and (current is node or not current.lpar):
        chain.append(current)
        terms.append((isinstance(current.operator, cst.Add), current.right))
        current = current.left
    terms.append((True, current))
    return terms[::-1], chain


def _as_written(rw, node: cst.BinaryOperation, chain: list[cst.BinaryOperation]) -> Operand:
    from meshify.rewrite._evaluate import evaluate

    rw.plain_sums.update(chain)
    try:
        return evaluate(rw, node)
    finally:
        rw.plain_sums.difference_update(chain)


def _kind(rw, operand: Operand) -> Kind | None:
    from meshify.rewrite._mappings import maybe_none

    value = operand.value
    if isinstance(value, Static):
        if not value.known:
            return "number"
        if type(value.literal) in (int, float) and value.literal == 0:
            return "zero"
        return "number" if type(value.literal) in (int, float, complex) else None
    if isinstance(value, Array) and not maybe_none(rw, value):
        return value.layout.partial
    return None  # a tuple, a literal-shaped array, an array or None: written as it is


def _plan(rw, terms, operands) -> tuple[list, dict[int, tuple]] | None:
    """The regrouped order (each item a term's index or a group's indices) and how each group keeps its dtype
    (first index -> :func:`_cast`'s answer), where it completes fewer partial sums than the order as written;
    else None."""
    kinds = [_kind(rw, o) for o in operands]
    if any(k is None for k in kinds):
        return None
    groups: dict[frozenset, list[int]] = {}
    for i, k in enumerate(kinds):
        if isinstance(k, frozenset) and k:
            groups.setdefault(k, []).append(i)
    casts: dict[int, tuple] = {}
    kept: dict[int, list[int]] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        like = _cast(rw, terms, kinds, members)
        if like is False:
            continue
        kept[members[0]] = members
        if like is not None:
            casts[members[0]] = like
    grouped = {i for members in kept.values() for i in members}
    order: list = [kept.get(i, i) for i in range(len(terms)) if i in kept or i not in grouped]
    regrouped = [kinds[item[0]] if isinstance(item, list) else kinds[item] for item in order]
    if _completions(regrouped) >= _completions(kinds):
        return None
    return order, casts


def _cast(rw, terms, kinds, members: list[int]):
    """How a group keeps the dtype the sum adds its terms in where a term before its last one may be wider:
    None (no such term, or one of dtypes the group's own terms carry), ``("promoted", like)`` (its first term
    cast: ``mr.promoted(a, like=...)``), ``("like", indices)`` (its terms formed in float32 for float16
    operands: the psum completing them casts back to the dtype of these terms before it too), or False (a dtype
    that cannot be named: the sum as written)."""
    from meshify.rewrite._dtypes import like_node

    widened = any(rw.dtypes.contains_widened(terms[i][1]) for i in members)
    own = [rw.dtypes.of(terms[i][1]) for i in members]
    if widened and any(c is None for c in own):
        return False  # (its psum could not name the dtype to cast back to)
    outside = [i for i in range(members[-1]) if i not in members and isinstance(kinds[i], frozenset)]
    carriers = [rw.dtypes.of(terms[i][1]) for i in outside]
    if any(c is None for c in carriers):
        return False
    wider = tuple(dict.fromkeys(t for c in carriers for t in c))  # type: ignore[union-attr]
    if not wider or all(c is not None for c in own) and set(wider) <= {t for c in own for t in c}:  # type: ignore[union-attr]
        return None  # (weakly typed scalars, or dtypes the group's own terms carry)
    if widened:
        return "like", tuple(outside)
    return "promoted", like_node(wider)


def _completions(kinds: list[Kind]) -> int:
    """How many psums adding terms of these kinds left to right makes (``_kept_partial``'s rule: a sum of
    partial sums stays partial over the axes both share, the rest of each completed), that of the result
    included."""
    acc: Kind | None = None
    count = 0
    for k in kinds:
        if k == "zero":
            continue
        if acc is None:
            acc = k
            continue
        a = acc if isinstance(acc, frozenset) else frozenset()
        b = k if isinstance(k, frozenset) else frozenset()
        keep = a & b if isinstance(acc, frozenset) and isinstance(k, frozenset) else frozenset()
        count += bool(a - keep) + bool(b - keep)
        acc = keep
    return count + bool(acc if isinstance(acc, frozenset) else ())


def _regrouped(rw, node: cst.BinaryOperation, terms, operands, order: list, casts: dict) -> Operand:
    """The chain added in ``order``: each group as one parenthesised term, in the sign of its first term."""
    items: list[tuple[bool, Operand]] = []
    for item in order:
        if not isinstance(item, list):
            items.append((terms[item][0], operands[item]))
            continue
        sign = terms[item[0]][0]
        rest = [(terms[i][0] == sign, operands[i]) for i in item[1:]]
        cast = casts.get(item[0])
        group = _added(rw, node, operands[item[0]], rest, cast[1] if cast and cast[0] == "promoted" else None,
                       parenthesised=True)
        if cast and cast[0] == "like":  # its psum casts back to the dtype the sum had where the group stands
            rw.dtypes.aliases[group.original] = _carrying([terms[i][1] for i in (*item, *cast[1])])
        items.append((sign, group))
    result = _added(rw, node, items[0][1], items[1:], None, parenthesised=False)
    return Operand(result.value, node, result.node.with_changes(lpar=node.lpar, rpar=node.rpar))


def _added(rw, root: cst.BinaryOperation, first: Operand, rest: list[tuple[bool, Operand]],
           like: cst.BaseExpression | None, parenthesised: bool) -> Operand:
    """``first + rest[0] - rest[1] ...`` (True: added), each operation one of the user's: errors point at
    ``root``.  ``like``: ``first`` cast to the dtype it and these promote to."""
    from meshify.rewrite._evaluate import _int_arithmetic, binary_operator

    acc = first
    for k, (positive, operand) in enumerate(rest):
        operator = cst.Add() if positive else cst.Subtract()
        parens = {"lpar": [cst.LeftParen()], "rpar": [cst.RightParen()]} \
            if parenthesised and k == len(rest) - 1 else {}
        made = cst.BinaryOperation(acc.original, operator, operand.original, **parens)
        rw.ctx.anchors[made] = rw.ctx.anchors.get(root, root)
        value, (left, right) = binary_operator(rw, type(operator), acc, operand, made)
        value = _int_arithmetic(operator, acc.value, operand.value) or value
        if k == 0 and like is not None:
            left = cst.Call(cst.Attribute(cst.Name(rw.ctx.mr), cst.Name("promoted")),
                            [cst.Arg(left), cst.Arg(like, keyword=cst.Name("like"),
                                                    equal=cst.AssignEqual(cst.SimpleWhitespace(""),
                                                                          cst.SimpleWhitespace("")))])
        acc = Operand(value, made, made.with_changes(left=left, right=right))
    return acc


def _carrying(terms: list[cst.BaseExpression]) -> cst.BaseExpression:
    """``a + b + d``: an expression of the sum's terms (a group's, then those before it) whose dtype carriers
    are all of theirs, and which holds the group's partial sums formed in float32 (as
    :meth:`Dtypes.contains_widened` finds them)."""
    made = terms[0]
    for term in terms[1:]:
        made = cst.BinaryOperation(made, cst.Add(), term)
    return made
