"""Convolutions (rules/convolution.py): what a split batch, feature or spatial dim becomes, as text; what is
refused, at its place; and that ``explain`` predicts the halo exchanges the compiled HLO holds."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from meshify.errors import LayoutError, MeshifyError, UnsupportedError
from tests.rules._rewrite import assert_rewrite, rewrite

NHWC = 'x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]'
OUT = 'Tensor["batch", "h", "w", "d"]'
DN = 'dimension_numbers=("NHWC", "HWIO", "NHWC")'


# -- batch and feature dims ----------------------------------------------------------------------------------


def test_a_split_batch_needs_no_communication() -> None:
    assert_rewrite(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", {DN})', f"""
        return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", {DN})
        """, NHWC, OUT, mesh="batch=8")


def test_a_split_output_feature_stays_split() -> None:
    assert_rewrite(f'return jax.lax.conv_general_dilated(x, k, (2, 2), "VALID", {DN})', f"""
        return jax.lax.conv_general_dilated(x, k, (2, 2), "VALID", {DN})
        """, NHWC, OUT, mesh='batch=2, model=4, rules={"d": "model"}')


def test_a_split_input_feature_is_a_deferred_partial_sum() -> None:
    got = rewrite('y = jax.lax.conv(x, k, (1, 1), "SAME")\nreturn jax.nn.relu(y)',
                  'x: Tensor["batch", "c", "h", "w"], k: Tensor["d", "c", "kh", "kw"]', 'Tensor["batch", "d", "h", "w"]',
                  mesh='batch=2, model=4, rules={"c": "model"}').splitlines()
    assert got[0] == 'y = jax.lax.conv(x, k, (1, 1), "SAME", preferred_element_type=mr.sum_dtype(x, k))', got
    assert got[1].startswith("# meshify: psum over 'model': y is a partial sum (contracted 'c' split); relu"), got
    assert got[2].startswith('y = mr.psum(y, "model"'), got


def test_the_psum_of_a_convolution_casts_back_to_the_image_and_kernel_dtype() -> None:
    got = rewrite('return jax.nn.relu(jax.lax.conv(x * 2, k, (1, 1), "SAME"))',
                  'x: Tensor["batch", "c", "h", "w"], k: Tensor["d", "c", "kh", "kw"]', 'Tensor["batch", "d", "h", "w"]',
                  mesh='batch=2, model=4, rules={"c": "model"}').splitlines()
    assert got[-1].endswith('"model", like=(x, k)))'), got


def test_an_input_feature_split_in_the_image_only_slices_the_kernel() -> None:
    got = rewrite(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", {DN})', NHWC, OUT,
                  mesh='batch=2, model=4, rules={"c": "model"}')
    assert "mr.psum(" in got and "all_gather" not in got, got


def test_conv_dimension_numbers_objects_and_default_nchw_are_read() -> None:
    body = ("return jax.lax.conv_general_dilated(x, k, (1, 1), 'SAME', "
            "dimension_numbers=jax.lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)))")
    assert "mr.halo_conv(" in rewrite(body, NHWC, OUT, mesh="h=8")
    body = "return jax.lax.conv_with_general_padding(x, k, (1, 1), [(1, 1), (1, 1)], None, (2, 2))"
    got = rewrite(body, 'x: Tensor["batch", "c", "h", "w"], k: Tensor["d", "c", "kh", "kw"]',
                  'Tensor["batch", "d", "h", "w"]', mesh="h=8")
    assert got.endswith('return mr.halo_conv(x, k, (1, 1), [(1, 1), (1, 1)], lhs_dilation=None, rhs_dilation=(2, 2), '
                        'spatial_axes=("h", None))'), got


# -- split spatial dims: halo exchange -----------------------------------------------------------------------------


def test_one_split_spatial_dim_exchanges_rows_with_both_neighbours() -> None:
    assert_rewrite(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", {DN})', f"""
        # meshify: halo over 'h': 2 rows of 'x' before its block along split 'h', from the previous device (ppermute; zeros at the image border)
        # meshify: halo over 'h': 2 rows of 'x' after its block along split 'h', from the next device (ppermute; zeros at the image border)
        return mr.halo_conv(x, k, (1, 1), "SAME", {DN}, spatial_axes=("h", None))
        """, NHWC, OUT, mesh='h=8, dims={"kh": 5, "kw": 5}')


def test_two_split_spatial_dims_take_the_corners_from_the_diagonal_neighbours() -> None:
    got = rewrite(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", {DN})', NHWC, OUT,
                  mesh='h=2, w=4, dims={"kh": 3, "kw": 3}').splitlines()
    assert len(got) == 9 and got[-1].endswith('spatial_axes=("h", "w"))'), got
    assert got[4] == ("# meshify: halo over 'h' x 'w': the top-left corner of 'x' along split 'h', 'w', from the "
                      "diagonal device (ppermute)"), got


def test_a_causal_padding_and_stride_exchange_one_side_only() -> None:
    assert_rewrite(f'return jax.lax.conv_general_dilated(x, k, (2, 1), [(1, 0), (1, 1)], {DN})', f"""
        # meshify: halo over 'h': 1 row of 'x' before its block along split 'h', from the previous device (ppermute; zeros at the image border)
        return mr.halo_conv(x, k, (2, 1), [(1, 0), (1, 1)], {DN}, spatial_axes=("h", None))
        """, NHWC, OUT, mesh='h=8, dims={"kh": 3, "kw": 3}')


def test_an_unknown_window_size_leaves_the_width_to_trace_time() -> None:
    got = rewrite(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", rhs_dilation=(2, 2), {DN})', NHWC, OUT,
                  mesh="batch=2, h=4").splitlines()
    assert got[0].endswith("how many follows from the kernel's size at trace time"), got
    assert got[-1] == ('return mr.halo_conv(x, k, (1, 1), "SAME", rhs_dilation=(2, 2), dimension_numbers=("NHWC", '
                       '"HWIO", "NHWC"), spatial_axes=("h", None))'), got


# -- refusals, at their place ---------------------------------------------------------------------------------------


def _refused(body: str, mesh: str, params: str = NHWC, cls=UnsupportedError) -> str:
    with pytest.raises(cls) as info:
        rewrite(body, params, OUT, mesh=mesh)
    return str(info.value)


def test_valid_padding_over_a_split_spatial_dim_is_refused_at_the_padding_where_the_output_does_not_split() -> None:
    message = _refused(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", {DN})',
                       'h=8, dims={"kh": 3, "kw": 3, "h": 16}')
    assert "case.py:9:55" in message and "gives 14 output rows" in message and "padding='SAME'" in message, message


def test_a_stride_that_does_not_divide_the_blocks_is_refused_where_the_output_does_not_split() -> None:
    message = _refused(f'return jax.lax.conv_general_dilated(x, k, (2, 2), "SAME", {DN})',
                       'h=8, dims={"kh": 3, "kw": 3, "h": 24}')
    assert "case.py:9:55" in message and "gives 12 output rows" in message and "multiple of 8" in message, message


def test_a_window_reaching_beyond_the_neighbours_is_refused_at_the_strides() -> None:
    message = _refused(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", {DN})',
                       'h=8, dims={"kh": 9, "kw": 9, "h": 32}')
    assert "case.py:9:48" in message and "a halo must be at most one block" in message, message


def test_a_valid_convolution_shrinking_a_split_dim_is_re_blocked() -> None:
    """64 rows in 8 blocks, a 9-row VALID window: 56 output rows, 7 per device, each device reading the 15
    rows its windows cover: up to 7 from the previous device and 7 from the next (device 7 reads rows
    49-63, device 0 rows 0-14)."""
    got = rewrite(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", {DN})', NHWC, OUT,
                  mesh='h=8, dims={"kh": 9, "kw": 9, "h": 64}').splitlines()
    assert "7 rows of 'x' before the rows its windows cover along split 'h' (the output re-blocked)" in got[0], got
    assert "7 rows of 'x' after the rows its windows cover" in got[1], got
    assert got[-1] == ('return mr.halo_conv(x, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"), '
                       'spatial_axes=("h", None))'), got


def test_a_transposed_convolution_over_a_split_dim_is_refused() -> None:
    message = _refused(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", lhs_dilation=(2, 1), {DN})', "h=8")
    assert "case.py:9:" in message and "lhs_dilation" in message, message


def test_a_grouped_convolution_whose_kernel_input_features_are_split_is_refused() -> None:
    """(Its groups' input channels would be spread over the devices: not whole groups per device.)"""
    message = _refused(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", {DN}, feature_group_count=4)',
                       'batch=2, model=4, rules={"c": "model"}')
    assert "feature_group_count" in message and "'c'" in message, message


def test_a_depthwise_convolution_over_split_channels_runs_locally_with_its_share_of_the_groups() -> None:
    got = rewrite(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", {DN}, feature_group_count=x.shape[-1])',
                  'x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "one", "c"]', 'Tensor["batch", "h", "w", "c"]',
                  mesh='batch=2, model=4, rules={"c": "model"}')
    assert got == ('return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", '
                   '"NHWC"), feature_group_count=mr.shard_size((x.shape[-1] * 4), 4, "c"))'), got
    message = _refused(f'return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", {DN}, feature_group_count=6)',
                       'batch=2, model=4, rules={"c": "model"}', 'x: Tensor["batch", "h", "w", "c"], '
                       'k: Tensor["kh", "kw", "one", "c"]', cls=LayoutError)
    assert "feature_group_count 6 of dim 'c' is not divisible by its 4 shards" in message, message


@pytest.mark.parametrize("body", [
    'jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=dn)',
    'jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", batch_group_count=2)',
    'jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO"))',
])
def test_dimension_numbers_it_cannot_read_and_arguments_it_does_not_model_are_refused(body: str) -> None:
    with pytest.raises(MeshifyError) as info:
        rewrite(f"return {body}", f"{NHWC}, dn", OUT, mesh="h=8")
    assert "case.py:9:" in str(info.value) and "case.py:9:12:" not in str(info.value), str(info.value)


def test_image_and_kernel_of_different_ranks_are_an_error() -> None:
    _refused('return jax.lax.conv(x, k, (1, 1), "SAME")', "h=8", 'x: Tensor["batch", "c", "h", "w"], k: Tensor["d", "c"]',
             LayoutError)


# -- explain predicts what the compiled HLO moves ----------------------------------------------------------------------

PROGRAM = '''\
import jax
from meshify import Tensor, mesh


@mesh({mesh})
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h", "w", "d"]:
    return jax.lax.conv_general_dilated(x, k, {strides}, {padding}, rhs_dilation={dilation},
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
'''


@pytest.mark.parametrize("mesh, strides, padding, dilation, kernel", [
    ('h=8, dims={"kh": 3, "kw": 3}', "(1, 1)", '"SAME"', "(1, 1)", 3),
    ('h=2, w=4, dims={"kh": 5, "kw": 5}', "(1, 1)", '"SAME"', "(2, 1)", 5),
    ('batch=2, h=2, w=2, dims={"kh": 3, "kw": 3}', "(2, 2)", '"SAME"', "(1, 1)", 3),
    ('batch=2, h=4, dims={"kh": 3, "kw": 3}', "(1, 1)", "[(2, 0), (1, 1)]", "(1, 1)", 3),
])
def test_verify_agrees_and_explain_predicts_the_halo_bytes(mesh, strides, padding, dilation, kernel,
                                                         tmp_path: Path) -> None:
    from meshify.explain import parse_dims
    from meshify.verify import verify_file

    path = tmp_path / "conv.py"
    path.write_text(textwrap.dedent(PROGRAM).format(mesh=mesh, strides=strides, padding=padding, dilation=dilation))
    (report,) = verify_file(path, None, parse_dims(f"batch=2,h=16,w=32,c=3,d=4,kh={kernel},kw={kernel}"))
    assert report.results_agree, report
    assert report.prediction_matches, (report.predicted, report.found)
    assert "collective-permute" in report.found, report
