"""How long ``meshify plan`` takes to search a 12-layer GPT-2 (examples/gpt2.py) on 64 and 1024 devices.

    python benchmarks/plan_speed.py     # prints and writes benchmarks/results/plan_speed.json

For each device count: ``plan_source`` alone in this process (the search: rewrites and costing;
median of 3, after one warm-up run so that imports are not counted), and the whole command
(``python -m meshify plan ... --format json``, a fresh process, imports included; median of 3); and the
search again with ``MESHIFY_PLAN_JOBS=1`` (no worker processes), for comparison.
Goals (issue #16): under 2 s on 64 devices, under 10 s on 1024.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILE = ROOT / "examples" / "gpt2.py"
#: GPT-2 small (124M): 12 layers, d_model 768, 12 heads, vocab padded to 50304, context 1024.
DIMS = {"batch": 512, "length": 1024, "d_model": 768, "heads": 12, "d_head": 64, "d_ff": 3072,
        "vocab": 50304, "layers": 12, "qkv": 3}
GOALS = {64: 2.0, 1024: 10.0}


def main() -> int:
    from meshify.plan import plan_source

    source = FILE.read_bytes()
    plan_source(source, str(FILE), 8, DIMS, "gpt2")  # warm-up: imports, rule registry
    rows = []
    for devices, goal in GOALS.items():
        times, alone = [], []
        for _ in range(3):
            start = time.perf_counter()
            search, = plan_source(source, str(FILE), devices, DIMS, "gpt2")
            times.append(time.perf_counter() - start)
        os.environ["MESHIFY_PLAN_JOBS"] = "1"  # the same search without worker processes, for comparison
        try:
            for _ in range(3):
                start = time.perf_counter()
                plan_source(source, str(FILE), devices, DIMS, "gpt2")
                alone.append(time.perf_counter() - start)
        finally:
            del os.environ["MESHIFY_PLAN_JOBS"]
        dims = ",".join(f"{k}={v}" for k, v in DIMS.items())
        command = [sys.executable, "-m", "meshify", "plan", f"{FILE}::gpt2", "--devices", str(devices),
                   "--dims", dims, "--format", "json"]
        cli = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
            cli.append(time.perf_counter() - start)
        best = search.best
        rows.append({"devices": devices, "search": search.search, "structures_rewritten": search.structures,
                     "candidates_costed": search.costed, "pruned_indivisible": search.pruned,
                     "unsupported": len(search.unsupported),
                     "search_seconds_median": round(statistics.median(times), 3),
                     "search_seconds_one_process_median": round(statistics.median(alone), 3),
                     "cli_seconds_median": round(statistics.median(cli), 3), "goal_seconds": goal,
                     "best": best.decorator if best else None,
                     "best_step_ms": round(best.time_s * 1e3, 3) if best else None})
        print(f"{devices:5d} devices: {search.structures} layouts rewritten, {search.costed} candidates costed, "
              f"search {statistics.median(times):.2f} s ({statistics.median(alone):.2f} s in one process), CLI {statistics.median(cli):.2f} s (goal < {goal:.0f} s); "
              f"best {best.decorator if best else None}")
    result = {"function": "examples/gpt2.py::gpt2", "dims": DIMS, "machine_preset": "h100", "rows": rows,
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
              "command": "python benchmarks/plan_speed.py"}
    out = ROOT / "benchmarks" / "results" / "plan_speed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
