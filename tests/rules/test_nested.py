"""Statements as real code writes them: nested defs (loop bodies, closures), as text."""

from __future__ import annotations

import pytest

from meshify.errors import LayoutError, UnsupportedError
from tests.rules._rewrite import assert_rewrite, rewrite

X = 'x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]'
LAYERS = 'x: Tensor["batch", "d"], w1: Tensor["layer", "d", "f"], w2: Tensor["layer", "f", "d"]'
OUT = 'Tensor["batch", "d"]'
MESH = 'batch=2, model=4, rules={"f": "model"}'


def _error(body: str, params: str = X, cls: type = UnsupportedError) -> str:
    with pytest.raises(cls) as info:
        rewrite(body, params, OUT, MESH)
    text = str(info.value)
    assert "fix:" in text and "^" in text, text  # positioned, with a fix
    return text


# -- nested defs as loop bodies ------------------------------------------------------------------


def test_a_scan_body_def_is_rewritten_in_place_for_one_iteration() -> None:
    assert_rewrite("""
        def body(h, ws):
            return h + jax.nn.relu(h @ ws[0]) @ ws[1], None

        out, _ = jax.lax.scan(body, x, (w1, w2))
        return out
        """, """
        def body(h, ws):
            # meshify: psum over 'model': jax.nn.relu(h @ ws[0]) @ ws[1] is a partial sum (contracted 'f' split); '+' needs it whole
            return h + mr.psum(jnp.matmul(jax.nn.relu(h @ ws[0]), ws[1], preferred_element_type=mr.sum_dtype(h, ws[0], ws[1])), "model", like=(h, ws[0], ws[1])), None

        out, _ = jax.lax.scan(body, x, (w1, w2))
        return out
        """, LAYERS, OUT, MESH)


def test_a_fori_loop_body_def_closes_over_split_weights() -> None:
    assert_rewrite("""
        def step(i, h):
            return h + jnp.tanh(h @ w1) @ w2

        return jax.lax.fori_loop(0, 4, step, x)
        """, """
        def step(i, h):
            # meshify: psum over 'model': jnp.tanh(h @ w1) @ w2 is a partial sum (contracted 'f' split); '+' needs it whole
            return h + mr.psum(jnp.matmul(jnp.tanh(h @ w1), w2, preferred_element_type=mr.sum_dtype(h, w1, w2)), "model", like=(h, w1, w2))

        return jax.lax.fori_loop(0, 4, step, x)
        """, X, OUT, MESH)


def test_a_checkpointed_scan_body_keeps_its_decorator() -> None:
    assert_rewrite("""
        @jax.checkpoint
        def body(h, ws):
            return h + jax.nn.relu(h @ ws[0]) @ ws[1], None

        return jax.lax.scan(body, x, (w1, w2))[0]
        """, """
        @jax.checkpoint
        def body(h, ws):
            # meshify: psum over 'model': jax.nn.relu(h @ ws[0]) @ ws[1] is a partial sum (contracted 'f' split); '+' needs it whole
            return h + mr.psum(jnp.matmul(jax.nn.relu(h @ ws[0]), ws[1], preferred_element_type=mr.sum_dtype(h, ws[0], ws[1])), "model", like=(h, ws[0], ws[1])), None

        return jax.lax.scan(body, x, (w1, w2))[0]
        """, LAYERS, OUT, MESH)


# -- nested defs called directly -----------------------------------------------------------------


def test_a_def_called_twice_with_one_layout_is_emitted_once() -> None:
    assert_rewrite("""
        def norm(y):
            return y / jnp.sqrt(jnp.mean(y * y, axis=-1, keepdims=True))

        h = norm(x) @ w1
        return norm(x + h @ w2)
        """, """
        def norm(y):
            return y / jnp.sqrt(jnp.mean(y * y, axis=-1, keepdims=True))

        h = norm(x) @ w1
        # meshify: psum over 'model': h @ w2 is a partial sum (contracted 'f' split); '+' needs it whole
        return norm(x + mr.psum(jnp.matmul(h, w2, preferred_element_type=mr.sum_dtype(x, w1, w2)), "model", like=(x, w1, w2)))
        """, X, OUT, MESH)


def test_a_def_called_with_two_layouts_is_emitted_once_per_layout() -> None:
    assert_rewrite("""
        def norm(y):
            return y / jnp.sqrt(jnp.mean(y * y, axis=-1, keepdims=True))

        h = norm(jax.nn.relu(x @ w1))
        return norm(x) + h @ w2
        """, """
        # meshify: norm for y: [batch/'batch', f/'model']
        def norm__v1(y):
            # meshify: mean over split 'f': local mean / 4 shards, summed later
            # meshify: psum over 'model': jnp.mean(y * y, axis=-1, keepdims=True) is a partial sum (reduced 'f' split); sqrt needs it whole
            return y / jnp.sqrt(mr.psum((jnp.mean(y * y, axis=-1, keepdims=True, dtype=mr.sum_dtype(y)) / 4), "model", like=y))

        # meshify: norm for y: [batch/'batch', d]
        def norm__v2(y):
            return y / jnp.sqrt(jnp.mean(y * y, axis=-1, keepdims=True))

        h = norm__v1(jax.nn.relu(x @ w1))
        # meshify: psum over 'model': h @ w2 is a partial sum (contracted 'f' split); '+' needs it whole
        return norm__v2(x) + mr.psum(jnp.matmul(h, w2, preferred_element_type=mr.sum_dtype(x, w1, w2)), "model", like=(x, w1, w2))
        """, X, OUT, MESH)


