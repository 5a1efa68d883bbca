"""Arrays built inside the function: whole on every device, then sliced where they meet split values."""

from __future__ import annotations

from tests.rules._rewrite import assert_rewrite

X = 'x: Tensor["batch", "model"]'


def test_a_literal_shape_is_named_by_broadcasting_and_sliced() -> None:
    assert_rewrite("return x + jnp.zeros((8, 16))", """
        # meshify: local slice over 'batch' (no communication): '+' wants dim 'batch' of jnp.zeros((8, 16)) split
        # meshify: local slice over 'model' (no communication): '+' wants dim 'model' of jnp.zeros((8, 16)) split
        return x + mr.local_block(mr.local_block(jnp.zeros((8, 16)), axis=0, axis_name="batch"), axis=1, axis_name="model")
        """, X, 'Tensor["batch", "model"]')


def test_a_partial_sum_fill_value_is_reduced_first() -> None:
    assert_rewrite("return jnp.full_like(x, jnp.sum(x))", """
        # meshify: psum over 'batch' x 'model': jnp.sum(x) is a partial sum (reduced 'batch', 'model' split); full_like needs it whole
        return jnp.full_like(x, mr.psum(jnp.sum(x, dtype=mr.sum_dtype(x)), ("batch", "model"), like=x))
        """, X, 'Tensor["batch", "model"]')


def test_a_mask_needs_global_positions() -> None:
    assert_rewrite("return jnp.tril(x)", """
        # meshify: all_gather over 'model': tril (positions must be global) needs dim 'model' of x whole
        # meshify: local slice over 'model' (no communication): the return hint wants dim 'model' of jnp.tril(x) split
        return mr.local_block(jnp.tril(mr.all_gather(x, "model", axis=1)), axis=1, axis_name="model")
        """, 'x: Tensor["len", "model"]', 'Tensor["len", "model"]')
