"""Instruction counts per codec op with valgrind's callgrind: deterministic, so the codec
ratio can be read on a machine whose wall-clock timings are noisy (a shared VM).

Each contender runs ``N`` ops of the small compact payload in a fresh interpreter under
``valgrind --tool=callgrind``; an interpreter running ``N`` empty calls is subtracted, so
start-up and imports cancel out. Takes about a minute; skipped when valgrind is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

__all__ = ["instruction_counts"]

N: Final = 20_000
ROOT: Final = Path(__file__).resolve().parent.parent
_SCRIPT: Final = """
import sys
sys.path.insert(0, {root!r})
from bench._codec import CONTENDERS, PAYLOADS, request_bytes
text, compact = PAYLOADS["small"]
name = sys.argv[1]
op = (lambda: None) if name == "none" else CONTENDERS[name](request_bytes(text, compact))
for _ in range({n}):
    op()
"""
_COLLECTED: Final = re.compile(rb"Collected : (\d+)")


def _count(name: str) -> int:
    script = _SCRIPT.format(root=str(ROOT), n=N)
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-c",
            script,
            name,
        ],
        capture_output=True,
        timeout=300,
        check=True,
    )
    match = _COLLECTED.search(done.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output for {name}")
    return int(match.group(1))


def instruction_counts() -> dict[str, float] | None:
    """Instructions per op for mcpkit, mcpkit-codec and bare, or ``None`` without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    base = _count("none")
    return {name: (_count(name) - base) / N for name in ("mcpkit", "mcpkit-codec", "bare")}
