"""explain predicts, verify checks: bytes per device from the annotations equal the HLO's."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshify.cli import app
from meshify.explain import explain_source
from meshify.rewrite import convert_source
from meshify.verify import verify_file

ROOT = Path(__file__).resolve().parent.parent

#: The sizes each example runs with (see its main()).
EXAMPLE_DIMS = {
    "linear.py": "batch=4,d_in=32,d_out=8",
    "data_parallel.py": "batch=16,d_in=8,d_hidden=32,d_out=4",
    "ffn_model_parallel.py": "tokens=8,d_model=16,d_ff=64",
    "hybrid.py": "batch=4,length=8,d_model=16,d_ff=64",
    "transformer_lm.py": "batch=8,length=16,d_model=64,heads=8,d_head=8,d_ff=256,vocab=256,layers=2",
    "gpt2.py": "batch=8,length=16,d_model=64,heads=8,d_head=8,d_ff=256,vocab=256,layers=4,qkv=3",
}


#: gpt2_plain is the single-device "before" picture: it has no @mesh function.  unet's feature maps at
#: 32, 16 and 8 pixels all name their dims "h" and "w", and explain sizes a dim by its name, so its halo
#: bytes cannot be predicted per resolution (verify agrees on the results and the collective-permute
#: count; tests/test_spatial*.py check explain's halo bytes on single-resolution programs).
NOT_VERIFIED = {"gpt2_plain.py", "unet.py"}


def test_every_example_is_listed() -> None:
    examples = {p.name for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_")}
    assert examples - NOT_VERIFIED == set(EXAMPLE_DIMS)


@pytest.mark.parametrize("name", sorted(EXAMPLE_DIMS))
def test_verify_passes_and_explain_predicts_the_hlo_bytes(name: str) -> None:
    from meshify.explain import parse_dims

    reports = verify_file(ROOT / "examples" / name, None, parse_dims(EXAMPLE_DIMS[name]))
    for r in reports:
        assert r.results_agree, (r.name, r.max_rel_error)
        assert r.prediction_matches, (r.name, r.predicted, r.found)
        assert r.ok


def test_verify_cli_exit_codes_on_a_good_and_a_corrupted_generated_file(tmp_path: Path) -> None:
    source = ROOT / "examples" / "hybrid.py"
    good = tmp_path / "hybrid_sharded.py"
    good.write_text(convert_source(source.read_text(), "examples/hybrid.py", width=None).text)  # one line per statement
    args = ["verify", str(source), "--dims", EXAMPLE_DIMS["hybrid.py"]]
    assert CliRunner().invoke(app, [*args, "--generated", str(good)]).exit_code == 0
    corrupted = tmp_path / "hybrid_corrupted.py"
    text, n = re.subn(r'(?:jax\.lax|mr)\.psum\((.*), "model"(?:, like=\(.*?\))?\)', r"(\1)", good.read_text())
    assert n == 1
    corrupted.write_text(text)
    result = CliRunner().invoke(app, [*args, "--generated", str(corrupted)])
    assert result.exit_code == 1, result.output
    assert "DIFFER" in result.output and "differs" in result.output


@pytest.mark.parametrize("argv, message", [
    (["explain", "examples/hybrid.py::nope", "--dims", "batch=4"], "no @mesh function named 'nope'"),
    (["explain", "examples/hybrid.py", "--dims", "batch=4"], "no size for dims"),
    (["explain", "examples/hybrid.py", "--dims", "batch=3,length=8,d_model=16,d_ff=64"], "does not divide"
     if False else "do not divide"),
    (["verify", "examples/hybrid.py::nope"], "no @mesh function named 'nope'"),
    (["explain", "examples/hybrid.py", "--dims", "batch"], "is not NAME=SIZE"),
])
def test_bad_explain_and_verify_input_exits_2(argv, message, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert message in result.output and "fix:" in result.output
    assert "Traceback" not in result.output


def test_explain_json_and_table() -> None:
    import json

    result = CliRunner().invoke(app, ["explain", str(ROOT / "examples" / "hybrid.py"), "--format", "json",
                                      "--dims", EXAMPLE_DIMS["hybrid.py"]])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)
    assert report["totals"]["collective_bytes_per_device"] == 2 * 8 * 16 * 4
    assert [c["kind"] for c in report["collectives"]] == ["psum"]
    assert report["args"][0]["tiling"][1].split()[1:] == ["batch0"] * 4
    table = CliRunner().invoke(app, ["explain", str(ROOT / "examples" / "hybrid.py"),
                                     "--dims", EXAMPLE_DIMS["hybrid.py"]])
    assert table.exit_code == 0 and "psum (all-reduce)" in table.output and "batch1" in table.output


def test_explain_imports_no_jax_and_is_fast(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import sys, time; t = time.perf_counter()\n"
            "from meshify.explain import explain_source\n"
            f"explain_source(open({str(ROOT / 'examples' / 'transformer_lm.py')!r}).read(), 'x.py', "
            "dict(batch=8, length=16, d_model=64, heads=8, d_head=8, d_ff=256, vocab=256, layers=2))\n"
            "assert 'jax' not in sys.modules, 'explain imported jax'\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_jaxtyping_hints_read_like_tensor_hints() -> None:
    source = ('import jax.numpy as jnp\nfrom jaxtyping import Array, Float, Int\nfrom meshify import Tensor, mesh\n\n'
              '@mesh(batch=2, model=4, rules={"vocab": "model"})\n'
              'def f(tokens: Int[Array, "batch length"], emb: Float[Array, "vocab d"],\n'
              '      w: Tensor["d e"]) -> Float[Array, "batch length e"]:\n'
              '    x: Float[Array, "batch length d"] = emb[tokens]\n'
              '    return x @ w\n')
    (report,) = explain_source(source, "j.py", dict(batch=4, length=8, vocab=16, d=8, e=4))
    assert [a.layout for a in report.args] == ["[batch/'batch', length]", "[vocab/'model', d]", "[d, e]"]
    assert report.args[0].integer
    assert [c.kind for c in report.collectives] == ["psum"]


HELPERS_WITH_IDS_AND_KEYS = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


def embed(table, ids):
    return table[ids]


def noisy(x, key):
    return x + 0.1 * jax.random.normal(key, x.shape)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(tokens: Tensor["batch", "length"], table: Tensor["vocab", "d_model"],
      key: Tensor[()]) -> Tensor["batch", "length", "d_model"]:
    x: Tensor["batch", "length", "d_model"] = embed(table, tokens)
    return noisy(x, key)
'''


def test_verify_feeds_integers_and_keys_to_parameters_only_helpers_use_as_such(tmp_path: Path) -> None:
    path = tmp_path / "helpers_ids.py"
    path.write_text(HELPERS_WITH_IDS_AND_KEYS)
    from meshify.explain import parse_dims

    (report,) = verify_file(path, None, parse_dims("batch=4,length=8,vocab=16,d_model=8"))
    assert report.ok, report


def test_verify_uses_static_defaults_and_refuses_statics_without_one(tmp_path: Path) -> None:
    source = HELPERS_WITH_IDS_AND_KEYS.replace("key: Tensor[()])", "key: Tensor[()], scale=2.0)").replace(
        "return noisy(x, key)", "return noisy(x, key) * scale")
    path = tmp_path / "statics.py"
    path.write_text(source)
    args = ["verify", str(path), "--dims", "batch=4,length=8,vocab=16,d_model=8"]
    assert CliRunner().invoke(app, args).exit_code == 0
    path.write_text(source.replace("scale=2.0)", "scale)"))
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "error[MSH072]" in result.output and "(scale)" in result.output
    assert f"{path}:" in result.output and "^^^^^" in result.output
    assert ("fix: pass a value for each: --static scale=VALUE (a Python literal), give it a default, or give the "
            "function an example: @mesh(..., example={'scale': VALUE})") in result.output
    assert CliRunner().invoke(app, [*args, "--static", "scale=2.0"]).exit_code == 0


def test_a_loop_explain_cannot_count_is_named_where_it_is() -> None:
    """The loop inside a helper, by its own line and iterable (not the line of a collective under it)."""
    from meshify.errors import AnnotationError

    source = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh


def stack(x, w):
    for _ in range(round(x.ndim / 2)):
        x = x @ w
    return x


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d"]) -> Tensor["batch", "d"]:
    return stack(x, w)
'''
    with pytest.raises(AnnotationError, match=re.escape("`for ... in range(round(x.ndim / 2))` at line 6 (in stack)")):
        explain_source(source, "loops.py", {"batch": 4, "d": 8})


def test_a_namedtuple_config_default_is_read_and_one_with_other_defaults_is_not() -> None:
    source = '''\
from typing import NamedTuple
import jax.numpy as jnp
from meshify import Tensor, mesh


class Config(NamedTuple):
    layers: int = 2
    dtype: object = jnp.float32


class Plain(NamedTuple):
    layers: int = 3
    scale: float = 0.5


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d"], cfg: Config = Config()) -> Tensor["batch", "d"]:
    for _ in range(2):
        x = x @ w
    return x


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "d"], cfg: Plain = Plain(layers=4)) -> Tensor["batch", "d"]:
    for _ in range(cfg.layers):
        x = x @ w * cfg.scale
    return x
'''
    f, g = explain_source(source, "configs.py", {"batch": 4, "d": 8})
    assert f.collectives  # Config's dtype default is no literal: the config is not read (and nothing fails)
    assert max(c.count for c in g.collectives) == 4  # Plain(layers=4): the loop runs 4 times, not 3


_GRAD_STEP = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


def loss_fn(w, x):
    return jnp.mean(jnp.tanh(x @ w) ** 2)


@mesh(batch=2, model=4, rules={RULES})
def step(w: Tensor["d", "d_ff"], x: Tensor["batch", "d"]):
    BODY
'''


@pytest.mark.parametrize("rules, body", [
    ('"d_ff": "model"', "loss, g = jax.value_and_grad(loss_fn)(w, x)\n    return loss, w - 0.1 * g"),
    ('"d_ff": "model", "d": "batch"', "loss, g = jax.value_and_grad(loss_fn)(w, x)\n    return loss, w - 0.1 * g"),
    ('"d_ff": "model"', "g = jax.jit(jax.grad(loss_fn))(w, x)\n    loss, (gw, gx) = "
                        "jax.value_and_grad(loss_fn, argnums=(0, 1))(w, x)\n    return loss, w - g - gw, gx"),
    ('"d_ff": "model"', "loss, g = jax.value_and_grad(lambda v: jnp.mean(jnp.tanh(x @ v) ** 2))(w)\n    "
                        "return loss, w - 0.1 * g"),
    ('"d_ff": "model"', "g = jax.grad(lambda v: jnp.mean(jnp.tanh(x @ v) ** 2))(w)\n    return w - 0.1 * g"),
], ids=["data-parallel", "fsdp", "the-same-gradient-twice", "batch-in-a-closure", "grad-drops-the-loss-psum"])
def test_explain_counts_what_a_gradient_inside_the_function_adds(rules: str, body: str, tmp_path: Path) -> None:
    """``jax.value_and_grad`` inside a @mesh function: the psum of a weight's cotangents over the axes the loss varies
    over (shard_map's transpose), and an all-gathered weight's reduce-scatter back, counted as the HLO holds them
    (before, verify reported FAILED on a correct training step: found by the attack on today's forms)."""
    from meshify.explain import parse_dims
    from meshify.verify import verify_file

    path = tmp_path / "step.py"
    path.write_text(_GRAD_STEP.replace("RULES", rules).replace("BODY", body))
    (report,) = verify_file(path, None, parse_dims("batch=8,d=16,d_ff=32"))
    assert report.results_agree and report.prediction_matches, (report.predicted, report.found)


_PYTREE_GRAD_STEP = '''\
from typing import NamedTuple

import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


class Pair(NamedTuple):
    a: Tensor["d", "f"]
    b: Tensor["d", "f"]


@mesh(batch=8)
def step(p: Pair, x: Tensor["batch", "d"]):
    loss, g = jax.value_and_grad(lambda q: jnp.mean(jnp.tanh(x @ q.a) * jnp.tanh(x @ q.b)))(p)
    return loss, jax.tree.map(lambda v, d: v - 0.1 * d, p, g)
'''


def test_explain_counts_the_gradient_psum_of_every_leaf_of_a_pytree(tmp_path: Path) -> None:
    """Two leaves of one layout in a differentiated pytree: a psum each (before, the second was taken for the
    first asked again and counted 0 bytes); the batch the loss reads from outside its argument counts as varying."""
    from meshify.explain import parse_dims
    from meshify.verify import verify_file

    path = tmp_path / "step.py"
    path.write_text(_PYTREE_GRAD_STEP)
    (report,) = verify_file(path, None, parse_dims("batch=8,d=16,f=32"))
    assert report.results_agree and report.prediction_matches, (report.predicted, report.found)
    assert report.predicted["all-reduce"][1] == 2 * 16 * 32 * 4 + 4, report.predicted  # (the loss: 4 bytes)


NORM_BEFORE_COLUMN_PARALLEL = '''
from typing import NamedTuple

import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


class Params(NamedTuple):
    g: Tensor["d"]
    w1: Tensor["d", "f"]
    w2: Tensor["f", "d"]


def rms(x, g):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


def loss_fn(p: Params, x: Tensor["batch", "d"]):
    y = jax.nn.gelu(rms(x, p.g) @ p.w1) @ p.w2
    return jnp.mean((y - x) ** 2)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def step(p: Params, x: Tensor["batch", "d"]):
    loss, grads = jax.value_and_grad(loss_fn)(p, x)
    return loss, jax.tree.map(lambda w, g: w - 0.1 * g, p, grads)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def by_lambda(p: Params, x: Tensor["batch", "d"]):
    return jax.grad(lambda q: loss_fn(q, x))(p)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def frozen_norm(p: Params, x: Tensor["batch", "d"]):
    return jax.grad(loss_fn, argnums=1)(p, x)
'''


def test_verify_counts_the_backward_psum_of_an_activation_cotangent(tmp_path: Path) -> None:
    """A normalised activation whole over 'model' meets a column-parallel weight split over it: JAX broadcasts
    it, and the backward pass sums its cotangent over 'model' (a [batch/data, d] block).  explain counted only
    the parameters' all-reduces, so verify of such a training step said FAILED (session 27's note)."""
    from meshify.explain import parse_dims

    path = tmp_path / "norm_step.py"
    path.write_text(NORM_BEFORE_COLUMN_PARALLEL)
    reports = verify_file(path, None, parse_dims("batch=8,d=16,f=32"))
    assert [r.name for r in reports] == ["step", "by_lambda", "frozen_norm"]
    for r in reports:
        assert r.results_agree and r.prediction_matches, (r.name, r.predicted, r.found)


NORM_IN_LOOP_BODIES = """
import jax
import jax.numpy as jnp

from meshify import Tensor, mesh


def rms(h):
    return h / jnp.sqrt(jnp.mean(h * h, axis=-1, keepdims=True) + 1e-6)


@mesh(batch=2, model=4, rules={"f": "model"})
def scanned(x: Tensor["batch", "d"], w1: Tensor["layers", "d", "f"], w2: Tensor["layers", "f", "d"]):
    def loss(w1, w2):
        def body(h, ws):
            a, b = ws
            return h + jnp.tanh(rms(h) @ a) @ b, None
        h, _ = jax.lax.scan(body, x, (w1, w2))
        return jnp.mean(h ** 2)
    return jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)


@mesh(batch=2, model=4, rules={"f": "model"})
def by_lambda(x: Tensor["batch", "d"], w1: Tensor["layers", "d", "f"], w2: Tensor["layers", "f", "d"]):
    def loss(w1, w2):
        h, _ = jax.lax.scan(lambda h, ws: (h + jnp.tanh(rms(h) @ ws[0]) @ ws[1], None), x, (w1, w2))
        return jnp.mean(h ** 2)
    return jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)


@mesh(batch=2, model=4, rules={"f": "model"})
def fori(x: Tensor["batch", "d"], a: Tensor["d", "f"], b: Tensor["f", "d"]):
    def loss(a, b):
        def body(i, h):
            return h + jnp.tanh(rms(h) @ a) @ b
        return jnp.mean(jax.lax.fori_loop(0, 3, body, x) ** 2)
    return jax.grad(loss, argnums=(0, 1))(a, b)


@mesh(batch=2, model=4, rules={"f": "model"})
def zero_carry(x: Tensor["batch", "d"], w1: Tensor["layers", "d", "f"], w2: Tensor["layers", "f", "d"]):
    def loss(w1, w2):
        def body(h, ws):
            a, b = ws
            return h + jnp.tanh(rms(h + x) @ a) @ b, None
        h, _ = jax.lax.scan(body, jnp.zeros_like(x), (w1, w2))
        return jnp.mean(h ** 2)
    return jax.grad(loss, argnums=(0, 1))(w1, w2)
"""


def test_verify_counts_the_backward_psums_inside_loop_bodies(tmp_path: Path) -> None:
    """The activation's cotangent psum inside a scan / fori_loop body (a def or a lambda) that a loss differentiates
    through: the body's carry and xs parameters have cotangents when what feeds them does (the carry too when the
    body adds a weight into one that starts from zeros).  They took cotangents only from what the body closed
    over, so the psums inside were not counted (predicted 132 B of 388 B; session 28's note)."""
    from meshify.explain import parse_dims

    path = tmp_path / "norm_loops.py"
    path.write_text(NORM_IN_LOOP_BODIES)
    reports = verify_file(path, None, parse_dims("batch=4,d=8,f=16,layers=3"))
    assert [r.name for r in reports] == ["scanned", "by_lambda", "fori", "zero_carry"]
    for r in reports:
        assert r.results_agree and r.prediction_matches, (r.name, r.predicted, r.found)



def test_explain_sizes_the_dims_reshapes_make_from_the_sizes_it_is_given() -> None:
    """A window partition's dims (``x.reshape(B, H // ws, ws, W // ws, ws, C)``, then ``.reshape(-1, ws * ws, C)``)
    are named by meshify, which cannot know their sizes before the call; explain sizes them from the --dims it is
    given and the sizes' arithmetic (``H // ws``, a -1 as what the others leave), where it asked for them under
    names a user cannot guess ('batch_h_w_0_h_w_2_ws_ws_2_0?'), and its bytes are the HLO's."""
    from meshify.explain import parse_dims

    path = ROOT / "tests" / "soundness" / "swin_window_sizes_as_literals.py"
    reports = verify_file(path, None, parse_dims("batch=4,h=8,w=8,dim=16,qkv_out=48,inner=16,heads=4,rel=49"))
    assert [r.name for r in reports] == ["f"]
    assert reports[0].results_agree and reports[0].prediction_matches, (reports[0].predicted, reports[0].found)
    assert reports[0].found == {"collective-permute": (2, 4096), "all-reduce": (1, 8192)}


def test_explain_counts_an_associative_scan_across_devices_as_one_all_gather_of_totals_per_leaf() -> None:
    """``jax.lax.associative_scan`` along a split time axis (``mr.associative_scan``): each leaf's block totals
    gathered once, as explain predicts and the HLO holds (pairs: two all-gathers, a single array: one)."""
    from meshify.explain import parse_dims

    path = ROOT / "tests" / "soundness" / "associative_scan_across_devices.py"
    reports = {r.name: r for r in verify_file(path, None, parse_dims("batch=4,time=16,state=6"))}
    for name, gathers in (("ssm", 4), ("ssm8", 2)):
        r = reports[name]
        assert r.results_agree and r.prediction_matches, (name, r.predicted, r.found)
        assert r.found["all-gather"][0] == gathers, (name, r.found)
