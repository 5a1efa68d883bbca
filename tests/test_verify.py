"""meshify verify's inputs and verdicts: NaN and inf, arguments bound by name, keys drawn as
their hints say, and ``--static NAME=VALUE``."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from meshify.cli import app
from meshify.errors import MeshifyError
from meshify.explain import parse_dims
from meshify.rewrite import convert_source
from meshify.verify import _compare, parse_statics, verify_file

ROOT = Path(__file__).resolve().parent.parent
HYBRID_DIMS = "batch=4,length=8,d_model=16,d_ff=64"


def _verify(*argv: str):
    return CliRunner().invoke(app, ["verify", *argv])


# -- NaN and inf ----------------------------------------------------------------------------------


@pytest.mark.parametrize("got, want, agree", [
    ([1.0, np.nan], [1.0, 2.0], False),  # max(err, nan) used to be err: a NaN passed as "ok"
    ([1.0, np.inf], [1.0, 2.0], False),
    ([1.0, -np.inf], [1.0, np.inf], False),
    ([np.nan, 2.0], [1.0, np.nan], False),  # NaNs, but not in the same places
    ([np.nan, 2.0], [np.inf, 2.0], False),
    ([np.nan, 2.0], [np.nan, 2.0], True),  # the reference has the same NaN: that agrees
    ([np.inf, 2.0], [np.inf, 2.0], True),
    ([np.nan, np.nan], [np.nan, np.nan], True),
])
def test_nan_and_inf_agree_only_where_the_reference_has_the_same(got, want, agree) -> None:
    abs_err, rel_err, notes, agrees = _compare([np.array(got, np.float32)], [np.array(want, np.float32)])
    assert (rel_err <= 1e-4) is agree is agrees, (abs_err, rel_err)
    assert bool(notes) is not agree
    if not agree:
        assert abs_err == rel_err == float("inf") and "NaN/inf" in notes[0]


def test_low_precision_results_agree_within_their_own_epsilon() -> None:
    """Two correct programs that add in another order round some bfloat16 sums to the neighbouring
    number (2**-8 apart near 1): within bfloat16's epsilon they agree; float32 keeps rtol."""
    import jax.numpy as jnp

    want = jnp.asarray([1.0, 2.0], jnp.bfloat16)
    got = jnp.asarray([1.0078125, 2.0], jnp.bfloat16)  # one bfloat16 step above 1
    abs_err, rel_err, notes, agree = _compare([got], [want])
    assert agree and rel_err == pytest.approx(0.0078125 / 2), (rel_err, notes)
    assert "agrees within bfloat16's epsilon" in notes[0], notes
    assert not _compare([got.astype(jnp.float32)], [want.astype(jnp.float32)])[3]
    assert not _compare([jnp.asarray([1.1, 2.0], jnp.bfloat16)], [want])[3]


def test_compare_reports_shapes_and_counts_that_differ() -> None:
    assert _compare([np.zeros(2)], [np.zeros(3)])[2] == ["result 0: shape [2], the reference's [3]"]
    assert _compare([np.zeros(2)], [np.zeros(2), np.zeros(2)])[:2] == (float("inf"), float("inf"))


def _hybrid_generated(tmp_path: Path, edit) -> Path:
    source = ROOT / "examples" / "hybrid.py"
    text, n = re.subn(r"(?m)^    return x \+ ", edit, convert_source(source.read_text(), "examples/hybrid.py").text)
    assert n == 1
    path = tmp_path / "hybrid_edited.py"
    path.write_text(text)
    return path


def test_a_generated_file_that_divides_by_zero_fails_verify(tmp_path: Path) -> None:
    """x / 0 * 0 is NaN wherever x is not 0: the reference has no NaN, so verify must fail."""
    nan = _hybrid_generated(tmp_path, "    return x / 0.0 * 0.0 + ")
    result = _verify(str(ROOT / "examples" / "hybrid.py"), "--dims", HYBRID_DIMS, "--generated", str(nan))
    assert result.exit_code == 1, result.output
    assert "FAILED: max abs error inf" in result.output and "DIFFER" in result.output
    assert "NaN/inf value(s) not where the reference has them, first at [0, 0, 0]: nan" in result.output


NANS_BY_DESIGN = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return jnp.log(jnp.einsum("bd,df->bf", x, w))  # NaN wherever the product is negative
'''


def test_nans_where_the_reference_has_them_too_agree(tmp_path: Path) -> None:
    path = tmp_path / "nans.py"
    path.write_text(NANS_BY_DESIGN)
    (report,) = verify_file(path, None, parse_dims("batch=4,d=8,d_ff=16"))
    assert report.ok and report.max_abs_error < 1e-5 and not report.notes, report


# -- arguments by name, and --static --------------------------------------------------------------

STATICS = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(scale, x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], *,
      train: bool = False, b: Tensor["d"]) -> Tensor["batch", "d"]:
    if train:
        return x + jnp.einsum("bf,fd->bd", jnp.einsum("bd,df->bf", x, w1) * scale, w2) + b
    return x * scale + b
'''


@pytest.fixture
def statics(tmp_path: Path) -> list[str]:
    path = tmp_path / "statics.py"
    path.write_text(STATICS)
    return [str(path), "--dims", "batch=4,d=8,d_ff=16"]


