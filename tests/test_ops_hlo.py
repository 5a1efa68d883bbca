"""What the corpus programs really send: collectives counted in compiled HLO.

Numerical agreement (``test_ops_numeric.py``) cannot tell one all-reduce from two, or a
reduce-scatter from an all-reduce followed by a slice; these tests read the compiled
program of a few corpus cases, through both paths, and pin the collectives that
DESIGN.md promises: deferred partial sums reduced once, ``psum_scatter`` where the
consumer wants the reduced dim split, and nothing at all where nothing is split.
"""

from __future__ import annotations

import re

import pytest

from tests.cases import ops_cases
from tests.cases.harness import SIZES, build, collective_counts, collective_shapes, inputs, registry

CASES = registry(ops_cases)
PATHS = ("decorator", "converted")


def _hlo(name: str, mesh: str, rules: str, path: str) -> tuple[str, str]:
    """(generated source, compiled HLO text) of a corpus case."""
    c = CASES[name]
    built = build(c, mesh, rules, ops_cases.RULES[rules], path)
    program = built.program(path)
    source = built.decorated.source if path == "decorator" else built.converted_text
    return source, program.lower(*inputs(c)).compile().as_text()


def _f32(*dims: int) -> str:
    return "f32[" + ",".join(str(d) for d in dims) + "]"


def _calls(source: str, fn: str) -> int:
    return len(re.findall(re.escape(fn) + r"\(", source))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("mesh, batch_shards", [("2x4", 2), ("4x2", 4), ("8", 1)])
def test_deferred_chain_reduces_once(mesh: str, batch_shards: int, path: str) -> None:
    # a = x @ w1; b = x @ w2 (both partial over 'model'); a + b: one psum, one all-reduce.
    source, hlo = _hlo("deferred_chain", mesh, "dm", path)
    assert _calls(source, "mr.psum") == 1, source
    assert collective_shapes(hlo) == [("all-reduce", _f32(SIZES["batch"] // batch_shards, SIZES["d_ff"]))]


@pytest.mark.parametrize("path", PATHS)
def test_linear_ops_keep_one_pending_reduction(path: str) -> None:
    # 0.5 * (a - b) / 4.0 + -a: scaling, negation, sums of partial sums stay partial.
    source, hlo = _hlo("linear_on_partials", "2x4", "dm", path)
    assert _calls(source, "mr.psum") == 1, source
    assert collective_counts(hlo) == {"all-reduce": 1}


@pytest.mark.parametrize("path", PATHS)
def test_return_hint_splitting_the_partial_axis_reduce_scatters(path: str) -> None:
    # h.sum(axis=0) is partial over 'model' (batch was split); the return wants d_ff split
    # over 'model': one reduce-scatter, no all-reduce.
    source, hlo = _hlo("reduce_scatter_return", "2x4", "cross1", path)
    assert _calls(source, "mr.psum_scatter") == 1 and _calls(source, "mr.psum") == 0, source
    counts = collective_counts(hlo)
    assert counts["reduce-scatter"] == 1 and counts["all-reduce"] == 0, counts
    assert ("reduce-scatter", _f32(SIZES["d_ff"] // 4)) in collective_shapes(hlo)


@pytest.mark.parametrize("path", PATHS)
def test_sequence_parallel_hint_reduce_scatters(path: str) -> None:
    # Megatron-SP: the partial einsum is reduced straight into the 'seq'-split layout.
    source, hlo = _hlo("sequence_parallel", "2x4", "sp", path)
    assert _calls(source, "mr.psum_scatter") == 1 and _calls(source, "mr.psum") == 0, source
    shape = _f32(SIZES["batch"] // 2, SIZES["seq"] // 4, SIZES["d_ff"])
    assert collective_shapes(hlo) == [("reduce-scatter", shape)]


@pytest.mark.parametrize("path", PATHS)
def test_hybrid_ffn_holds_one_all_reduce_of_the_local_activation(path: str) -> None:
    # batch=2 x model=4, d_ff over 'model': one all-reduce of [batch/2, length, d_model].
    _, hlo = _hlo("hybrid", "2x4", "tp", path)
    shape = _f32(SIZES["batch"] // 2, SIZES["length"], SIZES["d_model"])
    assert collective_shapes(hlo) == [("all-reduce", shape)]


@pytest.mark.parametrize("path", PATHS)
def test_megatron_ffn_holds_one_all_reduce(path: str) -> None:
    _, hlo = _hlo("ffn", "2x4", "tp", path)
    assert collective_shapes(hlo) == [("all-reduce", _f32(SIZES["batch"] // 2, SIZES["length"], SIZES["d_model"]))]


@pytest.mark.parametrize("path", PATHS)
def test_softmax_over_split_dim_is_two_small_all_reduces(path: str) -> None:
    # pmax of the local max, psum of the local sum of exp: both [batch/2], nothing gathered.
    _, hlo = _hlo("softmax_last", "2x4", "tp", path)
    assert collective_shapes(hlo) == [("all-reduce", _f32(SIZES["batch"] // 2))] * 2


@pytest.mark.parametrize("path", PATHS)
def test_mean_over_split_dim_is_one_all_reduce(path: str) -> None:
    _, hlo = _hlo("mean_function", "2x4", "dm", path)
    assert collective_shapes(hlo) == [("all-reduce", _f32(SIZES["batch"] // 2, SIZES["length"]))]


@pytest.mark.parametrize("path", PATHS)
def test_one_axis_two_dims_gathers_instead_of_reducing(path: str) -> None:
    # 'model' splits batch in x and d_ff in w1: one operand is gathered, nothing reduced.
    _, hlo = _hlo("one_axis_two_dims", "2x4", "cross1", path)
    counts = collective_counts(hlo)
    assert counts["all-gather"] >= 1 and counts["all-reduce"] == 0, counts


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name, rules", [("einsum_2d", "tp"), ("arithmetic", "flat"), ("broadcast_vector", "dm"),
                                         ("hybrid", "none"), ("transcendental", "dm")])
def test_nothing_split_across_devices_means_no_collectives(name: str, rules: str, path: str) -> None:
    source, hlo = _hlo(name, "2x4", rules, path)
    assert collective_counts(hlo) == {}, source


@pytest.mark.parametrize("path", PATHS)
def test_axis_moving_between_dims_is_one_all_to_all(path: str) -> None:
    # length/'model' -> d_ff/'model' under a renaming hint: an all_to_all, not gather + slice.
    source, hlo = _hlo("all_to_all_hint", "2x4", "lf", path)
    assert _calls(source, "jax.lax.all_to_all") == 1, source
    counts = collective_counts(hlo)
    assert counts["all-to-all"] == 1 and counts["all-reduce"] == 0, counts
