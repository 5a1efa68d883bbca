"""Differential fuzzing: random annotated programs, converted and run, against ``.reference``.

Each example is one program from ``programs.py`` (2 to 10 statements over every op family,
random rules, random dim sizes the mesh divides; now and then several ``@mesh`` functions, a
method, a closure, module-level arrays, decorated helpers, optional op parameters, out-of-range
ids, float16/bfloat16 inputs), checked by ``check.py``: every ``@mesh`` function, through the
decorator and through the converted file, accepted and equal to the reference on 8 simulated
CPU devices (values, and gradients for scalar losses), or rejected with a :class:`MeshifyError`
and a fix.  Anything else fails the test; hypothesis shrinks the program, and the shrunk one is
written to ``tests/regressions/pending/`` (move it to ``tests/regressions/`` once fixed).  A
rejection nobody provoked does not fail the test; it is noted in hypothesis's output.

CI runs :data:`EXAMPLES` programs on each of the 6 meshes (216 by default), derandomized so
that a run is reproducible; ``MESHIFY_FUZZ_EXAMPLES=N`` changes the count and
``MESHIFY_FUZZ_RANDOM=1`` draws fresh programs.  ``make fuzz`` runs thousands (``run.py``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tests.fuzz.check import check, save
from tests.fuzz.programs import MESHES, generate

#: Programs per mesh in a default run (x 6 meshes).
EXAMPLES = int(os.environ.get("MESHIFY_FUZZ_EXAMPLES", "36"))
PENDING = Path(__file__).resolve().parent.parent / "regressions" / "pending"
_WORKDIR = Path(tempfile.mkdtemp(prefix="meshify-fuzz-"))


class HypothesisChooser:
    """Every generator choice is a hypothesis draw, so hypothesis can shrink the program."""

    def __init__(self, data: st.DataObject) -> None:
        self._data = data

    def integer(self, lo: int, hi: int) -> int:
        return self._data.draw(st.integers(lo, hi))


@pytest.mark.parametrize("mesh", list(MESHES))
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          derandomize=os.environ.get("MESHIFY_FUZZ_RANDOM") != "1",
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(data=st.data())
def test_random_program_matches_reference_or_is_rejected_cleanly(mesh: str, data: st.DataObject) -> None:
    seed = data.draw(st.integers(0, 2**16), label="input seed")
    program = generate(HypothesisChooser(data), seed=seed, mesh=mesh)
    note(program.text)
    outcome = check(program, _WORKDIR)
    if outcome.kind == "rejected" and not outcome.provoked:
        note(f"unprovoked rejection: {outcome.detail}")
    if outcome.failed:
        # Hypothesis replays the shrunk example last, so this file ends up holding it.
        path = save(program, outcome, PENDING, name=f"hypothesis_{mesh.replace('x', '_')}")
        pytest.fail(f"{outcome.kind} (program saved to {path}):\n{program.text}\n{outcome.detail}", pytrace=False)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_explain_predicts_the_compiled_bytes_of_accepted_programs(chunk: int) -> None:
    """Issue #16's promise, over the fuzzer's programs (``counts.py``): for every accepted program's
    float32 functions, explain's bytes per collective kind equal the compiled program's (XLA drops a
    psum of a dead statement's operand, a loop nobody reads, merges a helper's ``x @ w`` with its
    caller's: each was a difference found this way).  Programs ``10 * chunk`` to ``10 * chunk + 9``
    of seed 16."""
    from tests.fuzz.counts import compare
    from tests.fuzz.programs import RandomChooser
    from tests.fuzz.run import program_seed

    for i in range(10 * chunk, 10 * chunk + 10):
        seed = program_seed(16, i)
        program = generate(RandomChooser(seed), seed=seed)
        if check(program, _WORKDIR).kind != "accepted":
            continue
        assert compare(program, _WORKDIR) == [], program.text