def test_a_static_parameter_without_default_is_given_with_static(statics: list[str]) -> None:
    """scale comes before the arrays and b is keyword-only: arguments are bound by name."""
    result = _verify(*statics)
    assert result.exit_code == 2 and "error[MSH072]" in result.output, result.output
    assert "fix: pass a value for each: --static scale=VALUE" in result.output
    result = _verify(*statics, "--static", "scale=2.0")
    assert result.exit_code == 0, result.output
    assert "f: ok: max abs error 0," in result.output and "no collectives predicted or found" in result.output


def test_static_picks_the_branch_and_explain_predicts_that_branch(statics: list[str]) -> None:
    result = _verify(*statics, "--static", "scale=2.0", "--static", "train=True")
    assert result.exit_code == 0, result.output
    assert "all-reduce      predicted 1 (64 bytes/device)  compiled HLO 1 (64 bytes/device)" in result.output


def test_keyword_only_arrays_after_a_static_with_default(tmp_path: Path) -> None:
    path = tmp_path / "kwonly.py"
    path.write_text(STATICS.replace("def f(scale, ", "def f(").replace("train: bool = False,",
                                                                        "train: bool = False, scale: float = 3.0,"))
    (report,) = verify_file(path, None, parse_dims("batch=4,d=8,d_ff=16"), statics={"train": True})
    assert report.ok and report.found == {"all-reduce": (1, 64)}, report


@pytest.mark.parametrize("option, message, fix", [
    ("nope=1", "--static nope=1: no verified function has a static parameter 'nope'",
     "fix: choose a static parameter (f(): scale, train)"),
    ("x=1", "--static x=1: 'x' is an array parameter; verify draws it at random",
     "fix: pass --static only for parameters without a Tensor hint"),
    ("train=yes", "--static train=yes: 'yes' is not a Python literal",
     "fix: write a literal, e.g. --static train=True"),
    ("train=[1,", "--static train=[1,: '[1,' is not a Python literal", "fix: write a literal"),
    ("train", "--static train is not NAME=VALUE", "fix: write --static train=True"),
    ("=1", "--static =1 is not NAME=VALUE", "fix: write --static train=True"),
])
def test_bad_static_options_exit_2_with_the_value_and_a_fix(statics: list[str], option, message, fix) -> None:
    result = _verify(*statics, "--static", "scale=2.0", "--static", option)
    assert result.exit_code == 2, result.output
    assert "error[MSH073]" in result.output and message in result.output and fix in result.output, result.output
    assert "Traceback" not in result.output


def test_static_values_are_python_literals() -> None:
    assert parse_statics(["train=True", " n = 3 ", "mode='gelu'", "shape=(2, 4)", "cfg={'a': None}"]) == {
        "train": True, "n": 3, "mode": "gelu", "shape": (2, 4), "cfg": {"a": None}}


# -- keys: drawn as their hints say ---------------------------------------------------------------

#: A stand-in for jaxtyping (not a test dependency): meshify reads hints from the source.
JAXTYPING_STUB = '''\
class _Hint:
    def __class_getitem__(cls, item):
        return cls


class Array: ...
class Float(_Hint): ...
class Key(_Hint): ...
class UInt32(_Hint): ...
'''

KEYS = '''\
import jax
from jaxtyping import Array, Float, Key, UInt32
from meshify import mesh


@mesh(batch=2)
def typed(x: Float[Array, "batch d"], key: Key[Array, ""]) -> Float[Array, "batch d"]:
    return x + jax.random.normal(shape=x.shape, key=key)  # by keyword: the hint, not the use, says "key"


@mesh(batch=2)
def raw(x: Float[Array, "batch d"], key: UInt32[Array, "two"]) -> Float[Array, "batch d"]:
    return x + jax.random.normal(key, x.shape)  # a key as jax.random.PRNGKey makes it: uint32[2]
'''


def test_keys_are_typed_or_raw_as_their_hints_say(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "jaxtyping.py").write_text(JAXTYPING_STUB)
    (tmp_path / "keys.py").write_text(KEYS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "jaxtyping", raising=False)
    try:
        reports = verify_file(tmp_path / "keys.py", None, parse_dims("batch=4,d=8,two=2"))
        assert [(r.name, r.ok) for r in reports] == [("typed", True), ("raw", True)], reports
        with pytest.raises(Exception, match=r"MSH071.*raw key.*last dim has 2 elements.*shape \[3\]"):
            verify_file(tmp_path / "keys.py", "raw", parse_dims("batch=4,d=8,two=3"))
    finally:
        sys.modules.pop("jaxtyping", None)


def test_a_file_that_fails_to_import_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text(STATICS.replace("import jax.numpy as jnp", "import not_a_module_anywhere"))
    result = _verify(str(path), "--dims", "batch=4,d=8,d_ff=16", "--static", "scale=1.0")
    assert result.exit_code == 2, result.output
    assert "error[MSH070]: importing" in result.output and "ModuleNotFoundError" in result.output
    assert "Traceback" not in result.output


# -- sequences of hinted structs --------------------------------------------------------------------


