"""Statistics over named dims (rules/statistics.py): what a split reduced or scanned dim becomes, as
text; what is refused, at its place; and that ``explain`` predicts the bytes the compiled HLO moves."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from meshify.errors import MeshifyError, UnsupportedError
from tests.rules._rewrite import assert_rewrite, rewrite

X = 'x: Tensor["batch", "model"]'


# -- var / std ---------------------------------------------------------------------------------------


def test_var_over_a_split_dim_is_two_all_reduces_over_the_global_count() -> None:
    assert_rewrite("return jnp.var(x, axis=1, ddof=1)", """
        # meshify: var over 'model': var over split 'model' of 'x': global mean (psum), then squared deviations (psum), over the global count
        return mr.var(x, axis=1, axis_name="model", ddof=1)
        """, X, 'Tensor["batch"]')


def test_std_method_with_negative_axis_keepdims_and_dtype() -> None:
    assert_rewrite("return x - x.std(-1, jnp.float32, keepdims=True)", """
        # meshify: std over 'model': std over split 'model' of 'x': global mean (psum), then squared deviations (psum), over the global count
        return x - mr.std(x, axis=1, axis_name="model", dtype=jnp.float32, keepdims=True)
        """, X, 'Tensor["batch", "model"]')


def test_var_correction_is_ddof() -> None:
    assert_rewrite("return jnp.var(x, axis=(0, 1), correction=1)", """
        # meshify: var over 'batch' x 'model': var over split 'batch', 'model' of 'x': global mean (psum), then squared deviations (psum), over the global count
        return mr.var(x, axis=(0, 1), axis_name=("batch", "model"), ddof=1)
        """, X, "Tensor[()]")


def test_var_over_an_unsplit_dim_stays_as_written() -> None:
    assert_rewrite("return jnp.var(x, axis=1, ddof=1)", """
        return jnp.var(x, axis=1, ddof=1)
        """, X, 'Tensor["batch"]', mesh="batch=8")


def test_var_where_over_a_split_dim_counts_the_mask_first() -> None:
    assert_rewrite("return jnp.std(x, axis=1, where=m > 0)", """
        # meshify: masked_var over 'model': std over split 'model' of 'x': global count of where= (psum), global mean (psum), then squared deviations (psum)
        return mr.std(x, axis=1, axis_name="model", where=m > 0)
        """, f'{X}, m: Tensor["batch", "model"]', 'Tensor["batch"]')


def test_a_where_mask_of_other_dims_is_refused_at_the_mask() -> None:
    with pytest.raises(UnsupportedError) as info:
        rewrite("return jnp.var(x, axis=1, where=m > 0)", f'{X}, m: Tensor["batch"]', 'Tensor["batch"]')
    assert "case.py:9:37" in str(info.value) and "where=" in str(info.value)


# -- nansum / nanmean / nanvar / nanstd / nanmax / nanmin ---------------------------------------------


def test_nanmean_over_a_split_dim_divides_the_global_sum_by_the_global_count() -> None:
    assert_rewrite("return jnp.nanmean(x, axis=-1)", """
        # meshify: nanmean over 'model': nanmean over split 'model' of 'x': the non-NaN entries' global sum (psum) over their global count (psum)
        return mr.nanmean(x, axis=1, axis_name="model")
        """, X, 'Tensor["batch"]')


def test_nanvar_ddof_and_nanmax_keepdims_over_split_dims() -> None:
    assert_rewrite("return jnp.nanstd(x, axis=(0, 1), ddof=1) + jnp.nanmax(x, axis=1, keepdims=True)", """
        # meshify: masked_var over 'batch' x 'model': nanstd over split 'batch', 'model' of 'x': the non-NaN entries' global count (psum), global mean (psum), then squared deviations (psum)
        # meshify: nanmax over 'model': nanmax over split 'model' of 'x': the max of the non-NaN entries (pmax), and whether there is one (NaN where none)
        return mr.nanstd(x, axis=(0, 1), axis_name=("batch", "model"), ddof=1) + mr.nanmax(x, axis=1, axis_name="model", keepdims=True)
        """, X, 'Tensor["batch", "1"]')


def test_nansum_over_an_unsplit_dim_stays_as_written() -> None:
    assert_rewrite("return jnp.nansum(x, axis=1)", """
        return jnp.nansum(x, axis=1)
        """, X, 'Tensor["batch"]', mesh="batch=8")


@pytest.mark.parametrize("body", ["jnp.nansum(x, axis=1, where=x > 0)", "jnp.nanmax(x, axis=1, initial=0.0)"])
def test_nan_reductions_refuse_what_their_rules_do_not_model(body: str) -> None:
    with pytest.raises(MeshifyError) as info:
        rewrite(f"return {body}", X, 'Tensor["batch"]')
    assert "case.py:9" in str(info.value), info.value


def test_var_of_a_partial_sum_reduces_it_first() -> None:
    got = rewrite("return jnp.var(x @ w, axis=0)", f'{X}, w: Tensor["model", "d"]', 'Tensor["d"]').splitlines()
    assert got[:2] == [
        "# meshify: psum over 'model': x @ w is a partial sum (contracted 'model' split); var needs it whole",
        ("# meshify: var over 'batch': var over split 'batch' of 'x @ w': global mean (psum), then squared deviations "
         "(psum), over the global count")], got
    assert got[2].startswith("return mr.var(mr.psum(") and got[2].endswith(', axis=0, axis_name="batch")'), got


# -- norms ---------------------------------------------------------------------------------------------------


def test_a_vector_2_norm_over_a_split_dim_is_one_psum() -> None:
    assert_rewrite("return x / jnp.linalg.norm(x, axis=-1, keepdims=True)", """
        # meshify: psum over 'model': norm over split 'model' of 'x': local sum of |x|**ord
        return x / mr.norm(x, None, axis=1, axis_name="model", keepdims=True)
        """, X, 'Tensor["batch", "model"]')


def test_an_inf_norm_is_a_pmax_and_a_minus_inf_norm_a_pmin() -> None:
    assert_rewrite("return jnp.linalg.norm(x, ord=jnp.inf, axis=1) + jnp.linalg.norm(x, -jnp.inf, 1)", """
        # meshify: pmax over 'model': norm over split 'model' of 'x': local max of |x|
        # meshify: pmin over 'model': norm over split 'model' of 'x': local min of |x|
        return mr.norm(x, jnp.inf, axis=1, axis_name="model") + mr.norm(x, -jnp.inf, axis=1, axis_name="model")
        """, X, 'Tensor["batch"]')


def test_matrix_norms_sum_along_one_dim_and_take_the_max_along_the_other() -> None:
    assert_rewrite("return jnp.linalg.norm(x, 1, axis=(0, 1)) + jnp.linalg.norm(x, 'fro')", """
        # meshify: psum over 'batch': matrix norm's sums of |x| over split 'batch' of 'x'
        # meshify: pmax over 'model': matrix norm's max over split 'model' of 'x'
        # meshify: psum over 'batch' x 'model': Frobenius norm of 'x' over split 'batch', 'model'
        return mr.matrix_norm(x, 1, axis=(0, 1), row_axes="batch", col_axes="model") + mr.matrix_norm(x, 'fro', axis=(0, 1), row_axes="batch", col_axes="model")
        """, X, "Tensor[()]")


@pytest.mark.parametrize("body, culprit", [
    ("jnp.linalg.norm(x, 'nuc')", "'nuc'"),
    ("jnp.linalg.norm(x, 2, axis=(1, 0))", "2"),
    ("jnp.linalg.norm(x, p, axis=1)", "p"),
])
def test_norms_meshify_does_not_compute_over_split_dims_are_refused_at_ord(body: str, culprit: str) -> None:
    with pytest.raises(UnsupportedError) as info:
        rewrite(f"return jnp.sum({body})", f"{X}, p", "Tensor[()]")
    message = str(info.value)
    column = 5 + len("return jnp.sum(") + body.index(culprit, body.index(", "))
    assert f"case.py:9:{column}" in message, message


# -- prod, any / all, count_nonzero ------------------------------------------------------------------------------


def test_prod_over_a_split_dim_gathers_the_local_products() -> None:
    assert_rewrite("return jnp.prod(x, axis=1, where=m, initial=2.0)", """
        # meshify: prod over 'model': prod over split 'model' of 'x': local products, all-gathered and multiplied
        return mr.prod(x, axis=1, axis_name="model", where=m, initial=2.0)
        """, f'{X}, m: Tensor["batch", "model"]', 'Tensor["batch"]')


def test_any_and_all_over_split_dims_are_one_all_reduce_each() -> None:
    assert_rewrite("return jnp.any(x > 0, axis=1) & (x < 1).all(axis=1)", """
        # meshify: any over 'model': any over split 'model' of 'x > 0': local any, an all-reduce max of the flags
        # meshify: all over 'model': all over split 'model' of '(x < 1)': local all, an all-reduce min of the flags
        return mr.any(x > 0, axis=1, axis_name="model") & mr.all((x < 1), axis=1, axis_name="model")
        """, X, 'Tensor["batch"]')


def test_count_nonzero_is_a_deferred_psum_of_local_counts() -> None:
    assert_rewrite("return jnp.count_nonzero(x, axis=1)", """
        # meshify: count_nonzero over split 'model': local counts, summed later
        # meshify: psum over 'model': jnp.count_nonzero(x, axis=1) is a partial sum (counted 'model' split); the return hint needs it whole
        return mr.psum(jnp.count_nonzero(x, axis=1), "model")
        """, X, 'Tensor["batch"]')


# -- argmax / argmin ----------------------------------------------------------------------------------------------


def test_argmax_over_a_split_dim_offsets_the_local_index() -> None:
    assert_rewrite("return jnp.argmax(x, axis=-1)", """
        # meshify: argmax over 'model': argmax over split 'model' of 'x': local argmax of an ordered key (NaN first), pmax of the key, pmin of the first global index holding it
        return mr.argmax(x, axis=1, axis_name="model", split=1)
        """, X, 'Tensor["batch"]')


def test_argmin_method_over_a_dim_split_over_two_axes_keeps_the_dims_axis_order() -> None:
    assert_rewrite("return x.argmin(0)", """
        # meshify: argmin over 'model' x 'batch': argmin over split 'd' of 'x': local argmin of an ordered key (NaN first), pmin of the key, pmin of the first global index holding it
        return mr.argmin(x, axis=0, axis_name=("model", "batch"), split=0)
        """, 'x: Tensor["d", "e"]', 'Tensor["e"]', mesh='batch=2, model=4, rules={"d": ("model", "batch")}')


def test_argmax_without_axis_of_a_value_split_along_one_dim_is_a_flat_index() -> None:
    assert_rewrite("return jnp.argmax(x)", """
        # meshify: argmax over 'model': argmax over split 'model' of 'x': local argmax of an ordered key (NaN first), pmax of the key, pmin of the first global index holding it
        return mr.argmax(x, axis=None, axis_name="model", split=1)
        """, 'x: Tensor["n", "model"]', "Tensor[()]")


def test_argmax_without_axis_of_a_value_split_along_two_dims_offsets_each_by_its_own_axes() -> None:
    assert_rewrite("return jnp.argmax(x)", """
        # meshify: argmax over 'batch' x 'model': argmax over split 'batch', 'model' of 'x': local argmax of an ordered key (NaN first), pmax of the key, pmin of the first global index holding it
        return mr.argmax(x, axis=None, axis_name=("batch", "model"), split=(0, 1), blocks=("batch", "model"))
        """, X, "Tensor[()]")


def test_argmax_over_an_unsplit_dim_stays_as_written() -> None:
    assert_rewrite("return jnp.argmax(x, axis=-1, keepdims=False)", """
        return jnp.argmax(x, axis=-1, keepdims=False)
        """, 'x: Tensor["batch", "vocab"]', 'Tensor["batch"]')


# -- cumsum / cumprod -----------------------------------------------------------------------------------------------


def test_cumsum_along_a_split_dim_adds_the_earlier_shards_totals() -> None:
    assert_rewrite("return jnp.cumsum(x, axis=1) * x.cumprod(-1)", """
        # meshify: cumsum over 'model': local cumsum plus the sum of the earlier shards' totals (all_gather) along split 'model' of 'x'
        # meshify: cumprod over 'model': local cumprod plus the product of the earlier shards' totals (all_gather) along split 'model' of 'x'
        return mr.cumsum(x, axis=1, axis_name="model") * mr.cumprod(x, axis=1, axis_name="model")
        """, X, 'Tensor["batch", "model"]')


def test_cumsum_along_an_unsplit_dim_keeps_a_partial_sum_pending() -> None:
    got = rewrite("return jnp.cumsum(x @ w, axis=1)", f'{X}, w: Tensor["model", "d"]', 'Tensor["batch", "d"]')
    assert got.splitlines()[0] == ("# meshify: psum over 'model': jnp.cumsum(x @ w, axis=1) is a partial sum "
                                   "(contracted 'model' split); the return hint needs it whole"), got
    assert got.splitlines()[1].startswith("return mr.psum(jnp.cumsum(") and ', axis=1), "model"' in got, got


def test_cumsum_without_axis_of_a_split_matrix_is_refused() -> None:
    with pytest.raises(UnsupportedError) as info:
        rewrite("return jnp.sum(jnp.cumsum(x))", X, "Tensor[()]")
    assert "case.py:9:20" in str(info.value) and "pass axis=" in str(info.value)


@pytest.mark.parametrize("body", ["jnp.var(x, axis=a)", "jnp.argmax(x, axis=(0, 1))", "jnp.cumsum(x, axis=5)",
                                  "jnp.prod(x, axis=1, out=x)", "jnp.std(x, 1, mean=x)"])
def test_axes_it_cannot_read_and_arguments_it_does_not_model_are_refused(body: str) -> None:
    with pytest.raises(MeshifyError) as info:
        rewrite(f"return jnp.sum({body})", f"{X}, a", "Tensor[()]")
    assert "case.py:9:" in str(info.value) and "case.py:9:12:" not in str(info.value), str(info.value)


# -- explain predicts what the compiled HLO moves ----------------------------------------------------------------------

PROGRAM = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4)
def f(x: Tensor["batch", "model"]) -> Tensor["batch"]:
    return {body}
'''


@pytest.mark.parametrize("body", [
    "jnp.var(x, axis=1, ddof=1)",
    "jnp.std(x, axis=1)",
    "jnp.var(x, axis=1, where=x > 0)",
    "jnp.linalg.norm(x, axis=1)",
    "jnp.linalg.norm(x, jnp.inf, axis=1)",
    "jnp.prod(x, axis=1)",
    "jnp.argmax(x, axis=1) + jnp.argmin(x, axis=1)",
    "jnp.any(x > 0, axis=1) & jnp.all(x > -1, axis=1)",
    "jnp.count_nonzero(x > 0, axis=1)",
    "jnp.sum(jnp.cumsum(x, axis=1) * jnp.cumprod(x, axis=1), axis=0)[:4]",
])
def test_verify_agrees_and_explain_predicts_the_hlo_bytes(body: str, tmp_path: Path) -> None:
    from meshify.explain import parse_dims
    from meshify.verify import verify_file

    if body.startswith("jnp.sum(jnp.cumsum"):  # a [model] result: return it as such
        body, ret = "jnp.cumsum(x, axis=1) * jnp.cumprod(x, axis=1)", 'Tensor["batch", "model"]'
    else:
        ret = 'Tensor["batch"]'
    path = tmp_path / "stat.py"
    path.write_text(textwrap.dedent(PROGRAM).format(body=body).replace('Tensor["batch"]:', f"{ret}:"))
    (report,) = verify_file(path, None, parse_dims("batch=4,model=16"))
    assert report.results_agree, report
    assert report.prediction_matches, (report.predicted, report.found)
    assert report.found, report
