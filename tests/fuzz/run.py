"""``make fuzz``: differential fuzzing of meshify over many random programs.

    python tests/fuzz/run.py --n 5000 --seed 0 [--jobs 2] [--minutes 15] [--out tests/regressions/pending]

Program ``i`` of seed ``S`` is generated from ``random.Random(S * 1_000_003 + i)`` (see
``programs.py``), converted, run on 8 simulated CPU devices and compared with its
``.reference`` (see ``check.py``); ``--only I`` reruns one; ``--contains REGEX`` checks only the
programs whose text matches (a targeted run at one form).  Programs are split over
``--jobs`` worker processes.  The run keeps going after failures: each failing program is
shrunk (``shrink.py``) and saved to ``--out`` as a regression file, to move to
``tests/regressions/`` once fixed (or to mark ``xfail`` there).  Programs that XLA itself
compiles inconsistently (``check.py``'s ``xla`` outcome) are saved unshrunk and counted
apart.  Rejections are provoked (the program was built to be rejected, or the error points at
one of its triggers: an option meshify may refuse) or unprovoked; each unprovoked rejection is
reported, and the first of each error code and message is shrunk and saved too
(``unprovoked_*.py``, not a failure).  At the end it prints the programs tried, accepted,
rejected cleanly (provoked and unprovoked), mismatches, crashes and seconds, and exits 1 if
there was any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEVICES = 8


def _setup() -> None:
    """8 simulated CPU devices, before jax is imported; the repository on sys.path."""
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={DEVICES}".strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def program_seed(seed: int, i: int) -> int:
    return seed * 1_000_003 + i


def worker(args: argparse.Namespace) -> int:
    """Checks programs ``worker, worker + jobs, ...``; one JSON line per program on stdout."""
    _setup()
    import jax

    from tests.fuzz.check import check, save
    from tests.fuzz.programs import RandomChooser, generate
    from tests.fuzz.shrink import shrink

    seen_rejections: set[str] = set()

    workdir = Path(tempfile.mkdtemp(prefix="meshify-fuzz-"))
    indices = [args.only] if args.only is not None else range(args.worker, args.n, args.jobs)
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    for count, i in enumerate(indices):
        if deadline is not None and time.monotonic() > deadline:
            break
        seed = program_seed(args.seed, i)
        chooser = RandomChooser(seed)
        program = generate(chooser, seed=seed)
        if args.contains and not re.search(args.contains, program.text):
            continue  # (a targeted run: only programs holding the form under attack)
        outcome = check(program, workdir)
        record = {"i": i, "kind": outcome.kind, "code": outcome.code, "grad": outcome.grad,
                  "provoked": outcome.provoked, "mesh": program.mesh, "functions": len(program.calls())}
        unprovoked = outcome.kind == "rejected" and not outcome.provoked
        if outcome.failed or outcome.kind == "xla" or unprovoked:
            record["detail"] = outcome.detail
            record["source"] = program.text
            note = f"Found by: python tests/fuzz/run.py --seed {args.seed} --only {i}"
        if outcome.failed or outcome.kind == "xla":
            if outcome.failed:
                program, outcome = shrink(chooser.choices, program, outcome, workdir, seconds=args.shrink_seconds)
            record["saved"] = str(save(program, outcome, Path(args.out), note))
        elif unprovoked and _signature(outcome) not in seen_rejections:
            seen_rejections.add(_signature(outcome))
            program, shrunk = shrink(chooser.choices, program, outcome, workdir,
                                     seconds=min(args.shrink_seconds, 60.0))
            name = f"unprovoked_{outcome.code}_{zlib.crc32(program.text.encode()):08x}"
            record["saved"] = str(save(program, shrunk, Path(args.out), note + "\nAn unprovoked rejection, not a "
                                       "failure: support the program, or refuse it where the cause is", name=name))
        print(json.dumps(record), flush=True)
        for path in workdir.iterdir():
            path.unlink()
        if count % 200 == 199:
            jax.clear_caches()
    return 0


def _signature(outcome) -> str:
    """An unprovoked rejection's error code and message, names and numbers left out."""
    match = re.search(r"error\[(MSH\d+)\]: (.*)", outcome.detail)
    headline = match.group(2) if match else outcome.detail.strip().splitlines()[0]
    return outcome.code + " " + re.sub(r"'[^']*'|\[[^]]*\]|\d+", "_", headline)[:60]


def _codes(codes: Counter) -> str:
    return ", ".join(f"{c} x{n}" for c, n in sorted(codes.items())) or "none"


