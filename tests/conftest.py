"""Test-wide setup: 8 simulated CPU devices, set before jax is imported anywhere."""

import os
import zlib

import pytest

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", False)

assert len(jax.devices()) >= 8, "tests need 8 simulated CPU devices"


# -- slow tests: skipped unless MESHIFY_SLOW=1, except a fixed sample of about 1 in 4 ----------

#: One slow test in this many runs on every run; the sample depends only on the test's id.
SLOW_SAMPLE_EVERY = 4


def _in_slow_sample(nodeid: str) -> bool:
    return zlib.crc32(nodeid.encode()) % SLOW_SAMPLE_EVERY == 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skips ``@pytest.mark.slow`` tests outside the sample unless ``MESHIFY_SLOW=1``."""
    if os.environ.get("MESHIFY_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason=f"slow; set MESHIFY_SLOW=1 (1 in {SLOW_SAMPLE_EVERY} runs always)")
    for item in items:
        if item.get_closest_marker("slow") is not None and not _in_slow_sample(item.nodeid):
            item.add_marker(skip)
