"""Every program the fuzzer found failing, kept as a permanent test (``tests/regressions/*.py``).

Each file is a generated module (``@mesh`` function ``f``) plus a ``FUZZ = {...}`` literal
holding the dim sizes, the arguments, the input seed and whether gradients are compared
(see ``tests/fuzz/check.py``).  The test runs it as the fuzzer does and requires the outcome
the file names (``FUZZ["expect"]``: ``accepted``, i.e. equal to ``.reference``, or
``rejected`` with a positioned error and a fix; ``xla`` where under jit XLA changes the reference's own
result and, op by op, the sharded program equals it).  A bug not fixed yet is recorded with
``FUZZ["xfail"] = "why"`` and runs as ``xfail(strict=True)``.

New failures land in ``tests/regressions/pending/`` (not collected here): fix meshify, then
move the file up one level.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.check import check, load

FILES = sorted((Path(__file__).parent / "regressions").glob("*.py"))


def _param(path: Path):
    reason = load(path).xfail
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(path, marks=marks, id=path.stem)


@pytest.mark.parametrize("path", [_param(p) for p in FILES])
def test_fuzz_regression(path: Path, tmp_path: Path) -> None:
    program = load(path)
    outcome = check(program, tmp_path)
    assert not outcome.failed, f"{path.name}: {outcome.kind}\n{outcome.detail}"
    assert outcome.kind == (program.expect or "accepted"), f"{path.name}: {outcome.kind}\n{outcome.detail}"


def test_regression_files_are_well_formed() -> None:
    for path in FILES:
        program = load(path)
        assert program.expect in ("accepted", "rejected", "xla"), path.name
        assert "def f" in program.text and ("@mesh(" in program.text or "= mesh(" in program.text), path.name
