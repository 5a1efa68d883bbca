"""meshify.runtime.hlo: collectives parsed out of compiled HLO text."""

import re

import jax
import numpy as np
import pytest
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

from meshify.runtime.hlo import Collective, collectives, shape_bytes, summarize

SAMPLE = """\
HloModule jit_f, entry_computation_layout={(f32[8,2]{1,0})->f32[8,2]{1,0}}

%region_0.0 (a: f32[], b: f32[]) -> f32[] {
  ROOT %add = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (param.2: f32[8,2], param.3: f32[8,8]) -> (f32[32,2]) {
  %all_gather.3 = f32[32,2]{1,0} all-gather(%param.2), channel_id=1, dimensions={0}, metadata={op_name="all_gather"}
  %reduce_scatter.7 = bf16[2,8]{1,0} reduce-scatter(%param.3), channel_id=2, dimensions={0}, to_apply=%region_0.0
  %all-to-all = (f32[2,2]{1,0}, f32[2,2]{1,0}) all-to-all(%s0, %s1), channel_id=3, replica_groups={{0,1,2,3}}
  %gte = f32[2,2]{1,0} get-tuple-element(%all-to-all), index=0
  %all-reduce = (f32[8,2]{1,0}, s32[]) all-reduce(%param.2, %c), channel_id=4, to_apply=%region_0.0
  %ars = f32[4]{0} all-reduce-start(%v), channel_id=5, to_apply=%region_0.0
  %ard = f32[4]{0} all-reduce-done(%ars)
  %fusion = f32[4]{0} fusion(%all-reduce, %ard), kind=kLoop, calls=%fused
  ROOT %ppermute.3 = f32[8,2]{1,0} collective-permute(%param.2), channel_id=6, source_target_pairs={{0,1},{1,0}}
}
"""


def test_parses_each_kind_once_with_shapes_and_bytes():
    assert collectives(SAMPLE) == [
        Collective("all-gather", "f32[32,2]", 32 * 2 * 4),
        Collective("reduce-scatter", "bf16[2,8]", 2 * 8 * 2),
        Collective("all-to-all", "(f32[2,2], f32[2,2])", 2 * 16),
        Collective("all-reduce", "(f32[8,2], s32[])", 64 + 4),
        Collective("all-reduce", "f32[4]", 16),
        Collective("collective-permute", "f32[8,2]", 64),
    ]


def test_summarize_counts_and_sums_bytes_per_kind():
    summary = summarize(collectives(SAMPLE))
    assert summary["all-reduce"] == (2, 68 + 16)
    assert summary["all-gather"] == (1, 256)
    assert list(summary) == ["all-gather", "reduce-scatter", "all-to-all", "all-reduce", "collective-permute"]
    assert summarize([]) == {}


@pytest.mark.parametrize("shape, expected", [
    ("f32[2,8,16]", 1024),
    ("f32[]", 4),
    ("bf16[3]", 6),
    ("pred[5]", 5),
    ("s4[3]", 2),
    ("f8e4m3fn[10]", 10),
    ("f64[2,2]", 32),
    ("(f32[2], bf16[4], s32[])", 8 + 8 + 4),
    ("f32[<=8,2]", 64),
    ("f32[8]{0:T(256)}", 32),
])
def test_shape_bytes(shape, expected):
    assert shape_bytes(shape) == expected


def test_unknown_dtype_is_an_error():
    with pytest.raises(ValueError, match="unknown HLO element type"):
        shape_bytes("q7[2]")


def test_no_collectives_in_plain_text():
    assert collectives("ROOT %dot = f32[2,2]{1,0} dot(%a, %b)\n%x = f32[2] add(%all-reduce, %y)") == []


def test_real_compiled_program():
    mesh = jax.make_mesh((2, 4), ("b", "m"), axis_types=(AxisType.Auto,) * 2)

    def f(x):
        gathered = jax.lax.all_gather(x, "m", axis=0, tiled=True)
        return jax.lax.psum(gathered, "b")

    g = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("m", None), out_specs=P(), check_vma=False))
    text = g.lower(np.ones((8, 4), np.float32)).compile().as_text()
    summary = summarize(collectives(text))
    assert summary["all-gather"] == (1, 8 * 4 * 4)
    assert summary["all-reduce"] == (1, 8 * 4 * 4)
    assert set(summary) == {"all-gather", "all-reduce"}


# -- combined collectives, async forms, and every benchmark program ---------------------------