def test_a_hinted_nested_def_converts_its_return_to_the_hint() -> None:
    assert_rewrite("""
        def mlp(y: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
            return jax.nn.relu(y @ w1) @ w2

        return mlp(x)
        """, """
        def mlp(y: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
            # meshify: psum over 'model': jax.nn.relu(y @ w1) @ w2 is a partial sum (contracted 'f' split); the return hint needs it whole
            return mr.psum(jnp.matmul(jax.nn.relu(y @ w1), w2, preferred_element_type=mr.sum_dtype(y, w1, w2)), "model", like=(y, w1, w2))

        return mlp(x)
        """, X, OUT, MESH)


def test_a_partial_sum_returned_by_a_nested_def_is_reduced_by_its_caller_in_its_default_s_dtype() -> None:
    assert_rewrite("""
        def down(y, w=w1):
            return y @ w

        return down(x) @ w2
        """, """
        def down(y, w=w1):
            return y @ w

        # meshify: psum over 'model': down(x) @ w2 is a partial sum (contracted 'f' split); the return hint needs it whole
        return mr.psum(jnp.matmul(down(x), w2, preferred_element_type=mr.sum_dtype(x, w1, w2)), "model", like=(x, w1, w2))
        """, X, OUT, MESH)


def test_an_unused_def_is_emitted_as_written() -> None:
    assert_rewrite("""
        def unused(y):
            return y @ w1

        return x
        """, """
        def unused(y):
            return y @ w1

        return x
        """, X, OUT, MESH)


# -- nested defs meshify cannot follow: positioned errors with a fix -----------------------------


def test_a_nested_def_used_as_a_value_is_refused_at_the_use() -> None:
    text = _error("""
        def row(y):
            return y @ w1 @ w2

        mapped = jax.vmap(row)
        return mapped(x)
        """)
    assert "row() is used as a value" in text and "jax.vmap(row)(...)" in text


def test_a_nested_def_bound_to_another_name_is_refused() -> None:
    assert "g = act" in _error("""
        def act(y):
            return y

        g = act
        return x
        """)


def test_nonlocal_in_a_nested_def_is_refused() -> None:
    text = _error("""
        h = x
        def bump():
            nonlocal h
            h = h * 2
            return h
        bump()
        return h
        """)
    assert "'nonlocal' in the nested function bump()" in text and "x = step(x)" in text


def test_a_recursive_nested_def_is_refused() -> None:
    assert "recursive call of the nested function mlp()" in _error("""
        def mlp(y):
            return mlp(y)

        return mlp(x)
        """)


def test_a_def_that_differs_by_branch_is_refused_after_the_if() -> None:
    assert "'act' is a different function after each branch" in _error("""
        if cfg:
            def act(y):
                return jnp.tanh(y)
        else:
            def act(y):
                return jax.nn.relu(y)
        return act(x)
        """, X + ", cfg")


def test_a_decorator_meshify_cannot_keep_is_refused() -> None:
    assert "decorated with @jax.vmap" in _error("""
        @jax.vmap
        def row(y):
            return y

        return row(x)
        """)


def test_a_nested_hint_that_disagrees_with_the_call_is_refused() -> None:
    assert "mlp() hints y as [batch, f]" in _error("""
        def mlp(y: Tensor["batch", "f"]):
            return y

        return mlp(x)
        """, cls=LayoutError)


def test_a_scan_body_def_with_too_few_parameters_is_refused() -> None:
    assert "body() takes 1 arguments but scan passes it 2" in _error("""
        def body(h):
            return h, None

        return jax.lax.scan(body, x, (w1, w2))[0]
        """, LAYERS)


# -- one-line bodies -----------------------------------------------------------------------------

B = X + ', b: Tensor["d"], cfg'


def test_one_line_bodies_stay_on_their_line_when_nothing_is_inserted() -> None:
    assert_rewrite("""
        def act(y): return jnp.tanh(y)
        h = act(x)
        if cfg.bias: h = h + b
        else: h = h * 2
        for i in range(3): h = h * 2; h = h + 1
        if cfg.early: return h
        return h
        """, """
        def act(y): return jnp.tanh(y)
        h = act(x)
        if cfg.bias: h = h + b
        else: h = h * 2
        for i in range(3): h = h * 2; h = h + 1
        if cfg.early: return h
        return h
        """, B, OUT, MESH)


