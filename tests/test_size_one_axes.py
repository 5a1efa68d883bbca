"""A mesh axis of size 1 splits nothing (issue #12): a dim the rules map to it is whole everywhere,
so loops, lookups and indexing over it run as written, and no collective or spec names it."""

from __future__ import annotations

from pathlib import Path

from meshify.annotate._types import MeshSpec, Rules
from meshify.rewrite import convert_source

HERE = Path(__file__).resolve().parent / "soundness"


def test_a_size_one_axis_is_left_out_of_every_layout_after_resolution() -> None:
    mesh = MeshSpec.of(data=8, model=1, stage=1)
    rules = Rules.parse(mesh, {"layer": "model", "d": ["stage", "data"], "both": ("data", "model")})
    assert rules.axes("layer") == () and rules.axes("model") == () and rules.axes("both") == ("data",)
    # 'stage' still takes part in the resolution: the first 'd' takes it (whole), the second gets 'data'
    assert rules.layout(("layer", "d", "d")).axes == ((), (), ("data",))
    assert rules.layout(("batch", "data")).axes == ((), ("data",))


def test_the_converted_scan_over_a_size_one_axis_names_no_such_axis() -> None:
    path = HERE / "scan_layers_size1_axis.py"
    code = convert_source(path.read_text(), str(path)).text
    assert '"w": mr.ArgSpec(("layer", "d", "d"), mr.P(None, None, None))' in code
    assert "h, _ = jax.lax.scan(body, x, w)" in code and "mr.P(\"model\"" not in code
