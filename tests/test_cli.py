"""The command line on hostile sources and values: a byte-order mark, an expression nested 900
deep, malformed --dims."""

from __future__ import annotations

import ast
import importlib.util
import itertools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from meshify.cli import GENERATED_MARK, app
from meshify.errors import MeshifyError, SourceError
from meshify.rewrite import convert_source
from meshify.rewrite._nesting import MAX_NESTING, check_nesting

SOURCE = textwrap.dedent('''\
    import jax.numpy as jnp
    from meshify import Tensor, mesh


    @mesh(batch=2)
    def f(x: Tensor["batch"]) -> Tensor["batch"]:
        return jnp.tanh(x) * 3
''')

_names = itertools.count()


def _run(*args: str):
    return CliRunner().invoke(app, [*args])


def _files(directory: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every file and directory below ``directory``: contents (None for a directory) and mode."""
    return {str(p.relative_to(directory)): (None if p.is_dir() else p.read_bytes(), p.stat().st_mode)
            for p in sorted(directory.rglob("*"))}


def _assert_refused(result, *names: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert "\n  fix: " in result.output and result.output.split("\n  fix: ", 1)[1].strip(), result.output
    for name in names:
        assert name in result.output, (name, result.output)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(SOURCE)
    return path


# -- the source --------------------------------------------------------------------------


def test_a_source_with_a_byte_order_mark_converts(source: Path, tmp_path: Path) -> None:
    with_bom = tmp_path / "bom.py"
    with_bom.write_bytes(b"\xef\xbb\xbf" + SOURCE.encode())
    out = tmp_path / "bom_sharded.py"
    result = _run("convert", str(with_bom), "-o", str(out))
    assert result.exit_code == 0, result.output
    plain = convert_source(source.read_bytes(), str(source)).text.split("\n", 2)[2]
    assert out.read_bytes().startswith(GENERATED_MARK.encode())
    assert out.read_text().split("\n", 2)[2] == plain
    assert _run("convert", "--check", str(with_bom), "-o", str(out)).exit_code == 0
    assert _run("explain", str(with_bom), "--dims", "batch=4").exit_code == 0
    assert _run("diff", str(with_bom)).exit_code == 0
    x = np.ones(4, np.float32)
    np.testing.assert_allclose(np.asarray(_import(out).f(x)), np.tanh(x) * 3, rtol=1e-6)


def _deep_source(terms: int) -> str:
    return SOURCE.replace("return jnp.tanh(x) * 3", "y = " + " + ".join(["x"] * terms) + "\n    return y")


def test_a_900_term_expression_is_a_positioned_error_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.py"
    path.write_text(_deep_source(900))
    before = _files(tmp_path)
    for command in (["convert", str(path), "-o", str(tmp_path / "out.py")], ["diff", str(path)],
                    ["explain", str(path), "--dims", "batch=4"]):
        result = _run(*command)
        _assert_refused(result, f"{path}:7:9: error[MSH001]: this expression nests 900 levels deep")
        assert "\n            ^^^^" in result.output  # the caret under the expression
    assert _files(tmp_path) == before
    proc = subprocess.run([sys.executable, "-m", "meshify", "convert", str(path), "-o", str(tmp_path / "out.py")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "fix:" in proc.stderr, proc.stderr


def test_a_900_term_expression_is_a_positioned_error_through_the_decorator(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "deep_module.py"
    path.write_text(_deep_source(900))
    module = _import(path)  # importing runs the 900-term function's def; Python itself copes
    with pytest.raises(SourceError) as info:
        module.f(np.ones(4, np.float32))
    assert (info.value.span.path, info.value.span.line, info.value.span.col) == (str(path), 7, 9)
    assert "nests 900 levels deep" in str(info.value) and info.value.fix


def test_a_long_but_allowed_expression_converts_and_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "long_module.py"
    path.write_text(_deep_source(80))
    result = _run("convert", str(path), "-o", str(tmp_path / "long_sharded.py"))
    assert result.exit_code == 0, result.output
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(_import(path).f(x)), 80 * x)
    np.testing.assert_allclose(np.asarray(_import(tmp_path / "long_sharded.py").f(x)), 80 * x)


def _deepest_accepted(build) -> int:
    """The largest n for which parsing accepts ``build(n)``."""
    n = 1
    while True:
        try:
            check_nesting(ast.parse(build(n + 1)), build(n + 1), "m.py")
        except MeshifyError:
            return n
        n += 1


_HEAD = "import jax.numpy as jnp\nfrom meshify import Tensor, mesh\n\n\n@mesh(batch=2)\n" \
        'def f(x: Tensor["batch"]) -> Tensor["batch"]:\n    return '


@pytest.mark.parametrize("build", [
    lambda n: _HEAD + " + ".join(["x"] * n) + "\n",
    lambda n: _HEAD + "-" * n + "x\n",
    lambda n: _HEAD + "jnp.tanh(" * n + "jnp.fft.fft(x)" + ")" * n + "\n",  # an error at the bottom
    lambda n: _HEAD + "x" + "[x" * n + "]" * n + "\n",
    lambda n: _HEAD + "jnp.stack([" * n + "jnp.fft.fft(x)" + "])" * n + "\n",
    lambda n: "C = " + " ".join(['"a"'] * n) + "\n" + _HEAD + "x\n",
    lambda n: "C = " + " and ".join(["1"] * n) + "\n" + _HEAD + "x\n",
], ids=["sum", "negation", "calls", "subscripts", "lists", "strings", "and"])
def test_whatever_parsing_accepts_never_exhausts_the_stack(build) -> None:
    """At the deepest nesting parsing lets through, the rewrite ends in text or a MeshifyError."""
    n = _deepest_accepted(build)
    assert n >= MAX_NESTING // 5  # not a vacuous test
    try:
        convert_source(build(n), "m.py")
    except MeshifyError:
        pass


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(f"meshify_test_cli_{next(_names)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- --dims --------------------------------------------------------------------------------


@pytest.mark.parametrize(("dims", "says"), [
    ("batch=²", "'batch' size '²', which is not a whole number in ASCII digits"),
    ("batch=٣", "'batch' size '٣', which is not a whole number in ASCII digits"),
    ("batch", "'batch' is not NAME=SIZE"),
    ("batch=", "gives no size for 'batch'"),
    ("=4", "has no dim name before '='"),
    ("batch=-1", "gives 'batch' size -1, below 1"),
    ("batch=0", "gives 'batch' size 0, below 1"),
    ("2batch=4", "names '2batch', which is not a dim name"),
    ("batch=4,batch=8", "gives 'batch' a second size"),
])
def test_malformed_dims_are_named(source: Path, dims: str, says: str) -> None:
    result = _run("explain", str(source), "--dims", dims)
    _assert_refused(result, "--dims entry", says)


def test_well_formed_dims(source: Path) -> None:
    result = _run("explain", str(source), "--dims", " batch = 8 ; ,", "--format", "json")
    assert result.exit_code == 0, result.output
    assert [a["global_shape"] for a in json.loads(result.output)[0]["args"]] == [[8]]
