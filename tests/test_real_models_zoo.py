"""Real models as public pure-JAX code writes them (tests/real_models/): each plain file and its parallel
version differ by dims hints and one ``@mesh`` line only, and the parallel one gives one device's logits
and gradients on a 2x4 and a 1x8 mesh, through the decorator and through a converted file.

Issue #14, "What it must show" 1-3.  A model meshify still refuses is marked ``xfail(strict=True)`` with
the refusal; its files stay as a user writes them.
"""

from __future__ import annotations

import difflib
import importlib.util
import itertools
import re
import sys
import typing
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshify.rewrite import convert_source

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = ROOT / "tests" / "real_models"

#: Dim name -> global size, per model; "blocks" is the length of a tuple[Block, ...].
SIZES: dict[str, dict[str, int]] = {
    "gpt2": {"batch": 4, "length": 8, "positions": 16, "vocab": 64, "d_model": 32, "qkv": 3, "heads": 8,
             "d_head": 4, "d_ff": 64, "blocks": 2},
    "llama": {"batch": 4, "length": 8, "vocab": 64, "d_model": 32, "layers": 2, "q_features": 64,
              "kv_features": 32, "hidden": 64},
    "vit": {"batch": 4, "height": 8, "width": 8, "channels": 3, "patch_features": 48, "tokens": 5, "d_model": 32,
            "heads": 8, "d_head": 4, "mlp": 64, "classes": 16, "layers": 2},
    "t5": {"batch": 4, "input_length": 8, "length": 8, "vocab": 64, "d_model": 32, "heads": 8, "d_head": 4,
           "d_ff": 64, "layers": 2, "buckets": 16},
    "mistral": {"batch": 4, "length": 8, "vocab": 64, "d_model": 32, "layers": 2, "q_features": 128,
                "kv_features": 32, "hidden": 64},
    "mixtral": {"batch": 4, "length": 8, "vocab": 64, "d_model": 32, "q_features": 64, "experts": 8, "d_ff": 16,
                "blocks": 2},
    "mixer": {"batch": 4, "height": 8, "width": 8, "channels": 3, "patch_features": 48, "tokens": 4, "d_model": 32,
              "tokens_ff": 16, "d_ff": 64, "classes": 16, "blocks": 2},
    "nanogpt": {"batch": 4, "length": 8, "positions": 16, "vocab": 64, "d_model": 32, "qkv_features": 96,
                "attn_features": 32, "d_ff": 128, "blocks": 2},
    "bert": {"batch": 4, "length": 8, "positions": 16, "types": 2, "vocab": 64, "d_model": 32, "attn_features": 32,
             "d_ff": 64, "pooled": 32, "labels": 4, "blocks": 2},
    "gemma": {"batch": 4, "length": 8, "vocab": 64, "d_model": 32, "layers": 2, "heads": 8, "head_dim": 4, "kv": 2,
              "gates": 2, "hidden": 64},
    "whisper": {"batch": 4, "frames": 16, "mels": 8, "kernel": 3, "conv_channels": 32, "d_model": 32, "positions": 12,
                "attn_features": 32, "mlp": 64, "blocks": 2},
    "switch": {"batch": 4, "length": 8, "positions": 16, "vocab": 64, "d_model": 32, "heads": 8, "d_head": 4,
               "experts": 8, "d_ff": 16, "blocks": 2},
    "dit": {"batch": 4, "height": 8, "width": 8, "channels": 4, "timesteps": 1000, "classes": 11, "patch_features": 16,
            "tokens": 16, "frequencies": 16, "d_model": 32, "modulation": 192, "qkv_features": 96,
            "attn_features": 32, "mlp": 128, "final_modulation": 64, "out_features": 32, "blocks": 2},
    "mamba": {"batch": 4, "length": 8, "vocab": 64, "d_model": 16, "in_features": 64, "d_inner": 32, "d_conv": 4,
              "x_features": 20, "dt_rank": 4, "d_state": 8, "blocks": 2},
    "convnext": {"batch": 4, "height": 16, "width": 16, "channels": 3, "patch_h": 4, "patch_w": 4, "kernel_h": 7,
                 "kernel_w": 7, "dim1": 16, "hidden1": 64, "down_h": 2, "down_w": 2, "dim2": 32, "hidden2": 128,
                 "classes": 10, "blocks": 2},
    "swin": {"batch": 4, "height": 16, "width": 16, "channels": 3, "patch_features": 12, "dim1": 32, "qkv1": 96,
             "attn1": 32, "heads": 8, "rel": 49, "mlp1": 64, "merged": 128, "dim2": 64, "qkv2": 192, "attn2": 64,
             "mlp2": 128, "classes": 10, "blocks": 2},
    "clip": {"batch": 4, "height": 8, "width": 8, "channels": 3, "patch_h": 4, "patch_w": 4, "tokens": 5, "d_model": 32,
             "qkv_features": 96, "attn_features": 32, "mlp": 64, "embed": 24, "vocab": 64, "length": 8, "positions": 16,
             "d_text": 16, "text_qkv": 48, "text_attn": 16, "text_mlp": 32, "blocks": 2},
    "rwkv": {"batch": 4, "length": 8, "vocab": 64, "d_model": 32, "attn_features": 32, "heads": 8, "head_size": 4,
             "d_ff": 64, "blocks": 2},
    "deepseek": {"batch": 4, "length": 8, "vocab": 64, "d_model": 32, "q_features": 48, "kv_a": 18, "kv_lora": 16,
                 "kv_b": 64, "v_features": 32, "experts": 8, "d_ff": 16, "shared_ff": 32, "blocks": 2},
    "perceiver": {"batch": 4, "inputs": 16, "features": 3, "in_features": 12, "d_context": 16, "latents": 8,
                  "d_model": 32, "cross_features": 32, "cross_kv": 64, "attn_features": 32, "kv_features": 64, "mlp": 64,
                  "classes": 10, "blocks": 2},
    "gnn": {"nodes": 24, "edges": 48, "graphs": 4, "features": 6, "d_model": 16, "hidden": 32, "attn_features": 32,
            "heads": 8, "d_head": 4, "classes": 5, "blocks": 2},
    "lru": {"batch": 4, "length": 8, "vocab": 64, "d_model": 16, "d_hidden": 32, "states": 64, "glu": 32,
            "classes": 5, "blocks": 2},
    "dlrm": {"batch": 4, "dense_features": 8, "bottom_hidden": 32, "d_embed": 16, "vocab": 64, "tables": 3, "bag": 5,
             "interactions": 22, "top_hidden": 32, "1": 1, "blocks": 3},
    "eqx_gpt": {"batch": 4, "length": 8, "positions": 16, "vocab": 64, "d_model": 32, "qkv_features": 96,
                "attn_features": 32, "d_ff": 64, "blocks": 2},
}

