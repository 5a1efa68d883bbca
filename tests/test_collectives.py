"""The collective descriptors: one entry per kind, consistent with the planner, the emitter and HLO."""

from __future__ import annotations

import libcst as cst

from meshify.annotate._types import Layout, MeshSpec
from meshify.rewrite._collectives import COLLECTIVES, STEP_KINDS, collective
from meshify.rewrite._plan import Step, plan_conversion, step_result
from meshify.rewrite._templates import apply_step
from meshify.runtime import hlo
import meshify.runtime as mr

MESH = MeshSpec.of(data=2, model=4)


def test_every_kind_compiles_to_an_hlo_instruction_meshify_counts() -> None:
    for c in COLLECTIVES.values():
        assert c.hlo is None or c.hlo in hlo.KINDS, c


def test_every_step_template_renders_and_names_runtime_functions_that_exist() -> None:
    for kind in STEP_KINDS:
        node = apply_step(Step(kind, ("model",), 0, 1), cst.Name("x"), "mr")
        code = cst.Module([]).code_for_node(node)
        assert code.startswith(("mr.", "jax.lax.")), code
        if code.startswith("mr."):
            assert hasattr(mr, code[3:code.index("(")]), code


def test_step_effects_take_each_layout_to_the_planned_one() -> None:
    src = Layout(("a", "b"), (("model",), ()), frozenset({"data"}))
    for dst in [Layout(("a", "b"), ((), ())), Layout(("a", "b"), ((), ("model",))),
                Layout(("a", "b"), (("model",), ("data",))), Layout(("a", "b"), (("model", "data"), ()))]:
        layout = src
        for step in plan_conversion(src, dst, MESH):
            layout = step_result(step, layout)
        assert layout == dst


def test_bytes_follow_the_instruction_result() -> None:
    assert collective("psum").result_bytes(64, 4) == 64
    assert collective("psum_scatter").result_bytes(64, 4) == 16
    assert collective("all_gather").result_bytes(64, 4) == 256
    assert collective("softmax").instructions == 2
    assert not collective("slice").communicates
