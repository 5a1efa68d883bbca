"""The closed world: every rule's JAX function exists, its declared signature is JAX's own, and an
argument no rule models is an error at its place (never dropped, never passed through unseen)."""

from __future__ import annotations

import textwrap

import pytest

from meshify.errors import UnsupportedError
from meshify.rewrite import convert_source
from meshify.rewrite.rules import METHODS, MODELS, REGISTRY, REQUIRED
from meshify.rewrite._signatures import SIGNATURES, UNINSPECTABLE, describe, resolve, signature


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_declared_signature_is_the_installed_jax_signature(name: str) -> None:
    if name in UNINSPECTABLE:  # (its entry follows the documentation; once inspect reads one, compare it)
        with pytest.raises(ValueError):
            describe(resolve(name))
        return
    assert SIGNATURES[name] == describe(resolve(name)), (
        f"JAX's signature of {name} changed: update meshify/rewrite/_signatures.py "
        f"(python -m meshify.rewrite._signatures {name}) and check the rule still models every parameter")


def test_every_registered_name_resolves_and_declares_what_it_models() -> None:
    names = [*REGISTRY, *(f"jax.Array.{m}" for m in METHODS)]
    for name in names:
        resolve(name)  # raises if the installed JAX has no such function
        assert signature(name) is not None and name in MODELS, name
    every_param = {p.name for n in SIGNATURES for p in signature(n).params}
    for name, models in MODELS.items():
        assert set(models.declared) - {REQUIRED} <= every_param, (name, models.declared)


def _convert(body: str) -> str:
    source = textwrap.dedent('''\
        import jax
        import jax.numpy as jnp
        from meshify import Tensor, mesh


        @mesh(batch=2, model=4)
        def f(x: Tensor["batch", "model"], m: Tensor["batch", "model"]) -> Tensor["batch", "model"]:
        ''') + textwrap.indent(textwrap.dedent(body), "    ")
    return convert_source(source, "closed.py").text


@pytest.mark.parametrize("body, culprit", [
    ("return jnp.add(x, m, where=m > 0)", "where="),
    ("return jnp.reshape(x, (4, 8), order='F')", "order="),
    ("return x * jax.nn.logsumexp(x, axis=1, keepdims=True, return_sign=jnp.any(m > 0))[0]", "return_sign"),
    ("return jnp.exp(x, where=m)", "where"),
    ("return x + jnp.take(x, jnp.zeros(2, int), axis=0, out=m)[:1]", "out"),
])
def test_an_argument_no_rule_models_is_refused_at_its_place(body: str, culprit: str) -> None:
    with pytest.raises(UnsupportedError) as info:
        _convert(body)
    message = str(info.value)
    assert culprit.rstrip("=") in message and "closed.py:8:" in message, message


@pytest.mark.parametrize("body", [
    "return jax.nn.gelu(x, approximate=False)",  # a static that keeps it elementwise
    "return x * jnp.sum(x, promote_integers=False)",
    "return jnp.round(x, 2)",
    "return jax.nn.leaky_relu(x, negative_slope=0.2)",
    "return x * jax.nn.logsumexp(x, axis=1, keepdims=True, return_sign=True)[0]",  # modelled since session 35
])
def test_static_parameters_of_elementwise_and_reducing_functions_pass(body: str) -> None:
    _convert(body)
