"""Control flow: ``jax.lax.cond`` and ``jax.lax.switch`` as text; the loop and branch rules' data (a
:class:`Loop` or :class:`Branches` for the interpreter to walk), read without a rewriter."""

from __future__ import annotations

import libcst as cst
import pytest

from meshify.annotate._types import Layout
from meshify.errors import LayoutError, MeshifyError, UnsupportedError
from meshify.rewrite._values import Array, Operand, Static
from meshify.rewrite.rules import REGISTRY, closed_world
from meshify.rewrite.rules._api import At, Body, Branches, Call, Convert, Loop, Template
from tests.rules._rewrite import assert_rewrite, rewrite

X = 'x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]'
OUT = 'Tensor["batch", "d"]'
MESH = 'batch=2, model=4, rules={"f": "model"}'


def _error(body: str, cls: type = UnsupportedError) -> str:
    with pytest.raises(cls) as info:
        rewrite(body, X, OUT, MESH)
    text = str(info.value)
    assert "fix:" in text and "^" in text, text  # positioned, with a fix
    return text


def test_a_partial_sum_predicate_is_reduced_and_a_partial_branch_completed_inside_it() -> None:
    assert_rewrite("""
        return jax.lax.cond(jnp.sum(x) > 0, lambda h: h @ w1 @ w2, lambda h: h, x)
        """, """
        # meshify: psum over 'batch': jnp.sum(x) is a partial sum (reduced 'batch' split); comparison needs it whole
        # meshify: psum over 'model': h @ w1 @ w2 is a partial sum (contracted 'f' split); the cond branch's result (its dtype is read from the lambda's names) needs it whole
        return jax.lax.cond(mr.psum(jnp.sum(x, dtype=mr.sum_dtype(x)), "batch", like=x) > 0, lambda h: mr.psum(jnp.matmul(h @ w1, w2, preferred_element_type=mr.sum_dtype(h, w1, w2)), "model", like=(h, w1, w2)), lambda h: h, x)
        """, X, OUT, MESH)


def test_a_predicate_left_a_partial_sum_is_completed_before_the_cond() -> None:
    assert_rewrite("""
        s = jnp.sum(x)
        return jax.lax.cond(s, lambda h: h, lambda h: -h, x)
        """, """
        s = jnp.sum(x, dtype=mr.sum_dtype(x))
        # meshify: psum over 'batch': s is a partial sum (reduced 'batch' split); the cond predicate (every device must take the same branch) needs it whole
        s = mr.psum(s, "batch", like=x)
        return jax.lax.cond(s, lambda h: h, lambda h: -h, x)
        """, X, OUT, MESH)


def test_nested_def_branches_close_over_split_weights_and_convert_their_return() -> None:
    assert_rewrite("""
        def mlp(h):
            return jnp.tanh(h @ w1) @ w2

        def skip(h):
            return h

        return jax.lax.cond(jnp.mean(x) > 0, mlp, skip, x)
        """, """
        def mlp(h):
            # meshify: psum over 'model': jnp.tanh(h @ w1) @ w2 is a partial sum (contracted 'f' split); every return path needs it whole
            return mr.psum(jnp.matmul(jnp.tanh(h @ w1), w2, preferred_element_type=mr.sum_dtype(h, w1, w2)), "model", like=(h, w1, w2))

        def skip(h):
            return h

        # meshify: mean over split 'batch': local mean / 2 shards, summed later
        # meshify: psum over 'batch': jnp.mean(x) is a partial sum (reduced 'batch' split); comparison needs it whole
        return jax.lax.cond(mr.psum((jnp.mean(x, dtype=mr.sum_dtype(x)) / 2), "batch", like=x) > 0, mlp, skip, x)
        """, X, OUT, MESH)


