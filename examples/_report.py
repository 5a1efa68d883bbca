"""What every example prints: the mesh, the error against ``.reference``, the collectives.

Not part of meshify: a few lines of reporting shared by the examples, so that each
example file shows only the model and how it is sharded.
"""

from __future__ import annotations

import numpy as np

from meshify.runtime import to_host
from meshify.runtime.hlo import collectives, summarize

TOLERANCE = 1e-4  # on the max abs difference, scaled by max(1, max |reference|)


def compare(got, want) -> tuple[float, bool]:
    """The max abs difference of two arrays, and whether it is within the (relative-ish) tolerance."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    difference = float(np.abs(got - want).max())
    return difference, difference <= TOLERANCE * max(1.0, float(np.abs(want).max()))


def print_collectives(title: str, hlo_text: str | None) -> dict[str, tuple[int, int]]:
    """Prints one line per collective kind: count, result shapes and bytes per device.

    ``hlo_text`` is ``Compiled.as_text()``, None where the backend cannot print its program."""
    print(f"{title}:")
    if hlo_text is None:
        print("  (the backend gave no program text)")
        return {}
    found = collectives(hlo_text)
    summary = summarize(found)
    if not found:
        print("  none")
    for kind, (count, size) in summary.items():
        shapes = ", ".join(c.shape_text for c in found if c.kind == kind)
        print(f"  {kind} x{count}: {shapes} ({size} bytes per device)")
    return summary


def report(fn, args, *, extra: dict[str, tuple] | None = None) -> int:
    """Runs ``fn`` and ``fn.reference`` on ``args``, prints the report, returns an exit status.

    ``extra`` holds more (got, want) pairs to check by name, e.g. gradients.
    """
    got = fn(*args)
    pairs = {"output": (got, fn.reference(*args)), **(extra or {})}
    mesh = fn.sharded.mesh
    print(f"function: {fn.__name__}, output {tuple(got.shape)} sharded as {got.sharding.spec}")
    print(f"mesh: {fn.mesh_spec} on {mesh.devices.size} {mesh.devices.flat[0].platform} devices")
    failed = []
    for what, (g, w) in pairs.items():
        difference, ok = compare(to_host(g), w)  # to_host: whole, even when split across processes
        print(f"max abs difference from .reference ({what}): {difference:.2e}")
        if not ok:
            failed.append(what)
    print_collectives("collectives in the compiled forward program", fn.lower(*args).compile().as_text())
    if failed:
        verb = "differs" if len(failed) == 1 else "differ"
        print(f"FAILED: {', '.join(failed)} {verb} from .reference by more than the tolerance ({TOLERANCE})")
        return 1
    return 0
