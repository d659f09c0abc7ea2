"""End to end: a stdio server that dies while calls are pending fails them at once, and the
error says why (its exit status and, when captured, the end of its stderr), as it does
when the server dies before answering ``initialize``."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Final, Literal

import anyio
import pytest

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import ConnectionClosedError

pytestmark = pytest.mark.anyio

#: Answers initialize, then dies on the first tool call: half an answer written (cases
#: "half") or nothing (case "silent"), a last word on stderr, exit status 7.
DYING: Final = textwrap.dedent(
    """
    import json, os, sys
    out = sys.stdout.buffer
    half = sys.argv[1] == "half"
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if message.get("method") == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "dying", "version": "1"},
            }
            out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
                      .encode() + b"\\n")
            out.flush()
        elif message.get("method") == "tools/call":
            if half:
                out.write(b'{"jsonrpc": "2.0", "id": ')
                out.flush()
            print("fatal: the database connection was lost", file=sys.stderr, flush=True)
            os._exit(7)
    """
)


@pytest.mark.parametrize("written", ["half", "silent"])
@pytest.mark.parametrize("stderr", ["capture", "devnull"])
async def test_a_server_that_dies_mid_call_says_why(
    tmp_path: Path, written: str, stderr: Literal["capture", "devnull"]
) -> None:
    # It was a bare "the connection closed", whatever the server had said.
    (tmp_path / "dying.py").write_text(DYING)
    transport = StdioTransport(
        sys.executable, [str(tmp_path / "dying.py"), written], stderr=stderr, on_stderr=print
    )
    with anyio.fail_after(30):
        async with Client(transport, era="handshake") as client:
            with pytest.raises(ConnectionClosedError) as closed:
                await client.call_tool("anything")
    message = str(closed.value)
    assert message.startswith("the connection closed: the server process exited with status 7")
    assert ("the database connection was lost" in message) is (stderr == "capture")
