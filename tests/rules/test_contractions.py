"""Contractions: a split contracted dim gives a deferred partial sum; output splits are kept."""

from __future__ import annotations

from tests.rules._rewrite import assert_rewrite


def test_an_output_dim_keeps_its_split() -> None:
    assert_rewrite('return jnp.einsum("bd,df->bf", x, w)', 'return jnp.einsum("bd,df->bf", x, w)',
                   'x: Tensor["batch", "d"], w: Tensor["d", "model"]', 'Tensor["batch", "model"]')


def test_a_split_contracted_dim_is_a_partial_sum() -> None:
    assert_rewrite("return x @ w", """
        # meshify: psum over 'model': x @ w is a partial sum (contracted 'model' split); the return hint needs it whole
        return mr.psum(jnp.matmul(x, w, preferred_element_type=mr.sum_dtype(x, w)), "model", like=(x, w))
        """, 'x: Tensor["batch", "model"], w: Tensor["model", "f"]', 'Tensor["batch", "f"]')


def test_a_dim_the_rules_split_is_contracted_locally() -> None:
    assert_rewrite("return x @ w", """
        # meshify: psum over 'model': x @ w is a partial sum (contracted 'k' split); the return hint needs it whole
        return mr.psum(jnp.matmul(x, w, preferred_element_type=mr.sum_dtype(x, w)), "model", like=(x, w))
        """, 'x: Tensor["batch", "k"], w: Tensor["k", "f"]', 'Tensor["batch", "f"]', mesh='batch=2, model=4, rules={"k": "model"}')
