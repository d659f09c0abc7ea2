"""`make demo` (examples/demo.py) runs end to end: a real subprocess server, the mcpkit
client, every section of the walk-through. The Quickstart promises this command works on a
fresh clone, so a change that breaks it (as the 2026-07-28 client once did, by reaching for
resources/subscribe on a stateless server) must fail here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.py"


def test_the_demo_runs_every_section() -> None:
    done = subprocess.run(
        [sys.executable, str(DEMO)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    for expected in (
        "Connected to",
        "echo         'Hello, MCP! ✓'",
        "add_numbers  The sum of 5 and 3 is 8",
        "(cancelled on the wire)",
        "sampling     LLM response: Paris, of course.",
        "elicitation  User response: action=accept",
        "notifications/resources/updated for test://watched-resource",
        "with args    Prompt with arguments: arg1='sun', arg2='moon'",
        "200 concurrent echo calls",
        "Closed: the server was shut down and reaped.",
    ):
        assert expected in out, f"{expected!r} missing from the demo's output:\n{out}"
