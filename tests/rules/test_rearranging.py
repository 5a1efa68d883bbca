"""einops patterns (rules/rearranging.py): the generated call keeps its pattern, lengths of split axes are
divided per shard, partial sums pass through; what would leave a device a strided piece, reduce by a
non-linear reduction over a split axis, and patterns meshify cannot read are refused at their place."""

from __future__ import annotations

import textwrap

import pytest

from meshify.errors import MeshifyError
from meshify.rewrite import convert_source

pytest.importorskip("einops")

HEADER = '''\
import jax.numpy as jnp
from einops import rearrange, reduce, repeat
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"features": "model"})
def f(x: Tensor["batch", "seq", "features"], w: Tensor["features", "d"], n: int = 8):
'''


def _rewrite(body: str) -> str:
    text = convert_source(HEADER + textwrap.indent(textwrap.dedent(body).strip() + "\n", "    "), "case.py",
                          width=None).text
    return textwrap.dedent("\n".join(text[text.index("def f("):].splitlines()[1:])).strip()


def test_heads_split_off_a_split_dim_get_per_shard_lengths() -> None:
    got = _rewrite('''
        q = rearrange(x, "b s (h d) -> b h s d", h=8)
        k = rearrange(x, "b s (h d) -> b h s d", h=n)
        v = rearrange(x, "b s (h d) -> b h s d", d=4)
        return q + k + v
        ''')
    assert 'rearrange(x, "b s (h d) -> b h s d", h=2)' in got, got
    assert 'rearrange(x, "b s (h d) -> b h s d", h=mr.shard_size(n, 4, "h", major_of="features"))' in got, got
    assert 'rearrange(x, "b s (h d) -> b h s d", d=4)' in got, got


def test_a_fused_dim_whose_first_length_the_shards_do_not_divide_is_cut_into_its_sections_first() -> None:
    got = _rewrite('''
        q, k, v = rearrange(x, "b s (three h d) -> three b h s d", three=3, h=n)
        return q + k + v
        ''')
    assert 'rearrange(mr.sectioned(x, 3, -1, axis_name="model"), "b s (three h d) -> three b h s d", three=3, ' \
        'h=mr.shard_size(n, 4, "h", major_of="features"))' in got, got


def test_a_partial_sum_passes_through_rearrange_and_reduce_sum_once() -> None:
    got = _rewrite('''
        y = rearrange(x @ w, "b s d -> s b d")
        return reduce(y, "s b d -> s d", "sum")
        ''')
    assert got.count("mr.psum(") == 1 and 'rearrange(jnp.matmul(x, w' in got, got


@pytest.mark.parametrize("body, message", [
    ('return rearrange(x, "b s (h d) -> b s (d h)", h=8)', "is not the group's first axis"),
    ('return reduce(x, "b s f -> b s", "max")', "only 'sum' and 'mean' over a split axis"),
    ('return rearrange(x, "b s f -> b f s", f=6)', "einops length f= 6 of dim 'features' is not divisible"),
    ('return rearrange(x, "b s f -> " + str(n))', "a pattern meshify cannot read"),
    ('return repeat(x, "b s f -> b s f 2")', "anonymous axis 2"),
    ('return rearrange(x, "b s 1 -> b s")', "reads dim 'features' as size 1"),
    ('return rearrange(x, "b s -> b s")', "does not fit"),
])
def test_refused_at_its_place_with_a_fix(body: str, message: str) -> None:
    with pytest.raises(MeshifyError) as info:
        _rewrite(body)
    text = str(info.value)
    assert message in text and "case.py:" in text and "fix:" in text, text
