"""Helpers under ``@jax.custom_jvp`` / ``@jax.custom_vjp``: their rules are rewritten for the layouts the
helper is called with and registered on its version (numbers: tests/soundness/helper_custom_*.py); what
meshify cannot rewrite is refused with a fix."""

from __future__ import annotations

import textwrap

import pytest

from meshify.errors import MeshifyError
from meshify.rewrite import convert_source

HEADER = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from meshify import Tensor, mesh


    @jax.custom_vjp
    def clip(x, c):
        return x * c


    def clip_fwd(x, c):
        return clip(x, c), c


    def clip_bwd(c, g):
        return (jnp.clip(g, -c, c), jnp.sum(g))


    {registration}


    @mesh(batch=2, model=4, rules={{"d_ff": "model"}})
    def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"], c: Tensor[()]) -> Tensor["batch", "d_ff"]:
        return {body}
''')


def _convert(body: str, registration: str = "clip.defvjp(clip_fwd, clip_bwd)") -> str:
    return convert_source(HEADER.format(body=body, registration=registration), "case.py").text


def test_the_rules_are_rewritten_for_the_callers_layouts_and_registered_after_the_users() -> None:
    text = _convert("clip(x @ w, c)")
    assert "@jax.custom_vjp\ndef clip__v1(x, c):" in text, text
    assert text.index("clip.defvjp(clip_fwd, clip_bwd)\nclip__v1.defvjp(clip_fwd__v1, clip_bwd__v1)") > \
        text.index("def clip_bwd__v1(c, g):"), text


@pytest.mark.parametrize("body, registration, headline, fix", [
    ("clip(x @ w, 0.5)", "clip.defvjp(clip_fwd, clip_bwd)", "clip() is a jax.custom_vjp function of x: array, c: "
     "static", "pass clip() arrays only"),
    ("clip(x @ w, jnp.ones(()))", "clip.defvjp(clip_fwd, clip_bwd)", "c: opaque", "pass clip() arrays only"),
    ("clip(x @ w, c)", "pass", "whose clip.defvjp(...) meshify cannot find",
     "register its rules at module level"),
])
def test_what_meshify_cannot_rewrite_of_a_custom_function_is_refused(body: str, registration: str, headline: str,
                                                                      fix: str) -> None:
    with pytest.raises(MeshifyError) as info:
        _convert(body, registration)
    text = str(info.value)
    assert headline in text and fix in text, text
