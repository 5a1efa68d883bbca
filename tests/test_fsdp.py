"""Layout rules resolved per value in dim order, and the FSDP layouts they make possible (issue #15).

``rules={"batch": "data", "d_model": "data"}``: an activation [batch, d_model] splits its batch
over 'data' (d_model, later in the value, finds 'data' taken and stays whole); a weight
[d_model, d_ff] splits d_model over 'data'.  The weight is gathered right before its use, as
varying over 'data', so JAX's transpose reduce-scatters its gradient back to the blocks.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshify.annotate._types import Layout, MeshSpec, Rules
from meshify.errors import RulesError
from meshify import mesh
from meshify.rewrite import convert_source

MESH = MeshSpec.of(data=4, model=2)


def test_a_later_dim_whose_axis_is_taken_stays_whole() -> None:
    rules = Rules.parse(MESH, {"batch": "data", "d_model": "data", "d_ff": "model"})
    assert rules.layout(("batch", "d_model")) == Layout(("batch", "d_model"), (("data",), ()))
    assert rules.layout(("d_model", "d_ff")) == Layout(("d_model", "d_ff"), (("data",), ("model",)))
    assert rules.layout(("d_ff", "d_model")) == Layout(("d_ff", "d_model"), (("model",), ("data",)))


def test_candidates_are_tried_in_order() -> None:
    for spelled in ({"heads": "model", "d_model": ["model", "data", None]},
                    {"heads": "model", "d_model": ("model", "data", None)},
                    "heads:model;d_model:model|data|none"):
        rules = Rules.parse(MESH, spelled)
        assert rules.layout(("d_model",)).axes == (("model",),)
        assert rules.layout(("heads", "d_model")).axes == (("model",), ("data",)), spelled
        assert rules.layout(("batch", "heads", "d_model")).axes == ((), ("model",), ("data",))
    both = Rules.parse(MESH, {"a": "data", "b": "model", "d": ["data", "model", None]})
    assert both.layout(("a", "b", "d")).axes == (("data",), ("model",), ())


def test_a_dim_named_twice_splits_its_first_copy_only() -> None:
    rules = Rules.parse(MeshSpec.of(model=4), None)
    assert rules.layout(("model", "model")).axes == (("model",), ())


def test_a_candidate_naming_no_mesh_axis_is_an_error() -> None:
    with pytest.raises(RulesError, match="names no mesh axis"):
        Rules.parse(MESH, {"d_model": ["data", "modle"]})
    with pytest.raises(RulesError, match="expected a mesh axis name"):
        Rules.parse(MESH, {"d_model": ["data", 3]})


SOURCE = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=4, model=2, rules={"batch": "data", "d_model": "data", "d_ff": "model"})
def loss(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
         w2: Tensor["d_ff", "d_model"]) -> Tensor[()]:
    h = jax.nn.relu(x @ w1)
    y = h @ w2
    return jnp.mean((y - x) ** 2)
'''


def test_fsdp_gathers_each_weight_before_its_use_as_varying() -> None:
    text = convert_source(SOURCE, "fsdp.py").text
    assert 'mr.all_gather(w1, "data", axis=0, varying=True)' in text
    assert 'mr.all_gather(w2, "data", axis=1, varying=True)' in text
    assert "its gradient is reduce-scattered back" in text
    assert '"w1": mr.ArgSpec(("d_model", "d_ff"), mr.P("data", "model"))' in text
    assert '"x": mr.ArgSpec(("batch", "d_model"), mr.P("data", None))' in text


def _module(tmp_path, source: str):
    import importlib.util

    path = tmp_path / "fsdp_case.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("fsdp_case", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fsdp_loss_and_gradients_match_one_device_and_keep_the_weights_layout(tmp_path) -> None:
    mod = _module(tmp_path, SOURCE)
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((16, 8)), jnp.float32)
    w1 = jnp.asarray(rng.standard_normal((8, 16)) / 4, jnp.float32)
    w2 = jnp.asarray(rng.standard_normal((16, 8)) / 4, jnp.float32)
    step = jax.jit(jax.value_and_grad(mod.loss, argnums=(1, 2)))
    loss, (g1, g2) = step(x, w1, w2)
    want, (r1, r2) = jax.value_and_grad(mod.loss.reference, argnums=(1, 2))(x, w1, w2)
    np.testing.assert_allclose(loss, want, rtol=1e-5)
    np.testing.assert_allclose(g1, r1, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(g2, r2, rtol=1e-4, atol=1e-6)
    assert g1.sharding.spec == jax.sharding.PartitionSpec("data", "model")
    assert g2.sharding.spec == jax.sharding.PartitionSpec("model", "data")
    hlo = step.lower(x, w1, w2).compile().as_text()
    # The backward pass reduce-scatters the weights' gradients (not an all-reduce and a slice).
    assert len(re.findall(r" reduce-scatter(?:-start)?\(", hlo)) >= 1


def _gpt2_fsdp(tmp_path, checkpoint: bool = False, regather: bool = True):
    """examples/gpt2.py under FSDP x TP on 4x2: d_model over the data axis, heads/d_ff/vocab over model
    (``checkpoint``: each block under ``jax.checkpoint``, as users remat layers; ``regather=False``:
    ``@mesh(..., regather=False)``)."""
    import sys
    from pathlib import Path

    source = (Path(__file__).resolve().parent.parent / "examples" / "gpt2.py").read_text()
    old = '@mesh(batch=2, model=4, rules={"heads": "model", "d_ff": "model", "vocab": "model"})'
    assert old in source
    source = source.replace(old, '@mesh(batch=4, model=2, rules={"heads": "model", "d_ff": "model", '
                                 '"vocab": "model", "d_model": "batch"}' + ("" if regather else ", regather=False") + ")")
    if checkpoint:
        source = source.replace("\ndef block(", "\n@partial(jax.checkpoint, static_argnums=(3, 4))\ndef block(")
        source = source.replace("import jax\n", "import jax\nfrom functools import partial\n", 1)
    name = "gpt2_fsdp" + ("_checkpoint" if checkpoint else "") + ("" if regather else "_keep")
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, source


def test_gpt2_under_fsdp_and_tensor_parallelism_matches_one_device_and_shrinks_memory(tmp_path) -> None:
    import optax

    m, source = _gpt2_fsdp(tmp_path)
    text = convert_source(source, "gpt2_fsdp.py").text
    assert 'mr.all_gather(p.wqkv, "batch", axis=0, varying=True)' in text  # gathered one layer at a time, in scan
    params = m.init_params()
    tokens, targets = next(m.batches(1))
    key, cfg = jax.random.key(0), m.DEFAULT_CONFIG
    placed = m.gpt2.place(params, tokens, targets, key, cfg, False)[0]

    def loss_of(fn):
        return lambda p: fn(p, tokens, targets, key, cfg, False)[0]

    loss, grads = jax.jit(jax.value_and_grad(loss_of(m.gpt2)))(placed)
    want, expected = jax.value_and_grad(loss_of(m.gpt2.reference))(params)
    np.testing.assert_allclose(loss, want, rtol=1e-5)
    for g, e in zip(jax.tree.leaves(grads), jax.tree.leaves(expected)):
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-6)
    optimizer = optax.adam(1e-3)
    state = optimizer.init(placed)  # as examples/gpt2.py does
    def specs(tree) -> list[tuple]:
        out = []
        for x in jax.tree.leaves(tree):
            assert isinstance(x.sharding, jax.sharding.NamedSharding), (x.shape, x.sharding)
            spec = list(x.sharding.spec)
            while spec and spec[-1] is None:
                spec.pop()
            out.append(tuple(spec))
        return out

    mu, nu = state[0].mu, state[0].nu
    assert specs(grads) == specs(placed)
    assert specs(mu) == specs(placed)
    assert specs(nu) == specs(placed)
    # Parameters + gradients + Adam's two moments: per device, within 5% of an eighth of the total.
    leaves = [*jax.tree.leaves(placed), *jax.tree.leaves(grads), *jax.tree.leaves(mu), *jax.tree.leaves(nu)]
    per_device = sum(x.addressable_shards[0].data.nbytes for x in leaves)
    total = sum(x.nbytes for x in leaves)
    assert per_device <= 1.05 * total / 8, (per_device, total / 8)


def test_the_backward_pass_gathers_fsdp_weights_again_unless_told_to_keep_them(tmp_path) -> None:
    """By default (``@mesh(regather=True)``) the scanned block's FSDP gathers are redone in the
    backward pass (``mr.regathering``) instead of keeping every layer's gathered weights: less memory,
    more all-gathers, the same gradients.  A user's own ``jax.checkpoint`` over the block regathers
    too; ``regather=False`` keeps them."""
    results = {}
    for variant in ("default", "checkpoint", "keep"):
        m, source = _gpt2_fsdp(tmp_path, checkpoint=variant == "checkpoint", regather=variant != "keep")
        text = convert_source(source, "gpt2_fsdp.py").text
        assert ("jax.lax.scan(mr.regathering(" in text) == (variant != "keep"), variant
        params = m.init_params()
        tokens, targets = next(m.batches(1))
        key, cfg = jax.random.key(0), m.DEFAULT_CONFIG
        placed = m.gpt2.place(params, tokens, targets, key, cfg, False)

        def loss(p, tokens, targets, key, m=m, cfg=cfg):
            return m.gpt2(p, tokens, targets, key, cfg, False)[0]

        step = jax.jit(jax.value_and_grad(loss))
        compiled = step.lower(*placed[:4]).compile()
        value, grads = step(*placed[:4])
        gathers = len(re.findall(r" all-gather(?:-start)?\(", compiled.as_text()))
        results[variant] = (value, grads, compiled.memory_analysis().temp_size_in_bytes, gathers)
    v0, g0, temp0, gathers0 = results["default"]
    for variant in ("checkpoint", "keep"):
        v1, g1, _, _ = results[variant]
        np.testing.assert_allclose(v1, v0, rtol=1e-6)
        for a, b in zip(jax.tree.leaves(g1), jax.tree.leaves(g0)):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-7)
    _, _, temp_keep, gathers_keep = results["keep"]
    assert temp0 < temp_keep and gathers0 > gathers_keep
    assert results["checkpoint"][3] >= gathers0


def _gathers(step, *args) -> int:
    return len(re.findall(r" all-gather(?:-start)?\(", step.lower(*args).compile().as_text()))


LOOP_SOURCE = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=4, model=2, rules={"batch": "data", "d_model": "data", "d_ff": "model"})
def loss(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
         w2: Tensor["layers", "d_ff", "d_model"]) -> Tensor[()]:
    def layer(i, h):
        return h + jax.nn.relu(h @ w1[i]) @ w2[i]
    y = jax.lax.fori_loop(0, w1.shape[0], layer, x)
    return jnp.mean((y - x) ** 2)
'''


def test_a_fori_loop_body_that_gathers_weights_runs_under_regathering(tmp_path) -> None:
    text = convert_source(LOOP_SOURCE, "fsdp_loop.py").text
    assert "jax.lax.fori_loop(0, w1.shape[0], mr.regathering(layer), x)" in text
    mod = _module(tmp_path, LOOP_SOURCE)
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.standard_normal((16, 8)), jnp.float32)
    w1 = jnp.asarray(rng.standard_normal((3, 8, 16)) / 4, jnp.float32)
    w2 = jnp.asarray(rng.standard_normal((3, 16, 8)) / 4, jnp.float32)
    loss, grads = jax.jit(jax.value_and_grad(mod.loss, argnums=(1, 2)))(x, w1, w2)
    want, expected = jax.value_and_grad(mod.loss.reference, argnums=(1, 2))(x, w1, w2)
    np.testing.assert_allclose(loss, want, rtol=1e-5)
    for g, r in zip(grads, expected):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-6)


def test_regather_must_be_a_literal_bool(tmp_path) -> None:
    from meshify.errors import AnnotationError

    bad = SOURCE.replace('"d_ff": "model"})', '"d_ff": "model"}, regather="no")')
    with pytest.raises(AnnotationError, match=r"regather='no'|regather=\"no\"") as info:
        convert_source(bad, "fsdp.py")
    assert "regather=False" in str(info.value)
    with pytest.raises(AnnotationError, match="regather"):
        mesh(data=4, regather="no")