#: XLA numbers a tuple's elements from the sixth on with a comment that holds '='.
COMBINED = ("  %all-reduce.15 = (f32[], f32[64]{0}, f32[2,8,64]{2,1,0}, f32[2,8,64]{2,1,0}, f32[2,8,64]{2,1,0}, "
            "/*index=5*/f32[64,2,8]{2,1,0}, f32[64]{0}, f32[64,64]{1,0}) all-reduce(%a, %b, %c, %d, %e, "
            "/*index=5*/%f, %g, %h), channel_id=7, replica_groups={{0,1,2,3},{4,5,6,7}}, to_apply=%add")


def test_a_combined_collective_with_index_comments_is_counted_whole():
    (found,) = collectives(COMBINED)
    assert found.kind == "all-reduce"
    assert found.shape_text == ("(f32[], f32[64], f32[2,8,64], f32[2,8,64], f32[2,8,64], "
                                "f32[64,2,8], f32[64], f32[64,64])")
    assert found.bytes == 4 * (1 + 64 + 3 * 2 * 8 * 64 + 64 * 2 * 8 + 64 + 64 * 64)


@pytest.mark.parametrize("line, expected", [
    # A `-start` counts once, its `-done` not at all.
    ("%ars = f32[4]{0} all-reduce-start(f32[4]{0} %v), to_apply=%add", Collective("all-reduce", "f32[4]", 16)),
    ("%ard = f32[4]{0} all-reduce-done(f32[4]{0} %ars)", None),
    # all-gather-start and collective-permute-start return (operands, results[, context]): the results count.
    ("%ags = (f32[8]{0}, f32[32]{0}) all-gather-start(f32[8]{0} %p), dimensions={0}",
     Collective("all-gather", "(f32[8], f32[32])", 128)),
    ("%ags = ((f32[8]{0}, bf16[8]{0}), (f32[32]{0}, bf16[32]{0})) all-gather-start(%p, %q), dimensions={0}",
     Collective("all-gather", "((f32[8], bf16[8]), (f32[32], bf16[32]))", 128 + 64)),
    ("%cps = (f32[8]{0}, f32[8]{0}, u32[], u32[]) collective-permute-start(%p), source_target_pairs={{0,1}}",
     Collective("collective-permute", "(f32[8], f32[8], u32[], u32[])", 32)),
    ("%agd = f32[32]{0} all-gather-done((f32[8]{0}, f32[32]{0}) %ags)", None),
    # Dynamic dims and layouts with parentheses are part of the shape.
    ("ROOT %ar = f32[<=8,2]{1,0:T(8,128)} all-reduce(%x), to_apply=%add", Collective("all-reduce", "f32[<=8,2]", 64)),
    # The op is the instruction's own, not an operand's name or an attribute.
    ("%f = f32[4]{0} fusion(f32[4]{0} %all-reduce, f32[4]{0} %all-gather.2), calls=%all-reduce.clone", None),
    ('%c = f32[4]{0} custom-call(%x), custom_call_target="all-reduce(", metadata={op_name="x all-gather("}', None),
])
def test_async_pairs_and_unusual_shapes(line, expected):
    assert collectives(line) == ([expected] if expected else [])


#: What JAX_NOTES.md calls a collective line: a plain count, with no shape parsing to get wrong.
_COLLECTIVE_LINE = re.compile(r" (?:all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\(")

#: Every benchmark program; these run on every CI run (block's and lm_step's gradients combine
#: more than five all-reduces into one, the case the old parser dropped), the rest in the slow sample.
_FAST = {("ffn", "fwd"), ("vocab_ce", "fwd_bwd"), ("block", "fwd_bwd"), ("dp_mlp", "fwd_bwd"), ("fsdp_tp", "fwd_bwd")}


def _bench_params():
    cases, modes = ("ffn", "block", "fsdp_tp", "vocab_ce", "dp_mlp", "lm_step"), ("fwd", "fwd_bwd")
    return [pytest.param(c, m, id=f"{c}-{m}", marks=() if (c, m) in _FAST else pytest.mark.slow)
            for c in cases for m in modes]


@pytest.mark.parametrize("case, mode", _bench_params())
def test_every_collective_line_of_the_benchmark_programs_is_found(case, mode):
    from benchmarks import run

    assert set(run.CASES) == {c for c, *_ in (p.values for p in _bench_params())}
    bench = run.make_bench(case, mode, run.SIZES["quick"][case])
    for variant, program in bench.variants.items():
        text = jax.jit(program).lower(*bench.args).compile().as_text()
        lines = [line for line in text.splitlines() if _COLLECTIVE_LINE.search(line)]
        found = collectives(text)
        assert len(found) == len(lines), (variant, [c.shape_text for c in found], lines)
        assert all(c.bytes > 0 for c in found), (variant, found)
