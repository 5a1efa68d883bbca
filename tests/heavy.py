"""Writes ``tests/heavy.txt``: the tests that took longest in a measured run, which conftest marks slow.

    CI=true .venv/bin/python -m pytest -q -n 2 --durations=0 > durations.log
    .venv/bin/python -m tests.heavy durations.log [older.log ...]   # tests over 1 s (setup + call + teardown)

A run skips the heavy tests outside its sample: a test listed now that no log timed stays listed, and
a test is heavy if it took over the limit in any log given (a ``MESHIFY_SLOW=1`` run times them all).

CI runs the suite on 2 cores in about 15 minutes only if the few hundred longest checks (a U-Net
layer's gradient op by op, a 40-program fuzz batch, a GPT-2 in a scan) are sampled like the other
slow tests: about 1 in 12 of them run each day, the sample moving daily, and ``MESHIFY_SLOW=1`` runs
them all.  ``ANCHORS`` always run: one of each family whose members are all heavy, and the checks the
project's contract names (the examples type-check, FSDP x TP matches one device, two processes
match one), so that none goes unchecked in any CI run.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

HEAVY = Path(__file__).with_name("heavy.txt")
#: Heavy tests that run on every run all the same.
ANCHORS = frozenset({
    "tests/fuzz/test_fuzz.py::test_random_program_matches_reference_or_is_rejected_cleanly[2x4]",
    "tests/test_real_models_zoo.py::test_logits_and_gradients_match_one_device[gpt2-2x4-decorator]",
    "tests/test_real_models_zoo.py::test_logits_and_gradients_match_one_device[nanogpt-2x4-decorator]",
    "tests/test_examples.py::test_unet_trains_on_split_images_as_on_one_device",
    "tests/test_typecheck.py::test_mypy_passes_on_the_examples",
    "tests/test_typecheck.py::test_pyright_passes_on_the_examples",
    "tests/test_fsdp.py::test_gpt2_under_fsdp_and_tensor_parallelism_matches_one_device_and_shrinks_memory",
    "tests/test_memory.py::test_scan_over_layers_within_10_percent",
    "tests/test_multiprocess.py::test_converted_hybrid_on_two_processes_matches_one_process",
    "tests/test_plan.py::test_worker_processes_plan_what_one_process_plans",
    "tests/test_examples.py::test_example[hybrid]",
    "tests/test_spatial.py::test_conv_matches_one_device[2x4-3-1-1-causal-decorator]",
    "tests/test_random_draws.py::test_dropout_through_the_decorator_forward_and_gradient",
})
_LINE = re.compile(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+)")


def heavy(logs: list[str], over: float) -> list[str]:
    """Node ids whose phases took more than ``over`` seconds together in one of ``logs`` (pytest
    --durations=0)."""
    found: set[str] = set()
    for log in logs:
        seconds: collections.Counter[str] = collections.Counter()
        for line in log.splitlines():
            match = _LINE.match(line)
            if match:
                seconds[match.group(2)] += float(match.group(1))
        found |= {node for node, s in seconds.items() if s > over and node not in ANCHORS}
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", type=Path, nargs="+", help="outputs of pytest --durations=0")
    parser.add_argument("--over", type=float, default=1.0, help="seconds a test must take to be heavy")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.logs if not p.is_file()]
    if missing:
        print(f"error: no such file: {missing[0]}\n  fix: pass the saved output of pytest --durations=0",
              file=sys.stderr)
        return 2
    logs = [p.read_text() for p in args.logs]
    nodes = heavy(logs, args.over)
    # a listed test no log timed (skipped in each run: outside its sample) stays listed, so that a run that
    # skipped it cannot make it run every time again
    timed = {m.group(2) for log in logs for line in log.splitlines() if (m := _LINE.match(line))}
    listed = [line.strip() for line in HEAVY.read_text().splitlines() if line.strip() and not line.startswith("#")] \
        if HEAVY.exists() else []
    nodes = sorted(set(nodes) | {n for n in listed if n not in timed and n not in ANCHORS})
    if not nodes:
        print(f"error: no test took over {args.over} s in {', '.join(map(str, args.logs))}\n"
              "  fix: run pytest with --durations=0 and save its output", file=sys.stderr)
        return 2
    header = (f"# Tests over {args.over:g} s in one run on 2 cores (python -m tests.heavy): marked slow by conftest,\n"
              "# so sampled about 1 in 12 in CI; MESHIFY_SLOW=1 runs them all.\n")
    HEAVY.write_text(header + "".join(f"{n}\n" for n in nodes))
    print(f"{len(nodes)} heavy tests written to {HEAVY}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
