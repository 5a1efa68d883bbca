"""Every op of the corpus matches its reference on every mesh, through both paths.

``tests/cases/ops_cases.py`` holds the functions.  Each one runs on the meshes
8, 1x8, 2x4, 4x2 and 8x1 under each rule set it names, once through ``@mesh`` (the
decorated function, compared with its ``.reference``) and once through a file
converted by ``convert_source`` (compared with the plain function).  The 2x4 mesh with
a case's first rule set always runs; the rest of the sweep is marked slow (see
``conftest.py``: an eighth of it, moving daily, runs always, ``MESHIFY_SLOW=1`` runs all).
"""

from __future__ import annotations

import pytest

from tests.cases import ops_cases
from tests.cases.harness import (
    SAMPLED_MESH,
    Built,
    Case,
    assert_close,
    build,
    check_gradients,
    check_reference,
    header_module,
    inputs,
    reference,
    registry,
    sweep,
)

CASES = registry(ops_cases)


def _built(c: Case, mesh: str, rules: str, path: str) -> Built:
    return build(c, mesh, rules, ops_cases.RULES[rules], path)


@pytest.mark.parametrize("name, mesh, rules, path", sweep(CASES))
def test_matches_reference(name: str, mesh: str, rules: str, path: str) -> None:
    c = CASES[name]
    check_reference(c, _built(c, mesh, rules, path), mesh, rules, path)


GRAD_CASES = {name: c for name, c in CASES.items() if c.grad}


@pytest.mark.parametrize("name, mesh, rules, path", sweep(GRAD_CASES))
def test_gradients_match_reference(name: str, mesh: str, rules: str, path: str) -> None:
    c = CASES[name]
    check_gradients(c, _built(c, mesh, rules, path), mesh, rules, path)


def test_every_rule_set_is_named() -> None:
    for c in CASES.values():
        assert c.rules, c.name
        for rules in c.rules:
            assert rules in ops_cases.RULES, f"{c.name} names unknown rule set {rules!r}"


def test_cases_module_imports_what_generated_modules_import() -> None:
    # A case runs as its own reference in ops_cases and sharded in a module starting with
    # HEADER: both must bind the same names to the same objects.
    header = header_module()
    for name in header.__dict__.keys() - {"mesh"}:
        if not name.startswith("__"):
            assert getattr(ops_cases, name) is getattr(header, name), name


def test_reference_is_the_untouched_function() -> None:
    c = CASES["ffn"]
    built = _built(c, SAMPLED_MESH, "tp", "decorator")
    assert built.decorated.reference.__name__ == "ffn"
    assert_close(built.decorated.reference(*inputs(c)), reference(c), "ffn.reference")
