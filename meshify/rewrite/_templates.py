"""The code meshify inserts, written once each as a template.

Placeholders in braces are CST nodes; ``axes`` renders a mesh axis as ``"model"`` and
several as ``("batch", "model")``.  Planner steps take their template from their
:class:`~meshify.rewrite._collectives.Collective`; op rules pass theirs to :func:`call_template`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator, Sequence

import libcst as cst

from meshify.rewrite._collectives import collective
from meshify.rewrite._plan import Step

__all__ = ["axes_node", "apply_step", "call_template", "psum_statement", "comment_line", "int_node", "item_node"]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_FILLED = re.compile(r"__meshify_(\w+)__")


@functools.cache
def _parsed_expression(template: str) -> tuple[cst.BaseExpression, tuple]:
    """A template parsed once, with where each ``{name}`` placeholder sits in it."""
    node = cst.parse_expression(_PLACEHOLDER.sub(r"__meshify_\1__", template))
    return node, tuple(_holes(node, ()))


@functools.cache
def _parsed_statement(template: str) -> tuple[cst.BaseStatement, tuple]:
    node = cst.parse_statement(_PLACEHOLDER.sub(r"__meshify_\1__", template))
    return node, tuple(_holes(node, ()))


def _holes(node: cst.CSTNode, path: tuple) -> Iterator[tuple[str, tuple]]:
    """``(name, path)`` of each placeholder below ``node``; a path step is ``(field, index or None)``."""
    if isinstance(node, cst.Name):
        match = _FILLED.fullmatch(node.value)
        if match:
            yield match.group(1), path
        return
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, cst.CSTNode):
            yield from _holes(value, (*path, (f.name, None)))
        elif isinstance(value, Sequence) and not isinstance(value, str):
            for i, item in enumerate(value):
                if isinstance(item, cst.CSTNode):
                    yield from _holes(item, (*path, (f.name, i)))


def _put(node: cst.CSTNode, path: tuple, value: cst.CSTNode) -> cst.CSTNode:
    """``node`` with ``value`` at ``path`` (only the nodes along the path are rebuilt)."""
    if not path:
        return value
    (field, index), rest = path[0], path[1:]
    child = getattr(node, field)
    if index is None:
        return node.with_changes(**{field: _put(child, rest, value)})
    items = list(child)
    items[index] = _put(items[index], rest, value)
    return node.with_changes(**{field: items})


def _fill(parsed: tuple[cst.CSTNode, tuple], nodes: dict[str, cst.CSTNode]) -> cst.CSTNode:
    node, holes = parsed
    for name, path in holes:
        node = _put(node, path, nodes[name])
    return node


def parse_template_expression(template: str, **nodes: cst.CSTNode) -> cst.BaseExpression:
    return _fill(_parsed_expression(template), nodes)  # type: ignore[return-value]


def parse_template_statement(template: str, **nodes: cst.CSTNode) -> cst.BaseStatement:
    return _fill(_parsed_statement(template), nodes)  # type: ignore[return-value]


def axes_node(axes: Sequence[str]) -> cst.BaseExpression:
    """``"model"``, or ``("batch", "model")`` for several axes (major first)."""
    if len(axes) == 1:
        return cst.SimpleString(f'"{axes[0]}"')
    return cst.Tuple([cst.Element(cst.SimpleString(f'"{a}"')) for a in axes])


def item_node(node: cst.BaseExpression, i: int) -> cst.Subscript:
    """``node[i]``."""
    return cst.Subscript(node, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])


def int_node(value: int) -> cst.BaseExpression:
    if value < 0:
        return cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))
    return cst.Integer(str(value))


def apply_step(step: Step, x: cst.BaseExpression, mr: str, like: cst.BaseExpression | None = None,
               varying: bool = False, reduce_dtype: str | None = None) -> cst.BaseExpression:
    """``x`` wrapped in the collective (or local slice) that ``step`` describes; a psum's ``like``
    (the dtypes to cast a float32-accumulated partial sum back to) as its last argument; an
    all_gather whose result is used beside values split over its axes gets ``varying=True``."""
    template = collective(step.kind).template
    assert template is not None, step
    nodes = {"x": x, "axes": axes_node(step.axes), "dim": int_node(step.dim), "to_dim": int_node(step.to_dim),
             "mr": cst.Name(mr)}
    node = parse_template_expression(template, **nodes)
    if varying and step.kind == "all_gather":
        node = _with_keyword(node, "varying", cst.Name("True"))
    node = _with_keyword(node, "like", like)
    return _with_keyword(node, "reduce_dtype", cst.SimpleString(f'"{reduce_dtype}"') if reduce_dtype else None)


def _with_keyword(node: cst.BaseExpression, keyword: str, value: cst.BaseExpression | None) -> cst.BaseExpression:
    if value is None:
        return node
    assert isinstance(node, cst.Call), node
    args = [*node.args[:-1], node.args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))]
    equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    return node.with_changes(args=[*args, cst.Arg(value, keyword=cst.Name(keyword), equal=equal)])


def call_template(template: str, **nodes: cst.CSTNode) -> cst.BaseExpression:
    """An op rule's replacement expression, e.g. ``{mr}.softmax({x}, axis={axis}, axis_name={axes})``."""
    return parse_template_expression(template, **nodes)


def psum_statement(name: str, axes: Sequence[str], mr: str, like: cst.BaseExpression | None = None,
                   reduce_dtype: str | None = None) -> cst.BaseStatement:
    """``name = mr.psum(name, axes)``: a deferred partial sum materialised in place."""
    statement = parse_template_statement("{name} = {mr}.psum({name}, {axes})", name=cst.Name(name), mr=cst.Name(mr),
                                         axes=axes_node(axes))
    if like is None and reduce_dtype is None:
        return statement
    assign = statement.body[0]  # type: ignore[attr-defined]
    value = _with_keyword(assign.value, "like", like)
    value = _with_keyword(value, "reduce_dtype", cst.SimpleString(f'"{reduce_dtype}"') if reduce_dtype else None)
    return statement.with_changes(body=[assign.with_changes(value=value)])


def comment_line(text: str) -> cst.EmptyLine:
    return cst.EmptyLine(comment=cst.Comment("# meshify: " + text))