@pytest.mark.parametrize("blocks", [1, 3])
def test_a_tuple_of_blocks_gets_one_item_per_dims_blocks(blocks: int) -> None:
    """``blocks: tuple[Block, ...]`` (tests/real_models/gpt2.py): verify draws ``--dims blocks=N`` items,
    each its own random weights, and runs the model on them (it crashed building the tuple)."""
    from meshify.verify import _draw, _predict

    path = ROOT / "tests" / "real_models" / "gpt2.py"
    sizes = parse_dims(f"batch=4,length=8,positions=16,vocab=64,d_model=32,qkv=3,heads=8,d_head=4,d_ff=64,"
                       f"blocks={blocks}")
    (prediction, hints), = _predict(path.read_bytes(), path, sizes, None, {})
    leaves = _draw(prediction, hints, 0, sizes)
    items = sorted({int(name.split(".")[2]) for name in leaves if name.startswith("params.blocks.")})
    assert items == list(range(blocks)), sorted(leaves)
    if blocks > 1:
        assert not np.array_equal(leaves["params.blocks.0.w_qkv"], leaves["params.blocks.1.w_qkv"])
    report, = verify_file(path, None, sizes)
    assert report.results_agree and report.prediction_matches, report


def test_static_given_as_a_call_of_the_modules_class() -> None:
    """``--static "args=ModelArgs(n_kv_heads=4)"`` (a NamedTuple config, no literal): built in the verified
    module once it is imported; the model runs with it (4 kv heads need kv_features=16 to reshape)."""
    path = ROOT / "tests" / "real_models" / "mistral.py"
    dims = ["--dims", "batch=4,length=8,vocab=64,d_model=32,layers=2,q_features=128,kv_features=16,hidden=64"]
    result = _verify(str(path), *dims, "--static", "args=ModelArgs(n_kv_heads=4)")
    assert result.exit_code == 0, result.output
    assert "mistral: ok" in result.output, result.output
    result = _verify(str(path), *dims, "--static", "args=Nope(n_kv_heads=4)")
    assert result.exit_code == 2, result.output
    assert "--static args=Nope(n_kv_heads=4): NameError" in result.output, result.output
    assert "fix: call a class or function the module defines or imports" in result.output, result.output
    assert parse_statics(["cfg=cfgs.Config(1, heads=2)"])["cfg"].text == "cfgs.Config(1, heads=2)"


def test_a_model_reshaping_inside_expressions_verifies_with_its_input_dims_only() -> None:
    """tests/real_models/vit.py patchifies with reshapes whose new dims meshify names itself
    (``height_width_0?``): their sizes come from the code, so verify asks only for the dims of the
    hints; a new dim lined up with a hinted one (the patch features) is sized by it."""
    path = Path(__file__).resolve().parent / "real_models" / "vit.py"
    dims = parse_dims("patch_features=48,d_model=64,batch=4,height=16,width=16,channels=3,heads=4,d_head=16,"
                      "mlp=128,classes=10,layers=2,tokens=17")
    report, = verify_file(path, None, dims)
    assert report.ok, report


def test_a_config_default_is_read_for_its_loop_counts() -> None:
    """tests/real_models/t5.py loops ``for i in range(cfg.layers)`` with ``cfg: Config = DEFAULT_CONFIG``
    (a NamedTuple whose fields have literal defaults): explain reads the default's fields, as it reads
    literal defaults, so the loops are counted and verify runs without a --static."""
    path = Path(__file__).resolve().parent / "real_models" / "t5.py"
    dims = parse_dims("vocab=64,d_model=32,batch=4,input_length=8,length=8,heads=4,d_head=8,d_ff=64,layers=2,"
                      "buckets=16")
    report, = verify_file(path, None, dims)
    assert report.ok, report


def test_a_loop_over_a_list_of_layers_is_counted_by_the_fields_size() -> None:
    """tests/real_models/mixtral.py loops ``for layer in model.layers`` (a ``list[Layer]`` field): explain
    counts it ``--dims layers=N`` times, as verify draws that many layers, and predicts the top-2 routing's
    all-gathers over the split experts (its k entries a dim it sizes by its name, ``2?``)."""
    path = Path(__file__).resolve().parent / "real_models" / "mixtral.py"
    dims = parse_dims("batch=4,length=8,vocab=64,d_model=32,q_features=64,experts=8,d_ff=16,layers=2")
    report, = verify_file(path, None, dims)
    assert report.ok, report
    assert report.found["all-gather"][0] == 4  # values and indices, per layer


def test_one_class_renamed_per_use_and_a_loop_over_a_sequence_parameter_verify() -> None:
    """tests/real_models/mixer.py: one ``MlpBlock`` class for the token and channel MLPs, renamed per field
    (``Annotated[MlpBlock, {"d_in": "tokens", ...}]``); its two psums per block are predicted as compiled.
    tests/soundness/struct_class_renamed_per_use.py loops over a ``tuple[Block, ...]`` *parameter*, counted
    ``--dims blocks=N`` times (before, "cannot count the iterations")."""
    here = Path(__file__).resolve().parent
    dims = parse_dims("batch=4,height=8,width=8,channels=3,patch_features=48,d_model=32,tokens=4,tokens_ff=16,"
                      "d_ff=64,classes=10,blocks=2")
    report, = verify_file(here / "real_models" / "mixer.py", None, dims)
    assert report.ok, report
    assert report.found["all-reduce"][0] == 4
    dims = parse_dims("batch=4,patch=6,d_model=12,tok_ff=8,d_ff=16,classes=5,blocks=3")
    report, = verify_file(here / "soundness" / "struct_class_renamed_per_use.py", None, dims)
    assert report.ok, report
    assert report.found["all-reduce"][0] == 6


