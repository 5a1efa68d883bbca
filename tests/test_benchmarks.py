"""benchmarks/run.py --quick: the shape of latest.json, and every variant's error (not the times)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("ffn", "block", "fsdp_tp", "vocab_ce", "dp_mlp", "lm_step")
ROW_KEYS = {"case": str, "mode": str, "variant": str, "max_abs_err": float, "collective_bytes": int,
            "collectives": dict, "temp_bytes": int, "arg_bytes": int, "compile_s": float, "step_s": float}
CONVERT_KEYS = ("lines_per_s", "libcst_parse_lines_per_s", "rewrite_ms_per_fn", "cached_ms_per_fn")
KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
# lm_step fwd_bwd compares parameters after one adamw step, whose first update is about
# lr * g / |g| per element: gradients that differ in the last bits near zero move it by up to 2 * lr.
TOLERANCE = {"lm_step/fwd_bwd": 1e-3}


def test_quick_run(tmp_path) -> None:
    """One test for one run (~30 s of CPU): under pytest-xdist, separate tests sharing a
    fixture would each run the benchmark on their own worker."""
    proc = subprocess.run([sys.executable, "benchmarks/run.py", "--quick", "--no-chart", "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    markdown = (tmp_path / "latest.md").read_text()
    assert markdown.startswith("# Benchmarks")
    check_the_compute_floor_has_no_collectives(markdown)
    check_the_memory_section_adds_arguments_and_temporaries(markdown)
    results = json.loads((tmp_path / "latest.json").read_text())
    check_json_has_exactly_the_issue_shape(results)
    check_every_case_mode_and_variant_has_one_row(results)
    check_every_variant_matches_the_single_device_run(results)
    check_meshify_moves_the_hand_written_bytes(results)


def _is(value, kind) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool) or kind is float and isinstance(value, int)


def check_json_has_exactly_the_issue_shape(results: dict) -> None:
    assert set(results) == {"rows", "convert"}
    assert set(results["convert"]) == set(CONVERT_KEYS)
    assert all(_is(results["convert"][k], float) and results["convert"][k] > 0 for k in CONVERT_KEYS[:3])
    for row in results["rows"]:
        assert set(row) == set(ROW_KEYS), row
        assert all(_is(row[k], kind) for k, kind in ROW_KEYS.items()), row
        assert row["mode"] in ("fwd", "fwd_bwd") and row["variant"] in ("meshify", "gspmd", "manual")
        for kind, pair in row["collectives"].items():
            assert kind in KINDS and len(pair) == 2 and all(_is(x, int) for x in pair), row
        assert row["collective_bytes"] == sum(size for _, size in row["collectives"].values())
        assert math.isfinite(row["step_s"]) and row["step_s"] > 0 and row["compile_s"] > 0


def check_every_case_mode_and_variant_has_one_row(results: dict) -> None:
    keys = sorted((r["case"], r["mode"], r["variant"]) for r in results["rows"])
    assert keys == sorted((c, m, v) for c in CASES for m in ("fwd", "fwd_bwd") for v in ("meshify", "gspmd", "manual"))


def check_every_variant_matches_the_single_device_run(results: dict) -> None:
    bad = [(r["case"], r["mode"], r["variant"], r["max_abs_err"]) for r in results["rows"]
           if not r["max_abs_err"] <= TOLERANCE.get(f"{r['case']}/{r['mode']}", 1e-4)]
    assert not bad, bad


def check_meshify_moves_the_hand_written_bytes(results: dict) -> None:
    """Bytes are exact on simulated devices, so this holds at the quick sizes too."""
    by = {(r["case"], r["mode"], r["variant"]): r["collective_bytes"] for r in results["rows"]}
    for case in CASES:
        for mode in ("fwd", "fwd_bwd"):
            assert by[case, mode, "meshify"] == by[case, mode, "manual"], (case, mode)
            assert by[case, mode, "meshify"] <= by[case, mode, "gspmd"], (case, mode)


def check_the_memory_section_adds_arguments_and_temporaries(markdown: str) -> None:
    """One row per case and mode whose ratio is meshify's argument + temp MB over gspmd's (rounded),
    and the issue's argument + temp target among the targets."""
    assert "| per-device argument + temp bytes at most 1.05x gspmd's, same input and output shardings |" in markdown
    section = markdown[markdown.index("## Memory"):markdown.index("## Compute floor")]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert sorted((r[0][2:], r[1]) for r in rows) == sorted((c, m) for c in CASES for m in ("fwd", "fwd_bwd"))
    for row in rows:  # the MB cells are rounded to 0.001, the ratio cell to 0.001
        mine, theirs, ratio = float(row[2]), float(row[4]), float(row[7])
        assert (mine - 5e-4) / (theirs + 5e-4) - 5e-4 <= ratio <= (mine + 5e-4) / (theirs - 5e-4) + 5e-4, row


def check_the_compute_floor_has_no_collectives(markdown: str) -> None:
    """The floor row of every case and mode: 0 collective bytes, a positive step time."""
    section = markdown[markdown.index("## Compute floor"):markdown.index("## Rewrite speed")]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert sorted((r[0][2:], r[1]) for r in rows) == sorted((c, m) for c in CASES for m in ("fwd", "fwd_bwd"))
    assert all(r[2] == "0.000" and float(r[3]) > 0 for r in rows), rows


def test_one_device_quick_run(tmp_path) -> None:
    """benchmarks/one_device.py --quick (the one-accelerator companion, ~20 s of CPU): a row per case,
    mode, dtype and variant; on a one-device mesh meshify's program has no collective and computes the
    plain program's outputs; --report writes the same table again from the JSON."""
    proc = subprocess.run([sys.executable, "benchmarks/one_device.py", "--quick", "--repeats", "2", "--out",
                           str(tmp_path), "--name", "quick"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((tmp_path / "quick.json").read_text())
    keys = sorted((r["case"], r["mode"], r["dtype"], r["variant"]) for r in results["rows"])
    assert keys == sorted((c, m, d, v) for c in CASES for m in ("fwd", "fwd_bwd") for d in ("float32", "bfloat16")
                          for v in ("meshify", "plain"))
    assert all(r["collectives"] == {} and r["max_diff_from_plain"] <= 1e-6 and r["step_s"] > 0
               for r in results["rows"]), results["rows"]
    table = (tmp_path / "quick.md").read_text()
    (tmp_path / "quick.md").unlink()
    again = subprocess.run([sys.executable, "benchmarks/one_device.py", "--report", str(tmp_path / "quick.json")],
                           cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "quick.md").read_text() == table
