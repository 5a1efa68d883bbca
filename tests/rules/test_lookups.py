"""Lookups on a split table: a masked local lookup whose mode follows jnp's, then a deferred psum."""

from __future__ import annotations

import pytest

from meshify.errors import MeshifyError
from tests.rules._rewrite import assert_rewrite, rewrite

TABLE = 'emb: Tensor["vocab", "d"], ids: Tensor["batch"]'
MESH = "batch=2, vocab=4"


@pytest.mark.parametrize("call, mode", [("emb[ids]", "index"), ("jnp.take(emb, ids, axis=0)", "fill"),
                                        ('jnp.take(emb, ids, axis=0, mode="clip")', "clip"),
                                        ('jnp.take(emb, ids, 0, None, "wrap")', "wrap")])
def test_the_mode_reaches_the_masked_lookup(call: str, mode: str) -> None:
    assert_rewrite(f"return {call}", f"""
        # meshify: masked local lookup in split 'vocab' of emb; the result is a partial sum over 'vocab'
        # meshify: psum over 'vocab': {call} is a partial sum (lookup in split 'vocab'); the return hint needs it whole
        return mr.psum(mr.take(emb, ids, axis=0, axis_name="vocab", mode="{mode}"), "vocab")
        """, TABLE, 'Tensor["batch", "d"]', MESH)


def test_a_whole_table_keeps_the_users_lookup() -> None:
    assert_rewrite("return jnp.take(emb, ids, axis=0, mode='clip')", "return jnp.take(emb, ids, axis=0, mode='clip')",
                   TABLE, 'Tensor["batch", "d"]', "batch=2, model=4")


# -- a 2-D index, an index beside full slices, and which side moves (issue #14: T5's table[buckets]) -----------

BUCKETS = 'table: Tensor["buckets", "heads"], ids: Tensor["q", "k"]'


def test_a_2d_index_into_a_table_split_along_another_dim_runs_locally() -> None:
    assert_rewrite("return table[ids]", "return table[ids]", BUCKETS, 'Tensor["q", "k", "heads"]',
                   "batch=2, heads=4")


def test_a_2d_index_into_the_split_dim_is_a_masked_lookup() -> None:
    assert_rewrite("return table[ids]", """
        # meshify: masked local lookup in split 'buckets' of table; the result is a partial sum over 'buckets'
        # meshify: psum over 'buckets': table[ids] is a partial sum (lookup in split 'buckets'); the return hint needs it whole
        return mr.psum(mr.take(table, ids, axis=0, axis_name="buckets", mode="index"), "buckets")
        """, BUCKETS, 'Tensor["q", "k", "heads"]', "batch=2, buckets=4")


def test_a_small_table_read_by_many_ids_is_gathered_where_sizes_say_so() -> None:
    """16 x 8 table over 4 devices: gathering receives 3 x 32 elements; the psum would move ~2 x 8192."""
    sizes = 'dims={"buckets": 16, "heads": 8, "q": 32, "k": 32}'
    assert_rewrite("return table[ids]", """
        # meshify: all_gather over 'buckets': a lookup whose result outweighs the table needs dim 'buckets' of table whole
        return mr.all_gather(table, "buckets", axis=0)[ids]
        """, BUCKETS, 'Tensor["q", "k", "heads"]', f"batch=2, buckets=4, {sizes}")


def test_a_big_table_read_by_few_ids_stays_a_masked_lookup_where_sizes_say_so() -> None:
    sizes = 'dims={"vocab": 4096, "d": 64, "batch": 8}'
    text = rewrite("return emb[ids]", TABLE, 'Tensor["batch", "d"]', f"batch=2, vocab=4, {sizes}")
    assert "mr.take(emb, ids, axis=0" in text and "all_gather" not in text, text


@pytest.mark.parametrize("index, axis", [("x[:, ids]", 1), ("x[ids, :]", 0)])
def test_an_index_beside_full_slices_looks_up_that_dim(index: str, axis: int) -> None:
    params = 'x: Tensor["vocab", "vocab2"], ids: Tensor["q", "k"]'
    rules = "batch=2, vocab=4" if axis == 0 else "batch=2, vocab2=4"
    split = "vocab" if axis == 0 else "vocab2"
    returns = 'Tensor["q", "k", "vocab2"]' if axis == 0 else 'Tensor["vocab", "q", "k"]'
    text = rewrite(f"return {index}", params, returns, rules)
    assert f'mr.take(x, ids, axis={axis}, axis_name="{split}", mode="index")' in text, text


@pytest.mark.parametrize("body, headline", [
    ("return x[0, ids]", "advanced indexing with an array beside indices other than ':'"),
    ("return x[ids, ids[0]]", "advanced indexing with an array beside indices other than ':'"),  # (index arrays of other dims)
    ("i = jnp.eye(4).astype(int)\nreturn x[i]", "index 'i' is an array whose dims meshify cannot infer"),
])
def test_other_advanced_indexing_is_refused_with_a_fix(body: str, headline: str) -> None:
    with pytest.raises(MeshifyError) as info:
        rewrite(body, 'x: Tensor["batch", "vocab"], ids: Tensor["q", "k"]', 'Tensor["q", "k"]', "model=4")
    assert headline in str(info.value) and "fix:" in str(info.value), str(info.value)
