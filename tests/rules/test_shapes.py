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
    assert_rewrite('z: Tensor["rows", "d"] = jnp.vstack([x, y])\nreturn z', """
        # meshify: all_gather over 'batch': vstack needs dim 'batch' of x whole
        # meshify: all_gather over 'batch': vstack needs dim 'batch' of y whole
        z: Tensor["rows", "d"] = jnp.vstack([mr.all_gather(x, "batch", axis=0), mr.all_gather(y, "batch", axis=0)])
        return z
        """, params, 'Tensor["rows", "d"]')
