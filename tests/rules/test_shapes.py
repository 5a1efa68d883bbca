"""Shape ops: transposes move splits with their dims; joins align splits; named reshapes use shard sizes."""

from __future__ import annotations

from tests.rules._rewrite import assert_rewrite


def test_a_transpose_moves_the_split_with_its_dim() -> None:
    assert_rewrite("return x.T", "return x.T", 'x: Tensor["batch", "model"]', 'Tensor["model", "batch"]')


def test_concatenate_along_an_unsplit_dim_runs_locally() -> None:
    assert_rewrite("return jnp.concatenate([x, y], axis=1)", "return jnp.concatenate([x, y], axis=1)",
                   'x: Tensor["batch", "d"], y: Tensor["batch", "d"]', 'Tensor["batch", "d"]')


def test_a_named_reshape_checks_variable_sizes_and_slices_a_new_split() -> None:
    assert_rewrite('b = x.shape[0]\nh: Tensor["batch", "model", "dh"] = x.reshape(b, 8, -1)\nreturn h', """
        b = (x.shape[0] * 2)
        # meshify: local slice over 'model' (no communication): h's hint [batch, model, dh] wants dim 'model' of x.reshape(b, 8, -1) split
        h: Tensor["batch", "model", "dh"] = mr.local_block(x.reshape(mr.shard_size(b, 2, "batch"), 8, -1), axis=1, axis_name="model")
        return h
        """, 'x: Tensor["batch", "hd"]', 'Tensor["batch", "model", "dh"]')


def test_hstack_and_vstack_are_concatenates_along_their_axis() -> None:
    params = 'x: Tensor["batch", "d"], y: Tensor["batch", "d"]'
    assert_rewrite('z: Tensor["batch", "d2"] = jnp.hstack([x, y])\nreturn z',
                   'z: Tensor["batch", "d2"] = jnp.hstack([x, y])\nreturn z', params, 'Tensor["batch", "d2"]')
    # joined along the split dim: re-blocked (a ppermute per operand), then gathered for the hint's whole 'rows'
    assert_rewrite('z: Tensor["rows", "d"] = jnp.vstack([x, y])\nreturn z', """
        # meshify: halo over 'batch': its block of 'x' along split 'batch', the blocks of it the new block overlaps, from the devices holding them (ppermute)
        # meshify: halo over 'batch': its block of 'y' along split 'batch', the blocks of it the new block overlaps, from the devices holding them (ppermute)
        # meshify: all_gather over 'batch': z's hint [rows, d] needs dim 'rows' of jnp.vstack([x, y]) whole
        z: Tensor["rows", "d"] = mr.all_gather(mr.spatial_concatenate([x, y], 0, axis_name="batch", dim='batch?'), "batch", axis=0)
        return z
        """, params, 'Tensor["rows", "d"]')


def test_a_concatenate_of_split_and_whole_arrays_along_the_split_dim_gathers_unless_they_split_alike() -> None:
    """Issue #14 (DLRM): a split array joined with a whole one along the split dim.  Where the whole one's size
    is not known when rewriting, or is no multiple of the devices, the split one is gathered and the join done
    whole (never sliced at run time into blocks that do not exist); a known multiple is sliced and re-blocked."""
    params = 'x: Tensor["batch", "d"], w: Tensor["batch", "e"]'
    rules = "batch=2, model=4, rules={'d': 'model'}"
    gathered = """
        # meshify: all_gather over 'model': concatenate with whole 'w' along this dim ({why}: the join done whole) needs dim 'd' of x whole
        return jnp.concatenate([mr.all_gather(x, "model", axis=1), w], axis=-1)
        """
    assert_rewrite("return jnp.concatenate([x, w], axis=-1)", gathered.format(why="its size not known when rewriting"),
                   params, 'Tensor["batch", "de"]', rules)
    assert_rewrite("return jnp.concatenate([x, w], axis=-1)",
                   gathered.format(why="its size 6 not a multiple of the 4 devices"), params, 'Tensor["batch", "de"]',
                   rules + ", dims={'e': 6}")
    assert_rewrite("return jnp.concatenate([x, w], axis=-1)", """
        # meshify: local slice over 'model' (no communication): concatenate wants dim 'e' of w split
        # meshify: halo over 'model': its block of 'x' along split 'd', the blocks of it the new block overlaps, from the devices holding them (ppermute)
        # meshify: halo over 'model': its block of 'w' along split 'e', the blocks of it the new block overlaps, from the devices holding them (ppermute)
        # meshify: all_gather over 'model': the return hint needs dim 'de' of jnp.concatenate([x, w], axis=-1) whole
        return mr.all_gather(mr.spatial_concatenate([x, mr.local_block(w, axis=1, axis_name="model")], 1, axis_name="model", dim='d?'), "model", axis=1)
        """, params, 'Tensor["batch", "de"]', rules + ", dims={'e': 8}")


