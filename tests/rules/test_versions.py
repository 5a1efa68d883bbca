"""Helper versions as a reviewer reads them: one per distinct body, the comment block naming each layout."""

from __future__ import annotations

from meshify.rewrite import convert_source

SOURCE = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


def act(x):
    return jax.nn.gelu(x) * 2.0


@mesh(batch=2, model=4)
def f(a: Tensor["batch", "d"], b: Tensor["rows", "model"]) -> Tensor["batch", "d"]:
    return act(a) + jnp.sum(act(b))
'''


def test_versions_with_the_same_code_are_emitted_once() -> None:
    text = convert_source(SOURCE, "versions.py").text
    assert text.count("def act__") == 1
    name = text[text.index("def act__") + 4:text.index("(", text.index("def act__"))]
    assert f"return {name}(a) + " in text and f"jnp.sum({name}(b)" in text
    assert "# meshify: act specialised for its callers' layouts" in text
    assert f"# meshify:   {name} for x: [batch/'batch', d] -> [batch/'batch', d]\n" in text
    assert f"# meshify:   {name} for x: [rows, model/'model'] -> [rows, model/'model']\n" in text
