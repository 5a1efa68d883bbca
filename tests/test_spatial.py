"""Spatial parallelism, numerically: convolutions over images split along batch, features, height and width,
through ``@mesh`` and a converted file, forward and gradients, against ``.reference``.

Meshes: 8 (one split spatial dim), 2x4 (height x width), 2x2x2 (batch x height x width).  The sweep over
kernel sizes 1, 3, 5, 7, strides 1 and 2, dilations 1 and 2 and SAME / causal padding is marked slow (a
fixed sample runs by default; MESHIFY_SLOW=1 runs it all)."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshify.errors import MeshifyError
from meshify.rewrite import convert_source

MESHES = {
    "8": ("h=8", 'rules={"w": None}'),
    "2x4": ("h=2, w=4", ""),
    "2x2x2": ("batch=2, h=2, w=2", ""),
}

PROGRAM = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh({mesh})
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"],
      b: Tensor["d"]) -> Tensor["batch", "h", "w", "d"]:
    y = jax.lax.conv_general_dilated(x, k, ({s}, {s}), {padding}, rhs_dilation=({d}, {d}),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(y + b)
'''


def _load(source: str, tmp_path: Path, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _program(tmp_path: Path, mesh: str, k: int, s: int, d: int, padding: str, converted: bool):
    axes, rules = MESHES[mesh]
    head = ", ".join(p for p in (axes, rules) if p)
    pad = '"SAME"' if padding == "SAME" else f"[({(k - 1) * d - s + 1}, 0), ({(k - 1) * d - s + 1}, 0)]"
    source = textwrap.dedent(PROGRAM).format(mesh=head, s=s, d=d, padding=pad)
    name = f"conv_{mesh.replace('x', '_')}_{k}_{s}_{d}_{padding}_{tmp_path.name}"
    original = _load(source, tmp_path, name)
    if not converted:
        return original.f, original.f.reference
    generated = convert_source(source, f"{name}.py").text
    return _load(generated, tmp_path, f"{name}_sharded").f, original.f.reference


def _inputs(k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((4, 16, 16, 3)).astype(np.float32),
            rng.standard_normal((k, k, 3, 4)).astype(np.float32) / k,
            rng.standard_normal((4,)).astype(np.float32))


def _check(fn, reference, args) -> None:
    got, want = fn(*args), reference(*args)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)

    def loss(f):
        return lambda *a: jnp.sum(jnp.sin(f(*a)))

    for g, r in zip(jax.grad(loss(fn), argnums=(0, 1, 2))(*args), jax.grad(loss(reference), argnums=(0, 1, 2))(*args)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-4, atol=1e-4)


CASES = [(m, k, s, d, p) for m, k, s, d, p in itertools.product(MESHES, (1, 3, 5, 7), (1, 2), (1, 2), ("SAME", "causal"))
         if (k - 1) * d - s + 1 >= 0 or p == "SAME"]


def _fits(mesh: str, k: int, s: int, d: int, padding: str) -> bool:
    """Whether each block (16 rows over the dim's shards) holds its halo: else meshify refuses at the call."""
    shards = {"8": 8, "2x4": 4, "2x2x2": 2}[mesh]
    window = (k - 1) * d + 1
    lo = (window - s) // 2 if padding == "SAME" else window - s
    return max(lo, window - s - lo) <= 16 // shards


#: The default run: each mesh, both paths, a 3x3 kernel; stride 2, dilation 2 and causal padding once each.
FAST = [("8", 3, 1, 1, "SAME"), ("2x4", 3, 2, 1, "SAME"), ("2x2x2", 3, 1, 2, "SAME"), ("2x4", 3, 1, 1, "causal"),
        ("2x4", 1, 2, 1, "SAME")]


@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("mesh, k, s, d, padding", FAST)
def test_conv_matches_one_device(mesh, k, s, d, padding, path, tmp_path: Path) -> None:
    fn, reference = _program(tmp_path, mesh, k, s, d, padding, path == "converted")
    _check(fn, reference, _inputs(k))


@pytest.mark.slow
@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("mesh, k, s, d, padding", [c for c in CASES if c not in FAST])
def test_conv_sweep_matches_one_device_or_is_refused(mesh, k, s, d, padding, path, tmp_path: Path) -> None:
    fn, reference = _program(tmp_path, mesh, k, s, d, padding, path == "converted")
    args = _inputs(k)
    if not _fits(mesh, k, s, d, padding):
        with pytest.raises(MeshifyError, match="halo"):
            fn(*args)
        return
    _check(fn, reference, args)


def test_a_halo_wider_than_a_block_is_refused_at_the_call(tmp_path: Path) -> None:
    fn, _ = _program(tmp_path, "8", 7, 1, 1, "SAME", False)
    with pytest.raises(MeshifyError, match="a halo must be at most one block"):
        fn(*_inputs(7))


def test_valid_padding_over_a_split_dim_of_unknown_window_is_refused_at_the_call(tmp_path: Path) -> None:
    source = textwrap.dedent(PROGRAM).format(mesh="h=8", s=1, d=1, padding='"VALID"')
    fn = _load(source, tmp_path, f"conv_valid_{tmp_path.name}").f
    with pytest.raises(MeshifyError, match="do not split into 8 blocks"):
        fn(*_inputs(3))


def test_valid_padding_with_a_split_batch_matches(tmp_path: Path) -> None:
    source = textwrap.dedent(PROGRAM).format(mesh='batch=2, model=4, rules={"d": "model"}', s=2, d=1,
                                             padding='"VALID"').replace('Tensor["batch", "h", "w", "d"]:',
                                                                        'Tensor["batch", "h", "w", "d"]:')
    module = _load(source, tmp_path, f"conv_valid_batch_{tmp_path.name}")
    _check(module.f, module.f.reference, _inputs(3))


def test_the_compiled_program_holds_one_collective_permute_per_side_and_corner(tmp_path: Path) -> None:
    from meshify.runtime import hlo

    fn, _ = _program(tmp_path, "2x4", 3, 1, 1, "SAME", False)
    args = _inputs(3)
    found = hlo.summarize(hlo.collectives(fn.lower(*args).compile().as_text()))
    # 4 sides + 4 corners, 1 row / column / cell each, of [4 images, ., ., 3 channels] float32 blocks of 8 x 4.
    count, size = found["collective-permute"]
    assert count == 8 and size == 4 * 3 * 4 * (8 + 8 + 4 + 4 + 4 * 1), found
    assert set(found) == {"collective-permute"}, found
