"""Sequences of hinted pytrees as parameter fields (issue #14: GPT-2's ``blocks: tuple[Block, ...]``).

The rewrite sees one item (every item has the item hint's layout); the runtime builds a program per
length.  Numbers: tests/soundness/sequence_*.py and the GPT-2 of tests/test_real_models_zoo.py.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshify.annotate._types import MeshSpec
from meshify.errors import CallError, MeshifyError
from meshify.rewrite import convert_source
from meshify.runtime import ArgSpec, P, TreeSpec, bind

HEADER = '''\
from typing import NamedTuple

import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


class Block(NamedTuple):
    w_in: Tensor["d", "d_ff"]
    w_out: Tensor["d_ff", "d"]


class Params(NamedTuple):
    blocks: {container}
    scale: Tensor["d"]


@mesh(batch=2, model=4, rules={{"d_ff": "model"}})
def f(params: Params, x: Tensor["batch", "d"]) -> {returns}:
'''


def _convert(body: str, returns: str = 'Tensor["batch", "d"]', container: str = "tuple[Block, ...]") -> str:
    source = HEADER.format(container=container, returns=returns) + "".join(
        f"    {line}\n" for line in body.strip().splitlines())
    return convert_source(source, "case.py").text


@pytest.mark.parametrize("container, cls", [("tuple[Block, ...]", "tuple"), ("list[Block]", "list")])
def test_a_sequence_field_is_one_item_spec_of_any_length(container: str, cls: str) -> None:
    text = _convert("return x * params.scale", container=container)
    assert f'"blocks": mr.TreeSpec({cls}, "sequence", {{\n                "*": mr.TreeSpec(Block, "namedtuple"' \
        in text, text
    assert '"w_in": mr.ArgSpec(("d", "d_ff"), mr.P(None, "model"))' in text, text


def test_a_loop_over_the_blocks_rewrites_the_body_once_for_the_item() -> None:
    text = _convert("""
for block in params.blocks:
    x = x + jax.nn.relu(x @ block.w_in) @ block.w_out
return x
""")
    assert "    for block in params.blocks:\n" in text, text
    assert "# meshify: psum over 'model'" in text, text


def test_stacked_blocks_gain_a_leading_unsplit_dim_named_after_the_sequence() -> None:
    text = _convert("""
stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *params.blocks)
return stacked.w_in
""", returns='Tensor["blocks", "d", "d_ff"]')
    assert "stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *params.blocks)\n    return stacked.w_in" in text, text
    assert 'out_specs=mr.P(None, None, "model")' in text, text


def test_a_lambda_mapped_over_pytrees_is_rewritten_once_for_every_leaf() -> None:
    """Every leaf needs the same code here (a local elementwise update): the call stays as written."""
    text = _convert("""
new = jax.tree.map(lambda w, g: w - 0.1 * jnp.tanh(g), params, params)
return x @ new.blocks[0].w_in @ new.blocks[0].w_out * new.scale
""")
    assert "    new = jax.tree.map(lambda w, g: w - 0.1 * jnp.tanh(g), params, params)\n" in text, text


def test_len_and_a_static_index_read_the_item() -> None:
    text = _convert("""
