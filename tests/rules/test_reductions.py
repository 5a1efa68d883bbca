"""Reductions and the softmax family: what a split reduced dim becomes, as text."""

from __future__ import annotations

from tests.rules._rewrite import assert_rewrite

X = 'x: Tensor["batch", "model"]'


def test_a_mean_over_a_split_dim_is_local_then_a_deferred_psum() -> None:
    assert_rewrite("return jnp.mean(x, axis=1)", """
        # meshify: mean over split 'model': local mean / 4 shards, summed later
        # meshify: psum over 'model': jnp.mean(x, axis=1) is a partial sum (reduced 'model' split); the return hint needs it whole
        return mr.psum((jnp.mean(x, axis=1, dtype=mr.sum_dtype(x)) / 4), "model", like=x)
        """, X, 'Tensor["batch"]')


def test_a_max_over_a_split_dim_is_one_runtime_call() -> None:
    assert_rewrite("return jnp.max(x, axis=1)", """
        # meshify: pmax over 'model': max over split dim 'model' of 'x'
        return mr.max(x, axis=1, axis_name="model")
        """, X, 'Tensor["batch"]')


def test_softmax_over_a_split_dim() -> None:
    assert_rewrite("return jax.nn.softmax(x, axis=-1)", """
        # meshify: softmax over split 'model': local max, pmax, local sum of exp, psum over 'model'
        return mr.softmax(x, axis=1, axis_name="model")
        """, X, 'Tensor["batch", "model"]')


def test_a_reduction_over_an_unsplit_dim_stays_as_written() -> None:
    assert_rewrite("return jnp.sum(x, axis=0)", """
        # meshify: psum over 'batch': jnp.sum(x, axis=0) is a partial sum (reduced 'batch' split); the return hint needs it whole
        return mr.psum(jnp.sum(x, axis=0, dtype=mr.sum_dtype(x)), "batch", like=x)
        """, X, 'Tensor["model"]')
