"""Partial sums of float16/bfloat16 operands: formed in float32, cast back by the psum (as text).

The dtype is not in the hints, so the code names it (``meshify.rewrite._dtypes``): the operands
of the op that forms the partial sum, read where the psum runs.
"""

from __future__ import annotations

from tests.rules._rewrite import assert_rewrite

XW = 'x: Tensor["batch", "d"], w: Tensor["d", "e"]'
MESH = 'model=4, rules={"d": "model"}'


def test_a_contraction_forming_a_partial_sum_accumulates_in_float32_and_the_psum_casts_back() -> None:
    assert_rewrite("h = x @ w\nreturn h * 2", """
        h = jnp.matmul(x, w, preferred_element_type=mr.sum_dtype(x, w))
        # meshify: psum over 'model': h * 2 is a partial sum (contracted 'd' split); the return hint needs it whole
        return mr.psum(h * 2, "model", like=(x, w))
        """, XW, 'Tensor["batch", "e"]', MESH)


def test_a_reassigned_parameter_is_read_once_at_the_top() -> None:
    # After `x = x @ w`, x is the partial sum: the cast back needs the dtype x came in with.
    assert_rewrite("x = x @ w\nreturn x", """
        # meshify: the dtypes of reassigned parameters, for partial sums of float16/bfloat16 (mr.sum_dtype)
        x_dtype = x.dtype
        x = jnp.matmul(x, w, preferred_element_type=mr.sum_dtype(x_dtype, w))
        # meshify: psum over 'model': x is a partial sum (contracted 'd' split); the return hint needs it whole
        x = mr.psum(x, "model", like=(x_dtype, w))
        return x
        """, XW, 'Tensor["batch", "e"]', MESH)


def test_a_cast_names_the_dtype_it_casts_to() -> None:
    assert_rewrite("h = x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)\nreturn h", """
        h = jnp.matmul(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16), preferred_element_type=mr.sum_dtype(jnp.bfloat16))
        # meshify: psum over 'model': h is a partial sum (contracted 'd' split); the return hint needs it whole
        h = mr.psum(h, "model", like=jnp.bfloat16)
        return h
        """, XW, 'Tensor["batch", "e"]', MESH)


def test_a_name_bound_to_an_expression_stands_for_its_operands_dtypes() -> None:
    assert_rewrite("h = jax.nn.gelu(x)\nh = jnp.sum(h, axis=1)\nreturn h", """
        h = jax.nn.gelu(x)
        h = jnp.sum(h, axis=1, dtype=mr.sum_dtype(x))
        # meshify: psum over 'model': h is a partial sum (reduced 'd' split); the return hint needs it whole
        h = mr.psum(h, "model", like=x)
        return h
        """, 'x: Tensor["batch", "d"]', 'Tensor["batch"]', MESH)


def test_a_sum_of_a_comparison_counts_in_integers() -> None:
    assert_rewrite("return jnp.sum(x > 0, axis=1)", """
        # meshify: psum over 'model': jnp.sum(x > 0, axis=1) is a partial sum (reduced 'd' split); the return hint needs it whole
        return mr.psum(jnp.sum(x > 0, axis=1, dtype=mr.sum_dtype(bool)), "model", like='int32')
        """, 'x: Tensor["batch", "d"]', 'Tensor["batch"]', MESH)


def test_a_dtype_the_user_gives_is_kept() -> None:
    assert_rewrite("return jnp.sum(x, axis=1, dtype=jnp.float32)", """
        # meshify: psum over 'model': jnp.sum(x, axis=1, dtype=jnp.float32) is a partial sum (reduced 'd' split); the return hint needs it whole
        return mr.psum(jnp.sum(x, axis=1, dtype=jnp.float32), "model")
        """, 'x: Tensor["batch", "d"]', 'Tensor["batch"]', MESH)


def test_a_lookups_partial_sum_is_exact_and_keeps_its_dtype() -> None:
    # Each element is nonzero on one device only: the psum adds zeros, nothing to accumulate.
    assert_rewrite("return emb[ids]", """
        # meshify: masked local lookup in split 'vocab' of emb; the result is a partial sum over 'vocab'
        # meshify: psum over 'vocab': emb[ids] is a partial sum (lookup in split 'vocab'); the return hint needs it whole
        return mr.psum(mr.take(emb, ids, axis=0, axis_name="vocab", mode="index"), "vocab")
        """, 'emb: Tensor["vocab", "d"], ids: Tensor["batch"]', 'Tensor["batch", "d"]', 'vocab=4')