n = len(params.blocks)
return x @ params.blocks[n - 1].w_in @ params.blocks[0].w_out
""")
    assert "psum" in text, text


@pytest.mark.parametrize("body, headline", [
    ("return jax.tree.map(lambda *xs: jnp.stack(xs, axis=1), *params.blocks).w_in[0]",
     "with a function other than a lambda, or with keywords or unpacked trees"),
    ("return x * jax.tree.map(jnp.sum, params).scale", "needs other code for 'params.scale'"),
    ("return x * jax.tree.map(lambda w: jnp.sum(w), params).scale",
     "needs other code for 'params.scale' than for 'params.blocks.*.w_in'"),
    ("return x * jax.tree.map(lambda w, s: w, params, params.scale).scale", "over pytrees of different structures"),
    ("return jax.tree.map(lambda *xs: jnp.stack(xs), *(x, x))", "which is not a sequence parameter"),
    ("return x @ params.blocks[params.scale[0].astype(int)].w_in", "indexing the sequence 'params.blocks' with an array"),
    ("return jnp.asarray(params.blocks)", "on a tuple or pytree 'params.blocks'"),
    ("return params + x", "on a tuple or pytree 'params'"),
])
def test_what_no_rule_models_about_a_sequence_is_refused_with_a_fix(body: str, headline: str) -> None:
    with pytest.raises(MeshifyError) as info:
        _convert(body)
    text = str(info.value)
    assert headline in text and "fix:" in text, text


# -- runtime: one program per length ---------------------------------------------------------------------

SPEC = {"blocks": TreeSpec(tuple, "sequence", {"*": ArgSpec(("d", "d_ff"), P(None, "model"))}),
        "x": ArgSpec(("batch", "d"), P("batch", None))}


def _local(blocks, x):
    for w in blocks:
        x = x @ w
        x = jax.lax.psum(x, "model") @ jnp.ones((w.shape[1] * 4, w.shape[0]), x.dtype)[: w.shape[1]]
    return x


def test_each_length_has_its_program_and_the_items_their_specs() -> None:
    fn = bind(_local, MeshSpec.of(batch=2, model=4), SPEC, P("batch", None))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    ws = [rng.standard_normal((8, 16)).astype(np.float32) for _ in range(3)]
    for n in (2, 3, 2):
        fn(tuple(ws[:n]), x)
    assert sorted(len(k) for k in fn._lengths) == [3, 4], list(fn._lengths)
    placed, _ = fn.place(tuple(ws[:2]), x)
    assert [w.sharding.spec for w in placed] == [P(None, "model")] * 2


def test_the_arrays_of_a_sequence_have_no_sharding_before_a_call() -> None:
    fn = bind(_local, MeshSpec.of(batch=2, model=4), SPEC, P("batch", None))
    with pytest.raises(CallError, match="depend on each call's items"):
        fn.shardings


def test_a_sequence_argument_that_is_not_a_tuple_or_list_is_refused() -> None:
    fn = bind(_local, MeshSpec.of(batch=2, model=4), SPEC, P("batch", None))
    with pytest.raises(CallError, match="'blocks' should be a tuple or list, got ndarray"):
        fn(np.zeros((2, 8, 16), np.float32), np.zeros((4, 8), np.float32))


# -- one class, renamed per use: Annotated[Mlp, {"d_in": "patch"}] -------------------------------------------

RENAMED = '''\
from typing import Annotated, NamedTuple

import jax
from meshify import Tensor, mesh


class Mlp(NamedTuple):
    w1: Tensor["d_in", "d_hidden"]
    w2: Tensor["d_hidden", "d_in"]


class Block(NamedTuple):
    token_mlp: {token}
    channel_mlp: Annotated[Mlp, {{"d_in": "d", "d_hidden": "d_ff"}}]


def mlp(p: Mlp, x):
    return jax.nn.gelu(x @ p.w1) @ p.w2


@mesh(batch=2, model=4, rules={{"tok_ff": "model", "d_ff": "model"}})
def f(block: Block, x: Tensor["batch", "patch", "d"]) -> Tensor["batch", "patch", "d"]:
    y = mlp(block.token_mlp, x.transpose(0, 2, 1)).transpose(0, 2, 1)
    return mlp(block.channel_mlp, x + y)
'''


def test_a_class_used_twice_takes_each_fields_renamed_dims() -> None:
    text = convert_source(RENAMED.format(token='Annotated[Mlp, {"d_in": "patch", "d_hidden": "tok_ff"}]'),
                          "case.py").text
    assert '"w1": mr.ArgSpec(("patch", "tok_ff"), mr.P(None, "model"))' in text, text
    assert '"w1": mr.ArgSpec(("d", "d_ff"), mr.P(None, "model"))' in text, text


@pytest.mark.parametrize("token, message, fix", [
    ("Mlp", "letter", 'Annotated[Mlp, {"d_in": "patch", "d_hidden": "tok_ff"}]'),
    ('Annotated[Mlp, {"d_out": "patch"}]', "Mlp has no dim 'd_out' to rename (its dims: d_hidden, d_in)",
     "rename one of its dims"),
    ('Annotated[Mlp, "patch", "tok_ff"]', "a pytree class's Annotated hint takes one dict", '{"d_in": "patch"}'),
    ('Annotated[Mlp, {"d_in": 3}]', "is not a pair of quoted dims", "Annotated[Mlp"),
    ('Annotated[Mlp, {"d_in": "*p"}]', "renamed dim '*p' is not an identifier", "name the dim"),
])
def test_a_class_used_with_other_dims_is_refused_with_the_renaming_spelling(token: str, message: str,
                                                                            fix: str) -> None:
    with pytest.raises(MeshifyError) as info:
        convert_source(RENAMED.format(token=token), "case.py")
    text = str(info.value)
    assert message in text and fix in text, text


# -- a dict argument holds its hint's keys and no others ---------------------------------------------------------

EXTRA_KEY = '''\
from typing import TypedDict

import jax
from meshify import Tensor, mesh


class Params(TypedDict):
    w: Tensor["d", "f"]
    b: Tensor["f"]


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def f(params: Params, x: Tensor["batch", "d"]) -> Params:
    return jax.tree.map(lambda p: p * 2, params)
'''


def test_a_dict_argument_with_a_key_its_hint_does_not_declare_is_refused_at_the_parameter(tmp_path) -> None:
    # (the sharded function runs on the hint's fields: the extra key would silently drop out of the result)
    path = tmp_path / "extra_key.py"
    path.write_text(EXTRA_KEY)
    namespace: dict = {"__name__": "extra_key", "__file__": str(path)}
    exec(compile(EXTRA_KEY, str(path), "exec"), namespace)
    fn = namespace["f"]
    params = {"w": np.ones((4, 8), np.float32), "b": np.ones(8, np.float32)}
    x = np.ones((4, 4), np.float32)
    assert sorted(fn(params, x)) == sorted(fn.reference(params, x)) == ["b", "w"]
    with pytest.raises(CallError, match="argument 'params' has key 'extra', which its hint Params does not declare") \
            as raised:
        fn({**params, "extra": np.ones(3, np.float32)}, x)
    assert f"{path}:13:" in str(raised.value) and "leave it out" in str(raised.value)