def test_a_static_config_call_is_read_for_the_prediction(tmp_path: Path) -> None:
    """``--static "cfg=Plain(layers=3)"`` of a NamedTuple the module defines: the reference runs with it,
    and explain reads its fields too, so the loop over ``range(cfg.layers)`` is counted 3 times."""
    path = tmp_path / "configs.py"
    path.write_text('''\
from typing import NamedTuple
import jax.numpy as jnp
from meshify import Tensor, mesh


class Plain(NamedTuple):
    layers: int = 2
    scale: float = 0.5


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "d"], cfg: Plain = Plain()) -> Tensor["batch", "d"]:
    for _ in range(cfg.layers):
        x = jnp.tanh(x @ w) * cfg.scale
    return x
''')
    (report,) = verify_file(path, None, parse_dims("batch=4,d=8"), statics=parse_statics(["cfg=Plain(layers=3)"]))
    assert report.ok, report
    assert report.found["all-reduce"][0] == report.predicted["all-reduce"][0] == 3, report


_EXAMPLE = '''\
from typing import NamedTuple
import jax.numpy as jnp
from meshify import Tensor, mesh


class Config(NamedTuple):
    layers: int
    scale: float = 0.5


SMALL = Config(layers=2)


@mesh(batch=2, model=4, rules={"d": "model"}, example={"cfg": Config(layers=3), "train": True})
def g(x: Tensor["batch", "d"], w: Tensor["d", "d"], cfg: Config, train: bool) -> Tensor["batch", "d"]:
    for _ in range(cfg.layers):
        x = jnp.tanh(x @ w) * cfg.scale
    if train:
        x = jnp.tanh(x @ w)
    return x


@mesh(batch=2, model=4, rules={"d": "model"}, example=dict(cfg=SMALL))
def h(x: Tensor["batch", "d"], w: Tensor["d", "d"], cfg: Config) -> Tensor["batch", "d"]:
    for _ in range(cfg.layers):
        x = jnp.tanh(x @ w)
    return x
'''


def test_a_mesh_example_gives_statics_without_defaults_their_values(tmp_path: Path) -> None:
    """``@mesh(..., example={"cfg": Config(layers=3), "train": True})``: a config with no default gets
    its value from the decorator, for the run and for explain's prediction (the loop counted 3 times, the
    branch ``train`` picks taken: 4 all-reduces); ``example=dict(cfg=SMALL)`` reads a module constant;
    ``--static`` still wins over the example."""
    path = tmp_path / "examples_given.py"
    path.write_text(_EXAMPLE)
    g, h = verify_file(path, None, parse_dims("batch=4,d=8"))
    assert g.ok and h.ok, (g, h)
    assert g.found["all-reduce"][0] == g.predicted["all-reduce"][0] == 4, g
    assert h.found["all-reduce"][0] == h.predicted["all-reduce"][0] == 2, h
    g, = verify_file(path, "g", parse_dims("batch=4,d=8"), statics=parse_statics(["train=False"]))
    assert g.ok and g.found["all-reduce"][0] == g.predicted["all-reduce"][0] == 3, g
    result = CliRunner().invoke(app, ["explain", str(path), "--dims", "batch=4,d=8"])
    assert result.exit_code == 0, result.output
    assert "cannot count" not in result.output, result.output


@pytest.mark.parametrize("example, message", [
    ('{"cfgg": Config(layers=3)}', "@mesh(example=...) names 'cfgg', which is not a parameter of g()"),
    ('{"x": 1}', "@mesh(example=...) gives 'x', an array parameter"),
    ('[("cfg", 1)]', "@mesh(example=[(\"cfg\", 1)]) is not a dict written out"),
    ('{cfg: 1}', "@mesh(example=...) key cfg is not a parameter name in quotes"),
])
def test_a_bad_mesh_example_is_a_positioned_error(tmp_path: Path, example: str, message: str) -> None:
    path = tmp_path / "bad_example.py"
    source = _EXAMPLE.replace('example={"cfg": Config(layers=3), "train": True}', f"example={example}")
    path.write_text(source)
    result = CliRunner().invoke(app, ["explain", str(path), "--dims", "batch=4,d=8"])
    assert result.exit_code == 2, result.output
    assert message in result.output, result.output
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "example=" + example in text)
    assert f"bad_example.py:{line}:" in result.output, result.output


def test_the_decorator_checks_its_example_when_the_module_is_imported() -> None:
    from meshify import Tensor, mesh
    from meshify.errors import AnnotationError

    def f(x: Tensor["batch"], cfg: int) -> Tensor["batch"]:
        return x * cfg

    assert mesh(batch=8, example={"cfg": 3})(f).example == {"cfg": 3}
    with pytest.raises(AnnotationError, match="names 'cfgg', which is not a parameter of f()"):
        mesh(batch=8, example={"cfgg": 3})(f)
    with pytest.raises(AnnotationError, match="is not a dict from parameter names to values"):
        mesh(batch=8, example=[("cfg", 3)])  # type: ignore[arg-type]


_DTYPES = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"d": "model"})
def mask_whole(x: Tensor["batch", "d"], w: Tensor["e", "e"]) -> Tensor["batch", "e"]:
    m: Tensor["batch", "e"] = (x > 0).reshape(x.shape[0], -1)
    return jnp.where(m, 1.0, 0.0) @ w


