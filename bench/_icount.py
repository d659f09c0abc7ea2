"""Instruction counts per codec op with valgrind's callgrind: deterministic, so the codec
ratio can be read on a machine whose wall-clock timings are noisy (a shared VM).

Each contender runs the small compact payload in a fresh interpreter under ``valgrind
--tool=callgrind``, twice: once with ``N0`` ops and once with ``N`` ops, after the same
set-up (imports, building the op, one untimed op). The difference over ``N - N0`` ops
leaves out start-up and each contender's own imports (mcpkit's are larger than the
floor's, and used to be charged to its ops). The same difference for an empty op is
subtracted, which removes the loop and the call. ``PYTHONHASHSEED=0`` makes the counts
repeatable. Takes about a minute; skipped when valgrind is missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final

__all__ = ["instruction_counts"]

N0: Final = 1_000
N: Final = 21_000
ROOT: Final = Path(__file__).resolve().parent.parent
_SCRIPT: Final = """
import sys
sys.path.insert(0, {root!r})
from bench._codec import CONTENDERS, PAYLOADS, request_bytes
text, compact = PAYLOADS["small"]
name = sys.argv[1]
op = (lambda: None) if name == "none" else CONTENDERS[name](request_bytes(text, compact))
op()
for _ in range(int(sys.argv[2])):
    op()
"""
_COLLECTED: Final = re.compile(rb"Collected : (\d+)")


def _count(name: str, ops: int) -> int:
    script = _SCRIPT.format(root=str(ROOT))
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-c",
            script,
            name,
            str(ops),
        ],
        env={**os.environ, "PYTHONHASHSEED": "0"},
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
    names = ("none", "mcpkit", "mcpkit-codec", "bare")
    # Instruction counts do not depend on what else runs: two valgrinds at a time.
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = {(name, ops): pool.submit(_count, name, ops) for name in names for ops in (N0, N)}
        per_op = {
            name: (runs[name, N].result() - runs[name, N0].result()) / (N - N0) for name in names
        }
    return {name: per_op[name] - per_op["none"] for name in names[1:]}
