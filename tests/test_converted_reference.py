"""``.reference`` on a converted file's functions: the original function, imported on demand."""

from __future__ import annotations

import importlib.util
import itertools
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from meshify.cli import app
from meshify.errors import CallError

ROOT = Path(__file__).resolve().parent.parent

SOURCE = textwrap.dedent('''\
    import jax.numpy as jnp
    from meshify import Tensor, mesh


    @mesh(batch=8)
    def scale(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
        return jnp.tanh(x) * 3


    class Model:
        @mesh(batch=8)
        def forward(self, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
            return x * 2
''')

_names = itertools.count()


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(f"meshify_test_converted_{next(_names)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _convert(source: Path, out: Path) -> None:
    result = CliRunner().invoke(app, ["convert", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output


def test_reference_of_a_file_converted_into_another_folder(tmp_path, monkeypatch) -> None:
    (tmp_path / "model.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    _convert(Path("model.py"), Path("generated/model_sharded.py"))
    monkeypatch.chdir(ROOT)  # resolved from the converted file's folder, not the working directory
    converted = _import(tmp_path / "generated" / "model_sharded.py")
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(8, 3)
    np.testing.assert_allclose(np.asarray(converted.scale.reference(x)), np.tanh(x) * 3, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(converted.scale(x)), np.asarray(converted.scale.reference(x)), rtol=1e-6)
    assert converted.scale.reference.__module__ != converted.__name__  # the original, not the sharded one
    np.testing.assert_allclose(np.asarray(converted.Model().forward.reference(x)), x * 2)


def test_an_example_runs_its_reference_from_the_converted_file(tmp_path) -> None:
    shutil.copy(ROOT / "examples" / "hybrid.py", tmp_path / "hybrid.py")
    _convert(tmp_path / "hybrid.py", tmp_path / "hybrid_sharded.py")
    converted = _import(tmp_path / "hybrid_sharded.py")
    original = _import(tmp_path / "hybrid.py")
    assert converted.ffn_block.reference.__code__.co_code == original.ffn_block.reference.__code__.co_code


def test_a_missing_original_is_a_positioned_error_with_a_fix(tmp_path) -> None:
    (tmp_path / "model.py").write_text(SOURCE)
    _convert(tmp_path / "model.py", tmp_path / "model_sharded.py")
    (tmp_path / "model.py").unlink()
    converted = _import(tmp_path / "model_sharded.py")
    with pytest.raises(CallError) as error:
        converted.scale.reference  # noqa: B018
    message = str(error.value)
    assert "cannot find" in message and "model.py" in message and "fix: keep the original" in message
    assert error.value.span is not None and error.value.span.path == str(tmp_path / "model_sharded.py")


def test_a_hand_written_sharded_function_has_no_reference(tmp_path) -> None:
    (tmp_path / "hand.py").write_text(textwrap.dedent('''\
        import meshify.runtime as mr


        @mr.sharded(mr.MeshSpec.of(batch=8), {"x": mr.ArgSpec(("batch",), mr.P("batch"))}, out_specs=mr.P("batch"))
        def double(x):
            return x * 2
    '''))
    with pytest.raises(CallError, match="not written by meshify convert"):
        _import(tmp_path / "hand.py").double.reference  # noqa: B018


def test_a_deep_path_wrapped_in_the_header_still_finds_the_original(tmp_path) -> None:
    """A source path longer than a line: the formatter wraps the header's Regenerate comment onto a
    ``#     `` line, which .reference joins again (it read only the first line, and gave no reference)."""
    from meshify.rewrite import convert_source

    deep = tmp_path / ("a_rather_long_folder_name_" * 3) / ("and_another_one_" * 3)
    deep.mkdir(parents=True)
    source = deep / "model.py"
    source.write_text(SOURCE)
    text = convert_source(SOURCE, str(source)).text
    assert "\n#     " in text.split("import", 1)[0]  # the Regenerate line is wrapped
    (deep / "model_sharded.py").write_text(text)
    converted = _import(deep / "model_sharded.py")
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(8, 3)
    np.testing.assert_allclose(np.asarray(converted.scale.reference(x)), np.tanh(x) * 3, rtol=1e-6)


def test_reference_returns_the_converted_modules_namedtuples(tmp_path) -> None:
    """``Out(...)`` built and returned: the converted function returns the converted module's ``Out``, and so does
    its ``.reference`` (the original module's class of that name, made the converted one's), so that
    ``jax.tree.map`` over both works (found by the attack on today's forms, session 17)."""
    import jax

    (tmp_path / "model.py").write_text(textwrap.dedent('''\
        from typing import NamedTuple

        import jax
        import jax.numpy as jnp
        from meshify import Tensor, mesh


        class Out(NamedTuple):
            y: jax.Array
            total: jax.Array


        @mesh(batch=8)
        def f(x: Tensor["batch", "d"]):
            return Out(y=x * 2, total=jnp.sum(x))
        '''))
    _convert(tmp_path / "model.py", tmp_path / "model_sharded.py")
    converted = _import(tmp_path / "model_sharded.py")
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(8, 3)
    got, want = converted.f(x), converted.f.reference(x)
    assert type(got) is converted.Out and type(want) is converted.Out
    jax.tree.map(lambda a, b: np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-5), got, want)


def test_reference_takes_the_converted_modules_namedtuples(tmp_path) -> None:
    """A converted module's ``S`` passed to ``.reference`` as a scan's carry, which the original's scan body rebuilds
    as ``S(...)``: the argument is made the original module's ``S`` first, else JAX refuses the carry for changing
    its Python type (a crash found by the ResNet attack, session 24)."""
    import jax

    (tmp_path / "model.py").write_text(textwrap.dedent('''\
        from typing import NamedTuple

        import jax
        from meshify import Tensor, mesh


        class S(NamedTuple):
            m: Tensor["batch", "d"]
            n: Tensor["batch", "d"]


        def step(c: S, xt):
            return S(m=c.m + xt, n=c.n * 0.5 + xt), None


        @mesh(batch=8)
        def f(x: Tensor["time", "batch", "d"], init: S) -> S:
            out, _ = jax.lax.scan(step, init, x)
            return out
        '''))
    _convert(tmp_path / "model.py", tmp_path / "model_sharded.py")
    converted = _import(tmp_path / "model_sharded.py")
    x = np.linspace(-2, 2, 5 * 8 * 3, dtype=np.float32).reshape(5, 8, 3)
    init = converted.S(m=x[0], n=x[1])
    got, want = converted.f(x, init), converted.f.reference(x, init=init)
    assert type(got) is converted.S and type(want) is converted.S
    jax.tree.map(lambda a, b: np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-5), got, want)