def test_a_switch_over_a_list_keeps_the_list_with_each_branch_rewritten() -> None:
    assert_rewrite("""
        i = jnp.argmax(jnp.sum(x, axis=0)) % 2
        return jax.lax.switch(i, [lambda h: jnp.tanh(h @ w1) @ w2, lambda h: 2.0 * h], x)
        """, """
        # meshify: psum over 'batch': jnp.sum(x, axis=0) is a partial sum (reduced 'batch' split); argmax needs it whole
        i = jnp.argmax(mr.psum(jnp.sum(x, axis=0, dtype=mr.sum_dtype(x)), "batch", like=x)) % 2
        # meshify: psum over 'model': jnp.tanh(h @ w1) @ w2 is a partial sum (contracted 'f' split); the switch branch's result (its dtype is read from the lambda's names) needs it whole
        return jax.lax.switch(i, [lambda h: mr.psum(jnp.matmul(jnp.tanh(h @ w1), w2, preferred_element_type=mr.sum_dtype(h, w1, w2)), "model", like=(h, w1, w2)), lambda h: 2.0 * h], x)
        """, X, OUT, MESH)


def test_a_cond_result_keeps_its_dtype_for_a_partial_sum_formed_from_it() -> None:
    assert_rewrite("""
        h = jnp.tanh(x @ w1)
        return jax.lax.cond(jnp.sum(x) > 0, lambda a: a, lambda a: -a, h) @ w2
        """, """
        h = jnp.tanh(x @ w1)
        # meshify: psum over 'batch': jnp.sum(x) is a partial sum (reduced 'batch' split); comparison needs it whole
        # meshify: psum over 'model': jax.lax.cond(...) @ w2 is a partial sum (contracted 'f' split); the return hint needs it whole
        return mr.psum(jnp.matmul(jax.lax.cond(mr.psum(jnp.sum(x, dtype=mr.sum_dtype(x)), "batch", like=x) > 0, lambda a: a, lambda a: -a, h), w2, preferred_element_type=mr.sum_dtype(x, w1, w2)), "model", like=(x, w1, w2))
        """, X, OUT, MESH)


HELPERS = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


