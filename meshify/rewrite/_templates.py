"""The code meshify inserts, written once each as a template.

Placeholders in braces are CST nodes; ``axes`` renders a mesh axis as ``"model"`` and
several as ``("batch", "model")``.  Planner steps take their template from their
:class:`~meshify.rewrite._collectives.Collective`; op rules pass theirs to :func:`call_template`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import libcst as cst

from meshify.rewrite._collectives import collective
from meshify.rewrite._plan import Step

__all__ = ["axes_node", "apply_step", "call_template", "psum_statement", "comment_line", "int_node"]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_FILLED = re.compile(r"__meshify_(\w+)__")


@functools.cache
def _parsed_expression(template: str) -> cst.BaseExpression:
    """A template parsed once, its ``{name}`` placeholders as ``__meshify_name__`` names."""
    return cst.parse_expression(_PLACEHOLDER.sub(r"__meshify_\1__", template))


@functools.cache
def _parsed_statement(template: str) -> cst.BaseStatement:
    return cst.parse_statement(_PLACEHOLDER.sub(r"__meshify_\1__", template))


class _Fill(cst.CSTTransformer):
    """Puts the given nodes where a parsed template has its placeholder names."""

    def __init__(self, nodes: dict[str, cst.CSTNode]) -> None:
        super().__init__()
        self.nodes = nodes

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        match = _FILLED.fullmatch(updated.value)
        return self.nodes[match.group(1)] if match else updated  # type: ignore[return-value]


def parse_template_expression(template: str, **nodes: cst.CSTNode) -> cst.BaseExpression:
    return _parsed_expression(template).visit(_Fill(nodes))  # type: ignore[return-value]


def parse_template_statement(template: str, **nodes: cst.CSTNode) -> cst.BaseStatement:
    return _parsed_statement(template).visit(_Fill(nodes))  # type: ignore[return-value]


def axes_node(axes: Sequence[str]) -> cst.BaseExpression:
    """``"model"``, or ``("batch", "model")`` for several axes (major first)."""
    if len(axes) == 1:
        return cst.SimpleString(f'"{axes[0]}"')
    return cst.Tuple([cst.Element(cst.SimpleString(f'"{a}"')) for a in axes])


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
