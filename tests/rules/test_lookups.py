"""Lookups on a split table: a masked local lookup whose mode follows jnp's, then a deferred psum."""

from __future__ import annotations

import pytest

from tests.rules._rewrite import assert_rewrite

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
