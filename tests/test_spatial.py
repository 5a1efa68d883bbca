"""Spatial parallelism, numerically: convolutions over images split along batch, features, height and width,
through ``@mesh`` and a converted file, forward and gradients, against ``.reference``.

Meshes: 8 (one split spatial dim), 2x4 (height x width), 2x2x2 (batch x height x width).  The sweep over
kernel sizes 1, 3, 5, 7, strides 1 and 2, dilations 1 and 2 and SAME / VALID / causal padding is marked slow (a
daily sample runs by default; MESHIFY_SLOW=1 runs it all), and so is the same sweep of max and average pooling
(``jax.lax.reduce_window`` with window dilation).  A VALID window (or a stride) that shrinks a split dim off the shard
boundaries has its output re-blocked: each device reads the rows its windows cover from its neighbours.  Where
the blocks cannot hold a case (its output rows do not split evenly, or a device would read beyond its direct
neighbours) meshify must refuse it with a MeshifyError, as :func:`_refusal` predicts."""

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
    pad = f'"{padding}"' if padding in ("SAME", "VALID") else f"[({(k - 1) * d - s + 1}, 0), ({(k - 1) * d - s + 1}, 0)]"
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


CASES = [(m, k, s, d, p) for m, k, s, d, p in itertools.product(MESHES, (1, 3, 5, 7), (1, 2), (1, 2),
                                                                 ("SAME", "VALID", "causal"))
         if (k - 1) * d - s + 1 >= 0 or p != "causal"]
SHARDS = {"8": (8,), "2x4": (2, 4), "2x2x2": (2, 2)}  # the blocks of h, then of w


