"""Explain's prediction against the compiled program, over the fuzzer's programs (issue #16).

    python tests/fuzz/counts.py --n 300 --seed 0 [--out DIR]

For each program the fuzzer's check accepts (``check.py``: the sharded program matches
``.reference``), each ``@mesh`` function whose arguments are all float32 arrays is explained
(``meshify.verify``'s prediction, with the program's dim sizes) and its converted version is
compiled on the fuzzer's inputs; the bytes per device of each collective kind must be equal, as
``meshify verify`` requires (the instruction counts may differ where XLA's combiners merge
instructions).  Functions with integer, key or low-precision arguments are skipped: explain
takes an unhinted parameter for the function's float dtype, and the fuzzer draws those as it
likes.  Each program whose bytes differ is printed and written to ``--out`` (its source, the
sizes and the two summaries), and the run exits 1.

Program ``i`` of seed ``S`` is the fuzzer's (``run.py``: ``generate(RandomChooser(S * 1_000_003 + i))``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository on sys.path, devices before jax
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.fuzz.run import _setup, program_seed  # noqa: E402

FLOATS = ("float", "steps")


def compare(program, workdir: Path) -> list[dict]:
    """The differences between explain and the compiled program for one accepted ``program``, one dict
    per function whose bytes differ (empty: all agree, or nothing to compare)."""
    from meshify.rewrite import convert_source
    from meshify.runtime.hlo import collectives, summarize
    from meshify.verify import _predict
    from tests.fuzz import check as fuzz

    if program.rebinds:  # a module constant rebound between calls: the second call is another program
        return []
    stem = f"counts_{program.seed}"
    path = workdir / f"{stem}.py"
    path.write_text(program.text)
    generated = workdir / f"{stem}_sharded.py"
    generated.write_text(convert_source(program.text, str(path)).text)
    converted = fuzz._import(generated, stem + "_sharded")
    found = []
    for i, entry in enumerate(program.calls()):
        if entry.method or any(a.kind not in FLOATS or a.dtype != "float32" for a in entry.args):
            continue
        args, _ = fuzz._entry_inputs(program, i, entry)
        (report, _hints), = _predict(program.text.encode(), path, dict(entry.sizes), entry.name, {})
        predicted = {kind: size for kind, (_count, size) in report.predicted().items() if size}
        hlo = getattr(converted, entry.name).lower(*entry.packed(converted, args)).compile().as_text()
        compiled = {kind: size for kind, (_count, size) in summarize(collectives(hlo)).items() if size}
        if predicted != compiled:
            found.append({"function": entry.name, "sizes": dict(entry.sizes), "predicted": predicted,
                          "compiled": compiled})
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100, help="how many programs (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write each differing program here")
    args = parser.parse_args(argv)
    _setup()
    from tests.fuzz.check import check
    from tests.fuzz.programs import RandomChooser, generate

    workdir = Path(tempfile.mkdtemp(prefix="meshify-counts-"))
    stats = {"programs": 0, "accepted": 0, "compared_programs": 0, "differ": 0, "errors": 0}
    start = time.monotonic()
    for i in range(args.n):
        seed = program_seed(args.seed, i)
        program = generate(RandomChooser(seed), seed=seed)
        stats["programs"] += 1
        if check(program, workdir).kind != "accepted":
            continue
        stats["accepted"] += 1
        try:
            found = compare(program, workdir)
        except Exception as e:  # noqa: BLE001 - a program check() accepted: report, go on
            stats["errors"] += 1
            print(f"program {i}: {type(e).__name__}: {str(e).splitlines()[0][:300]}", flush=True)
            continue
        stats["compared_programs"] += 1
        if found:
            stats["differ"] += 1
            print(f"program {i} (python tests/fuzz/counts.py --seed {args.seed} --n {i + 1}): "
                  + json.dumps(found), flush=True)
            if args.out:
                out = Path(args.out)
                out.mkdir(parents=True, exist_ok=True)
                (out / f"counts_{args.seed}_{i}.py").write_text(
                    program.text + "\n# " + json.dumps(found) + "\n")
        for leftover in workdir.iterdir():
            leftover.unlink()
    stats["seconds"] = round(time.monotonic() - start)
    print(json.dumps(stats), flush=True)
    return 1 if stats["differ"] or stats["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