def block(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


def keep(x, w1, w2):
    return x


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["batch", "d"]:
    return jax.lax.cond(jnp.sum(x) > 0, block, keep, x, w1, w2)
'''


def test_a_helper_branch_returning_a_partial_sum_is_wrapped_to_complete_it() -> None:
    from meshify.rewrite import convert_source

    text = convert_source(HELPERS, "case.py", width=None).text
    assert ('return jax.lax.cond(mr.psum(jnp.sum(x, dtype=mr.sum_dtype(x)), "batch", like=x) > 0, '
            'lambda *branch_args: mr.psum(block__v1(*branch_args), "model", '
            'like=(x, w1, w2)), keep__v1, x, w1, w2)') in text, text


def test_a_nested_def_branch_returning_a_tuple_of_another_layout_is_refused() -> None:
    text = _error("""
        def a(h):
            return h @ w1 @ w2, h

        def b(h):
            return h, h

        return jax.lax.cond(jnp.sum(x) > 0, a, b, x)[0]
        """, LayoutError)
    assert "this cond branch returns ([batch/'batch', d] partial over 'model', [batch/'batch', d])" in text


def test_branches_of_different_dims_are_refused() -> None:
    text = _error("""
        return jax.lax.cond(jnp.sum(x) > 0, lambda h: h, lambda h: h @ w1, x)
        """, LayoutError)
    assert "the branches of this cond return different dims" in text


def test_a_switch_over_a_name_is_refused() -> None:
    text = _error("""
        fs = [lambda h: h, lambda h: -h]
        return jax.lax.switch(0, fs, x)
        """)
    assert "write the branches as a list literal" in text


def test_the_deprecated_operand_keyword_is_refused() -> None:
    text = _error("""
        return jax.lax.cond(jnp.sum(x) > 0, lambda h: h, lambda h: -h, operand=x)
        """)
    assert "does not model operand=" in text


def test_a_predicate_that_is_not_a_scalar_is_refused() -> None:
    text = _error("""
        return jax.lax.cond(x > 0, lambda h: h, lambda h: -h, x)
        """, LayoutError)
    assert "not a scalar" in text


# -- transforms at the call site: jax.checkpoint / jax.remat / jax.vmap ---------------------------


def test_checkpoint_of_a_nested_def_keeps_the_wrapper_and_its_policy() -> None:
    assert_rewrite("""
        def block(h):
            return h + jnp.tanh(h @ w1) @ w2

        return jax.checkpoint(block, policy=jax.checkpoint_policies.nothing_saveable)(x)
        """, """
        def block(h):
            # meshify: psum over 'model': jnp.tanh(h @ w1) @ w2 is a partial sum (contracted 'f' split); '+' needs it whole
            return h + mr.psum(jnp.matmul(jnp.tanh(h @ w1), w2, preferred_element_type=mr.sum_dtype(h, w1, w2)), "model", like=(h, w1, w2))

        return jax.checkpoint(block, policy=jax.checkpoint_policies.nothing_saveable)(x)
        """, X, OUT, MESH)


def test_vmap_over_a_split_batch_walks_the_row_without_the_mapped_dim() -> None:
    assert_rewrite("""
        return jax.vmap(lambda r: r @ w1 @ w2)(x)
        """, """
        # meshify: psum over 'model': r @ w1 @ w2 is a partial sum (contracted 'f' split); the lambda's result (its dtype is read from the lambda's names) needs it whole
        return jax.vmap(lambda r: mr.psum(jnp.matmul(r @ w1, w2, preferred_element_type=mr.sum_dtype(r, w1, w2)), "model", like=(r, w1, w2)))(x)
        """, X, OUT, MESH)


def test_vmap_puts_the_mapped_dim_back_at_out_axes() -> None:
    text = _error("""
        return jax.vmap(lambda r: r, out_axes=1)(x)
        """, LayoutError)
    assert "has dims [d, batch] but the return hint says [batch, d]" in text


def test_vmap_with_non_literal_in_axes_is_refused() -> None:
    text = _error("""
        axes = round(0.3)
        return jax.vmap(lambda r: r, in_axes=axes)(x)
        """)
    assert "in_axes=axes" in text


def test_vmap_over_dims_of_different_splits_is_refused() -> None:
    text = _error("""
        return jax.vmap(lambda r, c: r + c, in_axes=(0, 1))(x, w2)
        """, LayoutError)
    assert "give the mapped dims the same split" in text


def test_a_transform_of_something_meshify_cannot_follow_is_refused() -> None:
    text = _error("""
        return jax.vmap(jnp.tanh)(x)
        """)
    assert "'jnp.tanh' is not a function meshify can follow into" in text


# -- the rules' data: loops and branches as descriptors the interpreter walks --------------------

H = Array(Layout(("batch", "d"), (("batch",), ())))
LAYERS = Array(Layout(("layers", "d", "f"), ((), (), ("model",))))


def _evaluated(text: str, *values) -> Call:
    """``text``'s call as the interpreter hands it to its rule: each argument evaluated to ``values[i]``
    (a function argument is Static: it is walked, not evaluated), bound to the declared signature."""
    node = cst.parse_expression(text)
    assert isinstance(node, cst.Call)
    operands = [(a, Operand(v, a.value, a.value)) for a, v in zip(node.args, values, strict=True)]
    name = "jax.lax." + cst.Module([]).code_for_node(node.func).rsplit(".", 1)[-1]
    call = Call(node, name, tuple(o for a, o in operands if a.keyword is None),
                {a.keyword.value: o for a, o in operands if a.keyword is not None})
    closed_world(None, call, name)  # no rewriter: it is only read for errors
    return call


def test_a_scan_is_a_loop_over_one_layer_whose_outputs_are_stacked() -> None:
    call = _evaluated("jax.lax.scan(step, h, xs=ws)", Static(), H, LAYERS)
    lowering = REGISTRY["jax.lax.scan"](None, call)  # a rule reads its call only: no rewriter
    one_layer = Array(Layout(("d", "f"), ((), ("model",))))
    assert lowering.result is None and lowering.converts == () and lowering.replace == ()
    assert lowering.walks == Loop(Body(call.args[0], At(0)), (H, one_layer), carry=0, init=call.args[1],
                                  trips="layers", stacked="layers")


def test_a_fori_loop_is_a_loop_returning_its_carry_with_literal_bounds_as_its_trips() -> None:
    call = _evaluated("jax.lax.fori_loop(1, 4, body, h)", Static.of(1), Static.of(4), Static(), H)
    loop = REGISTRY["jax.lax.fori_loop"](None, call).walks
    assert isinstance(loop, Loop)
    assert (loop.body.at, loop.args[1], loop.carry, loop.init, loop.trips, loop.stacked) == \
        (At(2), H, 1, call.args[3], 3, None)


def test_a_cond_on_a_partial_sum_converts_its_predicate_and_names_both_branches() -> None:
    pred = Array(Layout((), (), frozenset({"batch"})))
    call = _evaluated("jax.lax.cond(p, mlp, lambda h: h, x)", pred, Static(), Static(), H)
    lowering = REGISTRY["jax.lax.cond"](None, call)
    assert lowering.converts == (Convert(call.args[0], Layout.replicated(()),
                                         "the cond predicate (every device must take the same branch)"),)
    assert lowering.walks == Branches((Body(call.args[1], At(1)), Body(call.args[2], At(2))), (call.args[3],))


def test_a_switch_names_each_branch_of_its_list_by_its_item() -> None:
    call = _evaluated("jax.lax.switch(1, [f, lambda h: -h], x, y)", Static.of(1), Static(), H, H)
    lowering = REGISTRY["jax.lax.switch"](None, call)
    bodies = lowering.walks.bodies
    assert lowering.converts == () and [b.at for b in bodies] == [At(1, 0), At(1, 1)]
    items = call.node.args[1].value.elements
    assert [b.fn.original for b in bodies] == [items[0].value, items[1].value]
    assert lowering.walks.operands == call.args[2:]


def test_a_carry_the_body_returns_whole_enters_the_loop_whole_once() -> None:
    """The interpreter's fixpoint: the first walk returns the carry in another layout, so the walk
    is undone and the carry converted before the loop (one psum, not one per iteration)."""
    assert_rewrite("""
        def step(c, w):
            return jnp.tanh(c), None

        h, _ = jax.lax.scan(step, x @ w1 @ w2, None, length=3)
        return h
        """, """
        def step(c, w):
            return jnp.tanh(c), None

        # meshify: psum over 'model': x @ w1 @ w2 is a partial sum (contracted 'f' split); the scan carry needs it whole
        h, _ = jax.lax.scan(step, mr.psum(jnp.matmul(x @ w1, w2, preferred_element_type=mr.sum_dtype(x, w1, w2)), "model", like=(x, w1, w2)), None, length=3)
        return h
        """, X, OUT, MESH)


def test_a_named_reshape_replaces_only_the_sizes_of_split_dims(monkeypatch) -> None:
    from meshify.rewrite import _interp
    from meshify.rewrite.rules import shapes

    seen = []

    def spy(rw, call, dims):
        seen.append(shapes.reshape_named(rw, call, dims))
        return seen[-1]

    monkeypatch.setattr(_interp, "reshape_named", spy)
    assert_rewrite("""
        h: Tensor["batch", "heads", "d_head"] = (x @ w1).reshape(x.shape[0], 8, -1)
        return jnp.sum(h, axis=(1, 2))[:, None] * x
        """, """
        h: Tensor["batch", "heads", "d_head"] = (x @ w1).reshape(mr.shard_size((x.shape[0] * 2), 2, "batch"), 2, -1)
        # meshify: psum over 'model': jnp.sum(h, axis=(1, 2))[:, None] * x is a partial sum (reduced 'heads' split); the return hint needs it whole
        return mr.psum(jnp.sum(h, axis=(1, 2), dtype=mr.sum_dtype(x, w1))[:, None] * x, "model", like=(x, w1))
        """, X, OUT, 'batch=2, model=4, rules={"f": "model", "heads": "model"}')
    (lowering,) = seen  # data: the batch size checked at call time, 8 heads over 4 shards, -1 kept
    assert lowering.result == Array(Layout(("batch", "heads", "d_head"), (("batch",), ("model",), ())))
    (at_batch, batch), (at_heads, heads) = lowering.replace
    assert (at_batch, at_heads, heads) == (At(0), At(1), 2)
    assert isinstance(batch, Template) and batch.text == "{mr}.shard_size({size}, {shards}, {dim})"
    assert [(k, v) for k, v in batch.fill if k != "size"] == [("shards", 2), ("dim", "batch")]


def test_a_shape_variable_is_spelled_out_as_a_tuple_of_per_shard_sizes(monkeypatch) -> None:
    from meshify.rewrite._interp import FunctionRewriter

    seen = []
    lower = FunctionRewriter.lower

    def spy(rw, call, lowering):
        if lowering.replace:
            seen.append((call.short, lowering.replace))
        return lower(rw, call, lowering)

    monkeypatch.setattr(FunctionRewriter, "lower", spy)
    assert_rewrite("""
        m = jnp.max(x, axis=1, keepdims=True)
        return x - jnp.broadcast_to(m, x.shape)
        """, """
        m = jnp.max(x, axis=1, keepdims=True)
        return x - jnp.broadcast_to(m, (mr.shard_size((x.shape[0] * 2), 2, "batch"), x.shape[1]))
        """, X, OUT, MESH)
    ((name, ((at, sizes),)),) = seen  # the shape argument, replaced by a tuple: the split size checked at call time
    assert (name, at, len(sizes)) == ("broadcast_to", At(1), 2)
    assert isinstance(sizes[0], Template) and isinstance(sizes[1], cst.Subscript)


# -- jax.lax.associative_scan -----------------------------------------------------------------------------


def test_associative_scan_along_a_whole_dim_runs_on_each_devices_block() -> None:
    got = rewrite("return jax.lax.associative_scan(jnp.add, x, axis=1)", 'x: Tensor["batch", "length"]',
                  'Tensor["batch", "length"]', mesh="batch=8")
    assert got == "return jax.lax.associative_scan(jnp.add, x, axis=1)", got


def test_associative_scan_of_an_elementwise_combine_along_a_split_dim_is_lax_cumulative_op() -> None:
    got = rewrite("return jax.lax.associative_scan(jnp.maximum, x, axis=1, reverse=True)", 'x: Tensor["batch", "model"]',
                  'Tensor["batch", "model"]')
    assert 'mr.cumulative(x, 1, "model", "cummax", reverse=True)' in got, got


def test_associative_scan_of_any_combine_along_a_split_dim_scans_blocks_and_folds_their_totals() -> None:
    for body, combine in (("return jax.lax.associative_scan(jnp.fmax, x, axis=1)", "jnp.fmax"),
                          ("return jax.lax.associative_scan(lambda a, b: a * b + b, x, axis=1)",
                           "lambda a, b: a * b + b")):
        got = rewrite(body, 'x: Tensor["batch", "model"]', 'Tensor["batch", "model"]')
        assert f'mr.associative_scan({combine}, x, axis=1, axis_name="model")' in got, got


@pytest.mark.parametrize("body, message", [
    ("return jax.lax.associative_scan(lambda a, b: (a[0] * b[0], b[1]), (x, z), axis=1)",
     "split over 'model', where other leaves of '(x, z)' are split over other mesh axes along the scanned dim"),
    ("return jax.lax.associative_scan(lambda a, b: a + b, (x @ w)[:, None], axis=2)", "a partial sum over 'model'"),
    ("return jax.lax.associative_scan(jnp.add, x, axis=2)", "associative_scan(axis=2) of 'x'"),
])
def test_associative_scan_refuses_leaves_split_otherwise_a_partial_sum_and_a_bad_axis(body: str, message: str) -> None:
    with pytest.raises(MeshifyError) as info:
        rewrite(body, 'x: Tensor["batch", "model"], w: Tensor["model", "d"], z: Tensor["d", "batch"]',
                'Tensor["batch", "model"]')
    assert message in str(info.value) and "case.py:9:" in str(info.value), str(info.value)


def test_associative_scan_slices_a_leaf_whole_along_the_split_scanned_dim_to_each_devices_block() -> None:
    """Sequence parallel (LRU/S5): a decay whole along the scanned length beside split inputs is sliced to each
    device's block (a local slice), its own dim on the length's axis first made whole (an all_to_all)."""
    got = rewrite("""
        decay = jnp.broadcast_to(lam, x.shape)
        elems = (decay, x)
        return jax.lax.associative_scan(lambda a, b: (a[0] * b[0], b[0] * a[1] + b[1]), elems, axis=1)[1]
        """, 'lam: Tensor["d"], x: Tensor["batch", "length", "d"]', 'Tensor["batch", "length", "d"]',
                  mesh="batch=2, model=4, rules={'length': 'model', 'd': 'model'}")
    assert 'mr.associative_scan(lambda a, b: (a[0] * b[0], b[0] * a[1] + b[1]), (jax.lax.all_to_all(elems[0], ' \
        '"model", split_axis=1, concat_axis=2, tiled=True), elems[1]), axis=1, axis_name="model")[1]' in got, got
