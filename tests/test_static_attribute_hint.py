"""A method's unhinted array attribute passed to a helper that hints it (issue #12): the error names
the attribute, says why meshify cannot use it, and gives the fix that works."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite import convert_source

HERE = Path(__file__).resolve().parent / "soundness"


def test_an_attribute_of_self_passed_for_a_hinted_parameter_says_what_is_wrong_and_the_fix() -> None:
    path = HERE / "method_attr_to_mesh_helper.py"
    source = path.read_text()
    with pytest.raises(LayoutError) as error:
        convert_source(source, str(path))
    message = str(error.value)
    assert "'self.w' is an attribute of the static parameter 'self'" in message and "passes static" not in message
    assert 'w: Tensor["d", "e"] = self.w' in message
    line = source.splitlines().index("        return g(x, self.w)") + 1
    assert error.value.span.line == line and error.value.span.col == len("        return g(x, ") + 1


def test_an_unhinted_attribute_of_self_returned_says_its_dims_are_unknown_and_the_fix() -> None:
    path = HERE / "method_attr_returned_unhinted.py"
    source = path.read_text()
    with pytest.raises(UnsupportedError) as error:
        convert_source(source, str(path))
    message = str(error.value)
    assert "computed from 'self.w', an attribute of the static parameter 'self' with no hint" in message
    assert "cannot know its dims" in message and "a Python value, and has no return hint" not in message
    assert 'w: Tensor["d"] = self.w' in message and "use w" in message
    line = source.splitlines().index("        return x * 2, jax.nn.silu(self.w)") + 1
    assert error.value.span.line == line and error.value.span.col == len("        return x * 2, jax.nn.silu(") + 1
