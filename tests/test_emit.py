"""Generated code a reviewer can read at model scale (issue #14): helper versions under short names
with one comment block mapping each to its layouts, lines wrapped at 120 characters (comments only
between whole expressions), and a helper's own def kept only while something still calls it."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from meshify.rewrite import convert_source
from meshify.rewrite._wrap import WIDTH, wrap_lines

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted([*ROOT.glob("examples/*.py"), *ROOT.glob("tests/real_models/*.py")])
MODELS = [p for p in MODELS if "@mesh(" in p.read_text()]

HEADER = """\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh
"""

HELPERS = HEADER + '''

def norm(x):
    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True))


def mlp(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["batch", "d"]:
    h = norm(jax.nn.relu(x @ w1))
    return norm(x) + mlp(x, w1, w2) + jnp.sum(h) * 0.0
'''


def _convert(source: str, width: int | None = WIDTH) -> str:
    return convert_source(source, "case.py", width=width).text


def _defs(text: str) -> list[str]:
    return re.findall(r"(?m)^def (\w+)\(", text)


# -- short names, one comment block -------------------------------------------------------------------


def test_versions_get_short_names_numbered_per_helper_in_order_of_first_use() -> None:
    text = _convert(HELPERS)
    assert _defs(text) == ["norm__v1", "norm__v2", "mlp__v1", "f"]
    assert "h = norm__v1(jax.nn.relu(x @ w1))" in text and "return norm__v2(x) + " in text


def test_one_comment_block_above_a_helpers_versions_maps_each_name_to_its_layouts() -> None:
    text = _convert(HELPERS, width=None)
    block = text[text.index("# meshify: norm specialised"):text.index("def norm__v1")].splitlines()
    assert block == [
        "# meshify: norm specialised for its callers' layouts (norm() itself is unused, not kept):",
        "# meshify:   norm__v1 for x: [batch/'batch', f/'model'] -> [batch/'batch', f/'model']",
        "# meshify:   norm__v2 for x: [batch/'batch', d] -> [batch/'batch', d]",
    ]
    between = text[text.index("def norm__v1"):text.index("def norm__v2")]
    assert "specialised" not in between  # one block per helper, not one comment per version


def test_a_wrapped_mapping_keeps_each_layout_and_the_result_whole() -> None:
    text = _convert(HELPERS, width=80)
    assert text[text.index("# meshify: mlp"):text.index("def mlp__v1")].splitlines() == [
        "# meshify: mlp specialised for its callers' layouts (mlp() itself is unused, not",
        "#              kept):",
        "# meshify:   mlp__v1 for x: [batch/'batch', d]; w1: [d, f/'model'];",
        "#                w2: [f/'model', d] -> [batch/'batch', d] partial over 'model'",
    ]


def test_a_version_shared_by_two_callers_says_no_one_callers_reason_for_its_partial_sum() -> None:
    # a's partial sum comes from a contraction, b's from a lookup in a split table: one version serves both,
    # so its psum's comment may not name either reason (it said "lookup in split 'vocab'" for a's call too)
    text = _convert(HEADER + """

