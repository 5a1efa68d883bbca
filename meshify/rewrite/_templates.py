"""The code meshify inserts, written once each as a template.

Placeholders in braces are CST nodes; ``axes`` renders a mesh axis as ``"model"`` and
several as ``("batch", "model")``.  Every inserted call goes through this module, so a
reviewer finds the whole vocabulary of generated code here.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.helpers import parse_template_expression, parse_template_statement

from meshify.rewrite._plan import Step

__all__ = ["axes_node", "apply_step", "call_template", "psum_statement", "comment_line", "int_node"]

_STEP_TEMPLATES = {
    "psum": "jax.lax.psum({x}, {axes})",
    "psum_scatter": "jax.lax.psum_scatter({x}, {axes}, scatter_dimension={dim}, tiled=True)",
    "all_gather": "{mr}.all_gather({x}, {axes}, axis={dim})",
    "slice": "{mr}.local_block({x}, axis={dim}, axis_name={axes})",
    "all_to_all": "jax.lax.all_to_all({x}, {axes}, split_axis={to_dim}, concat_axis={dim}, tiled=True)",
}


def axes_node(axes: Sequence[str]) -> cst.BaseExpression:
    """``"model"``, or ``("batch", "model")`` for several axes (major first)."""
    if len(axes) == 1:
        return cst.SimpleString(f'"{axes[0]}"')
    return cst.Tuple([cst.Element(cst.SimpleString(f'"{a}"')) for a in axes])


def int_node(value: int) -> cst.BaseExpression:
    if value < 0:
        return cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))
    return cst.Integer(str(value))


def apply_step(step: Step, x: cst.BaseExpression, mr: str) -> cst.BaseExpression:
    """``x`` wrapped in the collective (or local slice) that ``step`` describes."""
    template = _STEP_TEMPLATES[step.kind]
    nodes = {"x": x, "axes": axes_node(step.axes), "dim": int_node(step.dim), "to_dim": int_node(step.to_dim),
             "mr": cst.Name(mr)}
    return parse_template_expression(template, **{k: v for k, v in nodes.items() if "{%s}" % k in template})


def call_template(template: str, **nodes: cst.CSTNode) -> cst.BaseExpression:
    """An op rule's replacement expression, e.g. ``{mr}.softmax({x}, axis={axis}, axis_name={axes})``."""
    return parse_template_expression(template, **nodes)


def psum_statement(name: str, axes: Sequence[str]) -> cst.BaseStatement:
    """``name = jax.lax.psum(name, axes)``: a deferred partial sum materialised in place."""
    return parse_template_statement("{name} = jax.lax.psum({name}, {axes})", name=cst.Name(name),
                                    axes=axes_node(axes))


def comment_line(text: str) -> cst.EmptyLine:
    return cst.EmptyLine(comment=cst.Comment("# meshify: " + text))
