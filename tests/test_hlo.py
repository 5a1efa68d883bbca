"""meshify.runtime.hlo: collectives parsed out of compiled HLO text."""

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
