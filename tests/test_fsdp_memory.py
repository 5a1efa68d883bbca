"""benchmarks/fsdp_memory.py --quick: what it reads from XLA's reports adds up (issue #15)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("meshify", "manual", "manual_regather", "gspmd", "gspmd_at_meshify_outputs")


def test_quick_run_reports_every_variant_consistently(tmp_path) -> None:
    out = tmp_path / "memory.json"
    proc = subprocess.run([sys.executable, "benchmarks/fsdp_memory.py", "--quick", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads(out.read_text())["variants"]
    assert tuple(rows) == VARIANTS
    for name, r in rows.items():
        # the buffer-assignment report's packed total is memory_analysis()'s three figures and constants
        total = r["arg_bytes"] + r["temp_bytes"] + r["out_bytes"]
        assert total <= r["packed_bytes"] <= 1.01 * total, name
        assert r["arg_bytes"] <= r["live_peak_bytes"] <= r["packed_bytes"], name
    assert rows["meshify"]["collective_bytes"] == rows["manual"]["collective_bytes"]
    assert rows["meshify"]["out_bytes"] == rows["gspmd_at_meshify_outputs"]["out_bytes"]
    # the regathering variant does gather again before XLA's passes (what XLA then does is the finding)
    assert rows["manual_regather"]["all_gathers_lowered"] > rows["manual"]["all_gathers_lowered"]
