"""Window and re-blocking ops along split spatial dims (rules/spatial.py, runtime/_spatial.py): pooling,
``jnp.pad``, slices, ``jnp.roll``, ``jnp.flip``, ``jnp.repeat``, ``jax.image.resize``, skip concatenation
and group norm over split height and width.

As text: what each becomes and which exchanges it records; what is refused, at its place.  Numerically:
through ``@mesh`` and a converted file, forward and gradients, against ``.reference`` on meshes 8 (height),
2x4 (height x width) and 2x2x2 (batch x height x width); a daily sample by default, every op on every mesh
with MESHIFY_SLOW=1.  And that ``explain`` predicts the collective-permutes the compiled HLO holds."""

from __future__ import annotations

import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshify.errors import MeshifyError, UnsupportedError
from meshify.rewrite import convert_source
from tests.rules._rewrite import assert_rewrite, rewrite
from tests.test_spatial import _load

X = 'x: Tensor["batch", "h", "w", "c"]'
OUT = 'Tensor["batch", "h", "w", "c"]'
SIZES = 'dims={"h": 16, "w": 16}'


# -- as text --------------------------------------------------------------------------------------------------


def test_a_pool_aligned_with_the_blocks_exchanges_nothing() -> None:
    assert_rewrite('return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")', """
        return mr.halo_reduce_window(x, init_value=-jnp.inf, computation=jax.lax.max, window_dimensions=(1, 2, 2, 1), window_strides=(1, 2, 2, 1), padding="VALID", spatial_axes=(None, "h", "w", None))
        """, X, OUT, mesh="h=2, w=4")


def test_a_same_pool_exchanges_one_row_each_side_and_the_corners() -> None:
    got = rewrite('return jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9',
                  X, OUT, mesh="h=2, w=4").splitlines()
    assert len(got) == 9 and got[0].startswith("# meshify: halo over 'h': 1 row of 'x' before its block"), got
    assert "the top-left corner" in got[4] and got[-1].startswith("return mr.halo_reduce_window(x, init_value=0.0"), got


def test_pad_reblocks_with_the_rows_each_block_needs() -> None:
    assert_rewrite("return jnp.pad(x, ((0, 0), (2, 2), (4, 4), (0, 0)))", """
        # meshify: halo over 'w': 2 rows of 'x' along split 'w', before its new block after jnp.pad, from the previous device (ppermute)
        # meshify: halo over 'w': 2 rows of 'x' along split 'w', after its new block after jnp.pad, from the next device (ppermute)
        return mr.spatial_pad(x, pad_width=((0, 0), (2, 2), (4, 4), (0, 0)), spatial_axes=(None, "h", "w", None))
        """, X, OUT, mesh=f"h=2, w=4, {SIZES}")


def test_pad_constant_values_reach_the_border_devices_and_sum_a_partial_first() -> None:
    assert rewrite("return jnp.pad(x, ((0, 0), (2, 2), (0, 0), (0, 0)), constant_values=((0, 0), (1, 2), (0, 0), "
                   "(0, 0)))", X, OUT, mesh="h=2, w=4").splitlines()[-1] == (
        "return mr.spatial_pad(x, pad_width=((0, 0), (2, 2), (0, 0), (0, 0)), constant_values=((0, 0), (1, 2), (0, 0), "
        '(0, 0)), spatial_axes=(None, "h", "w", None))')
    partial = "s = jnp.sum(x, axis=1)\nreturn jnp.pad(s, ((0, 0), (0, 0), (1, 1)), {})"
    out = 'Tensor["batch", "w", "c"]'
    assert "mr.psum(s" in rewrite(partial.format("constant_values=1.0"), X, out, mesh="h=2, w=4")
    assert "mr.psum(s" in rewrite(partial.format('mode="maximum"'), X, out, mesh="h=2, w=4")
    assert "mr.psum(s" not in rewrite(partial.format('mode="edge"'), X, out, mesh="h=2, w=4")


