"""Bad input: every rejection is a MeshifyError with path:line:col, a caret and a fix.

The CLI turns each into exit code 2 with no traceback and writes nothing.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from meshify.cli import app
from meshify.errors import (AnnotationError, CallError, LayoutError, MeshifyError, RulesError, SourceError,
                            UnsupportedError)
from meshify.rewrite import convert_source

HEADER = "import jax\nimport jax.numpy as jnp\nfrom meshify import Tensor, mesh\n\n"

# name -> (body after HEADER, error class, (line, col) of the culprit, text the message names)
CASES = {
    "rule_target_not_an_axis": (
        '@mesh(batch=2, model=4, rules={"d_ff": "modle"})\n'
        'def f(x: Tensor["batch", "d_ff"]) -> Tensor["batch", "d_ff"]:\n    return x\n',
        RulesError, (5, 25), "'modle'"),
    "non_string_dim": (
        '@mesh(batch=2)\ndef f(x: Tensor["batch", 3]) -> Tensor["batch"]:\n    return x\n',
        AnnotationError, (6, 26), "3"),
    "squeeze_without_axis_of_a_split_value": (
        '@mesh(batch=2)\ndef f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:\n    return jnp.squeeze(x)\n',
        UnsupportedError, (7, 12), "squeeze without axis"),
    "squeeze_of_a_split_dim": (
        '@mesh(batch=2)\ndef f(x: Tensor["batch", "d"]) -> Tensor["d"]:\n    return x.squeeze(0)\n',
        LayoutError, (7, 12), "squeeze of dim 'batch'"),
    "attention_over_a_split_sequence": (
        '@mesh(seq=4)\ndef f(q: Tensor["b", "seq", "h", "k"], k: Tensor["b", "seq", "h", "k"]):\n'
        '    return jax.nn.dot_product_attention(q, k, k)\n',
        UnsupportedError, (7, 12), "sequence dim ('seq'"),
    "unnamed_attribute_taken_for_a_number": (
        'class M:\n    @mesh(batch=2)\n    def f(self, x: Tensor["d"]) -> Tensor["batch", "d"]:\n'
        '        v = self.w * x\n        return v.sum(axis=-2)\n',
        LayoutError, (9, 27), "w: Tensor[...] = self.w"),
    "unhinted_return_of_a_python_value": (
        '@mesh(batch=2)\ndef f(x: Tensor["batch"]):\n    return x.shape[0]\n',
        UnsupportedError, (7, 12), "no return hint"),
    "unhinted_returns_differ_by_path": (
        '@mesh(batch=2)\ndef f(x: Tensor["batch"], w: Tensor["d"], n=1):\n    ok = n > 0\n    if ok:\n'
        '        return x\n    return w\n',
        LayoutError, (8, 8), "different layouts on different paths"),
    "unsupported_op_on_split_dim": (
        '@mesh(batch=2, model=4)\ndef f(x: Tensor["batch", "model"]) -> Tensor["batch", "model"]:\n'
        '    return jnp.linalg.qr(x)[0]\n',
        UnsupportedError, (7, 12), "jax.numpy.linalg.qr"),
    "einsum_rank_mismatch": (
        '@mesh(model=4)\ndef f(x: Tensor["b", "model"], w: Tensor["model", "d"]) -> Tensor["b", "d"]:\n'
        '    return jnp.einsum("bmk,md->bd", x, w)\n',
        LayoutError, (7, 23), "'bmk'"),
    "return_dims_differ": (
        '@mesh(model=4)\ndef f(x: Tensor["b", "model"]) -> Tensor["model", "b"]:\n    return jnp.exp(x)\n',
        LayoutError, (7, 12), "[model, b]"),
    "mesh_axis_below_one": (
        '@mesh(batch=2, model=0)\ndef f(x: Tensor["batch"]) -> Tensor["batch"]:\n    return x\n',
        AnnotationError, (5, 16), "size 0"),
    "python_loop_over_split_dim": (
        '@mesh(batch=2)\ndef f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:\n'
        '    for row in x:\n        x = x * 2\n    return x\n',
        UnsupportedError, (7, 16), "loop over an array"),
    "loop_changes_a_layout": (
        '@mesh(model=4)\ndef f(x: Tensor["b", "model"], w: Tensor["model", "model2"]) -> Tensor["b", "model2"]:\n'
        '    y = x\n    for i in range(2):\n        y = y @ w\n    return y\n',
        LayoutError, (8, 5), "changes across iterations"),
    "unread_step_slice_of_split_dim": (
        '@mesh(batch=2)\ndef f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:\n    return x[::x.shape[1]]\n',
        UnsupportedError, (7, 16), "with step x.shape[1]"),
    "non_literal_mesh_argument": (
        'N = int("4")\n@mesh(model=N)\ndef f(x: Tensor["model"]) -> Tensor["model"]:\n    return x\n',
        AnnotationError, (6, 13), "model=N"),
    "non_literal_axis": (
        '@mesh(model=4)\ndef f(x: Tensor["b", "model"], k) -> Tensor["b"]:\n    return x.sum(axis=k)\n',
        UnsupportedError, (7, 23), "axis=k"),
    "mismatched_dim_names_in_einsum": (
        '@mesh(model=4)\ndef f(x: Tensor["b", "d_model"], w: Tensor["d_ff", "e"]) -> Tensor["b", "e"]:\n'
        '    return jnp.einsum("bd,de->be", x, w)\n',
        LayoutError, (7, 12), "'d_model'"),
    "syntax_error": ("def f(:\n    pass\n", SourceError, (5, 7), "syntax"),
    "helper_recursion": (
        'def f(x):\n    return g(x)\n\n\ndef g(x):\n    return f(x)\n\n\n'
        '@mesh(model=4)\ndef h(x: Tensor["b", "model"]) -> Tensor["b", "model"]:\n    return f(x)\n',
        UnsupportedError, (10, 12), "recursive call f -> g -> f"),
    "scan_carry_changes_layout": (
        'def step(c, w):\n    return c @ w, None\n\n\n'
        '@mesh(model=4)\ndef h(x: Tensor["b", "model"], ws: Tensor["layers", "model", "model2"]) -> Tensor["b", "model"]:\n'
        '    y, _ = jax.lax.scan(step, x, ws)\n    return y\n',
        LayoutError, (11, 25), "carry changes layout"),
    "helper_hint_contradicts_caller": (
        'def f(x: Tensor["b", "d"]):\n    return x\n\n\n'
        '@mesh(model=4)\ndef h(x: Tensor["b", "model"]) -> Tensor["b", "model"]:\n    return f(x)\n',
        LayoutError, (5, 10), "hints x as [b, d] but the caller (h) passes"),
    "split_into_an_unread_number_of_sections": (
        '@mesh(model=4)\ndef h(x: Tensor["b", "d"], w: Tensor["d", "model"]) -> Tensor["b", "model"]:\n'
        '    q, k = jnp.split(x @ w, round(2.5), axis=-1)\n    return q\n',
        UnsupportedError, (7, 12), "a number of sections meshify cannot read"),
}


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "model.py"
    path.write_text(HEADER + body)
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewrite_error_names_place_value_and_fix(name: str, tmp_path: Path) -> None:
    body, cls, (line, col), names = CASES[name]
    path = _write(tmp_path, body)
    with pytest.raises(cls) as info:
        convert_source(path.read_text(), str(path))
    err = info.value
    assert isinstance(err, MeshifyError)
    assert (err.span.line, err.span.col) == (line, col), str(err)
    message = str(err)
    assert message.startswith(f"{path}:{line}:{col}: error[MSH")
    assert names in message
    assert "^" in message and "\n  fix: " in message


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_exits_2_without_traceback_or_output(name: str, tmp_path: Path) -> None:
    path = _write(tmp_path, CASES[name][0])
    out = tmp_path / "out.py"
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"{path}:" in result.output
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "out.py"][:1]


def test_cli_error_leaves_existing_output_untouched(tmp_path: Path) -> None:
    path = _write(tmp_path, CASES["return_dims_differ"][0])
    out = tmp_path / "out.py"
    out.write_text("# Generated by meshify from somewhere; do not edit.\nold = 1\n")
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 2
    assert out.read_text().endswith("old = 1\n")


def test_cli_refuses_to_overwrite_a_hand_written_file(tmp_path: Path) -> None:
    path = tmp_path / "ok.py"
    path.write_text(HEADER + '@mesh(batch=2)\ndef f(x: Tensor["batch"]) -> Tensor["batch"]:\n    return x\n')
    out = tmp_path / "mine.py"
    out.write_text("precious = True\n")
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 2 and "--force" in result.output
    assert out.read_text() == "precious = True\n"
    assert CliRunner().invoke(app, ["convert", str(path), "-o", str(out), "--force"]).exit_code == 0
    assert out.read_text().startswith("# Generated by meshify")


def test_real_process_prints_no_traceback(tmp_path: Path) -> None:
    path = _write(tmp_path, CASES["unsupported_op_on_split_dim"][0])
    proc = subprocess.run([sys.executable, "-m", "meshify", "convert", str(path), "-o", str(tmp_path / "o.py")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "fix:" in proc.stderr
    assert not (tmp_path / "o.py").exists()


def test_convert_never_imports_or_runs_the_file(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "model.py"
    path.write_text(HEADER + f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit('ran!')\n\n"
                    '@mesh(batch=2)\ndef f(x: Tensor["batch"]) -> Tensor["batch"]:\n    return x\n')
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(tmp_path / "out.py")])
    assert result.exit_code == 0, result.output
    assert not marker.exists()
    assert "raise SystemExit('ran!')" in (tmp_path / "out.py").read_text()


def test_no_eval_or_exec_in_the_rewriter() -> None:
    """Annotations and rules are read from the CST; the only exec runs *generated* code."""
    import ast

    root = Path(__file__).resolve().parent.parent / "meshify"
    for path in [*root.glob("rewrite/*.py"), *root.glob("annotate/*.py"), root / "cli.py"]:
        calls = [node.func.id for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec")]
        allowed = ["exec"] if path.name == "_decorator.py" else []
        assert calls == allowed, (path, calls)


# -- call time ---------------------------------------------------------------------------------


def _load(tmp_path: Path, body: str, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + textwrap.dedent(body))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_call_with_indivisible_dim_names_argument_and_dim(tmp_path: Path) -> None:
    module = _load(tmp_path, '''
        @mesh(batch=2, model=4)
        def f(x: Tensor["batch", "model"]) -> Tensor["batch", "model"]:
            return jnp.exp(x)
        ''', "indivisible")
    with pytest.raises(CallError) as info:
        module.f(np.ones((3, 4), np.float32))
    message = str(info.value)
    assert "argument 'x'" in message and "dim 'batch' has size 3" in message and "fix:" in message


def test_call_with_wrong_rank_names_argument(tmp_path: Path) -> None:
    module = _load(tmp_path, '''
        @mesh(batch=2)
        def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
            return x
        ''', "rank")
    with pytest.raises(CallError, match="argument 'x' has shape"):
        module.f(np.ones((4,), np.float32))


def test_too_few_devices_says_how_to_simulate_more(tmp_path: Path) -> None:
    module = _load(tmp_path, '''
        @mesh(batch=16)
        def f(x: Tensor["batch"]) -> Tensor["batch"]:
            return x
        ''', "toofew")
    with pytest.raises(CallError) as info:
        module.f(np.ones((16,), np.float32))
    assert "needs 16 devices" in str(info.value)
    assert "--xla_force_host_platform_device_count=16" in str(info.value)


def test_decorator_errors_point_at_the_decorator_line(tmp_path: Path) -> None:
    with pytest.raises(AnnotationError) as info:
        _load(tmp_path, '''
            @mesh(batch=2, model=0)
            def f(x: Tensor["batch"]) -> Tensor["batch"]:
                return x
            ''', "decor")
    assert str(info.value).startswith(f"{tmp_path / 'decor.py'}:6:1: ")


def test_rewrite_error_on_first_call_names_the_users_file(tmp_path: Path) -> None:
    module = _load(tmp_path, '''
        @mesh(model=4)
        def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
            return jnp.fft.fft(x)
        ''', "firstcall")
    with pytest.raises(UnsupportedError) as info:
        module.f(np.ones((2, 4), np.float32))
    assert str(info.value).startswith(f"{tmp_path / 'firstcall.py'}:8:12: ")
    frames = []
    tb = info.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert not [f for f in frames if os.sep + "rewrite" + os.sep in f], frames


def test_version_option() -> None:
    from meshify import __version__

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"meshify {__version__}"


def test_a_scalar_jit_traces_into_an_unhinted_parameter_gets_the_jit_fix(tmp_path: Path) -> None:
    """``jax.jit(f)(x, scale=3.0)`` traces ``scale``; unhinted, it is static to meshify: the fix names
    jit's static_argnames (or a scalar hint), not the array spellings."""
    import jax

    module = _load(tmp_path, '''
        @mesh(batch=2)
        def f(x: Tensor["batch"], scale: float = 1.0) -> Tensor["batch"]:
            return x * scale
        ''', "jitscale")
    with pytest.raises(CallError, match=r"static_argnames=\('scale',\)") as info:
        jax.jit(module.f)(np.ones(4, np.float32), scale=3.0)
    assert "scale: Tensor[()]" in str(info.value)
    np.testing.assert_allclose(np.asarray(jax.jit(module.f, static_argnames=("scale",))(np.ones(4, np.float32),
                                                                                       scale=3.0)), 3.0)


def test_mesh_arguments_may_name_module_constants_of_literals() -> None:
    """``@mesh(model=MODEL, rules=RULES)`` with ``RULES = {...}`` at module level: convert reads the constants'
    literals, as the decorator reads their values (before, "rules=RULES is not a literal"); a constant that is
    not a literal is still refused at its place."""
    from meshify.rewrite import convert_source

    source = ('import jax\nfrom meshify import Tensor, mesh\n\nRULES = {"d_ff": "model"}\nMODEL = 4\n\n\n'
              '@mesh(batch=2, model=MODEL, rules=RULES)\n'
              'def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> Tensor["batch", "d_ff"]:\n'
              '    return jax.nn.relu(x @ w)\n')
    text = convert_source(source, "case.py").text
    assert 'mr.MeshSpec.of(batch=2, model=4)' in text and '"w": mr.ArgSpec(("d", "d_ff"), mr.P(None, "model"))' \
        in text, text
    with pytest.raises(MeshifyError, match="rules=RULES is not a literal"):
        convert_source(source.replace('RULES = {"d_ff": "model"}', "RULES = dict(d_ff='model')"), "case.py")
