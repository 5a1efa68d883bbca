"""The command line on hostile paths and values: exit 2 with a message and a fix, nothing half-written.

Each bad invocation must name the offending path or value, give a ``fix:``, print no
traceback and leave the disk as it was; what is written keeps a normal file mode and a
header that names no absolute path (so ``--check`` agrees from any directory).
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import itertools
import json
import os
import shutil
import stat
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


# -- where the output goes ---------------------------------------------------------------


@pytest.mark.parametrize("check", [False, True], ids=["write", "check"])
def test_output_that_is_a_directory(source: Path, tmp_path: Path, check: bool) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.py").write_text("keep = 1\n")
    before = _files(tmp_path)
    result = _run("convert", str(source), "-o", str(tmp_path / "out"), *(["--check"] if check else []))
    _assert_refused(result, f"{tmp_path / 'out'}: it is a directory", "--out-dir")
    assert _files(tmp_path) == before


@pytest.mark.parametrize("below", ["a/b.py", "a/deeper/still/b.py"])
def test_output_below_a_regular_file(source: Path, tmp_path: Path, below: str) -> None:
    (tmp_path / "a").write_text("i am a file\n")
    before = _files(tmp_path)
    for extra in ([], ["--force"], ["--check"]):
        result = _run("convert", str(source), "-o", str(tmp_path / below), *extra)
        _assert_refused(result, str(tmp_path / below), f"below {tmp_path / 'a'}, which is a regular file")
    assert _files(tmp_path) == before


def _unwritable_directory(tmp_path: Path) -> Path:
    """A directory this process really cannot create files in, or skip.

    A read-only directory does it for anyone but root; as root, sysfs still refuses new files.
    """
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    for candidate in (locked, Path("/sys/kernel"), Path("/sys")):
        probe = candidate / f"meshify-probe-{os.getpid()}"
        try:
            probe.write_bytes(b"")
        except OSError:
            return candidate
        probe.unlink()
    pytest.skip("no directory here refuses new files to this process")


@pytest.mark.parametrize("below", ["out.py", "new/sub/out.py"])
def test_output_in_an_unwritable_directory(source: Path, tmp_path: Path, below: str) -> None:
    directory = _unwritable_directory(tmp_path)
    target = directory / below
    before, listing = _files(tmp_path), sorted(os.listdir(directory))
    try:
        result = _run("convert", str(source), "-o", str(target))
        after = _files(tmp_path)
    finally:
        (tmp_path / "locked").chmod(0o755)
    _assert_refused(result, f"cannot write {target}")
    assert "Permission denied" in result.output or "not permitted" in result.output, result.output
    assert sorted(os.listdir(directory)) == listing
    assert after == before


def test_a_failed_write_removes_what_it_made(source: Path, tmp_path: Path) -> None:
    """The directories are made and the new file is written, then renaming it fails: all of it goes."""
    out = tmp_path / "new" / "sub" / ("x" * 300 + ".py")  # longer than any file system allows
    before = _files(tmp_path)
    _assert_refused(_run("convert", str(source), "-o", str(out)), "cannot write", "File name too long")
    assert _files(tmp_path) == before
    (tmp_path / "new").mkdir()  # now the name itself is checked before converting
    _assert_refused(_run("convert", str(source), "-o", str(out)), "cannot write", "File name too long")
    assert [p.name for p in (tmp_path / "new").iterdir()] == []


def test_several_outputs_are_written_all_or_none(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for name in ("one", "two"):
        (tmp_path / "src" / f"{name}.py").write_text(SOURCE)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "two.py").mkdir()  # the second output cannot be written
    before = _files(tmp_path)
    result = _run("convert", str(tmp_path / "src"), "--out-dir", str(tmp_path / "out"))
    _assert_refused(result, f"{tmp_path / 'out' / 'two.py'}: it is a directory")
    assert _files(tmp_path) == before


def test_a_rename_that_fails_midway_says_what_was_written(tmp_path: Path, monkeypatch) -> None:
    """Renaming into place fails only in a race (here: the target turns into a directory)."""
    from meshify import cli

    stage = cli._stage

    def racing(path: Path, text: str) -> Path:
        new = stage(path, text)
        if path.name == "b.py":
            path.mkdir()
        return new

    monkeypatch.setattr(cli, "_stage", racing)
    with pytest.raises(cli._Exit) as info:
        cli._write_all([(tmp_path / "new" / "a.py", "a = 1\n"), (tmp_path / "new" / "b.py", "b = 1\n")])
    assert info.value.code == 2 and "1 of 2 outputs were written" in info.value.message
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["a.py", "b.py"]  # no temporary file


def test_a_fifo_is_not_an_output(source: Path, tmp_path: Path) -> None:
    """Not replaced by a regular file, even with --force (think of -o /dev/null)."""
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    _assert_refused(_run("convert", str(source), "-o", str(fifo), "--force"), f"{fifo}: it is not a regular file")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "pipe.py"]


# -- file modes --------------------------------------------------------------------------


@contextlib.contextmanager
def _umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask", [0o022, 0o027], ids=["umask022", "umask027"])
def test_a_new_output_gets_the_usual_mode(source: Path, tmp_path: Path, mask: int) -> None:
    with _umask(mask):
        assert _run("convert", str(source), "-o", str(tmp_path / "out.py")).exit_code == 0
        assert _run("convert", str(source), "--out-dir", str(tmp_path / "dir")).exit_code == 0
    for path in (tmp_path / "out.py", tmp_path / "dir" / "model.py"):
        assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~mask), path


def test_a_regenerated_output_keeps_its_mode(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.py"
    assert _run("convert", str(source), "-o", str(out)).exit_code == 0
    out.chmod(0o755)
    source.write_text(SOURCE.replace("* 3", "* 4"))
    with _umask(0o077):
        assert _run("convert", str(source), "-o", str(out)).exit_code == 0
    assert "* 4" in out.read_text()
    assert oct(out.stat().st_mode & 0o777) == oct(0o755)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "out.py"]  # no temporary file left


# -- the header --------------------------------------------------------------------------


def test_the_header_is_the_same_from_any_directory_and_spelling(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(SOURCE)
    (tmp_path / "gen").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "gen" / "model_sharded.py"
    monkeypatch.chdir(tmp_path)
    assert _run("convert", "src/model.py", "-o", "gen/model_sharded.py").exit_code == 0
    text = out.read_text()
    header = text.splitlines()[:3]
    assert header[:2] == ["# Generated by meshify from model.py; do not edit.",
                          "# Regenerate: meshify convert ../src/model.py -o model_sharded.py"]
    assert str(tmp_path) not in text and "/tmp" not in text
    spellings = [(tmp_path, "./src/model.py", "gen/./model_sharded.py"),
                 (tmp_path / "gen", "../src/model.py", "model_sharded.py"),
                 (tmp_path / "src", "model.py", "../gen/model_sharded.py"),
                 (elsewhere, str(tmp_path / "src" / "model.py"), str(out)),
                 (elsewhere, "../src/../src/model.py", "../gen/model_sharded.py")]
    for cwd, src, dst in spellings:
        monkeypatch.chdir(cwd)
        result = _run("convert", "--check", src, "-o", dst)
        assert result.exit_code == 0, (cwd, src, dst, result.output)
        assert _run("convert", src, "-o", dst).exit_code == 0
        assert out.read_text() == text, (cwd, src, dst)
    monkeypatch.chdir(elsewhere)
    result = _run("convert", str(tmp_path / "src" / "model.py"), "--out-dir", str(tmp_path / "gen2"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "gen2" / "model.py").read_text().splitlines()[1] == \
        "# Regenerate: meshify convert ../src/model.py -o model.py"


def test_stdout_names_the_source_relative_to_the_working_directory(source: Path, tmp_path: Path,
                                                                     monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _run("convert", str(source))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1] == "# Regenerate: meshify convert model.py"
    assert str(tmp_path) not in result.output


def test_a_header_path_with_spaces_is_quoted_and_found_again(tmp_path: Path) -> None:
    (tmp_path / "my src").mkdir()
    source = tmp_path / "my src" / "the model.py"
    source.write_text(SOURCE)
    out = tmp_path / "out dir" / "it's sharded.py"
    assert _run("convert", str(source), "-o", str(out)).exit_code == 0
    assert out.read_text().splitlines()[1] == \
        "# Regenerate: meshify convert '../my src/the model.py' -o 'it'\"'\"'s sharded.py'"
    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.move(tmp_path / "my src", moved / "my src")
    shutil.move(tmp_path / "out dir", moved / "out dir")  # the two move together: still found
    converted = _import(moved / "out dir" / "it's sharded.py")
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(converted.f.reference(x)), np.tanh(x) * 3, rtol=1e-6)


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(f"meshify_test_cli_{next(_names)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("where", ["input", "output", "folder"])
def test_a_file_name_with_a_line_break(tmp_path: Path, where: str) -> None:
    source = tmp_path / ("new\nline.py" if where == "input" else "model.py")
    out = tmp_path / ("o\nut.py" if where == "output" else "out.py")
    if where == "folder":
        source = tmp_path / "a\u2028b" / "model.py"
        source.parent.mkdir()
    source.write_text(SOURCE)
    before = _files(tmp_path)
    bad = {"input": source, "output": out, "folder": source}[where]
    for command in (["convert", str(source), "-o", str(out)], ["convert", str(source)], ["diff", str(source)]):
        if where == "output" and "-o" not in command:
            continue
        result = _run(*command)
        _assert_refused(result, repr(str(bad)), "contains a line break")
    assert _files(tmp_path) == before


def test_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.py")
    try:
        (tmp_path / name).write_text(SOURCE)
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes no such name")
    _assert_refused(_run("convert", str(tmp_path / name), "-o", str(tmp_path / "out.py")), "not valid UTF-8")
    assert not (tmp_path / "out.py").exists()


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


def test_convert_notes_the_branches_it_did_not_rewrite(tmp_path: Path) -> None:
    """A branch on a static value meshify does not know, which it refuses, becomes ``raise mr.refused(...)``;
    convert says so on stderr (where and which error), so a reviewer need not find them in the output."""
    src = Path(__file__).parent / "soundness" / "alternative_kept_behind_a_config_flag.py"
    out = tmp_path / "out.py"
    done = subprocess.run([sys.executable, "-m", "meshify", "convert", str(src), "-o", str(out)],
                          capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr
    assert "1 branch not rewritten" in done.stderr and "(MSH030, when not cfg.mixer" in done.stderr
    assert "raise mr.refused(" in out.read_text()