def test_pad_of_unsplit_dims_and_repeat_stay_as_written() -> None:
    body = 'y: Tensor["batch", "h", "w", "c"] = jnp.repeat(jnp.pad(x, ((0, 0), (0, 0), (0, 0), (1, 1))), 2, axis=1)'
    assert_rewrite(f"{body}\nreturn y", f"{body}\nreturn y", X, OUT, mesh="h=2, w=4")


def test_a_slice_of_split_dims_is_reblocked_then_the_rest_indexed() -> None:
    assert_rewrite("return x[:, 2:-2, 4:-4]", """
        # meshify: halo over 'w': 2 rows of 'x' along split 'w', before its new block after the slice, from the previous device (ppermute)
        # meshify: halo over 'w': 2 rows of 'x' along split 'w', after its new block after the slice, from the next device (ppermute)
        return mr.spatial_slice(mr.spatial_slice(x, 1, 2, -2, axis_name="h"), 2, 4, -4, axis_name="w")
        """, X, OUT, mesh=f"h=2, w=4, {SIZES}")
    assert rewrite("return x[0, 2:-2, :, 1:]", X, 'Tensor["h", "w", "c"]', mesh=f"h=2, w=4, {SIZES}") == \
        'return mr.spatial_slice(x, 1, 2, -2, axis_name="h")[0, :, :, 1:]'


def test_a_slice_that_is_a_section_moves_in_chunks_as_jnp_split() -> None:
    # (the first half of 'w', split over 4 devices: the last device's rows lie two blocks back)
    got = rewrite("return x[:, :, :8] * 2.0", X, 'Tensor["batch", "h", "w2", "c"]', mesh=f"h=2, w=4, {SIZES}")
    assert got.splitlines()[0].startswith("# meshify: sections over 'w': the slice [0:8] of 'x' is a section of "
                                          "split 'w'"), got
    assert 'mr.spatial_slice(x, 2, None, 8, axis_name="w") * 2.0' in got.splitlines()[-1], got
    with pytest.raises(UnsupportedError, match="beyond the neighbouring device"):  # (from row 1: no section)
        rewrite("return x[:, :, 1:9]", X, 'Tensor["batch", "h", "w2", "c"]', mesh=f"h=2, w=4, {SIZES}")


def test_roll_wraps_round_and_flip_swaps_with_the_mirror_device() -> None:
    got = rewrite("return jnp.roll(x, (1, 5), axis=(1, 2))", X, OUT, mesh=f"h=2, w=4, {SIZES}").splitlines()
    assert got[0].startswith("# meshify: halo over 'h': 1 row of 'x'") and "its block of 'x'" in got[1], got
    assert got[-1] == 'return mr.spatial_roll(x, shift=(1, 5), axis=(1, 2), spatial_axes=(None, "h", "w", None))'
    assert_rewrite("return jnp.flip(x, axis=1)", """
        # meshify: halo over 'h': its block of 'x' along split 'h', from the mirror device (then flipped locally) (ppermute)
        return mr.spatial_flip(x, axis=1, spatial_axes=(None, "h", "w", None))
        """, X, OUT, mesh="h=2, w=4")


def test_fliplr_flipud_and_a_step_of_minus_one_flip_as_jnp_flip_does() -> None:
    for body in ("return jnp.fliplr(x)", "return x[:, ::-1]"):
        got = rewrite(body, X, OUT, mesh="h=2, w=4").splitlines()
        assert "from the mirror device" in got[0] and got[-1].startswith("return mr.spatial_flip(x, axis=1, "), got
    assert rewrite("return jnp.flipud(x)", X, OUT, mesh="h=2, w=4") == "return jnp.flipud(x)"  # (batch unsplit)


def test_linear_upsampling_takes_a_one_row_halo() -> None:
    got = rewrite('b, h, w, c = x.shape\nreturn jax.image.resize(x, (b, 2 * h, 2 * w, c), "bilinear")', X, OUT,
                  mesh="h=2, w=4").splitlines()
    assert len(got) == 6 and all("1 row of 'x'" in line for line in got[1:5]), got
    assert got[-1] == ('return mr.spatial_resize(x, shape=(b, 2 * h, 2 * w, c), method="bilinear", '
                       'spatial_axes=(None, "h", "w", None))'), got


