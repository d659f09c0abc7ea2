"""Run a server entry point under cProfile, switched on and off by signals.

Usage: ``python -m bench._profiled_server OUT.prof -m mcpkit run examples/echo.py`` or
``python -m bench._profiled_server OUT.prof SCRIPT.py``. ``SIGUSR1`` starts profiling,
``SIGUSR2`` stops it and writes the stats to ``OUT.prof``, so only the measured phase is
profiled (not start-up, the handshake or the warm-up).
"""

from __future__ import annotations

import cProfile
import runpy
import signal
import sys
from types import FrameType


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    profiler = cProfile.Profile()

    def start(signum: int, frame: FrameType | None) -> None:
        profiler.enable()

    def stop(signum: int, frame: FrameType | None) -> None:
        profiler.disable()
        profiler.dump_stats(out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    if sys.argv[2] == "-m":
        sys.argv = [sys.argv[3], *sys.argv[4:]]
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.argv = sys.argv[2:]
        runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