def _refusal(mesh: str, window: int, s: int, padding: str, rows: int = 16) -> str | None:
    """What meshify must say refusing a window of ``window`` rows (dilation included) and stride ``s``
    over ``rows`` rows split into the mesh's blocks (h, then w), or None where each block computes its
    block of the global output.  Each device computes an equal block of the global output rows, so they
    must split evenly into the blocks; each device reads the rows its windows cover (padding included),
    which must lie in its own block and its direct neighbours'."""
    if padding == "SAME":
        total = max((-(-rows // s) - 1) * s + window - rows, 0)
        lo = total // 2
    else:
        lo = 0 if padding == "VALID" else window - s
        total = lo
    out = (rows + total - window) // s + 1 if rows + total >= window else 0
    for shards in SHARDS[mesh]:
        if out <= 0 or out % shards:
            return "do not split into"
        block, out_block = rows // shards, out // shards
        for i in range(shards):  # device i reads rows [first, last) of the image (beyond it: padding)
            first = max(i * out_block * s - lo, 0)
            last = min(i * out_block * s - lo + (out_block - 1) * s + window, rows)
            if first < last and max(i * block - first, last - (i + 1) * block) > block:
                return "a halo must be at most one block"
    return None


#: The default run: each mesh, both paths, a 3x3 kernel; stride 2, dilation 2 and causal padding once each.
FAST = [("8", 3, 1, 1, "SAME"), ("2x4", 3, 2, 1, "SAME"), ("2x2x2", 3, 1, 2, "SAME"), ("2x4", 3, 1, 1, "causal"),
        ("2x4", 1, 2, 1, "SAME")]
#: VALID over a split spatial dim: a 1x1 kernel (each block's output is its own); 3x3 and 5x5 windows whose
#: shrunk output is re-blocked (14 rows in 2 blocks, 12 in 4), dilated and strided; 14 rows in 8 blocks and
#: a halo wider than a block refused.
VALID = [("2x4", 1, 1, 1, "VALID"), ("2x2x2", 1, 2, 1, "VALID"), ("2x2x2", 3, 1, 1, "VALID"), ("2x4", 5, 1, 1, "VALID"),
         ("2x2x2", 3, 2, 2, "VALID"), ("8", 3, 1, 1, "VALID"), ("2x4", 5, 2, 2, "VALID")]


@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("mesh, k, s, d, padding", FAST)
def test_conv_matches_one_device(mesh, k, s, d, padding, path, tmp_path: Path) -> None:
    fn, reference = _program(tmp_path, mesh, k, s, d, padding, path == "converted")
    _check(fn, reference, _inputs(k))


@pytest.mark.slow
@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("mesh, k, s, d, padding", [c for c in CASES if c not in FAST + VALID])
def test_conv_sweep_matches_one_device_or_is_refused(mesh, k, s, d, padding, path, tmp_path: Path) -> None:
    _sweep_case(mesh, k, s, d, padding, path, tmp_path)


def _sweep_case(mesh, k, s, d, padding, path, tmp_path: Path) -> None:
    args = _inputs(k)
    why = _refusal(mesh, (k - 1) * d + 1, s, padding)
    if why is not None:  # refused when converting (sizes known to the rule) or at the call
        with pytest.raises(MeshifyError, match=why):
            _program(tmp_path, mesh, k, s, d, padding, path == "converted")[0](*args)
        return
    _check(*_program(tmp_path, mesh, k, s, d, padding, path == "converted"), args)



@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("mesh, k, s, d, padding", VALID)
def test_valid_conv_matches_or_is_refused(mesh, k, s, d, padding, path, tmp_path: Path) -> None:
    _sweep_case(mesh, k, s, d, padding, path, tmp_path)


# -- pooling: the same sweep over jax.lax.reduce_window --------------------------------------------------------

POOL = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh({mesh})
def f(x: Tensor["batch", "h", "w", "c"]) -> Tensor["batch", "h", "w", "c"]:
    return jax.lax.reduce_window(x, {init}, {op}, (1, {k}, {k}, 1), (1, {s}, {s}, 1), {padding},
                                 window_dilation=(1, {d}, {d}, 1)){scale}
'''

POOLS = [(kind, m, k, s, d, p) for kind, m, k, s, d, p in itertools.product(("max", "avg"), MESHES, (1, 3, 5, 7), (1, 2),
                                                                            (1, 2), ("SAME", "VALID"))
         if k > 1 or d == 1]
#: The default run: max and average, each mesh, SAME and VALID, strides 1 and 2, a dilated window, a refusal.
POOLS_FAST = [("max", "2x4", 3, 2, 1, "SAME"), ("avg", "8", 3, 1, 1, "SAME"), ("max", "2x2x2", 5, 1, 2, "SAME"),
              ("avg", "2x4", 1, 2, 1, "VALID"), ("max", "8", 7, 1, 1, "SAME"), ("avg", "2x2x2", 3, 2, 1, "VALID")]


def _pool_case(kind: str, mesh: str, k: int, s: int, d: int, padding: str, path: str, tmp_path: Path) -> None:
    axes, rules = MESHES[mesh]
    source = POOL.format(mesh=", ".join(p for p in (axes, rules) if p), k=k, s=s, d=d, padding=f'"{padding}"',
                         init="-jnp.inf" if kind == "max" else "0.0", op=f"jax.lax.{'max' if kind == 'max' else 'add'}",
                         scale="" if kind == "max" else f" / {k * k}.0")
    name = f"pool_{kind}_{mesh.replace('x', '_')}_{k}_{s}_{d}_{padding}_{tmp_path.name}"
    original = _load(source, tmp_path, name)

    def sharded():
        if path == "decorator":
            return original.f
        return _load(convert_source(source, f"{name}.py").text, tmp_path, f"{name}_sharded").f

    x = _inputs(1)[0]
    why = _refusal(mesh, (k - 1) * d + 1, s, padding)
    if why is not None:  # refused when converting (sizes known to the rule) or at the call
        with pytest.raises(MeshifyError, match=why):
            sharded()(x)
        return
    fn = sharded()
    got, want = fn(x), original.f.reference(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    if kind == "max" and d > 1:
        return  # JAX has no VJP of a max pool with window dilation (select_and_gather), on one device either
    weights = np.arange(want.size, dtype=np.float32).reshape(want.shape) / want.size
    ref = jax.grad(lambda v: jnp.sum(jnp.sin(original.f.reference(v)) * weights))(x)
    grad = jax.grad(lambda v: jnp.sum(jnp.sin(fn(v)) * weights))(x)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(ref), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("kind, mesh, k, s, d, padding", POOLS_FAST)
def test_pool_matches_one_device_or_is_refused(kind, mesh, k, s, d, padding, path, tmp_path: Path) -> None:
    _pool_case(kind, mesh, k, s, d, padding, path, tmp_path)


# (Sessions before 2026-12-01 saw a max pool's gradient fail to trace once, after the 8-mesh cases, with an
# IndivisibleError naming mesh h=8. All 336 pool cases, decorator and converted, passed in one process in
# that order on 2026-12-01 (MESHIFY_SLOW=1 pytest -p no:xdist tests/test_spatial.py -k pool), so the
# sweep is sampled again and a failure shows; MESHIFY_SAMPLE reruns a CI sample that had one.)
@pytest.mark.slow
@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("kind, mesh, k, s, d, padding", [c for c in POOLS if c not in POOLS_FAST])
def test_pool_sweep_matches_one_device_or_is_refused(kind, mesh, k, s, d, padding, path, tmp_path: Path) -> None:
    _pool_case(kind, mesh, k, s, d, padding, path, tmp_path)


def test_a_halo_wider_than_a_block_is_refused_at_the_call(tmp_path: Path) -> None:
    fn, _ = _program(tmp_path, "8", 7, 1, 1, "SAME", False)
    with pytest.raises(MeshifyError, match="a halo must be at most one block"):
        fn(*_inputs(7))


@pytest.mark.parametrize("path", ["decorator", "converted"])
def test_a_call_time_refusal_points_at_the_statement_that_traced_it(path: str, tmp_path: Path) -> None:
    """Sizes only the call shows (no @mesh(dims=...)) refused while tracing: the error points at the
    convolution's statement, in the user's file (decorator) or in the converted file it runs."""
    fn, _ = _program(tmp_path, "8", 7, 1, 1, "SAME", path == "converted")
    with pytest.raises(MeshifyError) as info:
        fn(*_inputs(7))
    span = info.value.span
    assert span is not None, str(info.value)
    if path == "decorator":
        assert span.path.endswith(f"_{tmp_path.name}.py") and span.line == 9, str(info.value)
        assert "y = jax.lax.conv_general_dilated(" in span.source_line, str(info.value)
    else:
        assert span.path.endswith("_sharded.py") and "mr.halo_conv(" in span.source_line, str(info.value)
    assert str(info.value).startswith(f"{span.path}:{span.line}:{span.col}: error[MSH050]"), str(info.value)


def test_valid_padding_over_a_split_dim_of_unknown_window_is_refused_at_the_call(tmp_path: Path) -> None:
    source = textwrap.dedent(PROGRAM).format(mesh="h=8", s=1, d=1, padding='"VALID"')
    fn = _load(source, tmp_path, f"conv_valid_{tmp_path.name}").f
    with pytest.raises(MeshifyError, match="14 output rows, which do not split into 8 equal blocks"):
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
