"""Arrays built inside the function: whole on every device, then sliced where they meet split values."""

from __future__ import annotations

from tests.rules._rewrite import assert_rewrite

X = 'x: Tensor["batch", "model"]'


def test_a_literal_shape_is_named_by_broadcasting_and_sliced() -> None:
    assert_rewrite("return x + jnp.zeros((8, 16))", """
        # meshify: local slice over 'batch' (no communication): '+' wants dim 'batch' of jnp.zeros((8, 16)) split
        # meshify: local slice over 'model' (no communication): '+' wants dim 'model' of jnp.zeros((8, 16)) split
        return x + mr.entries(mr.local_block(mr.local_block(jnp.zeros((8, 16)), axis=0, axis_name="batch"), axis=1, axis_name="model"), ("batch", "model"), (2, 4), like=x)
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


# -- random draws -----------------------------------------------------------------------------------

DRAW_NOTE = ("local draw over {axes} (no communication): each device draws only its block of {fn}, bit-identical to "
             "one device (threefry bits by global position; drawn whole and sliced if jax_threefry_partitionable is "
             "off or the key is not threefry)")


def test_a_draw_shaped_like_a_split_array_is_drawn_blockwise_with_no_slice() -> None:
    note = DRAW_NOTE.format(axes="'batch' x 'model'", fn="jax.random.bernoulli")
    assert_rewrite("""
        keep = jax.random.bernoulli(key, 0.9, x.shape)
        return jnp.where(keep, x / 0.9, 0.0)
        """, f"""
        # meshify: {note}
        keep = mr.local_draw(jax.random.bernoulli, mr.P("batch", "model"), key, 0.9, mr.global_shape(x, (2, 4)))
        return jnp.where(keep, x / 0.9, 0.0)
        """, f'{X}, key: Tensor[()]', 'Tensor["batch", "model"]')


def test_a_blockwise_draw_keeps_keywords_and_follows_the_layout_of_its_shape() -> None:
    note = DRAW_NOTE.format(axes="'batch' x 'model'", fn="jax.random.normal")
    assert_rewrite("""
        return x + jax.random.normal(key, shape=x.shape, dtype=jnp.bfloat16)
        """, f"""
        # meshify: {note}
        return x + mr.local_draw(jax.random.normal, mr.P(None, ("batch", "model")), key, shape=mr.global_shape(x, (1, 8)), dtype=jnp.bfloat16)
        """, 'x: Tensor["len", "d"], key: Tensor[()]', 'Tensor["len", "d"]', mesh='batch=2, model=4, rules={"d": ("batch", "model")}')


def test_a_draw_of_a_literal_shape_is_whole_and_sliced() -> None:
    assert_rewrite("return x + jax.random.uniform(key, (8, 16))", """
        # meshify: local slice over 'batch' (no communication): '+' wants dim 'batch' of jax.random.uniform(key, (8, 16)) split
        # meshify: local slice over 'model' (no communication): '+' wants dim 'model' of jax.random.uniform(key, (8, 16)) split
        return x + mr.entries(mr.local_block(mr.local_block(jax.random.uniform(key, (8, 16)), axis=0, axis_name="batch"), axis=1, axis_name="model"), ("batch", "model"), (2, 4), like=x)
        """, f'{X}, key: Tensor[()]', 'Tensor["batch", "model"]')


def test_a_draw_shaped_like_a_replicated_array_is_left_alone() -> None:
    assert_rewrite("return x + jax.random.normal(key, x.shape)", """
        return x + jax.random.normal(key, x.shape)
        """, 'x: Tensor["len", "d"], key: Tensor[()]', 'Tensor["len", "d"]')


def test_a_draw_with_a_parameter_array_of_the_shape_is_whole_and_sliced() -> None:
    # p broadcasts against the global shape, so the draw is made whole (p is replicated).
    assert_rewrite("return jnp.where(jax.random.bernoulli(key, p, x.shape), x, 0.0)", """
        # meshify: local slice over 'batch' (no communication): where wants dim 'batch' of jax.random.bernoulli(key, p, x.shape) split
        return jnp.where(mr.local_block(jax.random.bernoulli(key, p, mr.global_shape(x, (2, 1))), axis=0, axis_name="batch"), x, 0.0)
        """, 'x: Tensor["batch", "d"], p: Tensor["rows", "d"], key: Tensor[()]', 'Tensor["batch", "d"]')
