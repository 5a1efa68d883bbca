"""The op-rule interface: every rule receives a :class:`RuleContext` (read-only), never the rewriter."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import typing

import pytest

from meshify.rewrite import rules
from meshify.rewrite._interp import FunctionRewriter
from meshify.rewrite.rules import METHODS, REGISTRY
from meshify.rewrite.rules._api import RuleContext
from tests.rules._rewrite import rewrite

#: What a RuleContext and the rewriter may both have: read-only data and positioned errors.
SHARED = {"mesh", "rules", "sizes", "error"}


def _rule_modules() -> list:
    return [importlib.import_module(f"{rules.__name__}.{m.name}") for m in pkgutil.iter_modules(rules.__path__)]


def _functions() -> list:
    """Every function defined in a rule module."""
    return [f for module in _rule_modules() for _, f in inspect.getmembers(module, inspect.isfunction)
            if f.__module__ == module.__name__]


def test_every_registered_rule_takes_a_rule_context_and_its_call() -> None:
    registered = {*REGISTRY.values(), *METHODS.values()}
    assert len(registered) > 100
    for entry in registered:
        fn = entry.func  # functools.partial: the rule with its registration's keywords
        first, second = list(inspect.signature(fn).parameters)[:2]
        hints = typing.get_type_hints(fn)
        assert hints.get(first) is RuleContext, f"{fn.__module__}.{fn.__name__}({first}): annotate it RuleContext"
        assert second == "call", fn


def test_no_function_of_a_rule_module_takes_the_rewriter() -> None:
    """A helper a rule calls gets the context too: no parameter is the rewriter (``rw``), and each ``ctx``
    is a RuleContext."""
    functions = _functions()
    assert len(functions) > 150
    for fn in functions:
        params = inspect.signature(fn).parameters
        assert "rw" not in params, f"{fn.__module__}.{fn.__name__} takes the rewriter"
        if "ctx" in params:
            assert typing.get_type_hints(fn).get("ctx") is RuleContext, f"{fn.__module__}.{fn.__name__}"


def test_a_rule_context_reaches_no_state_of_the_rewriter() -> None:
    """Nothing a rule could call to convert, emit or record: the context shares only read-only data with
    the rewriter, is frozen, and its sizes and names cannot be written."""
    public = {n for n in dir(RuleContext) if not n.startswith("__")}
    assert public & set(dir(FunctionRewriter)) <= SHARED, public & set(dir(FunctionRewriter))
    for forbidden in ("expr", "carry_out", "replacement", "convert", "records", "env", "index_names", "lower"):
        assert not hasattr(RuleContext, forbidden), forbidden
    assert dataclasses.is_dataclass(RuleContext) and RuleContext.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_the_interpreter_calls_every_rule_with_a_fresh_read_only_context(monkeypatch) -> None:
    """Each rule a rewrite runs is called with a RuleContext holding no rewriter (not even one level down),
    and what it holds cannot be written."""
    seen: list[str] = []

    def spy(name: str, rule):
        def called(ctx, call):
            assert type(ctx) is RuleContext, type(ctx)
            for f in dataclasses.fields(ctx):
                value = getattr(ctx, f.name)
                assert not isinstance(value, FunctionRewriter), f.name
                assert not any(isinstance(v, FunctionRewriter) for v in vars(value).values()) \
                    if hasattr(value, "__dict__") else True, f.name
            with pytest.raises(dataclasses.FrozenInstanceError):
                ctx.mesh = None  # type: ignore[misc]
            with pytest.raises(TypeError):
                ctx.sizes["batch"] = 1  # type: ignore[index]
            with pytest.raises(TypeError):
                ctx._env["y"] = None  # type: ignore[index]
            seen.append(name)
            return rule(ctx, call)
        return called

    for table in (REGISTRY, METHODS):
        for name, rule in list(table.items()):
            monkeypatch.setitem(table, name, spy(name, rule))
    rewrite("""
        h = jnp.einsum("bd,df->bf", x, w)
        b = x.shape[0]
        s = jnp.sum(h.reshape(b, 8, -1), axis=-1)
        t = jax.nn.softmax(h, axis=-1)
        e = jnp.take(w, ids, axis=0)
        return t[:, :] * s.sum(axis=-1)[:, None] + e.sum()
        """, 'x: Tensor["batch", "d"], w: Tensor["d", "f"], ids: Tensor["batch"]', 'Tensor["batch", "f"]',
            'batch=2, model=4, rules={"f": "model"}')
    assert {"jax.numpy.einsum", "jax.numpy.sum", "reshape", "jax.nn.softmax", "jax.numpy.take", "sum"} <= set(seen), seen
