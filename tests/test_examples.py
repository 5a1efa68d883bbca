"""Every example runs on 8 simulated CPU devices, matches .reference and communicates as promised."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from meshify import Tensor, mesh

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# Example -> the collectives of its compiled forward program: kind -> (count, result shapes).
EXPECTED = {
    "linear": {"all-reduce": (1, "f32[2,8]")},
    "data_parallel": {},
    "ffn_model_parallel": {"all-reduce": (1, "f32[8,16]")},
    "hybrid": {"all-reduce": (1, "f32[2,8,16]")},  # the per-device [batch/2, length, d_model] activation
}

_LINE = re.compile(r"^  (?P<kind>[a-z-]+) x(?P<count>\d+): (?P<shapes>.*) \((?P<bytes>\d+) bytes per device\)$")


@functools.cache
def _run(name: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}  # the example sets up its own devices
    return subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], cwd=EXAMPLES.parent, env=env,
                          capture_output=True, text=True, timeout=300)


def _forward_collectives(stdout: str) -> dict[str, tuple[int, str]]:
    lines = stdout.splitlines()
    start = lines.index("collectives in the compiled forward program:") + 1
    found = {}
    for line in lines[start:]:
        if line == "  none":
            break
        match = _LINE.match(line)
        if match is None:
            break
        found[match["kind"]] = (int(match["count"]), match["shapes"])
    return found


#: Examples with a training loop of their own, run by their own tests (tests/test_transformer.py, ...).
TRAINING = {"transformer_lm", "gpt2", "gpt2_plain", "unet"}


def test_every_example_is_covered():
    examples = {p.stem for p in EXAMPLES.glob("*.py") if not p.stem.startswith("_")}
    assert examples - TRAINING == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example(name):
    result = _run(name)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "mesh: " in result.stdout
    assert "max abs difference from .reference (output): " in result.stdout
    assert _forward_collectives(result.stdout) == EXPECTED[name], result.stdout


def test_unet_trains_on_split_images_as_on_one_device():
    """examples/unet.py: images split over height and width on 2x4; halo exchanges only (collective-permutes)
    and the psums of group norm and the loss; every step's loss within 1e-4 (relative) of one device."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    result = subprocess.run([sys.executable, str(EXAMPLES / "unet.py"), "--steps", "3", "--reference"],
                            cwd=EXAMPLES.parent, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    found = _forward_collectives(result.stdout)
    assert set(found) == {"collective-permute", "all-reduce"}, result.stdout
    assert found["collective-permute"][0] == 40, result.stdout  # 5 3x3 convolutions x (4 sides + 4 corners)
    worst = float(re.search(r"from one-device training: (\S+)", result.stdout)[1])
    assert worst <= 1e-4, result.stdout


def test_data_parallel_checks_gradients():
    result = _run("data_parallel")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("w1", "b1", "w2"):
        assert f"max abs difference from .reference (grad {name}): " in result.stdout


@mesh(batch=2, model=4, rules={"d_in": "model"})
def _linear(x: Tensor["batch", "d_in"], w: Tensor["d_in", "d_out"]) -> Tensor["batch", "d_out"]:
    return x @ w


def _report_module():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import _report
    finally:
        sys.path.remove(str(EXAMPLES))
    return _report


def test_report_exits_non_zero_when_the_result_is_wrong(capsys):
    report = _report_module().report
    args = (np.ones((4, 8), np.float32), np.ones((8, 2), np.float32))
    assert report(_linear, args) == 0
    _ = _linear.sharded  # rewrite from the true source, then make .reference disagree
    right = _linear.reference
    try:
        _linear.reference = lambda x, w: right(x, w) * 1.01
        assert report(_linear, args) == 1
    finally:
        _linear.reference = right
    assert "FAILED: output differs from .reference" in capsys.readouterr().out


def test_tolerance_is_relative_for_large_values():
    compare = _report_module().compare
    assert compare([1.0, 2.0], [1.0, 2.0]) == (0.0, True)
    assert compare([1.0, 2.5], [1.0, 2.0]) == (0.5, False)
    assert compare([1000.0, 2000.05], [1000.0, 2000.0])[1]
    assert not compare([np.nan], [1.0])[1]


def test_readme_shows_the_real_generated_code():
    from meshify.rewrite import convert_source

    readme = (EXAMPLES.parent / "README.md").read_text()
    text = convert_source((EXAMPLES / "hybrid.py").read_text(), "examples/hybrid.py").text
    generated = text[text.index("@mr.sharded("):text.index("\n\n\ndef main")]
    assert f"```python\n{generated}\n```" in readme