@pytest.mark.parametrize("body, culprit, where", [
    ('return jnp.pad(x, ((0, 0), (1, 1), (0, 0), (0, 0)), mode="edge")', "do not split into 4 equal blocks",
     "case.py:9:24"),
    ('return jnp.pad(x, ((0, 0), (8, 0), (0, 0), (0, 0)), mode="wrap")', "more than a block of 4 rows",
     "case.py:9:24"),
    ('return jnp.pad(x, ((0, 0), (1, 1), (0, 0), (0, 0)), mode="maximum")', "mode=", "case.py:9:62"),
    ("return jnp.pad(x, ((0, 0), (1, 1), (0, 0), (0, 0)))", "do not split into 4 equal blocks", "case.py:9:24"),
    ("return x[:, ::3]", "takes 6 rows, which do not split into 4 equal blocks", "case.py:9:17"),
    ("return x[:, ::x.shape[0]]", "a nonzero int step it can read when rewriting", "case.py:9:19"),
    ("return x[:, ::0]", "with step 0", "case.py:9:19"),
    ("return x[:, 13:2:-1]", "takes 11 rows, which do not split into 4 equal blocks", "case.py:9:17"),
    ("return x[:, -3::-1]", "takes 14 rows, which do not split into 4 equal blocks", "case.py:9:17"),
    ("return x[:, :4:-1]", "takes 11 rows, which do not split into 4 equal blocks", "case.py:9:17"),
    ("return x[:, 14:1:-3]", "takes 5 rows, which do not split into 4 equal blocks", "case.py:9:17"),
    ("return x[:, 3::-1]", "more than its 4 rows", "case.py:9:17"),  # (row 3 of device 0's block goes to device 3)
    ("return x[:, 7:7:-1]", "takes no rows", "case.py:9:17"),
    ("return x[:, 7:7]", "takes no rows", "case.py:9:17"),
    ("return x[:, 1:-1]", "do not split into 4 equal blocks", "case.py:9:17"),
    ("return jnp.roll(x, 1)", "flattened", "case.py:9:12"),
    ("return jnp.repeat(x, 2)", "without a literal axis", "case.py:9:12"),
    ('return jax.image.resize(x, x.shape, "cubic")', "method=", "case.py:9:41"),
    ("return jnp.pad(x, ((0, 0), (4, 4), (0, 0), (0, 0)), constant_values=jnp.mean(x))", "an array",
     "case.py:9:73"),
    ('return jnp.pad(x, ((0, 0), (4, 4), (0, 0), (0, 0)), mode="reflect", reflect_type="odd")', "mode=",
     "case.py:9:62"),
    ("return jnp.pad(x, ((0, 0), (4, 4), (0, 0), (0, 0)), end_values=1.0)", "end_values=", "case.py:9:68"),
    ('return jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "VALID")', "padding='SAME'",
     "case.py:9:83"),
])
def test_what_cannot_split_evenly_is_refused_at_its_place(body: str, culprit: str, where: str) -> None:
    with pytest.raises(UnsupportedError) as info:
        rewrite(body, X, OUT, mesh='h=4, dims={"h": 16}')
    assert culprit in str(info.value) and where in str(info.value), str(info.value)


# -- numerically ----------------------------------------------------------------------------------------------

MESHES = {"8": "h=8", "2x4": "h=2, w=4", "2x2x2": "batch=2, h=2, w=2"}

