"""mcpkit's HTTP apps under granian (the README names it beside uvicorn and hypercorn): a
Rust server with its own worker process, started with granian's own command line against
a module that builds the app, and driven by mcpkit's client over real sockets on
127.0.0.1, in both eras and on every transport."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import anyio
import pytest

from mcpkit.client import Client, Era
from mcpkit.types import TextContent

from .conftest import needs_websocket_client

pytestmark = pytest.mark.anyio

TIMEOUT: Final = 20.0
APP: Final = textwrap.dedent(
    """
    import os
    from mcpkit import Server
    from mcpkit.server._http_apps import app_for

    server = Server("granian-served", "1.0")

    @server.tool()
    def echo(text: str) -> str:
        '''Echo the text.'''
        return text

    app = app_for(server, os.environ["SERVED_TRANSPORT"])
    """
)
PATHS: Final = {"http": "/mcp", "sse": "/sse", "ws": "/ws"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(params=list(PATHS))
def granian_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The endpoint of a granian process serving one mcpkit app (the param's transport)."""
    transport: str = request.param
    (tmp_path / "served.py").write_text(APP)
    port = _free_port()
    argv = [sys.executable, "-m", "granian", "--interface", "asgi", "--workers", "1"]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--ws" if transport == "ws" else "--no-ws"]
    env = {**os.environ, "SERVED_TRANSPORT": transport}
    with subprocess.Popen(
        [*argv, "served:app"], cwd=tmp_path, env=env, stderr=subprocess.PIPE
    ) as process:
        try:
            deadline = time.monotonic() + TIMEOUT
            while not _listening(port):  # a bounded poll of a condition, not a wait
                assert process.poll() is None, process.stderr.read() if process.stderr else b""
                assert time.monotonic() < deadline, "granian did not start listening"
                time.sleep(0.05)
            scheme = "ws" if transport == "ws" else "http"
            yield f"{scheme}://127.0.0.1:{port}{PATHS[transport]}"
        finally:
            process.terminate()
            try:
                process.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(TIMEOUT)


@pytest.mark.parametrize("era", ["handshake", "auto"])
async def test_every_transport_under_granian(
    granian_url: str, era: Era, anyio_backend: str
) -> None:
    if granian_url.startswith("ws:"):
        needs_websocket_client(anyio_backend)
    with anyio.fail_after(TIMEOUT):
        async with Client(granian_url, era=era) as client:
            # The legacy HTTP+SSE transport serves the handshake era only.
            modern = era == "auto" and not granian_url.endswith("/sse")
            assert (client.protocol_version == "2026-07-28") == modern
            assert [tool.name async for tool in client.iter_tools()] == ["echo"]
            for text in ("over granian", "é" * 10_000):
                result = await client.call_tool("echo", {"text": text})
                assert result.content == [TextContent(text=text)]