def test_a_one_line_body_needing_a_collective_becomes_an_indented_block() -> None:
    assert_rewrite("""
        h = x
        if cfg.bias: h = h + jnp.tanh(x @ w1) @ w2
        return h
        """, """
        h = x
        if cfg.bias:
            # meshify: psum over 'model': jnp.tanh(x @ w1) @ w2 is a partial sum (contracted 'f' split); '+' needs it whole
            h = h + mr.psum(jnp.matmul(jnp.tanh(x @ w1), w2, preferred_element_type=mr.sum_dtype(x, w1, w2)), "model", like=(x, w1, w2))
        return h
        """, B, OUT, MESH)


def test_a_one_line_nested_def_is_rewritten_on_its_line() -> None:
    assert_rewrite("""
        def act(y): return jnp.tanh(y @ w1) @ w2
        return act(x)
        """, """
        def act(y): return jnp.matmul(jnp.tanh(y @ w1), w2, preferred_element_type=mr.sum_dtype(y, w1, w2))
        # meshify: psum over 'model': act(x) is a partial sum (contracted 'f' split); the return hint needs it whole
        return mr.psum(act(x), "model", like=(x, w1, w2))
        """, X, OUT, MESH)


def test_a_one_line_mesh_function() -> None:
    from meshify.rewrite import convert_source

    text = convert_source(
        'import jax.numpy as jnp\nfrom meshify import Tensor, mesh\n\n\n@mesh(model=4, rules={"f": "model"})\n'
        'def f(x: Tensor["d", "f"]) -> Tensor["d"]: return jnp.sum(x, axis=1)\n', "case.py").text
    assert 'def f(x: Tensor["d", "f"]) -> Tensor["d"]:\n    # meshify: psum over \'model\'' in text, text


def test_a_loop_body_leaving_a_partial_sum_completes_it_each_iteration() -> None:
    assert_rewrite("""
        h = x
        for i in range(3): h = jnp.tanh(h @ w1) @ w2
        return h
        """, """
        h = x
        for i in range(3):
            h = jnp.matmul(jnp.tanh(h @ w1), w2, preferred_element_type=mr.sum_dtype(x, w1, w2))
            # meshify: psum over 'model': h is a partial sum (contracted 'f' split); the next iteration (it entered the loop whole) needs it whole
            h = mr.psum(h, "model", like=(x, w1, w2))
        return h
        """, X, OUT, MESH)


# -- assert and raise on static values -----------------------------------------------------------

H = 'x: Tensor["batch", "model"], w: Tensor["model", "d"], cfg, n'


def test_an_assert_on_static_values_is_kept_with_global_sizes() -> None:
    assert_rewrite("""
        assert x.shape[-1] % cfg.heads == 0, f"{x.shape[-1]} heads"
        assert x.shape[1] == 8 and cfg.bias
        return x @ w
        """, """
        assert (x.shape[-1] * 4) % cfg.heads == 0, f"{(x.shape[-1] * 4)} heads"
        assert (x.shape[1] * 4) == 8 and cfg.bias
        # meshify: psum over 'model': x @ w is a partial sum (contracted 'model' split); the return hint needs it whole
        return mr.psum(jnp.matmul(x, w, preferred_element_type=mr.sum_dtype(x, w)), "model", like=(x, w))
        """, H, OUT)


def test_a_raise_under_a_static_if_is_kept_and_its_branch_leaves_nothing() -> None:
    assert_rewrite("""
        if n < 0: raise ValueError(f"n={n}")
        if cfg.bad:
            h = x
            raise NotImplementedError("no")
        else:
            h = x * n
        return h @ w
        """, """
        if n < 0: raise ValueError(f"n={n}")
        if cfg.bad:
            h = x
            raise NotImplementedError("no")
        else:
            h = x * n
        # meshify: psum over 'model': h @ w is a partial sum (contracted 'model' split); the return hint needs it whole
        return mr.psum(jnp.matmul(h, w, preferred_element_type=mr.sum_dtype(x, w)), "model", like=(x, w))
        """, H, OUT)


def test_an_assert_on_a_traced_array_is_refused() -> None:
    with pytest.raises(UnsupportedError) as info:
        rewrite("assert jnp.all(x > 0)\nreturn x @ w", H, OUT)
    text = str(info.value)
    assert "assert on 'jnp.all(x > 0)', a traced array" in text and "checkify" in text and "^" in text


# -- `if x is None:` on values meshify knows ------------------------------------------------------


def test_an_is_none_test_of_an_array_rewrites_only_the_branch_that_runs() -> None:
    assert_rewrite("""
        if w is None:
            h = x
        else:
            h = x @ w
        return h if w is not None else x
        """, """
        # meshify: 'w is None' is False in this version: only the else branch runs, and is rewritten
        if w is None:
            h = x
        else:
            h = jnp.matmul(x, w, preferred_element_type=mr.sum_dtype(x, w))
        # meshify: psum over 'model': h if w is not None else x is a partial sum (contracted 'model' split); the return hint needs it whole
        return mr.psum(h if w is not None else x, "model", like=(x, w))
        """, H, OUT)
