"""``jnp.split`` into equal sections along a split dim (a fused QKV projection): the schedule that moves
each device's chunks (``meshify._halos.section_rounds``), the rewrite as text, what is refused and where,
and that ``explain`` predicts the collective-permutes the compiled HLO holds (numbers against
``.reference``, forward and gradients: tests/soundness/split_sections_*.py, tests/real_models/nanogpt.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from meshify._halos import section_rounds
from meshify.errors import CallError, UnsupportedError
from tests.rules._rewrite import assert_rewrite, rewrite

X = 'x: Tensor["batch", "d"], w: Tensor["d", "qkv"]'
OUT = 'Tensor["batch", "qkv"]'
MESH = 'batch=2, model=4, rules={"qkv": "model"}'


@pytest.mark.parametrize("sections", range(1, 7))
@pytest.mark.parametrize("shards", [1, 2, 3, 4, 6, 8, 12, 16])
def test_each_round_is_a_permutation_and_every_chunk_reaches_its_section(sections: int, shards: int) -> None:
    rounds = section_rounds(sections, shards)
    assert len(rounds) == sections
    received: dict[int, list[int]] = {i: [] for i in range(shards)}
    sent: dict[int, list[int]] = {j: [] for j in range(shards)}
    for send, to, slot in rounds:
        assert sorted(to) == list(range(shards))  # one chunk out and one in per device: a ppermute
        for j in range(shards):
            chunk = j * sections + send[j]  # global chunk: block chunk % shards of section chunk // shards
            i = to[j]
            assert i == chunk % shards and slot[i] == chunk // shards
            sent[j].append(send[j])
            received[i].append(slot[i])
    assert all(sorted(v) == list(range(sections)) for v in sent.values())
    assert all(sorted(v) == list(range(sections)) for v in received.values())


def test_as_many_sections_as_devices_keeps_one_chunk_in_place() -> None:
    """4 sections over 4 devices: device j already holds block j of section j; 3 rounds move."""
    rounds = section_rounds(4, 4)
    assert sum(all(t == j for j, t in enumerate(to)) for _, to, _ in rounds) == 1


def test_a_fused_qkv_split_runs_mr_split_sections_with_one_comment_per_ppermute() -> None:
    assert_rewrite("q, k, v = jnp.split(x @ w, 3, axis=-1)\nreturn q + k * v", """
        # meshify: sections over 'model': each device's block of 'x @ w' cut into 3 chunks, each sent to the device holding that block of its section (ppermute 1 of 2: 1 chunk)
        # meshify: sections over 'model': the same split's ppermute 2 of 2 (1 chunk)
        q, k, v = mr.split_sections(x @ w, 3, -1, axis_name="model")
        return q + k * v
        """, X, OUT, MESH)


def test_sections_at_indices_run_mr_split_sections_with_the_indices() -> None:
    """A multi-query projection ``[q | k | v]``: sections of other sizes, each split into equal blocks."""
    got = rewrite("q, k, v = jnp.split(x @ w, [16, 20], axis=-1)\nreturn q", X, 'Tensor["batch", "qkv"]',
                  MESH + ', dims={"qkv": 24}').splitlines()
    assert got[-2] == 'q, k, v = mr.split_sections(x @ w, [16, 20], -1, axis_name="model")', got
    assert got[0].startswith("# meshify: sections over 'model': each device's block of 'x @ w' cut into 6 chunks"), got


def test_sections_that_cannot_split_or_an_unread_count_are_refused_at_their_place() -> None:
    with pytest.raises(UnsupportedError) as info:
        rewrite("q, k = jnp.split(x @ w, round(2.5), axis=-1)\nreturn q", X, OUT, MESH)
    assert "case.py:9:12" in str(info.value) and "a number of sections meshify cannot read" in str(info.value), \
        str(info.value)
    with pytest.raises(UnsupportedError) as info:
        rewrite("a, b = jnp.split(x @ w, 2, axis=-1)\nreturn a", X, OUT, mesh=MESH + ', dims={"qkv": 12}')
    assert "case.py:9:12" in str(info.value) and "sections of [6, 6] rows" in str(info.value), str(info.value)
    with pytest.raises(UnsupportedError) as info:
        rewrite("a, b = jnp.split(x @ w, [10], axis=-1)\nreturn a", X, OUT, mesh=MESH + ', dims={"qkv": 16}')
    assert "sections of [10, 6] rows: each section must split into 4 equal blocks" in str(info.value), str(info.value)
    with pytest.raises(UnsupportedError) as info:  # array_split's sections one row apart, named as array_split's
        rewrite("a, b, c = jnp.array_split(x @ w, 3, axis=-1)\nreturn a", X, OUT, mesh=MESH + ', dims={"qkv": 16}')
    assert "jnp.array_split of 'qkv' (16, split over 'model' into 4 blocks) into sections of [6, 5, 5] rows" \
        in str(info.value), str(info.value)


def test_sizes_that_cannot_split_are_refused_at_the_call_naming_the_line(tmp_path: Path) -> None:
    import importlib.util

    import jax.numpy as jnp

    path = tmp_path / "glu.py"
    path.write_text(textwrap.dedent('''\
        import jax
        import jax.numpy as jnp
        from meshify import Tensor, mesh


        @mesh(model=4, rules={"d_ff": "model"})
        def glu(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]):
            a, b = jnp.split(x @ w, 2, axis=-1)
            return a * jax.nn.sigmoid(b)
        '''))
    spec = importlib.util.spec_from_file_location("meshify_glu_sections", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(CallError) as info:
        module.glu(jnp.ones((4, 8)), jnp.ones((8, 12)))
    text = str(info.value)
    assert "glu.py:8:5" in text and "a section of 6 rows does not split into 4 equal blocks" in text, text
    assert "a multiple of 4 rows" in text, text
    path.write_text(path.read_text().replace("a, b = jnp.split(x @ w, 2", "a, b, _ = jnp.array_split(x @ w, 3"))
    spec = importlib.util.spec_from_file_location("meshify_glu_array_sections", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(CallError) as info:  # 16 rows into 3: sections of 6, 5 and 5 rows, as array_split cuts
        module.glu(jnp.ones((4, 8)), jnp.ones((8, 16)))
    assert "jnp.array_split of dim 1 (split over 'model' into 4 blocks of 4 rows) into 3 sections of 6, 5, 5 rows" \
        in str(info.value), str(info.value)


@pytest.mark.parametrize("mesh, rule, sections", [("batch=2, model=4", '"model"', 3), ("model=8", '"model"', 3),
                                                  ("batch=2, model=4", '("batch", "model")', 2),
                                                  ("model=2", '"model"', 8), ("batch=2, model=4", '"model"', "[64, 96]"),
                                                  ("model=8", '"model"', "[8, 24]")],
                         ids=["2x4-3", "8-3", "2x4-two-axes-2", "2-8", "2x4-at-64-96", "8-at-8-24"])
def test_verify_agrees_and_explain_predicts_the_ppermutes(mesh: str, rule: str, sections: int | str,
                                                          tmp_path: Path) -> None:
    from meshify.explain import parse_dims
    from meshify.verify import verify_file

    path = tmp_path / "fused.py"
    path.write_text(textwrap.dedent(f'''\
        import jax
        import jax.numpy as jnp
        from meshify import Tensor, mesh


        @mesh({mesh}, rules={{"fused": {rule}}})
        def f(x: Tensor["n", "d"], w: Tensor["d", "fused"]):
            parts = jnp.split(jnp.tanh(x @ w), {sections}, axis=-1)
            return jnp.sum(parts[0], axis=-1) * jnp.sum(parts[-1], axis=-1)
        '''))
    width = 16 * sections if isinstance(sections, int) else 128
    (report,) = verify_file(path, None, parse_dims(f"n=4,d=8,fused={width}"))
    assert report.results_agree, report
    assert report.prediction_matches, (report.predicted, report.found)
    assert "collective-permute" in report.found, report