@mesh(batch=2, model=4, rules={"d": "model"})
def int_max(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.max(x.astype(jnp.int32), axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def int8_cumsum(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jnp.cumsum(x.astype(jnp.int8), axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def bool_argmax(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.argmax(x > 0, axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def bf16_argmax(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.argmax(x.astype(jnp.bfloat16), axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def bf16_matmul(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    return x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)


@mesh(batch=2, model=4, rules={"d": "model"})
def any_positive(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.any(x > 0, axis=-1)
'''


def test_collectives_of_values_whose_dtype_the_code_says_are_predicted_in_that_dtype(tmp_path: Path) -> None:
    """A gathered comparison moves 1-byte bools, an integer max needs no NaN flag (1 all-reduce, not 2), an
    int8 cumsum gathers int8 totals, a bfloat16 argmax reduces an int16 key then an int32 index, a bfloat16 product's partial sum crosses in float32: explain counted
    them all as the float inputs' 4 bytes and 2 instructions, so verify failed these correct programs.
    The reference runs on JAX arrays (NumPy inputs ran ``x.astype(jnp.bfloat16) @ w`` in NumPy, float32)."""
    path = tmp_path / "dtypes.py"
    path.write_text(_DTYPES)
    reports = verify_file(path, None, parse_dims("batch=4,d=16,e=16"))
    assert [r.name for r in reports if not r.ok] == [], reports
    found = {r.name: r.found for r in reports}
    assert found["mask_whole"]["all-gather"] == (1, 32)  # [2, 16] bools per device
    assert found["int_max"]["all-reduce"] == (1, 8)
    assert found["int8_cumsum"]["all-gather"] == (1, 8)
    assert found["bf16_argmax"]["all-reduce"] == (2, 2 * 2 + 2 * 4)  # an int16 key, then an int32 index
    result = CliRunner().invoke(app, ["explain", str(path), "--dims", "batch=4,d=16,e=16", "--itemsize", "2"])
    assert result.exit_code == 0, result.output
    assert "bool" in result.output and "int8" in result.output and "int32" in result.output, result.output


_DUPLICATES = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


def h(x, w):
    return jnp.tanh(x @ w)


@mesh(batch=2, model=4, rules={"d": "model"})
def softmax_and_log_softmax(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jax.nn.softmax(x, axis=-1) + jax.nn.log_softmax(x, axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def logsumexp_and_max(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jax.nn.logsumexp(x, axis=-1) + jnp.max(x, axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def max_kept_and_logsumexp(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x - jnp.max(x, axis=-1, keepdims=True) + jax.nn.logsumexp(x, axis=-1, keepdims=True)


@mesh(batch=2, model=4, rules={"d": "model"})
def var_std(x: Tensor["batch", "d"], m: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.var(x, axis=-1) + jnp.std(x, axis=-1) + jnp.var(x, axis=-1, ddof=1) + jnp.var(m, axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def helper_twice(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["batch", "d"]) -> Tensor["batch", "e"]:
    return h(x, w) + h(x, w) + h(v, w)


@mesh(batch=2, model=4, rules={"d": "model"})
def loop_invariant(x: Tensor["batch", "d"], w: Tensor["d", "e"], y: Tensor["batch", "e"]) -> Tensor["batch", "e"]:
    for _ in range(3):
        y = y + jnp.tanh(x @ w)
    for _ in range(2):
        x = x * 2.0
        y = y + jnp.tanh(x @ w)
    return y


@mesh(batch=2, model=4, rules={"d": "model"})
def same_statement(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    a = jnp.tanh(x @ w) * jnp.sin(x @ w)
    x = x + 1.0
    return a + jnp.tanh(x @ w)


@mesh(batch=2, model=4, rules={"d": "model"})
def in_branches(x: Tensor["batch", "d"], w: Tensor["d", "e"], p: Tensor[()]) -> Tensor["batch", "e"]:
    a = jnp.tanh(x @ w)
    return a + jax.lax.cond(p > 0, lambda: jnp.tanh(x @ w), lambda: jnp.sin(x @ w))


@mesh(batch=2, model=4, rules={"d": "model"})
def unused(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "d"]:
    z = jnp.tanh(x @ w)
    u = z * 2.0
    return x * 2.0


def scaled(x, w, s=2.0):
    return jnp.tanh((x * s) @ w)


def kw(x, **k):
    return jnp.tanh(x @ k["w"])


@mesh(batch=2, model=4, rules={"d": "model"})
def helper_and_caller(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["batch", "d"]) -> Tensor["batch", "e"]:
    a = h(x, w) + jnp.sin(x @ w)  # one value: the helper's x @ w is the caller's
    b = h(w=w, x=v) + jnp.cos(v @ w)  # passed by keyword
    x = x * 3.0
    return a + b + jnp.tanh(x @ w)  # x rebound: another value


@mesh(batch=2, model=4, rules={"d": "model"})
def dead_reader_of_a_psum(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    s = jnp.sum(x, axis=-1)  # a partial sum
    unused = jnp.tanh(s)  # dead, but the psum completing s before it is read below
    return jax.nn.relu(s)


@mesh(batch=2, model=4, rules={"d": "model"})
def dead_python_loop(x: Tensor["batch", "d"], y: Tensor["batch", "d"]) -> Tensor["batch"]:
    z = x - jnp.max(x, axis=-1, keepdims=True)
    for _ in range(2):
        z = z * 0.5 + jnp.sin(y)  # binds only z, which nothing reads after: XLA drops the loop and the pmax
    if True:
        w = jnp.sum(y, axis=-1)
    return jnp.sum(x, axis=-1)


def ignores(x, y):
    unused = jnp.tanh(y)
    return x * 2.0


@mesh(batch=2, model=4, rules={"d": "model"})
def argument_nobody_reads(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "d"]:
    s = jnp.sum(x, axis=-1)  # a partial sum, completed for ignores(), which never reads it
    t: Tensor["batch", "e"] = x @ w  # completed by its hint, passed where nothing reads it
    return ignores(x, s) + ignores(x, t) + ignores(x, jnp.tanh(s))


@mesh(batch=2, model=4, rules={"d": "model"})
def shape_only(x: Tensor["batch", "d"], y: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    m = jnp.min(x, axis=-1)  # its pmin is dropped: only its shape and dtype are read
    t = jax.nn.log_softmax(x, axis=-1)
    t += t  # an augmented assignment nobody reads: dead with the softmax before it
    return y + jnp.zeros(m.shape, m.dtype)[:, None]


def stats(x):
    return jnp.mean(x, axis=-1), jnp.max(x, axis=-1), jnp.min(x, axis=-1) * 2.0


@mesh(batch=2, model=4, rules={"d": "model"})
def result_item_unread(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    mean, top, _ = stats(x)  # only the mean is read: XLA drops the pmax and the pmin
    low, _, bottom = stats(x * 2.0)
    return mean + low + bottom


@mesh(batch=2, model=4, rules={"d": "model"})
def top_values_only(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    kth = jax.lax.top_k(x, 2)[0][..., -1]  # a sampler's threshold: no index is gathered
    best, _ = jax.lax.top_k(x * 2.0, 3)
    return kth + jnp.sum(best, axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def dead_loop_lambda(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    m = jnp.max(x, axis=-1)  # read only by the lambda of a loop whose result nobody reads: dropped
    unused = jax.lax.fori_loop(0, 2, lambda i, h: h * 0.5 + jnp.sin(m), m)
    return jnp.sum(x, axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def nested_def_unread_parameter(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    m = jnp.max(x, axis=-1)

    def body(m, x):  # its m shadows the outer one, and nothing live reads it
        unused = jnp.tanh(m)
        return jnp.sum(x, axis=-1)

    return body(m, x)


@mesh(batch=2, model=4, rules={"d": "model"})
def strided_read_twice(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    # x[..., 1::2] along split d read twice, x[..., ::2] once (the same value, another slice): two halos
    return x[..., 1::2] * 2.0 + jnp.tanh(x[..., 1::2]) + jnp.cos(x[..., ::2])


@mesh(batch=2, model=4, rules={"d": "model"})
def helper_not_caller(x: Tensor["batch", "d"], w: Tensor["d", "e"], s: Tensor[()]) -> Tensor["batch", "e"]:
    a = scaled(x, w) + jnp.sin((x * s) @ w)  # the helper's s is its default, not the caller's s
    return a + kw(x, w=w) + kw(x, w=w * 2.0)  # **k: its items differ per call
'''


def test_explain_counts_one_collective_per_distinct_value_as_xla_leaves_them(tmp_path: Path) -> None:
    """XLA computes a collective of one value once (its common-subexpression pass) and drops one nobody
    reads: softmax and log_softmax of x share their max and sum of exp, as logsumexp and jnp.max share the
    max (not jnp.max(keepdims=True)'s, another shape); a helper called twice on the same arguments, a
    helper's ``x @ w`` and its caller's of the same arguments, a value reduced twice in a statement, a psum
    in a Python loop that never rebinds what it reads are one psum; a value rebound (x = x + 1.0) is another,
    as is one in a cond branch (a computation of its own), a helper's default or ``**kwargs`` item; a strided
    slice along a split dim read twice exchanges its halo once (another slice of the value is another); a
    Python loop or branch that only binds names nobody reads is dropped, but not a psum completing a name
    that a later statement reads, before a dead statement.  verify failed each of these correct programs."""
    path = tmp_path / "duplicates.py"
    path.write_text(_DUPLICATES)
    reports = verify_file(path, None, parse_dims("batch=4,d=16,e=8"))
    assert [r.name for r in reports if not r.ok] == [], reports
    predicted = {r.name: r.predicted.get("all-reduce", (0, 0)) for r in reports}
    assert predicted == {"softmax_and_log_softmax": (2, 16), "logsumexp_and_max": (3, 24),
                         "max_kept_and_logsumexp": (4, 32), "var_std": (4, 32), "helper_twice": (2, 128),
                         "loop_invariant": (3, 192), "same_statement": (2, 128), "in_branches": (3, 192),
                         "unused": (0, 0), "helper_and_caller": (3, 192), "helper_not_caller": (4, 256),
                         "dead_reader_of_a_psum": (1, 8), "dead_python_loop": (1, 8),
                         "argument_nobody_reads": (0, 0), "shape_only": (0, 0),
                         "result_item_unread": (3, 24), "top_values_only": (0, 0),
                         "dead_loop_lambda": (1, 8), "nested_def_unread_parameter": (1, 8),
                         "strided_read_twice": (0, 0)}, predicted
    gathered = {r.name: r.predicted.get("all-gather") for r in reports if r.name == "top_values_only"}
    assert gathered == {"top_values_only": (2, 160)}, gathered
    halos = {r.name: r.predicted.get("collective-permute") for r in reports if r.name == "strided_read_twice"}
    assert halos == {"strided_read_twice": (1, 8)}, halos


_PASSED = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


def repeat(h, fn, n):
    for _ in range(n):
        h = fn(h)
    return h


def accumulate(h, x, fn, n):
    for _ in range(n):
        h = h + fn(x)
    return h


def outer_loop(h, fn):
    for _ in range(2):
        h = repeat(h, fn, 2)
    return h


@mesh(batch=2, model=4, rules={"d": "model"})
def lambda_in_loop(x: Tensor["batch", "d"], w: Tensor["d"]) -> Tensor["batch", "d"]:
    return repeat(x, lambda y: y - jnp.mean(y * w, axis=-1, keepdims=True), 3)


@mesh(batch=2, model=4, rules={"d": "model"})
def def_in_loop(x: Tensor["batch", "d"], w: Tensor["d"]) -> Tensor["batch", "d"]:
    def block(y):
        return y - jnp.mean(y * w, axis=-1, keepdims=True)
    return repeat(x, block, 3)


@mesh(batch=2, model=4, rules={"d": "model"})
def lambda_same_argument(x: Tensor["batch", "d"], w: Tensor["d"]) -> Tensor["batch", "d"]:
    return accumulate(x, x, lambda y: jnp.mean(y * w, axis=-1, keepdims=True), 3)


@mesh(batch=2, model=4, rules={"d": "model"})
def def_same_argument(x: Tensor["batch", "d"], w: Tensor["d"]) -> Tensor["batch", "d"]:
    def stat(y):
        return jax.nn.logsumexp(y * w, axis=-1, keepdims=True)
    return accumulate(x, x, stat, 4)


@mesh(batch=2, model=4, rules={"d": "model"})
def lambda_reads_the_writer(x: Tensor["batch", "d"], w: Tensor["d"]) -> Tensor["batch", "d"]:
    return repeat(x, lambda y: y - jnp.mean(x * w, axis=-1, keepdims=True), 3)


@mesh(batch=2, model=4, rules={"d": "model"})
def helper_in_helper_loop(x: Tensor["batch", "d"], w: Tensor["d"]) -> Tensor["batch", "d"]:
    return outer_loop(x, lambda y: y - jnp.mean(y * w, axis=-1, keepdims=True))
'''


def test_functions_passed_to_helpers_count_the_helpers_loops(tmp_path: Path) -> None:
    """A lambda or nested def passed to a helper runs its collectives where the helper calls it: inside the
    helper's loops (and those of the helpers between), once per distinct argument (``h = h + fn(x)`` in a
    loop is one value to XLA), once for a value only the writer decides.  explain counted the lambda's
    records in its writer, outside the helper's loop: 1 all-reduce for 3, so verify failed these."""
    path = tmp_path / "passed.py"
    path.write_text(_PASSED)
    reports = verify_file(path, None, parse_dims("batch=4,d=16"))
    assert [r.name for r in reports if not r.ok] == [], reports
    predicted = {r.name: r.predicted.get("all-reduce", (0, 0)) for r in reports}
    assert predicted == {"lambda_in_loop": (3, 24), "def_in_loop": (3, 24), "lambda_same_argument": (1, 8),
                         "def_same_argument": (2, 16), "lambda_reads_the_writer": (1, 8),
                         "helper_in_helper_loop": (4, 32)}, predicted


_GATHER_SIDE = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "data", "d_model": "model"})
def logits(x: Tensor["batch", "d_model"], w: Tensor["d_model", "vocab"]) -> Tensor["batch", "vocab"]:
    return x @ w
'''


def test_explain_gathers_the_side_the_written_code_gathers(tmp_path: Path) -> None:
    """``batch`` and ``vocab`` both on ``data`` meet in ``x @ w``: one side is gathered, the smaller by the
    sizes ``@mesh(dims=...)`` declares (here none: a tie, w).  explain chose by its ``--dims`` (x is smaller)
    and predicted a program neither convert nor the decorator writes, so verify failed it."""
    path = tmp_path / "gather_side.py"
    path.write_text(_GATHER_SIDE)
    report, = verify_file(path, None, parse_dims("batch=64,d_model=128,vocab=512"))
    assert report.ok, report
    assert report.predicted["all-gather"] == (1, 128 // 4 * 512 * 4)  # w's block over data, whole vocab


_UNROLLED = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def scanned(x: Tensor["batch", "d"], w1: Tensor["layers", "d", "d_ff"], w2: Tensor["layers", "d_ff", "d"]
            ) -> Tensor["batch", "d"]:
    def body(h, ws):
        a, b = ws
        return h + jnp.tanh(h @ a) @ b, None
    out, _ = jax.lax.scan(body, x, (w1, w2), unroll=2)
    return out


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def looped(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    def body(i, h):
        return h + jnp.tanh(h @ w1) @ w2
    return jax.lax.fori_loop(0, 4, body, x, unroll=True)
'''


def test_unrolled_loop_bodies_are_counted_as_the_hlo_copies_them(tmp_path: Path) -> None:
    """``scan(..., unroll=2)`` over 5 layers copies the body twice in the loop plus once for the layer left
    over; ``fori_loop(..., unroll=True)`` once per iteration: explain counted one copy, so verify failed."""
    path = tmp_path / "unrolled.py"
    path.write_text(_UNROLLED)
    scanned, looped = verify_file(path, None, parse_dims("batch=4,d=16,d_ff=32,layers=5"))
    assert scanned.ok and looped.ok, (scanned, looped)
    assert scanned.predicted["all-reduce"] == (3, 384) and looped.predicted["all-reduce"] == (4, 512)


def test_masks_are_drawn_as_booleans_and_a_broadcast_mask_dim_stays_whole(tmp_path) -> None:
    """An attention ``mask=`` and ``jnp.where``'s condition hinted as Tensor[...]: verify draws booleans for
    them (it drew floats, and the reference raised), and a mask dim of another name than the query's heads
    (size 1, broadcast) stays whole where heads are split (it was split: 1 row over 4 devices)."""
    from meshify.explain import explain_source, parse_dims
    from meshify.verify import verify_file

    path = tmp_path / "att.py"
    path.write_text(
        "import jax\nimport jax.numpy as jnp\nfrom meshify import Tensor, mesh\n\n\n"
        "@mesh(batch=2, heads=4)\n"
        'def f(q: Tensor["batch", "seq", "heads", "dh"], k: Tensor["batch", "seq", "heads", "dh"],\n'
        '      v: Tensor["batch", "seq", "heads", "dh"], mask: Tensor["batch", "one", "seq", "seq"],\n'
        '      keep: Tensor["batch", "seq", "heads", "dh"]) -> Tensor["batch", "seq", "heads", "dh"]:\n'
        "    o = jax.nn.dot_product_attention(q, k, v, mask=mask)\n"
        "    return jnp.where(keep, o, 0.0)\n")
    dims = parse_dims("batch=2,seq=8,heads=4,dh=8,one=1")
    (report,) = verify_file(path, None, dims)
    assert report.results_agree, report
    (explained,) = explain_source(path.read_text(), str(path), dims)
    assert {a.name for a in explained.args if a.boolean} == {"mask", "keep"}, explained.args


_STAR_INDICES = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh


def lookup(table, *ids):
    return table[ids[0]] + jnp.take(table, ids[-1], axis=0)


def embed(table, **kw):
    return table[kw["tokens"]] * kw["scale"]


@mesh(batch=8)
def f(table: Tensor["vocab", "d"], a: Tensor["batch"], b: Tensor["batch"], s: Tensor["batch", "d"],
      c: Tensor["batch"]) -> Tensor[()]:
    return jnp.mean(lookup(table, a, c, b) * embed(table, tokens=b, scale=s))
'''


def test_ids_passed_through_star_args_and_kwargs_are_drawn_as_integers(tmp_path: Path) -> None:
    """A helper indexing with ``ids[0]``, ``ids[-1]`` (``*ids``) and ``kw["tokens"]`` (``**kw``): the caller's
    arguments passed there are indices (verify draws integers for them; it drew floats, and the reference
    raised "Indexer must have integer or boolean type"), the others stay floats (``c``, ``ids[1]``, and
    ``kw["scale"]``'s ``s``)."""
    from meshify.explain import explain_source

    path = tmp_path / "stars.py"
    path.write_text(_STAR_INDICES)
    reports = verify_file(path, None, parse_dims("batch=8,vocab=16,d=4"))
    assert [r.ok for r in reports] == [True], reports
    report, = explain_source(_STAR_INDICES.encode(), str(path), parse_dims("batch=8,vocab=16,d=4"))
    assert {a.name for a in report.args if a.integer} == {"a", "b"}, report.args


_IDENTITY_RESIZE = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"h": "model"})
def f(x: Tensor["batch", "h", "w"]) -> Tensor[()]:
    same = jax.image.resize(x, (4, 16, 8), "bilinear")  # its own shape: JAX returns x, XLA drops the halos
    up = jax.image.resize(x, (4, 32, 8), "bilinear")
    return jnp.mean(same) + jnp.mean(up)
'''


def test_a_resize_to_its_own_shape_exchanges_no_halo(tmp_path: Path) -> None:
    """``jax.image.resize`` to the image's own shape returns it: the halo rows the linear method would
    exchange are dropped by XLA, and explain (which knows the sizes) predicts none for it.  Found by
    ``tests/fuzz/counts.py``."""
    path = tmp_path / "resize.py"
    path.write_text(_IDENTITY_RESIZE)
    report, = verify_file(path, None, parse_dims("batch=4,h=16,w=8"))
    assert report.ok, report
    assert report.predicted["collective-permute"][0] == 2, report.predicted


def test_a_mesh_method_is_verified_on_an_instance(tmp_path: Path) -> None:
    """``@mesh`` on a method: verify calls it on ``Model()``, or on ``--static "self=Model(...)"`` where the
    constructor needs arguments (before, an AttributeError inside verify)."""
    path = tmp_path / "methods.py"
    path.write_text('''\
import jax.numpy as jnp
from meshify import Tensor, mesh


class Model:
    def __init__(self, scale: float = 2.0):
        self.scale = scale

    def norm(self, x):
        return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)

    @mesh(batch=2, model=4, rules={"d": "model"})
    def forward(self, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
        return self.norm(x) * self.scale


class Needs:
    def __init__(self, scale):
        self.scale = scale

    @mesh(batch=8)
    def forward2(self, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
        return x * self.scale
''')
    dims = parse_dims("batch=8,d=8")
    report, = verify_file(path, "forward", dims)
    assert report.ok and report.found["all-reduce"][0] == 1, report
    with pytest.raises(MeshifyError, match=r"forward2 is a method of Needs, and Needs\(\) fails") as info:
        verify_file(path, "forward2", dims)
    assert 'self=Needs(...)' in str(info.value)
    report, = verify_file(path, "forward2", dims, statics=parse_statics(["self=Needs(3.0)"]))
    assert report.ok, report