# -- reshapes inside expressions (no naming hint) ------------------------------------------------


def test_a_reshape_in_an_expression_infers_its_dims_the_split_taking_the_major_part() -> None:
    """``x.reshape(b, l, 4, 8)`` of a split ``model`` dim: ``b``, ``l`` keep their dims, the split goes to 4."""
    assert_rewrite('b, l, _ = x.shape\nreturn x.reshape(b, l, 4, 8)', """
        b, l, _ = mr.global_shape(x, (2, 1, 4))
        return x.reshape(mr.shard_size(b, 2, "batch"), l, 1, 8)
        """, 'x: Tensor["batch", "length", "model"]', 'Tensor["batch", "length", "model", "dh"]')


def test_repeated_kv_heads_stay_local_and_merging_back_restores_the_name() -> None:
    assert_rewrite('b, l, _ = x.shape\nh = jnp.repeat(x.reshape(b, l, 4, 8), 2, axis=2)\nreturn h.reshape(b, l, -1)',
                   """
        b, l, _ = mr.global_shape(x, (2, 1, 4))
        h = jnp.repeat(x.reshape(mr.shard_size(b, 2, "batch"), l, 1, 8), 2, axis=2)
        return h.reshape(mr.shard_size(b, 2, "batch"), l, -1)
        """, 'x: Tensor["batch", "length", "model"]', 'Tensor["batch", "length", "model"]')


def test_a_split_dim_that_is_not_the_major_part_is_refused_with_the_naming_fix() -> None:
    import pytest

    from meshify.errors import UnsupportedError
    from tests.rules._rewrite import rewrite

    with pytest.raises(UnsupportedError) as info:
        rewrite('b, l, _ = x.shape\nreturn x.reshape(b, l * 2, 8)', 'x: Tensor["batch", "length", "model"]',
                'Tensor["batch", "length2", "dh"]')
    assert "is not the major (first) part" in str(info.value) and "name the result" in str(info.value)


# -- reshape's keywords: copy= and order= are not sizes ------------------------------------------


def test_a_reshape_s_copy_and_order_c_keywords_are_kept_and_not_counted_as_sizes() -> None:
    """``jnp.reshape(x, (b, l, 4, 8), copy=True)`` / ``order="C"`` (positional too): four sizes, as without them."""
    for extra in (", copy=True", ', order="C"', ', "C"', ', copy=False, order="C"'):
        assert_rewrite(f'b, l, _ = x.shape\nreturn jnp.reshape(x, (b, l, 4, 8){extra})', f"""
            b, l, _ = mr.global_shape(x, (2, 1, 4))
            return jnp.reshape(x, (mr.shard_size(b, 2, "batch"), l, 1, 8){extra})
            """, 'x: Tensor["batch", "length", "model"]', 'Tensor["batch", "length", "model", "dh"]')
    assert_rewrite('b = x.shape[0]\nh: Tensor["batch", "model", "dh"] = jnp.reshape(x, (b, 8, -1), copy=True)\n'
                   'return h', """
        b = (x.shape[0] * 2)
        # meshify: local slice over 'model' (no communication): h's hint [batch, model, dh] wants dim 'model' of jnp.reshape(x, (b, 8, -1), copy=True) split
        h: Tensor["batch", "model", "dh"] = mr.local_block(jnp.reshape(x, (mr.shard_size(b, 2, "batch"), 8, -1), copy=True), axis=1, axis_name="model")
        return h
        """, 'x: Tensor["batch", "hd"]', 'Tensor["batch", "model", "dh"]')


def test_a_reshape_in_fortran_order_is_refused_with_a_fix_named_or_not() -> None:
    """``order="F"`` lays the elements out column-major: the splits meshify derives assume row-major, so it is
    refused (with the hint, too, where it was once counted as a fifth size)."""
    import pytest

    from meshify.errors import UnsupportedError
    from tests.rules._rewrite import rewrite

    cases = [('b, l, _ = x.shape\nreturn jnp.reshape(x, (b, l, 4, 8), order="F")',
              'Tensor["batch", "length", "model", "dh"]'),
             ('b, l, _ = x.shape\nreturn x.reshape(b, l, 4, 8, order="F")', 'Tensor["batch", "length", "model", "dh"]'),
             ('b, l, _ = x.shape\nh: Tensor["batch", "length", "model", "dh"] = x.reshape(b, l, 4, 8, order="F")\n'
              'return h', 'Tensor["batch", "length", "model", "dh"]'),
             ('b, l, _ = x.shape\nh: Tensor["batch", "length", "model", "dh"] = jnp.reshape(x, (b, l, 4, 8), "F")\n'
              'return h', 'Tensor["batch", "length", "model", "dh"]')]
    for body, returns in cases:
        with pytest.raises(UnsupportedError) as info:
            rewrite(body, 'x: Tensor["batch", "length", "model"]', returns)
        assert "does not model order=" in str(info.value) and "drop order=" in str(info.value), str(info.value)
