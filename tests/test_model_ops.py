"""Transformer and real-model ops (issues 3 and 8) match their references on every mesh.

``tests/cases/model_ops_cases.py`` holds the functions: reshapes named by hints, the
transpose family, concatenate/stack, arrays built from dim sizes (global positions and
causal masks), basic indexing, lookups and one_hot on split tables, norms over a split
model dim, attention with heads split, vocab-parallel cross-entropy, mixed precision,
helpers, pytree parameters, scan/fori_loop/Python loops over layers, static flags,
``jax.random`` draws and ``jnp.split``.  Each runs under each rule set it names on its
meshes, through ``@mesh`` and through a converted file, with gradients of a scalar loss
where marked (outputs and gradients then come from one jitted program).  Always run: each
case on 2x4 with its first rule set, through ``@mesh`` (with gradients) and through its
converted file called directly; the rest is slow (an eighth, moving daily, always; all with
``MESHIFY_SLOW=1``).  The HLO tests pin the collectives the
issues promise: one all-reduce per norm statistic, Megatron's single all-reduce for
attention, no gather of the vocabulary, none at all for random draws.
"""

from __future__ import annotations

import inspect

import jax
import pytest

from tests.cases import model_ops_cases
from tests.cases.harness import (
    SIZES,
    Built,
    Case,
    build,
    check_outputs_and_gradients,
    check_reference,
    collective_counts,
    collective_shapes,
    differentiable,
    header_module,
    inputs,
    registry,
    sweep,
)

CASES = registry(model_ops_cases)
GRAD_CASES = {name: c for name, c in CASES.items() if c.grad}
PATHS = ("decorator", "converted")


def _built(c: Case, mesh: str, rules: str, path: str) -> Built:
    return build(c, mesh, rules, model_ops_cases.RULES[rules], path)


@pytest.mark.parametrize("name, mesh, rules, path", sweep(CASES, always=("decorator",)))
def test_matches_reference(name: str, mesh: str, rules: str, path: str) -> None:
    # Gradient cases check outputs and gradients from one compiled program (half the compile time).
    c = CASES[name]
    check = check_outputs_and_gradients if c.grad else check_reference
    check(c, _built(c, mesh, rules, path), mesh, rules, path)


@pytest.mark.parametrize("name, mesh, rules, path", sweep(CASES, paths=("converted",), sampled_only=True))
def test_converted_file_matches_reference(name: str, mesh: str, rules: str, path: str) -> None:
    # Always: every case through its converted file, called directly (inputs placed on the mesh).
    c = CASES[name]
    check_reference(c, _built(c, mesh, rules, path), mesh, rules, path)


def test_every_case_runs_on_the_issues_meshes_under_several_rule_sets() -> None:
    for c in CASES.values():
        assert {"1x8", "2x4", "4x2"} <= set(c.meshes), c.name
        assert len(c.rules) >= 2, c.name
        for rules in c.rules:
            assert rules in model_ops_cases.RULES, f"{c.name} names unknown rule set {rules!r}"


def test_cases_module_imports_what_generated_modules_import() -> None:
    header = header_module()
    for name in header.__dict__.keys() - {"mesh"}:
        if not name.startswith("__"):
            assert getattr(model_ops_cases, name) is getattr(header, name), name


# -- collectives in the compiled programs -------------------------------------------------------------


def _hlo(name: str, mesh: str, rules: str, path: str) -> tuple[str, str]:
    """(generated source, compiled forward HLO text) of a case."""
    c = CASES[name]
    built = _built(c, mesh, rules, path)
    source = built.decorated.source if path == "decorator" else built.converted_text
    return source, built.program(path).lower(*inputs(c)).compile().as_text()


def _backward_hlo(name: str, mesh: str, rules: str, path: str) -> str:
    """Compiled HLO of the gradient of a scalar-valued case in its differentiable parameters."""
    c = CASES[name]
    program = _built(c, mesh, rules, path).program(path)
    params = list(inspect.signature(c.fn).parameters)
    wrt = tuple(params.index(p) for p in differentiable(c))
    return jax.jit(jax.grad(program, argnums=wrt)).lower(*inputs(c)).compile().as_text()


def _f32(*dims: int) -> str:
    return "f32[" + ",".join(str(d) for d in dims) + "]"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("mesh, rules, batch_shards", [("2x4", "dm", 2), ("8", "dm", 1), ("2x4", "dm2", 1)])
def test_norms_reduce_once_per_statistic(mesh: str, rules: str, batch_shards: int, path: str) -> None:
    # Layer norm: the mean and the variance, one all-reduce each; RMS norm: one.
    stat = _f32(SIZES["batch"] // batch_shards, SIZES["length"], 1)
    _, layer = _hlo("layer_norm_split", mesh, rules, path)
    assert collective_shapes(layer) == [("all-reduce", stat)] * 2
    _, rms = _hlo("rms_norm_split", mesh, rules, path)
    assert collective_shapes(rms) == [("all-reduce", stat)]


@pytest.mark.parametrize("path", PATHS)
def test_attention_with_heads_split_reduces_once(path: str) -> None:
    # Megatron: projections per head shard, one all-reduce of the output projection.
    _, hlo = _hlo("multi_head_attention", "2x4", "tp", path)
    assert collective_shapes(hlo) == [("all-reduce", _f32(SIZES["batch"] // 2, SIZES["length"], SIZES["d_model"]))]


@pytest.mark.parametrize("path", PATHS)
def test_vocab_parallel_loss_never_gathers(path: str) -> None:
    # Forward and backward, the vocabulary over both axes (test_transformer.py: over 'model'):
    # lookups and the loss reduce small statistics, never the table or the logits.
    _, forward = _hlo("vocab_parallel_cross_entropy", "2x4", "vocab2", path)
    backward = _backward_hlo("vocab_parallel_cross_entropy", "2x4", "vocab2", path)
    for hlo in (forward, backward):
        counts = collective_counts(hlo)
        assert counts["all-gather"] == 0 and counts["all-to-all"] == 0, counts


@pytest.mark.parametrize("path", PATHS)
def test_embedding_lookup_is_one_all_reduce(path: str) -> None:
    _, hlo = _hlo("embedding_lookup", "2x4", "tp", path)
    assert collective_shapes(hlo) == [("all-reduce", _f32(SIZES["batch"] // 2, SIZES["length"], SIZES["d_model"]))]


@pytest.mark.parametrize("path", PATHS)
def test_random_draws_need_no_communication(path: str) -> None:
    # Every device draws the global shape and keeps its block (here: of a split sequence).
    source, hlo = _hlo("random_draws", "2x4", "len", path)
    assert collective_counts(hlo) == {}, source


@pytest.mark.parametrize("path", PATHS)
def test_scan_body_reduces_once_per_layer(path: str) -> None:
    # The layer body holds one all-reduce (d_ff split); the loop runs it once per layer.
    _, hlo = _hlo("scan_over_layers", "2x4", "tp", path)
    assert collective_shapes(hlo) == [("all-reduce", _f32(SIZES["batch"] // 2, SIZES["length"], SIZES["d_model"]))]


@pytest.mark.parametrize("path", PATHS)
def test_causal_mask_on_split_sequence_gathers_nothing_it_builds(path: str) -> None:
    # Masks and positions are built whole on every device and sliced: no collective for them.
    source, hlo = _hlo("sinusoid_positions", "2x4", "len", path)
    assert collective_counts(hlo) == {}, source