PROGRAM = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh({mesh})
def f(x: Tensor["batch", "h", "w", "c"]) -> Tensor["batch", "h", "w", "c"]:
{body}
'''

GROUP_NORM = '''\
b, h, w, c = x.shape
g: Tensor["batch", "h", "w", "groups", "cg"] = x.reshape(b, h, w, 2, c // 2)
mean = jnp.mean(g, axis=(1, 2, 4), keepdims=True)
var = jnp.var(g, axis=(1, 2, 4), keepdims=True)
n: Tensor["batch", "h", "w", "groups", "cg"] = (g - mean) / jnp.sqrt(var + 1e-5)
y: Tensor["batch", "h", "w", "c"] = n.reshape(b, h, w, c)
return y'''

BATCH_NORM = '''\
mean = jnp.mean(x, axis=(0, 1, 2))
var = jnp.mean(jnp.square(x - mean), axis=(0, 1, 2))
return (x - mean) * jax.lax.rsqrt(var + 1e-5)'''

OPS = {
    "max_pool_3x3_same": 'return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")',
    "max_pool_2x2_stride_2": 'return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), '
                             '"VALID")',
    "avg_pool_3x3_stride_2": 'return jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 2, 2, 1), '
                             '"SAME") / 9.0',
    "max_pool_5x5_valid": 'return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 5, 5, 1), (1, 1, 1, 1), '
                          '"VALID")',
    "avg_pool_3x3_valid": 'return jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "VALID") / 9.0',
    "pad": "return jnp.pad(x, ((0, 0), (4, 4), (4, 4), (0, 0)))",
    "pad_constant": "return jnp.pad(x, ((0, 0), (4, 4), (4, 4), (1, 0)), constant_values=((0, 0), (1.0, 2.0), "
                    "(3.0, 4.0), (5.0, 6.0)))",
    "slice": "return x[:, 2:-2, 4:-4]",
    "strided_slice": "return x[:, 1::2, ::2] - x[:, ::2, 1::2]",
    "reversed_slice": "return x[:, 100:-100:-1, 13:1:-1] * 2.0",
    "reversed_strided_slice": "return x[:, ::-2, 14::-2] * 2.0",
    "empty_reversed_slice": "return jnp.tanh(x[:, 7:7:-1, 3:3])",
    "pad_edge": 'return jnp.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)), mode="edge")',
    "pad_wrap": 'return jnp.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)), mode="wrap")',
    "roll": "return jnp.roll(x, (3, -5), axis=(1, 2))",
    "flip": "return jnp.flip(x, axis=(1, 2))",
    "repeat": 'y: Tensor["batch", "h", "w", "c"] = jnp.repeat(jnp.repeat(x, 2, axis=1), 2, axis=2)\nreturn y',
    "resize_nearest": 'b, h, w, c = x.shape\nreturn jax.image.resize(x, (b, 2 * h, 2 * w, c), "nearest")',
    "resize_bilinear": 'b, h, w, c = x.shape\nreturn jax.image.resize(x, (b, 2 * h, 2 * w, c), "bilinear")',
    "downsample_nearest": 'b, h, w, c = x.shape\nreturn jax.image.resize(x, (b, h // 2, w // 2, c), "nearest")',
    "skip_concat": "return jnp.concatenate([x, jnp.tanh(x)], axis=-1)[..., :4] * 0.5 + x",
    "concat_split": "return jnp.concatenate([x, jnp.tanh(x), x * 2.0], axis=1)",
    "concat_uneven": "return jnp.concatenate([jnp.tanh(x), x[:, :8], x[:, 4:12]], axis=1)",
    "group_norm": GROUP_NORM,
    "batch_norm": BATCH_NORM,
}

#: Where the blocks cannot hold the result: 16 rows sliced to 12 or padded to 20 do not split into 8 blocks, nor
#: the 12 rows of a 5x5 VALID pool, nor the 14 of a 3x3 one into 4 or 8; a slice reaching past the neighbours; an
#: empty slice.
REFUSED = {("slice", "8"): "do not split into 8 equal blocks", ("pad_edge", "8"): "do not split into 8 equal blocks",
           ("pad_wrap", "8"): "do not split into 8 equal blocks", ("max_pool_5x5_valid", "8"): "do not split into 8",
           ("avg_pool_3x3_valid", "8"): "do not split into 8", ("avg_pool_3x3_valid", "2x4"): "do not split into 4",
           # x[:, 4:12] of 16 rows in blocks of 2: a device's rows of the slice lie 2 blocks away
           ("concat_uneven", "8"): "a halo must be at most one block",
           # no rows: refused (the derivative of a program holding an empty block fails in XLA's sharding pass)
           **{("empty_reversed_slice", m): "takes no rows" for m in MESHES}}


def _program(tmp_path: Path, op: str, mesh: str, converted: bool):
    source = PROGRAM.format(mesh=MESHES[mesh], body=textwrap.indent(OPS[op], "    "))
    name = f"spatial_{op}_{mesh.replace('x', '_')}_{tmp_path.name}"
    original = _load(source, tmp_path, name)
    if not converted:
        return original.f, original.f.reference
    return _load(convert_source(source, f"{name}.py").text, tmp_path, f"{name}_sharded").f, original.f.reference


def _check(fn, reference, x) -> None:
    got, want = fn(x), reference(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    grad = jax.grad(lambda v: jnp.sum(jnp.sin(fn(v)) * jnp.arange(want.size).reshape(want.shape) / want.size))(x)
    ref = jax.grad(lambda v: jnp.sum(jnp.sin(reference(v)) * jnp.arange(want.size).reshape(want.shape) / want.size))(x)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(ref), rtol=1e-4, atol=1e-5)


def _run(op: str, mesh: str, path: str, tmp_path: Path) -> None:
    x = np.random.default_rng(0).standard_normal((4, 16, 16, 4)).astype(np.float32)
    fn, reference = _program(tmp_path, op, mesh, path == "converted")
    if (op, mesh) in REFUSED:
        with pytest.raises(MeshifyError, match=REFUSED[op, mesh]):
            fn(x)
        return
    _check(fn, reference, x)


#: The default run: every op once, each mesh and both paths several times.
FAST = [("max_pool_3x3_same", "2x4", "decorator"), ("max_pool_2x2_stride_2", "2x2x2", "converted"),
        ("avg_pool_3x3_stride_2", "8", "decorator"), ("pad", "8", "converted"), ("pad_constant", "2x4", "decorator"),
        ("pad_constant", "2x2x2", "converted"), ("slice", "2x4", "decorator"),
        ("slice", "8", "converted"), ("roll", "2x2x2", "decorator"), ("flip", "2x4", "converted"),
        ("repeat", "8", "decorator"), ("resize_nearest", "2x4", "converted"), ("resize_bilinear", "2x4", "decorator"),
        ("downsample_nearest", "2x2x2", "converted"), ("skip_concat", "2x4", "converted"),
        ("strided_slice", "8", "decorator"), ("strided_slice", "2x4", "converted"), ("pad_edge", "2x2x2", "decorator"),
        ("pad_wrap", "2x4", "converted"), ("pad_wrap", "8", "decorator"),
        ("group_norm", "2x4", "decorator"), ("batch_norm", "2x2x2", "converted"),
        ("max_pool_5x5_valid", "2x4", "converted"), ("avg_pool_3x3_valid", "2x2x2", "decorator"),
        ("concat_split", "8", "decorator"), ("concat_split", "2x4", "converted"), ("concat_uneven", "2x4", "converted"),
        ("reversed_slice", "2x4", "decorator"), ("reversed_strided_slice", "8", "converted"),
        ("empty_reversed_slice", "2x2x2", "decorator")]


@pytest.mark.parametrize("op, mesh, path", FAST)
def test_spatial_op_matches_one_device(op: str, mesh: str, path: str, tmp_path: Path) -> None:
    _run(op, mesh, path, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("op, mesh, path", [(o, m, p) for o in OPS for m in MESHES for p in ("decorator", "converted")
                                            if (o, m, p) not in FAST])
def test_spatial_op_sweep_matches_one_device(op: str, mesh: str, path: str, tmp_path: Path) -> None:
    _run(op, mesh, path, tmp_path)


# -- explain predicts what the compiled HLO moves -------------------------------------------------------------


@pytest.mark.parametrize("op, mesh", [("max_pool_3x3_same", "2x4"), ("pad", "2x4"), ("slice", "2x4"),
                                      ("roll", "2x2x2"), ("flip", "8"), ("avg_pool_3x3_stride_2", "2x2x2"),
                                      ("strided_slice", "2x4"), ("pad_edge", "2x4"), ("pad_wrap", "2x2x2"),
                                      ("max_pool_5x5_valid", "2x4"), ("avg_pool_3x3_valid", "2x2x2"),
                                      ("concat_split", "8"), ("concat_split", "2x4"), ("reversed_slice", "2x4"),
                                      ("reversed_strided_slice", "2x2x2")])
def test_verify_agrees_and_explain_predicts_the_exchanges(op: str, mesh: str, tmp_path: Path) -> None:
    from meshify.explain import parse_dims
    from meshify.verify import verify_file

    path = tmp_path / "ops.py"
    path.write_text(PROGRAM.format(mesh=f"{MESHES[mesh]}, dims={{'h': 16, 'w': 16}}",
                                   body=textwrap.indent(OPS[op], "    ")))
    (report,) = verify_file(path, None, parse_dims("batch=4,h=16,w=16,c=4"))
    assert report.results_agree, report
    assert report.prediction_matches, (report.predicted, report.found)
    assert "collective-permute" in report.found, report


def test_var_centres_on_the_mean_just_computed_unless_it_was_rebound() -> None:
    body = "m = jnp.mean(x, axis=(1, 2), keepdims=True)\n{between}v = jnp.var(x, axis=(1, 2), keepdims=True)\n" \
           "return (x - m) * v"
    got = rewrite(body.format(between=""), X, OUT, mesh="h=2, w=4")
    assert "mean=m" in got and got.count("mr.psum(") == 1, got
    for between in ("x = x * 2.0\n", "m = m * 2.0\n"):
        assert "mean=m" not in rewrite(body.format(between=between), X, OUT, mesh="h=2, w=4")


@pytest.mark.parametrize("op, found", [("group_norm", (2, 64)), ("batch_norm", (2, 32))])
def test_norm_statistics_all_reduce_the_mean_once(op: str, found: tuple[int, int], tmp_path: Path) -> None:
    """mean and var over split height and width: the mean's psum, then var's squared deviations (no third)."""
    from meshify.explain import parse_dims
    from meshify.verify import verify_file

    path = tmp_path / "norm.py"
    path.write_text(PROGRAM.format(mesh="h=2, w=4, dims={'h': 16, 'w': 16}", body=textwrap.indent(OPS[op], "    ")))
    (report,) = verify_file(path, None, parse_dims("batch=4,h=16,w=16,c=4,groups=2,cg=2"))
    assert report.results_agree and report.prediction_matches, report
    assert report.found == {"all-reduce": found}, report.found


def test_explain_dims_give_the_rewriter_the_kernel_size() -> None:
    """``meshify explain --dims kh=5`` sizes the halo (2 rows each side) without ``@mesh(dims=...)``."""
    from meshify.explain import explain_source

    source = textwrap.dedent('''\
        import jax
        from meshify import Tensor, mesh


        @mesh(h=8)
        def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h", "w", "d"]:
            return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        ''')
    (report,) = explain_source(source, "conv.py", {"batch": 2, "h": 32, "w": 16, "c": 3, "d": 4, "kh": 5, "kw": 5})
    halos = [c for c in report.collectives if c.hlo_kind == "collective-permute"]
    assert [c.bytes for c in halos] == [2 * 2 * 16 * 3 * 4] * 2, halos
    assert all("2 rows of 'x'" in c.reason and "trace time" not in c.reason for c in halos), halos


def test_the_conv_benchmark_moves_the_analytic_minimum_like_the_hand_written_program() -> None:
    from benchmarks import conv_halo

    result = conv_halo.run(quick=True, repeats=1)
    fwd = {r["variant"]: r for r in result["rows"] if r["mode"] == "fwd"}
    minimum = result["analytic_halo_bytes_per_device"]["total"]
    assert fwd["meshify"]["bytes_per_device"] == minimum == fwd["manual"]["bytes_per_device"], result
    assert set(fwd["meshify"]["collectives"]) == {"collective-permute"}, result
    assert all(r["max_rel_err"] < 1e-5 for r in result["rows"]), result
