"""Lookups whose table and ids are split over the same mesh axis, and jnp.take of a table without
dims (issue #12): the generated code, with no devices (numbers: tests/soundness/lookup_*same_axis,
take_*table_split_ids)."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshify.errors import UnsupportedError
from meshify.rewrite import convert_source

HERE = Path(__file__).resolve().parent / "soundness"


def _code(name: str, replace: tuple[str, str] | None = None) -> str:
    path = HERE / f"{name}.py"
    source = path.read_text()
    if replace is not None:
        assert replace[0] in source
        source = source.replace(*replace)
    return convert_source(source, str(path)).text


def test_ids_split_like_the_vocab_are_gathered_and_the_result_reduce_scattered() -> None:
    code = _code("lookup_table_and_ids_same_axis")
    assert "mr.take(emb, mr.all_gather(ids, \"model\", axis=0), axis=0, axis_name=\"model\"" in code
    assert "mr.psum_scatter(" in code and code.count("mr.all_gather(") == 1  # the table is not gathered


def test_with_every_size_known_the_cheaper_side_is_gathered_not_both() -> None:
    mesh = '@mesh(data=2, model=4, rules={"vocab": "model", "batch": "model", "d": "data"}'
    small_table = _code("lookup_table_and_ids_same_axis",
                        (mesh + ")", mesh + ', dims={"vocab": 8, "d": 2, "batch": 64, "length": 16})'))
    assert "mr.all_gather(emb" in small_table and "mr.all_gather(ids" not in small_table
    big_table = _code("lookup_table_and_ids_same_axis",
                      (mesh + ")", mesh + ', dims={"vocab": 4096, "d": 64, "batch": 8, "length": 2})'))
    assert "mr.all_gather(ids" in big_table and "mr.all_gather(emb" not in big_table


def test_take_along_axis_gathers_the_other_dim_split_like_the_taken_one() -> None:
    code = _code("take_along_axis_same_axis")
    assert "mr.take_along_axis(logits, mr.all_gather(labels, \"model\", axis=1), axis=0" in code


def test_take_of_a_table_without_dims_by_split_ids_asks_for_its_dims() -> None:
    path = HERE / "take_global_table_split_ids.py"
    source = path.read_text()
    with pytest.raises(UnsupportedError) as error:
        convert_source(source, str(path))
    assert "has no meshify rule" not in str(error.value)
    assert 'table: Tensor["rows", ...] = TABLE' in str(error.value)
    assert error.value.span.line == source.splitlines().index("    return jnp.take(TABLE, ids, axis=0)") + 1


def test_take_of_a_literal_1d_table_by_split_ids_is_local() -> None:
    code = _code("take_literal_table_split_ids")
    assert "jnp.take(jnp.linspace(0.0, 3.0, 4), ids, mode=\"clip\")" in code and "mr.all_gather" not in code


def test_a_list_of_indices_is_not_taken_for_an_int() -> None:
    path = HERE / "index_list_columns.py"
    source = path.read_text()
    with pytest.raises(UnsupportedError) as error:
        convert_source(source, str(path))
    assert "index '[0, 2]' is a sequence of indices" in str(error.value)
    assert 'cols: Tensor["k"] = jnp.asarray([0, 2])' not in str(error.value)  # the fix names its own dim
    assert 'ids: Tensor["k"] = jnp.asarray([0, 2])' in str(error.value)
    line = source.splitlines().index("    y = x[:, [0, 2]]") + 1
    assert error.value.span.line == line


def test_take_of_a_literal_1d_table_by_whole_ids_names_the_ids_dims() -> None:
    path = HERE / "take_literal_table_split_ids.py"
    source = path.read_text().replace('@mesh(model=8)', '@mesh(model=8, rules={"model": None})')
    assert "rules=" in source
    code = convert_source(source, str(path)).text
    assert "jnp.take(jnp.linspace(0.0, 3.0, 4), ids, mode=\"clip\")" in code