#: Models meshify refuses today, with the refusal (the test fails if it starts to pass: update it).
REFUSED: dict[str, str] = {}

MESHES = {"2x4": "batch=2, model=4", "1x8": "batch=1, model=8"}
_names = itertools.count()


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(f"meshify_zoo_{path.stem}_{next(_names)}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and TypedDicts look their module up
    spec.loader.exec_module(module)
    return module


# -- the diff is hints and the decorator ---------------------------------------------------------


#: What the parallel file may add on a line of its own: the decorator and the imports it needs.
_ADDED_LINES = re.compile(r'@mesh\(.*\)$|from meshify import mesh$|$')
_HINT = re.compile(r'Annotated\[(jax\.Array|np\.ndarray), [^\]]*\]')
#: A pytree class's dims renamed for one use: ``Annotated[MlpBlock, {"d_in": "tokens"}]`` (the class's own name).
_RENAMED = re.compile(r'Annotated\[(\w+), \{[^\]]*\}\]')


def _without_hints(line: str, plain: str) -> str:
    """``line`` with its hints taken out: each becomes ``jax.Array`` again (a renamed class its class), or goes
    as a whole where the plain line had no hint there (a helper's table parameter, ``cos: Annotated[...]``)."""
    line = _RENAMED.sub(r"\1", _HINT.sub(r"\1", line))
    # (a parameter's, or an assignment's: ``mask: jax.Array | None = ...``, a module's ``TABLE: np.ndarray = ...``)
    bare = re.sub(r"(\w+): (?:jax\.Array|np\.ndarray)(?: \| None)?(?=\s*[,)=])", r"\1", line)
    return bare if bare == plain else line


@pytest.mark.parametrize("model", list(SIZES))
def test_parallel_file_is_the_plain_file_plus_hints_and_one_decorator(model: str) -> None:
    plain = [line for line in (MODELS_DIR / f"{model}_plain.py").read_text().splitlines()[1:] if line]
    hinted = (MODELS_DIR / f"{model}.py").read_text().splitlines()[1:]  # after the docstring's line
    decorators = [line for line in hinted if line.startswith("@mesh(")]
    assert len(decorators) == 1, decorators
    kept = [line.replace("from typing import Annotated, ", "from typing import ") for line in hinted
            if line and not (_ADDED_LINES.fullmatch(line) and line not in plain)]
    assert len(kept) == len(plain), "\n".join(difflib.unified_diff(plain, kept, lineterm=""))
    restored = [_without_hints(line, old) for line, old in zip(kept, plain)]
    assert restored == plain, "\n".join(difflib.unified_diff(plain, restored, lineterm=""))
    assert any(_HINT.search(line) for line in hinted)


def diff_stat(model: str) -> tuple[int, int]:
    """(lines changed, of which hint lines) from the plain to the parallel file, imports and docstring apart."""
    plain = (MODELS_DIR / f"{model}_plain.py").read_text().splitlines()[1:]
    hinted = (MODELS_DIR / f"{model}.py").read_text().splitlines()[1:]
    added = [line[2:] for line in difflib.ndiff(plain, hinted) if line.startswith("+ ")]
    code = [line for line in added if line.strip() and not line.startswith(("from ", "import "))]
    return len(code), sum(1 for line in code if _HINT.search(line) or _RENAMED.search(line))


@pytest.mark.parametrize("model", list(SIZES))
def test_readme_gives_each_models_diff_stat(model: str) -> None:
    """README's table row of ``model``: "N: H hints ..., 1 `@mesh`" as :func:`diff_stat` counts them."""
    rows = [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith(f"| `{model}` |")]
    assert len(rows) == 1, rows
    changed, hints = diff_stat(model)
    assert f"| {changed}: {hints} hints" in rows[0], (rows[0], changed, hints)
    assert f"{changed - hints} `@mesh` |" in rows[0], rows[0]
    status = "refused" if model in REFUSED else "matches one device"
    assert rows[0].split("|")[4].strip().startswith(status), rows[0]


# -- numbers: one device vs the mesh -----------------------------------------------------------------


def _build(hint: Any, sizes: dict[str, int], rng: np.random.Generator) -> Any:
    """Random parameters shaped by their class's dims hints."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated and isinstance(hint.__metadata__[0], dict):  # a class's dims renamed
        renamed = {old: sizes[new] for old, new in hint.__metadata__[0].items()}
        return _build(typing.get_args(hint)[0], {**sizes, **renamed}, rng)
    if origin is typing.Annotated:
        dims = () if hint.__metadata__ == ((),) else hint.__metadata__  # ``Annotated[jax.Array, ()]``: a scalar
        shape = tuple(1 if d == "1" else sizes[d] for d in dims)
        return jnp.asarray(rng.standard_normal(shape) * 0.3, jnp.float32)
    if origin is tuple:
        item, _ = typing.get_args(hint)
        return tuple(_build(item, sizes, rng) for _ in range(sizes["blocks"]))
    if origin is list:
        item, = typing.get_args(hint)
        return [_build(item, sizes, rng) for _ in range(sizes["blocks"])]
    fields = typing.get_type_hints(hint, include_extras=True)
    values = {name: _build(h, sizes, rng) for name, h in fields.items()}
    return values if hasattr(hint, "__total__") else hint(**values)


def _as_plain(value: Any, plain: Any) -> Any:
    """The same leaves in the plain module's classes."""
    if isinstance(value, dict):
        return {k: _as_plain(v, plain) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return getattr(plain, type(value).__name__)(*[_as_plain(v, plain) for v in value])
    if isinstance(value, tuple):
        return tuple(_as_plain(v, plain) for v in value)
    if isinstance(value, list):
        return [_as_plain(v, plain) for v in value]
    return value


def _inputs(model: str, module: Any, seed: int = 0) -> tuple[Any, tuple[Any, ...]]:
    s = SIZES[model]
    rng = np.random.default_rng(seed)
    params_cls = {"gpt2": "GPT2", "llama": "Params", "vit": "ViT", "t5": "Params", "mistral": "Weights",
                  "mixtral": "Model", "mixer": "Mixer", "nanogpt": "GPT", "bert": "Bert",
                  "gemma": "Params", "whisper": "AudioEncoder", "switch": "SwitchParams", "dit": "DiT",
                  "mamba": "Mamba", "convnext": "ConvNeXt", "swin": "Swin", "clip": "CLIP", "rwkv": "RWKV",
                  "deepseek": "Transformer", "perceiver": "Perceiver", "gnn": "GNN",
                  "lru": "LRUModel", "dlrm": "DLRM", "eqx_gpt": "Transformer"}[model]
    params = _build(getattr(module, params_cls), s, rng)
    if model in ("vit", "mixer", "convnext", "swin"):
        images = rng.standard_normal((s["batch"], s["height"], s["width"], s["channels"])).astype(np.float32)
        return params, (jnp.asarray(images),) + ((jax.random.key(seed),) if model == "convnext" else ())
    if model == "dit":  # clean latents, diffusion steps, class labels, noise, and a key for label and path drops
        x_start, noise = (jnp.asarray(rng.standard_normal((s["batch"], s["height"], s["width"], s["channels"])),
                                      jnp.float32) for _ in range(2))
        t = jnp.asarray(rng.integers(0, s["timesteps"], s["batch"]), jnp.int32)
        y = jnp.asarray(rng.integers(0, s["classes"] - 1, s["batch"]), jnp.int32)
        return params, (x_start, t, y, noise, jax.random.key(seed))
    if model == "clip":  # image and caption pairs
        images = rng.standard_normal((s["batch"], s["height"], s["width"], s["channels"])).astype(np.float32)
        text = rng.integers(0, s["vocab"], (s["batch"], s["length"]))
        return params, (jnp.asarray(images), jnp.asarray(text, jnp.int32))
    if model == "perceiver":  # a long input of a few features per position
        data = rng.standard_normal((s["batch"], s["inputs"], s["features"])).astype(np.float32)
        return params, (jnp.asarray(data),)
    if model == "gnn":
        return params, (_graph(module, s, rng),)
    if model == "dlrm":  # multi-hot ids padded with -1, some past the table (read as zeros: mode="fill")
        dense = rng.standard_normal((s["batch"], s["dense_features"])).astype(np.float32)
        ids = rng.integers(0, s["vocab"], (s["batch"], s["tables"], s["bag"]))
        ids[:, :, -2:] = -1
        ids[0, 0, 0], ids[1, 2, 1], ids[2, 1, 0] = s["vocab"], s["vocab"] + 7, -s["vocab"] - 3
        ids[3, 0, 0] = -5  # (a negative id inside the table wraps: jnp.take counts it from the end)
        return params, (jnp.asarray(dense), jnp.asarray(ids, jnp.int32))
    if model == "whisper":
        mel = rng.standard_normal((s["batch"], s["frames"], s["mels"])).astype(np.float32)
        return params, (jnp.asarray(mel),)
    tokens = jnp.asarray(rng.integers(0, s["vocab"], (s["batch"], s["length"])), jnp.int32)
    if model == "bert":  # token types, and a padding mask keeping each row's first 1 to length tokens
        types = jnp.asarray(rng.integers(0, s["types"], (s["batch"], s["length"])), jnp.int32)
        lengths = rng.integers(1, s["length"] + 1, (s["batch"], 1))
        return params, (tokens, types, jnp.asarray(np.arange(s["length"]) < lengths, jnp.int32))
    if model == "t5":
        return params, (jnp.asarray(rng.integers(0, s["vocab"], (s["batch"], s["input_length"])), jnp.int32),
                        tokens)
    return params, (tokens,)


def _graph(module: Any, s: dict[str, int], rng: np.random.Generator) -> Any:
    """A padded batch of graphs as jraph pads them: nodes numbered graph after graph, edges inside each
    graph, the last ones padding (senders -1 or ``n_nodes``: gathered clamped or wrapped; receivers
    ``n_nodes``: dropped by the segment sums)."""
    n_node = np.array([5, 7, 4, s["nodes"] - 16], np.int32)
    starts = np.concatenate([[0], np.cumsum(n_node)[:-1]])
    real = s["edges"] - 6
    graph_of_edge = rng.integers(0, len(n_node), real)
    senders = starts[graph_of_edge] + rng.integers(0, n_node[graph_of_edge])
    receivers = starts[graph_of_edge] + rng.integers(0, n_node[graph_of_edge])
    senders = np.concatenate([senders, [-1, -1, -1, s["nodes"], s["nodes"], s["nodes"]]]).astype(np.int32)
    receivers = np.concatenate([receivers, [s["nodes"]] * 6]).astype(np.int32)
    nodes = rng.standard_normal((s["nodes"], s["features"])).astype(np.float32)
    return module.GraphsTuple(jnp.asarray(nodes), jnp.asarray(senders), jnp.asarray(receivers), jnp.asarray(n_node))


_BUILT: dict[tuple, tuple[Any, Any]] = {}


def _modules(model: str, mesh: str, tmp: Path, rules: tuple[str, str] | None = None) -> tuple[Any, Any]:
    """The parallel model on ``mesh``: (decorator module, converted module); ``rules``: its rules as written,
    and the rules to run it with instead."""
    key = (model, mesh, rules)
    if key not in _BUILT:
        source = (MODELS_DIR / f"{model}.py").read_text()
        assert "@mesh(batch=2, model=4," in source
        source = source.replace("@mesh(batch=2, model=4,", f"@mesh({MESHES[mesh]},")
        if rules is not None:
            assert f"rules={rules[0]}" in source
            source = source.replace(f"rules={rules[0]}", f"rules={rules[1]}")
        folder = tmp / f"{model}_{mesh}{'_rules' if rules else ''}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{model}.py"
        path.write_text(source)
        converted = folder / f"{model}_sharded.py"
        converted.write_text(convert_source(source, str(path)).text)
        _BUILT[key] = (_import(path), _import(converted))
    return _BUILT[key]


def _close(got: Any, want: Any, what: str) -> None:
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        w = np.asarray(w)
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-5 * max(1.0, float(np.abs(w).max())),
                                   err_msg=what)


def _marks(model: str, mesh: str, path: str) -> list:
    """Refused models fail fast (at the rewrite); of the others, each mesh runs one path by default."""
    if model in REFUSED:
        return [pytest.mark.xfail(strict=True, reason=REFUSED[model])]
    return [pytest.mark.slow] if (mesh, path) in (("2x4", "converted"), ("1x8", "decorator")) else []


CASES = [pytest.param(model, mesh, path, marks=_marks(model, mesh, path), id=f"{model}-{mesh}-{path}")
         for model in SIZES for mesh in MESHES for path in ("decorator", "converted")]


@pytest.mark.parametrize(("model", "mesh", "path"), CASES)
def test_logits_and_gradients_match_one_device(model: str, mesh: str, path: str,
                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    decorated, converted = _modules(model, mesh, tmp_path_factory.getbasetemp() / "zoo")
    _check(model, mesh, path, decorated, converted)


def _check(model: str, mesh: str, path: str, decorated: Any, converted: Any) -> None:
    """The model's logits and gradients through ``path`` against the plain file's and one device's."""
    module = decorated if path == "decorator" else converted
    fn = getattr(module, model)
    params, inputs = _inputs(model, decorated)
    plain = _import(MODELS_DIR / f"{model}_plain.py")
    want = getattr(plain, model)(_as_plain(params, plain), *_as_plain(inputs, plain))
    got = fn(params, *inputs)
    assert jax.tree.structure(got) == jax.tree.structure(want)  # an array, or a tuple of them (logits, aux loss)
    assert [g.shape for g in jax.tree.leaves(got)] == [w.shape for w in jax.tree.leaves(want)]
    _close(got, want, f"{model} logits on {mesh} ({path})")
    rng = np.random.default_rng(1)
    cotangents = [jnp.asarray(rng.standard_normal(w.shape), jnp.float32) for w in jax.tree.leaves(want)]

    def dot(out: Any) -> jax.Array:
        return sum(jnp.sum(o * c) for o, c in zip(jax.tree.leaves(out), cotangents, strict=True))

    grads = jax.jit(jax.grad(lambda p: dot(fn(p, *inputs))))(params)
    want_grads = jax.grad(lambda p: dot(fn.reference(p, *inputs)))(params)
    assert jax.tree.structure(grads) == jax.tree.structure(params)
    _close(grads, want_grads, f"{model} gradients on {mesh} ({path})")


#: The LRU's rules as its file writes them, and with its length split over 'model' too (sequence parallel).
_LRU_RULES = '{"d_hidden": "model", "states": "model"}'


@pytest.mark.parametrize(("mesh", "path"), [pytest.param(m, p, marks=[pytest.mark.slow] if p == "converted" else [],
                                                         id=f"{m}-{p}") for m in MESHES
                                            for p in ("decorator", "converted")])
def test_lru_with_its_length_split_matches_one_device(mesh: str, path: str,
                                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    """Sequence parallelism (issue #14): rules={"length": "model"}, the weights whole.  The two associative_scans
    (the decay a jnp.repeat'ed leaf, whole along the length, beside the split inputs; forward and reverse=True)
    run across the devices: each scans its block and folds in the blocks before it."""
    rules = (_LRU_RULES, '{"length": "model"}')
    decorated, converted = _modules("lru", mesh, tmp_path_factory.getbasetemp() / "zoo", rules)
    _check("lru", mesh, path, decorated, converted)


def test_lru_with_its_length_and_d_hidden_on_one_axis_is_an_error_naming_the_fix(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The file's rules plus "length": "model": B_norm @ u inside the vmap over the split length would give each
    device one block of the rows and another of d_hidden; refused at that vmap, naming the rule to drop."""
    from meshify.errors import LayoutError

    rules = (_LRU_RULES, '{"d_hidden": "model", "states": "model", "length": "model"}')
    with pytest.raises(LayoutError) as info:  # (converting the file: _modules builds both)
        _modules("lru", "2x4", tmp_path_factory.getbasetemp() / "zoo", rules)
    text = str(info.value)
    assert "jax.vmap(lambda u: B_norm @ u)" in text and "rules={'d_hidden': None}" in text, text


def test_fewer_kv_heads_than_devices_is_an_error_naming_the_fix(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Grouped-query attention with 4 kv heads split over 8 devices: the reshape cannot place them."""
    from meshify.errors import CallError

    decorated, _ = _modules("llama", "1x8", tmp_path_factory.getbasetemp() / "zoo")
    sizes = {**SIZES["llama"], "kv_features": 16}
    params = _build(decorated.Params, sizes, np.random.default_rng(0))
    tokens = jnp.zeros((sizes["batch"], sizes["length"]), jnp.int32)
    with pytest.raises(CallError) as info:
        decorated.llama(params, tokens, decorated.Config(kv_heads=4))
    text = str(info.value)
    assert "'kv_heads', the major part of 'kv_features'" in text, text
    assert "rules={'kv_features': None}" in text, text


def test_the_fix_for_fewer_kv_heads_clears_the_error(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Mistral with 4 kv heads on 1x8 (the issue's case): refused with a fix naming ``rules={'kv_features':
    None}``; the file with that rule runs and gives one device's logits and gradients."""
    from meshify.errors import CallError

    decorated, _ = _modules("mistral", "1x8", tmp_path_factory.getbasetemp() / "zoo")
    sizes = {**SIZES["mistral"], "kv_features": 16}
    params = _build(decorated.Weights, sizes, np.random.default_rng(0))
    tokens = jnp.asarray(np.random.default_rng(1).integers(0, sizes["vocab"], (sizes["batch"], sizes["length"])),
                         jnp.int32)
    args = decorated.ModelArgs(n_kv_heads=4)
    with pytest.raises(CallError) as info:
        decorated.mistral(params, tokens, args)
    fix = re.search(r"rules=\{'kv_features': None\}", str(info.value))
    assert fix is not None, str(info.value)
    source = (MODELS_DIR / "mistral.py").read_text().replace("@mesh(batch=2, model=4,", "@mesh(batch=1, model=8,")
    assert '"kv_features": "model", ' in source
    folder = tmp_path_factory.getbasetemp() / "zoo" / "mistral_kv_fix"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mistral.py"
    path.write_text(source.replace('"kv_features": "model", ', '"kv_features": None, '))
    fixed = _import(path)
    plain = _import(MODELS_DIR / "mistral_plain.py")
    plain_args = plain.ModelArgs(n_kv_heads=4)
    want = plain.mistral(_as_plain(params, plain), tokens, plain_args)
    _close(fixed.mistral(params, tokens, args), want, "mistral logits with kv_features whole")
    cotangent = jnp.asarray(np.random.default_rng(2).standard_normal(want.shape), jnp.float32)
    grads = jax.grad(lambda p: jnp.sum(fixed.mistral(p, tokens, args) * cotangent))(params)
    want_grads = jax.grad(lambda p: jnp.sum(fixed.mistral.reference(p, tokens, args) * cotangent))(params)
    _close(grads, want_grads, "mistral gradients with kv_features whole")


@pytest.mark.parametrize("mesh", list(MESHES))
def test_dlrm_with_its_embedding_dim_split_too_matches_one_device(mesh: str,
                                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    """Issue #14: DLRM with ``"d_embed": "model"`` added to its rules (the files untouched: the rule added to a
    copy).  The dense vector is then split along d_embed while the pooled embeddings are whole (the tables take
    'model' for their vocab): ``[dense] + pooled`` gathers it to the list's layout, and the interaction's
    ``jnp.concatenate([dense, z[:, li, lj]], axis=1)``, 6 whole products beside it (no multiple of the devices),
    gathers it and joins whole, where it was refused, then cut into blocks that do not exist when called.
    Logits and gradients of one device, through the decorator and through a converted file."""
    source = (MODELS_DIR / "dlrm.py").read_text().replace("@mesh(batch=2, model=4,", f"@mesh({MESHES[mesh]},")
    assert '"top_hidden": "model"}' in source
    source = source.replace('"top_hidden": "model"}', '"top_hidden": "model", "d_embed": "model"}')
    folder = tmp_path_factory.getbasetemp() / "zoo" / f"dlrm_d_embed_{mesh}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "dlrm.py"
    path.write_text(source)
    converted = folder / "dlrm_sharded.py"
    text = convert_source(source, str(path)).text
    assert "all_gather over 'model': concatenate with whole 'z[:, li, lj]' along this dim" in text, text
    converted.write_text(text)
    decorated = _import(path)
    params, inputs = _inputs("dlrm", decorated)
    plain = _import(MODELS_DIR / "dlrm_plain.py")
    want = plain.dlrm(_as_plain(params, plain), *_as_plain(inputs, plain))
    cotangent = jnp.asarray(np.random.default_rng(1).standard_normal(want.shape), jnp.float32)
    for module in (decorated, _import(converted)):
        _close(module.dlrm(params, *inputs), want, f"dlrm logits with d_embed split on {mesh}")
        grads = jax.jit(jax.grad(lambda p, m=module: jnp.sum(m.dlrm(p, *inputs) * cotangent)))(params)
        want_grads = jax.grad(lambda p, m=module: jnp.sum(m.dlrm.reference(p, *inputs) * cotangent))(params)
        _close(grads, want_grads, f"dlrm gradients with d_embed split on {mesh}")