def finish(h):
    return jnp.tanh(h) + 1.0


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def a(x: Tensor["batch", "d_ff"], w: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    return finish(x @ w)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def b(ids: Tensor["batch"], table: Tensor["vocab", "d"]) -> Tensor["batch", "d"]:
    return finish(table[ids])
""")
    helper = text[text.index("def finish__v"):text.index("@mr.sharded")]
    assert "h is a partial sum (from the caller)" in helper
    assert "lookup" not in helper and "contracted" not in helper


def test_a_version_never_takes_a_name_the_module_uses() -> None:
    source = HELPERS.replace("def mlp(x, w1, w2):\n", "def mlp(x, w1, w2):\n    mlp__v1 = None\n") + \
        "\n\nnorm__v1 = 'a user name'\n"
    text = _convert(source)
    assert _defs(text) == ["norm__v2", "norm__v3", "mlp__v2", "f"]
    assert "norm__v1 = 'a user name'" in text


def test_a_version_added_for_one_helper_renames_no_other_version() -> None:
    before = _defs(_convert(HELPERS))
    after = _defs(_convert(HELPERS.replace("+ jnp.sum(h) * 0.0", "+ jnp.sum(h) * 0.0 + jnp.sum(norm(x.T)) * 0.0")))
    assert after == ["norm__v1", "norm__v2", "norm__v3", "mlp__v1", "f"] and set(before) < set(after)


# -- originals ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("use", [
    "def plain(x):\n    return mlp(x, x, x)\n",  # another function of the module
    "TABLE = {'mlp': mlp}\n",  # module-level code
    "__all__ = ['f', 'mlp']\n",  # an export
])
def test_a_helpers_own_def_is_kept_only_while_something_else_uses_it(use: str) -> None:
    assert "def mlp(" not in _convert(HELPERS) and "def norm(" not in _convert(HELPERS)
    text = _convert(HELPERS + "\n\n" + use)
    assert "def mlp(" in text and "def norm(" not in text
    assert "# meshify: mlp specialised for its callers' layouts:" in text
    ast.parse(text)


def test_a_kept_def_keeps_what_it_calls_and_a_same_named_field_keeps_nothing() -> None:
    source = HELPERS.replace("def mlp(x, w1, w2):\n    return", "def mlp(x, w1, w2):\n    return norm(x) +") + '''

class Params:
    mlp: int = 0  # a field named like the helper is no use of it


def plain(x, p):
    return p.mlp + mlp(x, x, x)
'''
    text = _convert(source)
    assert "def mlp(x, w1, w2):" in text and "def norm(x):" in text  # plain() -> mlp() -> norm()
    assert "def plain(x, p):\n    return p.mlp + mlp(x, x, x)" in text


LOOPED = HEADER + '''

def step(h, w):
    return jnp.tanh(h @ w)


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w: Tensor["f", "f"]) -> Tensor["batch", "f"]:
    h = x @ w1
    for _ in range(3):
        h = step(h, w)
    g = jax.lax.fori_loop(0, 3, lambda i, c: step(c, w), x @ w1)
    return h + g
'''


def test_a_version_made_on_a_loop_walk_the_interpreter_undid_is_not_emitted() -> None:
    # h enters the loop split over 'model' and step() returns it whole: the body's first walk (step__v1, for
    # a split h) is undone and walked again with h whole (step__v2); nothing calls step__v1
    text = _convert(LOOPED, width=None)
    assert _defs(text) == ["step__v2", "f"]
    assert "step__v1" not in text
    assert "# meshify:   step__v2 for h: [batch/'batch', f]; w: [f/'model', f] -> [batch/'batch', f]" in text
    body = text[text.index("@mr.sharded"):]
    assert "h = step__v2(h, w)" in body and "lambda i, c: step__v2(c, w)" in body


def test_every_emitted_version_is_called_from_outside_its_own_def() -> None:
    for source in (HELPERS, LOOPED):
        text = _convert(source, width=None)
        for name in (n for n in _defs(text) if "__v" in n):
            outside = text[:text.index(f"def {name}(")] + text[text.index(f"def {name}(") + len(name) + 5:]
            assert re.search(rf"\b{name}\(", outside), name


def test_a_dropped_defs_leading_comments_stay_above_its_versions() -> None:
    source = HELPERS.replace("\n\ndef norm(x):", "\n\n# Normalises the last dim.\ndef norm(x):")
    text = _convert(source)
    assert "\n\n\n# Normalises the last dim.\n# meshify: norm specialised" in text


# -- wrapping -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", MODELS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_converted_models_have_no_line_over_120_but_the_sources_own(path: Path) -> None:
    source = path.read_text()
    text = convert_source(source, str(path)).text
    own = set(source.splitlines())
    long = [line for line in text.splitlines() if len(line) > WIDTH and line not in own]
    assert not long, "\n".join(long)
    unwrapped = convert_source(source, str(path), width=None).text
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(unwrapped))


def test_a_long_call_keeps_its_items_on_one_line_when_they_fit_else_one_per_line() -> None:
    args = ", ".join(f"argument_{i}" for i in range(8))
    line = f"if True:\n    result = some_module.function_name({args}, key=other.call(a, b))"
    assert wrap_lines(line + "\n", "", width=60).splitlines()[1:] == [
        "    result = some_module.function_name(",
        "        argument_0,",
        "        argument_1,",
        "        argument_2,",
        "        argument_3,",
        "        argument_4,",
        "        argument_5,",
        "        argument_6,",
        "        argument_7,",
        "        key=other.call(a, b),",
        "    )",
    ]
    assert wrap_lines(line + "\n", "", width=200) == line + "\n"
    assert wrap_lines(line + "\n", "", width=130).splitlines()[1:] == [
        "    result = some_module.function_name(",
        f"        {args}, key=other.call(a, b)",
        "    )",
    ]


def test_wrapping_never_splits_a_string_a_lambdas_parameters_or_a_comprehension() -> None:
    code = textwrap.dedent('''\
        y = f("a, b, (c", lambda h, layer: (h + layer, None), [g(v, w) for v, w in zip(aaaa, bbbb)], zzzz)
        ''')
    wrapped = wrap_lines(code, "", width=50)
    assert ast.dump(ast.parse(wrapped)) == ast.dump(ast.parse(code))
    assert '    "a, b, (c",\n' in wrapped and "    lambda h, layer: (h + layer, None),\n" in wrapped
    assert "    [g(v, w) for v, w in zip(aaaa, bbbb)],\n" in wrapped


def test_a_source_line_and_a_multiline_string_stay_byte_identical() -> None:
    long = "x = f(" + ", ".join(["a"] * 70) + ")"
    doc = 'f"""' + "word, " * 30 + '\n({x}' + "b, " * 50 + ')"""'  # an f-string: several tokens from 3.12
    text = f"{long}\n{doc}\n"
    assert wrap_lines(text, long, width=80) == text


def test_a_long_comment_breaks_only_between_whole_expressions() -> None:
    comment = ("    # meshify: psum over 'model': jnp.einsum(\"blf,fd->bld\", h, p.w_out) is a partial sum "
               "(contracted 'd_ff' split); (x - mu) * scale[..., None] needs it whole, so it is reduced here")
    for width in range(60, 120, 3):
        lines = wrap_lines(comment + "\n", "", width=width).splitlines()
        assert all(line.startswith("    #") for line in lines)
        assert lines[0].startswith("    # meshify: ") and not any(l.startswith("    # meshify:") for l in lines[1:])
        words = " ".join(line.strip().lstrip("#").strip().removeprefix("meshify: ") for line in lines)
        assert words == comment.strip().removeprefix("# meshify: ")
        for whole in ('jnp.einsum("blf,fd->bld", h, p.w_out)', "'d_ff'", "(x - mu) * scale[..., None]"):
            assert any(whole in line for line in lines), (whole, lines)


def test_a_comment_breaks_after_its_last_clause_rather_than_leave_a_word_behind() -> None:
    comment = ("    # meshify: psum over 'model': mlp(layer_norm(x, g), w1, w2) is a partial sum (contracted 'd_ff' "
               "split); '+' needs it whole")
    assert wrap_lines(comment + "\n", "", width=120).splitlines() == [
        "    # meshify: psum over 'model': mlp(layer_norm(x, g), w1, w2) is a partial sum (contracted 'd_ff' split);",
        "    #              '+' needs it whole",
    ]