def _summary(counts: Counter, grads: int, provoked: int, codes: Counter, unprovoked: Counter, seconds: float,
             args) -> str:
    tried = sum(counts.values())
    lines = [
        f"programs tried:    {tried}",
        f"accepted:          {counts['accepted']}  (gradients compared on {grads})",
        f"rejected cleanly:  {counts['rejected']}  (by code: {_codes(codes)})",
        f"  provoked:        {provoked}  (built to be rejected, or refused where a trigger is)",
        f"  unprovoked:      {sum(unprovoked.values())}  (by code: {_codes(unprovoked)})",
        f"mismatches:        {counts['mismatch']}",
        f"crashes:           {counts['crash']}",
    ]
    if counts["invalid"]:
        lines.append(f"invalid programs:  {counts['invalid']}  (generator bugs: the reference itself failed)")
    if counts["xla"]:
        lines.append(f"XLA inconsistent:  {counts['xla']}  (equal op by op, different under jit: XLA's numerics; "
                     "saved, not counted as failures)")
    stopped = f", stopped by --minutes {args.minutes:g} before {args.n}" if args.minutes and tried < args.n \
        and seconds >= args.minutes * 60 else ""
    if args.contains:
        stopped += f", only programs matching --contains {args.contains!r}"
    lines.append(f"seconds:           {seconds:.1f}  ({args.jobs} worker process{'es' * (args.jobs != 1)}, "
                 f"seed {args.seed}, {os.cpu_count()} CPUs{stopped})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="how many programs (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--minutes", type=float, default=0, help="stop starting programs after this long")
    parser.add_argument("--out", default=str(ROOT / "tests" / "regressions" / "pending"),
                        help="where failing (shrunk) programs are saved")
    parser.add_argument("--shrink-seconds", type=float, default=120.0, help="time to shrink each failure")
    parser.add_argument("--only", type=int, default=None, help="run program I of this seed only")
    parser.add_argument("--contains", default="", help="check only the programs whose text matches this regular "
                        "expression (a targeted run: 'return helper', 'ACT_FN', 'self\\.')")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--verbose", action="store_true", help="print each failure's details")
    args = parser.parse_args(argv)
    if args.worker is not None:
        return worker(args)
    if args.only is not None:
        args.jobs = 1
    start = time.monotonic()
    command = [sys.executable, str(Path(__file__).resolve()), "--n", str(args.n), "--seed", str(args.seed),
               "--jobs", str(args.jobs), "--minutes", str(args.minutes), "--out", args.out,
               "--shrink-seconds", str(args.shrink_seconds), "--contains", args.contains]
    if args.only is not None:
        command += ["--only", str(args.only)]
    procs = [subprocess.Popen([*command, "--worker", str(k)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
             for k in range(args.jobs)]
    counts: Counter = Counter()
    codes: Counter = Counter()
    unprovoked: Counter = Counter()
    grads = provoked = 0
    lock = threading.Lock()
    failures: list[dict] = []

    def read(proc: subprocess.Popen) -> None:
        nonlocal grads, provoked
        for line in proc.stdout:  # type: ignore[union-attr]
            record = json.loads(line)
            with lock:
                counts[record["kind"]] += 1
                grads += record["grad"] and record["kind"] == "accepted"
                if record["kind"] == "rejected":
                    codes[record["code"]] += 1
                    provoked += record["provoked"]
                    if not record["provoked"]:
                        unprovoked[record["code"]] += 1
                if "detail" in record:
                    failures.append(record)
                    kind = record["kind"] if record["kind"] != "rejected" else "unprovoked rejection"
                    saved = f"\n  saved: {record['saved']}" if "saved" in record else ""
                    print(f"program {record['i']}: {kind}: {record['detail'].strip().splitlines()[0][:200]}{saved}",
                          flush=True)
                    if args.verbose:
                        print(record["source"] + "\n" + record["detail"], flush=True)
                done = sum(counts.values())
                if done % 250 == 0:
                    print(f"... {done} programs, {time.monotonic() - start:.0f} s: " + ", ".join(
                        f"{k} {v}" for k, v in sorted(counts.items())), flush=True)

    threads = [threading.Thread(target=read, args=(p,)) for p in procs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status = max(p.wait() for p in procs)
    print(_summary(counts, grads, provoked, codes, unprovoked, time.monotonic() - start, args))
    failed = sum(counts[k] for k in ("mismatch", "crash", "invalid"))
    if failed:
        print(f"{failed} failing programs saved under {args.out}; fix meshify, then move each file to "
              "tests/regressions/ (or mark it FUZZ['xfail'] there)")
    return 1 if failed or status else 0


if __name__ == "__main__":
    sys.exit(main())
