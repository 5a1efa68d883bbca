"""Every rejection of a layout names, in its ``fix:``, the dim or the argument that matters.

Over every program of the soundness corpus and the bad-input corpus that meshify refuses at
rewrite time: when the message describes a layout with split dims (``x/'model'``) or names
values in quotes, the fix must name one of them, not some other dim of the function (as
the old "map 'batch' to no mesh axis" did for any unsupported call).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from meshify.errors import MeshifyError
from meshify.rewrite import convert_source

TESTS = Path(__file__).parent
FILES = sorted(p for d in ("soundness", "bad_inputs") for p in (TESTS / d).glob("*.py") if not p.name.startswith("_"))


def _refusal(path: Path) -> MeshifyError | None:
    try:
        convert_source(path.read_bytes(), str(path))
    except MeshifyError as e:
        return e
    return None


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_layout_rejection_names_what_matters_in_its_fix(path: Path) -> None:
    error = _refusal(path)
    if error is None:
        return
    headline = str(error).splitlines()[0]
    split_dims = set(re.findall(r"(\w+)/'", headline))
    quoted = set(re.findall(r"'([^']+)'", headline)) - {a for a in re.findall(r"/'(\w+)'", headline)}
    if not split_dims:
        return
    fix = error.fix or ""
    assert any(d in fix for d in split_dims | quoted), f"fix names none of {sorted(split_dims | quoted)}: {error}"
    others = set(re.findall(r"'(\w+)': None", fix)) - split_dims
    assert not others, f"fix unsplits {sorted(others)}, which the message does not show split: {error}"


def test_a_function_along_one_split_dim_names_that_dim_only(tmp_path: Path) -> None:
    source = ('import jax\nimport jax.numpy as jnp\nfrom meshify import Tensor, mesh\n\n\n'
              '@mesh(batch=2, model=4)\n'
              'def f(x: Tensor["batch", "model"]) -> Tensor["batch", "model"]:\n'
              '    return jnp.unwrap(x, axis=1)\n')
    with pytest.raises(MeshifyError) as info:
        convert_source(source, str(tmp_path / "f.py"))
    assert "'model'" in info.value.fix and "batch" not in info.value.fix, info.value


def test_a_plain_dict_of_params_gets_a_typeddict_that_runs(tmp_path: Path) -> None:
    """``params: dict`` read by key: the fix writes a TypedDict of the keys read; written in, the function runs."""
    bad = TESTS / "bad_inputs" / "dict_params_without_a_type.py"
    with pytest.raises(MeshifyError) as info:
        convert_source(bad.read_bytes(), str(bad))
    assert 'class Params(TypedDict): w1: Tensor["...", "..."]; w2: Tensor["...", "..."]' in info.value.fix, info.value
    fixed = bad.read_text().replace("import jax.numpy as jnp\n", "from typing import TypedDict\n\nimport jax.numpy "
                                    "as jnp\n").replace("@mesh", 'class Params(TypedDict):\n    w1: Tensor["d", "f"]\n'
                                                        '    w2: Tensor["f", "d"]\n\n\n@mesh')
    convert_source(fixed.replace("params: dict", "params: Params"), str(tmp_path / "fixed.py"))
