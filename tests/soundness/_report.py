"""Prints what each soundness case does today on each path (not a case; not collected).

    .venv/bin/python tests/soundness/_report.py [CASE ...]
"""
import os
import sys
import tempfile
from pathlib import Path

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", False)

from tests.test_soundness import CASES, PATHS, XFAIL, _case_outcome  # noqa: E402


def main(names):
    for name in names or CASES:
        for path in PATHS:
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    case, kind, detail = _case_outcome(name, path, Path(tmp))
                    expect = case.EXPECT
                except Exception as e:  # noqa: BLE001 - a harness problem
                    expect, kind, detail = "?", "HARNESS", f"{type(e).__name__}: {e}"
            ok = "ok " if kind == expect else ("XF " if (XFAIL.get(f"{name}:{path}") or XFAIL.get(name)) else "BAD")
            print(f"{ok} {name:42s} {path:9s} expect={expect:5s} got={kind:8s} {detail}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
