"""Golden rewrites: tests/golden/NAME.py -> tests/golden/NAME.expected.py, byte for byte.

Refresh after an intended change with ``MESHIFY_UPDATE_GOLDEN=1 pytest tests/test_golden.py``
and review the diff.  Each expected file is also imported and run against the input's
``.reference`` on 8 simulated devices, so a golden file cannot pin wrong code.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from meshify.rewrite import convert_source

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = sorted(p for p in GOLDEN.glob("*.py") if not p.name.endswith(".expected.py"))


def _expected(path: Path) -> Path:
    return path.with_name(path.stem + ".expected.py")


def _convert(path: Path) -> str:
    rel = path.relative_to(ROOT).as_posix()
    return convert_source(path.read_text(), rel, regenerate=f"meshify convert {rel} -o "
                          f"{_expected(path).relative_to(ROOT).as_posix()}").text


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_golden_text(case: Path) -> None:
    text = _convert(case)
    expected = _expected(case)
    if os.environ.get("MESHIFY_UPDATE_GOLDEN"):
        expected.write_text(text)
    assert expected.exists(), f"run MESHIFY_UPDATE_GOLDEN=1 pytest {__file__} to create {expected.name}"
    assert text == expected.read_text()


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_converting_twice_is_identical(case: Path) -> None:
    assert _convert(case) == _convert(case)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_golden_runs_and_matches_reference(case: Path) -> None:
    source = _import(case, f"golden_src_{case.stem}")
    generated = _import(_expected(case), f"golden_gen_{case.stem}")
    rng = np.random.default_rng(0)
    for name, program in vars(generated).items():
        if type(program).__name__ != "Sharded":
            continue
        reference = getattr(source, name).reference
        leaves = [rng.standard_normal((8,) * len(spec.dims), dtype=np.float32) for spec in program.leaf_specs.values()]
        args = program._unflatten(leaves)  # pytree arguments rebuilt from their leaves
        want = jax.tree.leaves(reference(**args))
        for decorated in (program, getattr(source, name)):
            got = jax.tree.leaves(decorated(**args))
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


def test_generated_files_import_no_libcst() -> None:
    """Generated files import only jax, numpy and meshify.runtime: never the rewriter."""
    code = ("import sys, importlib.util\n"
            f"spec = importlib.util.spec_from_file_location('g', {str(_expected(CASES[0]))!r})\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "bad = [n for n in sys.modules if n.startswith(('libcst', 'meshify.rewrite', 'typer'))]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
