"""Under ``meshify launch``: an all-reduce over every process's devices, step after step.

    meshify launch -n 2 tests/multiprocess/collective_loop.py OUT_DIR [--fail PROCESS]

After step 3 each process writes its pid to OUT_DIR/pid_<i> (so that a test can kill it);
with ``--fail P``, process P raises there instead, while the others keep reducing.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import jax
import numpy as np

import meshify.runtime as mr

total = mr.bind(lambda x: jax.lax.psum(x, ("batch", "model")), mr.MeshSpec.of(batch=2, model=4),
                {"x": mr.ArgSpec(("batch", "model"), mr.P("batch", "model"))}, mr.P())


def main(out_dir: str, *flags: str) -> int:
    fail = int(flags[1]) if flags[:1] == ("--fail",) else None
    me = jax.process_index()
    x = np.ones((2, 4), np.float32)
    for step in range(100_000):
        assert mr.to_host(total(x)).item() == 8.0
        if step == 3:
            if me == fail:
                raise RuntimeError(f"process {me} fails on purpose at step {step}")
            (Path(out_dir) / f"pid_{me}").write_text(str(os.getpid()))
        time.sleep(0.02)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
