"""benchmarks/fsdp_memory.py --quick: what it reads from XLA's reports adds up (issue #15)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("meshify", "meshify_keep", "manual", "manual_keep", "gspmd", "gspmd_at_meshify_outputs")


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
    for mine, theirs in (("meshify", "manual"), ("meshify_keep", "manual_keep")):
        assert rows[mine]["collective_bytes"] == rows[theirs]["collective_bytes"], mine
        assert rows[mine]["all_gathers_lowered"] == rows[theirs]["all_gathers_lowered"], mine
        assert rows[mine]["arg_bytes"] + rows[mine]["temp_bytes"] == rows[theirs]["arg_bytes"] + rows[theirs]["temp_bytes"]
    assert rows["meshify"]["out_bytes"] == rows["gspmd_at_meshify_outputs"]["out_bytes"]
    # regathering gathers again before XLA's passes and keeps less alive
    assert rows["meshify"]["all_gathers_lowered"] > rows["meshify_keep"]["all_gathers_lowered"]
    assert rows["meshify"]["temp_bytes"] < rows["meshify_keep"]["temp_bytes"]
