"""Test-wide setup: 8 simulated CPU devices, set before jax is imported anywhere."""

import datetime
import hashlib
import os
from pathlib import Path

import pytest

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", False)

assert len(jax.devices()) >= 8, "tests need 8 simulated CPU devices"


# -- slow tests: skipped unless MESHIFY_SLOW=1, except a sample of about 1 in 12 ---------------

#: One slow test in this many runs on every run (CI's 15-minute budget on 2 cores).
SLOW_SAMPLE_EVERY = 12


def _sample_key() -> str:
    """Which slow tests are sampled: ``MESHIFY_SAMPLE`` if set (to rerun a failed CI run's sample),
    else today's UTC date, so that the sample moves day by day and every slow test runs in CI within
    about ``SLOW_SAMPLE_EVERY`` days, while reruns on one day run the same tests."""
    return os.environ.get("MESHIFY_SAMPLE") or datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")


def _in_slow_sample(nodeid: str, key: str) -> bool:
    # A cryptographic hash, not crc32: crc32 is linear, so parametrized ids that differ in a character
    # or two fell in or out of one day's sample together (84 of 331 heavy tests on one day, not ~41).
    digest = hashlib.sha256(f"{key}:{nodeid}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % SLOW_SAMPLE_EVERY == 0


def pytest_report_header(config: pytest.Config) -> str:
    if os.environ.get("MESHIFY_SLOW") == "1":
        return "meshify: every slow test (MESHIFY_SLOW=1)"
    return (f"meshify: slow tests sampled 1 in {SLOW_SAMPLE_EVERY} by MESHIFY_SAMPLE={_sample_key()} "
            "(set it to rerun this sample; MESHIFY_SLOW=1 runs all)")


def _heavy() -> frozenset[str]:
    """The tests ``tests/heavy.txt`` lists (the longest of a measured run; see tests/heavy.py)."""
    path = Path(__file__).with_name("heavy.txt")
    lines = path.read_text().splitlines() if path.exists() else []
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the heavy tests slow; skips ``@pytest.mark.slow`` tests outside the sample unless
    ``MESHIFY_SLOW=1``."""
    heavy = _heavy()
    for item in items:
        if item.nodeid in heavy:
            item.add_marker(pytest.mark.slow)
    if os.environ.get("MESHIFY_SLOW") == "1":
        return
    key = _sample_key()
    skip = pytest.mark.skip(reason=f"slow; sampled 1 in {SLOW_SAMPLE_EVERY} (MESHIFY_SAMPLE={key}); "
                                   "MESHIFY_SLOW=1 runs all")
    for item in items:
        if item.get_closest_marker("slow") is not None and not _in_slow_sample(item.nodeid, key):
            item.add_marker(skip)
