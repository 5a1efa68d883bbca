"""Writes ``tests/heavy.txt``: the tests that took longest in a measured run, which conftest marks slow.

    CI=true .venv/bin/python -m pytest -q -n 2 --durations=0 > durations.log
    .venv/bin/python -m tests.heavy durations.log            # tests over 4 s (setup + call + teardown)

CI runs the suite on 2 cores in about 15 minutes only if the few dozen longest checks (a U-Net
layer's gradient op by op, a 40-program fuzz batch, a GPT-2 in a scan) are sampled like the other
slow tests: about 1 in 8 of them run each day, the sample moving daily, and ``MESHIFY_SLOW=1`` runs
them all.  ``ANCHORS`` always run: one of each family whose members are all heavy, so that no
family goes unchecked in any CI run.
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
    "tests/test_examples.py::test_unet_trains_on_split_images_as_on_one_device",
})
_LINE = re.compile(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+)")


def heavy(log: str, over: float) -> list[str]:
    """Node ids whose phases took more than ``over`` seconds together in ``log`` (pytest --durations=0)."""
    seconds: collections.Counter[str] = collections.Counter()
    for line in log.splitlines():
        match = _LINE.match(line)
        if match:
            seconds[match.group(2)] += float(match.group(1))
    return sorted(node for node, s in seconds.items() if s > over and node not in ANCHORS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="the output of pytest --durations=0")
    parser.add_argument("--over", type=float, default=4.0, help="seconds a test must take to be heavy")
    args = parser.parse_args(argv)
    nodes = heavy(args.log.read_text(), args.over)
    if not nodes:
        print(f"error: no test took over {args.over} s in {args.log} (was it run with --durations=0?)",
              file=sys.stderr)
        return 2
    header = (f"# Tests over {args.over:g} s in one run on 2 cores (python -m tests.heavy): marked slow by conftest,\n"
              "# so sampled about 1 in 8 in CI; MESHIFY_SLOW=1 runs them all.\n")
    HEAVY.write_text(header + "".join(f"{n}\n" for n in nodes))
    print(f"{len(nodes)} heavy tests written to {HEAVY}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
