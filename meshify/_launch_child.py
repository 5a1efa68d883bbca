"""What each ``meshify launch`` process runs: join the job, then the script as ``__main__``.

    python -m meshify._launch_child SCRIPT [ARGS...]   (with the launcher's environment)

After this module's ``initialize()`` the script sees a started multi-process job: its own
``simulate_cpu_devices(8)`` or ``meshify.runtime.initialize()`` calls find it in place.
A script that fails (an exception, a non-zero exit) ends its process at once, skipping
JAX's shutdown barrier, which would otherwise wait up to minutes for the processes that
are still running; the launcher then stops those and reports.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import traceback
import types

from meshify._launch import ENV_PARENT


def main(argv: list[str]) -> None:
    _die_with_launcher()
    script, args = argv[0], argv[1:]
    from meshify import runtime
    from meshify.errors import MeshifyError

    try:
        runtime.initialize()
    except MeshifyError as e:
        _exit(1, f"{e}\n")
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python SCRIPT` would
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            _exit(e.code if isinstance(e.code, int) else 1, "" if isinstance(e.code, int) else f"{e.code}\n")
    except BaseException as e:  # noqa: BLE001 - report anything, then end this process now
        _exit(1, "".join(traceback.format_exception(type(e), e, _user_frames(e.__traceback__))))


def _user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback from the script's first frame on (without this module's and runpy's)."""
    while tb is not None and (tb.tb_frame.f_code.co_filename == __file__
                              or "runpy" in tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def _exit(status: int, message: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(message)
    sys.stderr.flush()
    os._exit(status)


def _die_with_launcher() -> None:
    """On Linux, asks the kernel to kill this process when the launcher dies (no orphaned jobs)."""
    parent = os.environ.get(ENV_PARENT)
    if not sys.platform.startswith("linux") or not parent:
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):  # the launcher died before prctl took effect
        os._exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
