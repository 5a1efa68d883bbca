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


def test_a_mesh_axis_nothing_uses_is_warned_once_at_the_first_call(tmp_path, monkeypatch) -> None:
    """``@mesh(data=2, model=4, rules={"hidden": "model"})`` beside ``Tensor["batch", ...]``: no dim maps to
    'data', so both rows of devices do the same work; the first call warns, naming the axis (the flow attack,
    session 25: every check passed while nothing was data-parallel).  An axis the body uses only inside (a
    collective over it) and an axis of size 1 are not warned."""
    import importlib
    import warnings

    import jax.numpy as jnp
    import pytest

    (tmp_path / "unused_axis_model.py").write_text(
        "import jax\nimport jax.numpy as jnp\nfrom meshify import Tensor, mesh\n\n\n"
        '@mesh(data=2, model=4, rules={"hidden": "model"})\n'
        'def mlp(x: Tensor["batch", "d"], w1: Tensor["d", "hidden"], w2: Tensor["hidden", "d"]):\n'
        "    return jax.nn.relu(x @ w1) @ w2\n\n\n"
        '@mesh(data=1, model=8, rules={"hidden": "model"})\n'
        'def single(x: Tensor["batch", "d"], w1: Tensor["d", "hidden"], w2: Tensor["hidden", "d"]):\n'
        "    return jax.nn.relu(x @ w1) @ w2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("unused_axis_model")
    args = (jnp.ones((16, 8)), jnp.ones((8, 32)), jnp.ones((32, 8)))
    with pytest.warns(RuntimeWarning, match="mesh axis 'data' splits no argument"):
        module.mlp(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module.mlp(*args)  # (once)
        module.single(*args)  # (an axis of size 1 splits nothing by design)
