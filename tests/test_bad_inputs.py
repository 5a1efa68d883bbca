"""The bad-input corpus: every file under ``tests/bad_inputs/`` is rejected cleanly.

One small module per case, its first lines saying what is wrong and what meshify must
answer::

    # Bad input: a rule tuple naming an axis the mesh lacks.
    # expect: RulesError at 8:24 naming 'pod'
    # call: x=12x4            (only for errors that come when the function is called)

Each case asserts: the named :class:`MeshifyError` subclass, ``path:line:col`` of the
culprit, the source line with a caret under that column, the text the message must name,
a ``fix:`` line, and no traceback; through the CLI (``convert``, ``diff``, ``explain``):
exit code 2 with the same message, no output file created and no existing file changed.
Call-time cases are checked through ``@mesh`` (pointing into the user's file) and through
a converted file (pointing into the generated one).  The cases of ``test_errors.py`` are
part of the corpus too; they are not repeated here.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from meshify import errors
from meshify.cli import GENERATED_MARK, app
from meshify.errors import MeshifyError
from meshify.rewrite import convert_source

CORPUS = Path(__file__).parent / "bad_inputs"
ROOT = Path(__file__).resolve().parent.parent

#: Files that cannot hold a header (any comment would make them non-empty): what they expect.
HEADERLESS = {"empty.py": "SourceError at 1:1 naming is empty", "blank.py": "SourceError at 1:1 naming is empty"}

_EXPECT = re.compile(r"(\w+) at (\d+):(\d+) naming (.+)")


@dataclass(frozen=True)
class Case:
    path: Path
    error: str
    line: int
    col: int
    names: str
    call: str | None = None

    @property
    def id(self) -> str:
        return self.path.stem


def _case(path: Path) -> Case:
    head = [line.decode("latin-1") for line in path.read_bytes().split(b"\n")[:3]]
    fields = dict(line[2:].split(": ", 1) for line in head if re.match(r"# (expect|call): ", line))
    expect = fields.get("expect", HEADERLESS.get(path.name, ""))
    match = _EXPECT.fullmatch(expect.strip())
    assert match, f"{path.name}: no '# expect: <Error> at <line>:<col> naming <text>' line"
    error, line, col, names = match.groups()
    return Case(path, error, int(line), int(col), names, fields.get("call"))


CASES = [_case(p) for p in sorted(CORPUS.glob("*.py"))]
REWRITE = [c for c in CASES if c.call is None]
CALL = [c for c in CASES if c.call is not None]


def _params(cases: list[Case]) -> list:
    return [pytest.param(c, id=c.id) for c in cases]


def _copy(case: Case, directory: Path) -> Path:
    path = directory / case.path.name
    path.write_bytes(case.path.read_bytes())
    return path


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def assert_clean(message: str, case: Case, path: Path) -> None:
    """``path:line:col: error[MSH...]``, the line with a caret under ``col``, the named text, a fix."""
    lines = message.splitlines()
    assert lines[0].startswith(f"{path}:{case.line}:{case.col}: error[MSH"), message
    caret = next((line for line in lines[1:] if line.strip().startswith("^")), "")
    assert caret.index("^") == 4 + case.col - 1, message
    assert case.names in message, message
    assert "\n  fix: " in message and message.split("\n  fix: ", 1)[1].strip(), message
    assert "Traceback" not in message


def _assert_error(err: BaseException, case: Case, path: Path) -> None:
    assert isinstance(err, getattr(errors, case.error)) and isinstance(err, MeshifyError), repr(err)
    assert err.span is not None and (err.span.line, err.span.col) == (case.line, case.col), str(err)
    assert err.fix
    assert_clean(str(err), case, path)


def test_corpus_is_large_and_well_formed() -> None:
    assert len(CASES) >= 40
    assert {c.error for c in CASES} >= {"SourceError", "AnnotationError", "RulesError", "UnsupportedError",
                                         "LayoutError", "CallError"}


@pytest.mark.parametrize("case", _params(REWRITE))
def test_convert_source_rejects_with_place_and_fix(case: Case, tmp_path: Path) -> None:
    path = _copy(case, tmp_path)
    before = _files(tmp_path)
    with pytest.raises(MeshifyError) as info:
        convert_source(path.read_bytes(), str(path))
    _assert_error(info.value, case, path)
    assert _files(tmp_path) == before


@pytest.mark.parametrize("case", _params(REWRITE))
def test_cli_exits_2_and_changes_nothing_on_disk(case: Case, tmp_path: Path) -> None:
    path = _copy(case, tmp_path)
    existing = tmp_path / "existing_sharded.py"
    existing.write_text(f"{GENERATED_MARK}somewhere.py; do not edit.\nold = 1\n")
    before = _files(tmp_path)
    commands = [["convert", str(path), "-o", str(tmp_path / "new_sharded.py")],
                ["convert", str(path), "-o", str(existing), "--force"],
                ["convert", str(path), "--out-dir", str(tmp_path / "out")],
                ["diff", str(path)], ["explain", str(path)]]
    for command in commands:
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 2, (command, result.output)
        assert_clean(result.output, case, path)
    assert _files(tmp_path) == before


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _arguments(case: Case) -> dict[str, object]:
    out: dict[str, object] = {}
    for item in (case.call or "").split():
        name, shape = item.split("=")
        out[name] = 1.5 if shape == "float" else np.ones(tuple(int(s) for s in shape.split("x")), np.float32)
    return out


@pytest.mark.parametrize("case", _params(CALL))
def test_call_time_error_points_at_the_hint(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = _copy(case, tmp_path)
    generated = tmp_path / f"{path.stem}_sharded.py"
    generated.write_text(convert_source(path.read_bytes(), str(path)).text)
    before = _files(tmp_path)
    with pytest.raises(MeshifyError) as info:
        _import(path).f(**_arguments(case))
    _assert_error(info.value, case, path)
    frames = []
    tb = info.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert not [f for f in frames if "/meshify/runtime/" in f or "/meshify/rewrite/" in f], frames
    # The converted file raises the same error, pointing at its own copy of the def line (byte-identical)
    # or at its @mr.sharded decorator.
    with pytest.raises(type(info.value)) as converted:
        _import(generated).f(**_arguments(case))
    span = converted.value.span
    assert span is not None and span.path == str(generated)
    # (an error a runtime op of the body raises, or JAX raises tracing a statement, points at that line of the
    # converted file, which the rewrite changed)
    # (a call of a helper's version, second__v1(x), is the user's second(x))
    line = re.sub(r"(\w)__v\d+\b", r"\1", span.source_line)
    assert (line, span.col) in [(info.value.span.source_line, case.col), ("@mr.sharded(\n", 1)] \
        or span.source_line.lstrip().removeprefix("return ").startswith("mr."), (span.source_line, span.col)
    assert_clean(str(converted.value), Case(generated, case.error, span.line, span.col, case.names), generated)
    assert _files(tmp_path) == before


@pytest.mark.parametrize("name", ["non_utf8_comment", "syntax_unclosed_bracket", "mesh_on_async_def"])
def test_a_real_process_prints_no_traceback(name: str, tmp_path: Path) -> None:
    case = next(c for c in CASES if c.id == name)
    path = _copy(case, tmp_path)
    before = _files(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "meshify", "convert", str(path), "-o", str(tmp_path / "o.py")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert_clean(proc.stderr, case, path)
    assert _files(tmp_path) == before


def _error_sites() -> list[tuple[str, int, str]]:
    """Every ``raise`` of a meshify error (directly or via ``rw.error``/``ctx.error``) in the package."""
    names = {n for n in errors.__all__ if n.endswith("Error")}
    sites = []
    for path in sorted((ROOT / "meshify").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
                continue
            call, func = node.exc, node.exc.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            has_fix = any(k.arg == "fix" for k in call.keywords)
            if name == "error":  # rw.error(cls, node, headline, fix) / ctx.error(...)
                has_fix = has_fix or len(call.args) >= 4
            elif name not in names:
                continue
            sites.append((str(path.relative_to(ROOT)), node.lineno, "" if has_fix else ast.unparse(call)[:80]))
    return sites


def test_every_error_meshify_raises_comes_with_a_fix() -> None:
    sites = _error_sites()
    assert len(sites) > 100
    assert [s for s in sites if s[2]] == []


def test_convert_diff_and_explain_never_run_the_file(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "model.py"
    path.write_text("import jax.numpy as jnp\nfrom meshify import Tensor, mesh\n\n"
                    f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit('ran!')\n\n\n"
                    '@mesh(batch=2)\ndef f(x: Tensor["batch"]) -> Tensor["batch"]:\n    return jnp.tanh(x)\n')
    for command in (["convert", str(path), "-o", str(tmp_path / "out.py")], ["diff", str(path)],
                    ["explain", str(path), "--dims", "batch=4"]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, (command, result.output)
        assert not marker.exists(), command
