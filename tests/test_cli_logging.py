"""`mcpkit run` and logging: a served file that configures logging itself keeps its
configuration (as under ``python FILE.py``); otherwise ``--log-level`` sets it up, on
stderr (on stdio, stdout belongs to the protocol)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Final

import pytest

CONFIGURED: Final = 'logging.basicConfig(level=logging.INFO, format="USER %(name)s %(message)s")'

SERVED: Final = textwrap.dedent(
    """
    import logging
    {configure}
    from mcpkit import Server

    logging.getLogger("app").info("loaded")
    server = Server("logs", "1")

    @server.tool()
    def hello() -> str:
        logging.getLogger("app").info("hello called")
        return "hi"
    """
)

SESSION: Final = b"".join(
    json.dumps(message).encode() + b"\n"
    for message in (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hello"}},
    )
)

# (the file configures logging, CLI options, lines expected on stderr, lines not expected)
CASES: Final = [
    # The file's own configuration was a silent no-op: the CLI had configured first.
    (True, [], ["USER app loaded", "USER app hello called"], []),
    # An explicit level reaches mcpkit's own loggers through the file's handlers.
    (True, ["--log-level", "DEBUG"], ["USER mcpkit.server initialized"], []),
    (False, [], [], ["loaded", "hello called"]),
    (False, ["--log-level", "INFO"], ["INFO app: loaded", "INFO app: hello called"], []),
]


@pytest.mark.parametrize(
    ("configure", "options", "expected", "absent"),
    CASES,
    ids=["own-config", "own-config-debug", "default", "cli-info"],
)
def test_the_served_files_logging_configuration_is_kept(
    tmp_path: Path, configure: bool, options: list[str], expected: list[str], absent: list[str]
) -> None:
    served = tmp_path / "served.py"
    served.write_text(SERVED.format(configure=CONFIGURED if configure else ""))
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", str(served), *options],
        input=SESSION,  # then end of input: the answers are written, the server exits
        capture_output=True,
        timeout=30,
        check=False,
    )
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[-1]["result"]["content"][0]["text"] == "hi"
    for text in expected:
        assert text in stderr, stderr
    for text in absent:
        assert text not in stderr, stderr
