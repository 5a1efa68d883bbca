"""The elementwise family: functions of one or two arrays, registered from _signatures.UNARY/BINARY."""

from __future__ import annotations

import pytest

from meshify.errors import UnsupportedError
from tests.rules._rewrite import assert_rewrite

X = 'x: Tensor["batch", "model"]'
XY = 'x: Tensor["batch", "model"], y: Tensor["batch", "model"]'
OUT = 'Tensor["batch", "model"]'


@pytest.mark.parametrize("fn", ["jnp.exp", "jax.nn.gelu", "jax.lax.rsqrt", "jax.scipy.special.erf", "jax.lax.erfc",
                                "jax.scipy.special.erfc"])
def test_a_function_of_one_array_runs_locally_on_any_layout(fn: str) -> None:
    assert_rewrite(f"return {fn}(x)", f"return {fn}(x)", X, OUT)


def test_a_partial_sum_is_reduced_before_a_nonlinear_function() -> None:
    assert_rewrite(
        'h = jnp.einsum("bm,bm->b", x, x)\nreturn jnp.tanh(h)',
        """
        h = jnp.einsum("bm,bm->b", x, x, preferred_element_type=mr.sum_dtype(x))
        # meshify: psum over 'model': h is a partial sum (contracted 'model' split); tanh needs it whole
        h = mr.psum(h, "model", like=x)
        return jnp.tanh(h)
        """, X, 'Tensor["batch"]')


def test_negative_keeps_a_partial_sum_pending() -> None:
    assert_rewrite(
        'return jnp.negative(jnp.einsum("bm,bm->b", x, x))',
        """
        # meshify: psum over 'model': jnp.negative(jnp.einsum("bm,bm->b", x, x)) is a partial sum (contracted 'model' split); the return hint needs it whole
        return mr.psum(jnp.negative(jnp.einsum("bm,bm->b", x, x, preferred_element_type=mr.sum_dtype(x))), "model", like=x)
        """, X, 'Tensor["batch"]')


@pytest.mark.parametrize("fn", ["jnp.maximum", "jnp.logaddexp"])
def test_two_arrays_broadcast_and_keep_their_splits(fn: str) -> None:
    assert_rewrite(f"return {fn}(x, y)", f"return {fn}(x, y)", XY, OUT)


def test_a_static_parameter_passes_and_an_array_one_is_refused() -> None:
    assert_rewrite("return jax.nn.leaky_relu(x, negative_slope=0.2)",
                   "return jax.nn.leaky_relu(x, negative_slope=0.2)", X, OUT)
    with pytest.raises(UnsupportedError, match="does not model where="):
        assert_rewrite("return jnp.add(x, y, where=y > 0)", "", XY, OUT)


def test_clip_is_elementwise_over_the_array_and_its_bounds() -> None:
    assert_rewrite("return jnp.clip(x, y, 1.0)", "return jnp.clip(x, y, 1.0)", XY, OUT)
    assert_rewrite("return x.clip(max=y)", "return x.clip(max=y)", XY, OUT)


def test_clip_completes_a_partial_sum_first() -> None:
    assert_rewrite(
        'return jnp.clip(jnp.einsum("bm,bm->b", x, x), -1.0, 1.0)',
        """
        # meshify: psum over 'model': jnp.einsum("bm,bm->b", x, x) is a partial sum (contracted 'model' split); clip needs it whole
        return jnp.clip(mr.psum(jnp.einsum("bm,bm->b", x, x, preferred_element_type=mr.sum_dtype(x)), "model", like=x), -1.0, 1.0)
        """, X, 'Tensor["batch"]')


def test_python_sum_of_partial_sums_stays_partial() -> None:
    assert_rewrite(
        'return sum([jnp.einsum("bm,bm->b", x, x), jnp.einsum("bm,bm->b", x, y)])',
        """
        # meshify: psum over 'model': sum(...) is a partial sum (contracted 'model' split); the return hint needs it whole
        return mr.psum(sum([jnp.einsum("bm,bm->b", x, x, preferred_element_type=mr.sum_dtype(x)), jnp.einsum("bm,bm->b", x, y, preferred_element_type=mr.sum_dtype(x, y))]), "model", like=(x, y))
        """, XY, 'Tensor["batch"]')


def test_python_sum_with_a_whole_start_adds_it_on_one_device_and_completes_the_sum_once() -> None:
    assert_rewrite(
        'return sum([jnp.einsum("bm,bm->b", x, x)], 1.0)',
        """
        # meshify: psum over 'model': sum([jnp.einsum("bm,bm->b", x, x)], 1.0) is a partial sum (contracted 'model' split); the return hint needs it whole
        return mr.psum(sum([jnp.einsum("bm,bm->b", x, x, preferred_element_type=mr.sum_dtype(x))], mr.on_one_device(1.0, "model")), "model", like=x)
        """, X, 'Tensor["batch"]')


def test_python_sum_of_a_list_it_cannot_see_into_is_refused() -> None:
    # a generator over a tuple it sees into: its element walked once, the terms of one layout (session 19)
    assert_rewrite("return sum(t for t in (x, y))", "return sum(t for t in (x, y))", XY, OUT)
    with pytest.raises(UnsupportedError, match="write the terms out"):
        assert_rewrite("return sum(x)", "", XY, OUT)  # Python iterates over the split batch: a partial sum
    assert_rewrite("terms = [x, y]\nreturn sum(terms)", "terms = [x, y]\nreturn sum(terms)", XY, OUT)
