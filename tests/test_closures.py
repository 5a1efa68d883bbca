"""A ``@mesh`` function's closure variables, as a factory of model functions holds its options: rebound after
the first call (``nonlocal mode; mode = "mean"``), the function is rewritten for what they hold now, as JAX
would trace it; the program reads the new value too.  (It kept the first call's branch: a wrong shape.)"""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh


def _factory():
    mode = "sum"
    scale = 2.0

    @mesh(batch=2, model=4, rules={"d_ff": "model"})
    def f(x: Tensor["batch", "d_ff"]):
        if mode == "sum":
            out = x.sum(-1) * scale
        else:
            out = jnp.tanh(x).mean(0) * scale
        return out

    def configure(new_mode: str, new_scale: float) -> None:
        nonlocal mode, scale
        mode, scale = new_mode, new_scale

    return f, configure


def test_a_closure_variable_rebound_after_the_first_call_is_read_again() -> None:
    f, configure = _factory()
    x = jnp.asarray(np.random.default_rng(0).standard_normal((4, 16)), jnp.float32)
    np.testing.assert_allclose(np.asarray(f(x)), np.asarray(f.reference(x)), rtol=1e-5, atol=1e-5)
    configure("mean", 3.0)
    got, want = f(x), f.reference(x)
    assert got.shape == want.shape == (16,)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    configure("sum", 2.0)  # back to the first program
    np.testing.assert_allclose(np.asarray(f(x)), np.asarray(f.reference(x)), rtol=1e-5, atol=1e-5)


def test_a_list_handed_on_in_a_loop_is_not_appended_to_on_the_next_iteration(tmp_path) -> None:
    """``hs.append(x)`` then ``gs = hs`` in a loop's body: the next iteration appends after the hand-off."""
    import pytest

    from meshify.errors import UnsupportedError
    from meshify.rewrite import convert_source

    source = ("import jax.numpy as jnp\nfrom meshify import Tensor, mesh\n\n\n"
              '@mesh(batch=2, model=4, rules={"d_ff": "model"})\n'
              'def f(x: Tensor["batch", "d_ff"]):\n'
              "    hs = [x]\n"
              "    for _ in range(2):\n"
              "        hs.append(x * 2)\n"
              "        gs = hs\n"
              "    return jnp.stack(gs).sum(0)\n")
    with pytest.raises(UnsupportedError, match="after 'hs' was handed on"):
        convert_source(source, str(tmp_path / "f.py"))
