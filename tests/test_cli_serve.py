"""``mcpkit run FILE.py --transport http|sse|ws [--path]`` serves over the network on the
loopback address by default, at the path asked for: one real exchange per transport
against the CLI in a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

from mcpkit.client import Client

from ._mcphttp import JSON_HEADERS, initialize
from ._wsraw import raw
from .conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.anyio

START_TIMEOUT: Final = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server is a subprocess


@contextmanager
def serving(
    *args: str, argv: list[str] | None = None, env: dict[str, str] | None = None
) -> Iterator[str]:
    """Run ``mcpkit run examples/echo.py --port 0 ARGS`` (or ``argv``; ``env``: added to
    the environment) and yield the URL it announces."""
    if argv is None:
        argv = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "echo.py"), "--port", "0"]
    process = subprocess.Popen(
        [*argv, *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    found: list[str] = []
    announced = threading.Event()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            match = re.search(r"mcpkit: serving .* on ((?:https?|wss?)://\S+)", line)
            if match and not found:
                found.append(match[1])
                announced.set()
        announced.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        announced.wait(START_TIMEOUT)
        assert found, f"no URL announced (exit status {process.poll()})"
        yield found[0]
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        reader.join(timeout=10)
        assert process.stderr is not None
        process.stderr.close()


@pytest.mark.parametrize(("args", "path"), [((), "/mcp"), (("--path", "/custom"), "/custom")])
async def test_streamable_http(args: tuple[str, ...], path: str) -> None:
    with serving("--transport", "http", *args) as url:
        parts = urlsplit(url)
        assert (parts.scheme, parts.hostname, parts.path) == ("http", "127.0.0.1", path)
        async with httpx.AsyncClient(timeout=10) as client:
            answer = await client.post(url, content=initialize(), headers=JSON_HEADERS)
            assert answer.status_code == 200, answer.text
            assert "mcp-session-id" in answer.headers
            elsewhere = await client.post(
                url.replace(path, "/elsewhere"), content=initialize(), headers=JSON_HEADERS
            )
            assert elsewhere.status_code == 404


async def test_legacy_sse() -> None:
    with serving("--transport", "sse", "--path", "/events") as url:
        parts = urlsplit(url)
        assert (parts.hostname, parts.path) == ("127.0.0.1", "/events")
        headers = {"accept": "text/event-stream"}
        async with (
            httpx.AsyncClient(timeout=10) as client,
            client.stream("GET", url, headers=headers) as r,
        ):
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            with anyio.fail_after(10):
                async for line in r.aiter_lines():
                    if line.startswith("event:"):
                        assert line == "event: endpoint"
                        break


async def test_websocket() -> None:
    with serving("--transport", "ws", "--path", "/socket") as url:
        parts = urlsplit(url)
        assert (parts.scheme, parts.hostname, parts.path) == ("ws", "127.0.0.1", "/socket")
        assert parts.port is not None
        with anyio.fail_after(10):
            async with raw(parts.port, "/socket") as socket:
                assert socket.status == 101
                await socket.send(initialize())
                assert (await socket.message())["id"] == 1


@pytest.mark.parametrize("transport", ["http", "ws"])
async def test_max_message_bytes_reaches_the_app(transport: str) -> None:
    # 6 MB is over the apps' own 4 MiB default: the option raised only the server's limit.
    text = "x" * 6_000_000
    with serving("--transport", transport, "--max-message-bytes", "7000000") as url:
        with anyio.fail_after(30):
            async with Client(url, era="handshake") as client:
                result = await client.call_tool("echo", {"text": text})
    assert result.content[0].text == text  # type: ignore[union-attr]


@pytest.mark.parametrize("allow", [(), ("--allow-host", "127.0.0.1:*")])
def test_an_all_interfaces_bind_says_which_hosts_are_accepted(allow: tuple[str, ...]) -> None:
    # Bound to 0.0.0.0 without --allow-host, a request naming the machine any other way
    # is refused (421): the operator is told at start, not by the clients. (Only loopback
    # is spoken to here.)
    argv = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "echo.py"), "--port", "0"]
    argv += ["--transport", "http", "--host", "0.0.0.0", *allow]
    process = subprocess.Popen(
        argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        assert process.stderr is not None
        lines = [process.stderr.readline().decode()]  # (the "serving" line first)
        port = re.search(r"serving .* on http://0\.0\.0\.0:(\d+)/mcp", lines[0])
        assert port is not None, lines
        # One loopback request: what the server printed before answering it is all there.
        answer = httpx.post(
            f"http://127.0.0.1:{port[1]}/mcp", content=initialize(), headers=JSON_HEADERS
        )
        assert answer.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=10)
    text = "".join(lines) + process.stderr.read().decode()  # (to its end: the process is gone)
    process.stderr.close()
    hint = "only requests for localhost, 127.0.0.1 or [::1] are accepted; add --allow-host"
    assert (hint in text) == (not allow), text


RUN_SCRIPT: Final = """\
import sys
from mcpkit import Server

server = Server("runner")


@server.tool()
def hi() -> str:
    return "hi"


server.run(sys.argv[1], port=0, **({"path": sys.argv[2]} if len(sys.argv) > 2 else {}))
"""


@pytest.mark.parametrize(
    ("args", "scheme", "path"),
    [
        (("http",), "http", "/mcp"),
        (("http", "/custom"), "http", "/custom"),
        (("sse",), "http", "/sse"),
        (("ws",), "ws", "/ws"),
    ],
)
async def test_server_run_says_where_it_serves(
    tmp_path: Path, args: tuple[str, ...], scheme: str, path: str
) -> None:
    """``server.run("http")`` in a script says where to connect, as ``mcpkit run`` does
    (it said nothing: with port=0 there was no way to know)."""
    script = tmp_path / "runner.py"
    script.write_text(RUN_SCRIPT)
    with serving(*args, argv=[sys.executable, str(script)]) as url:
        parts = urlsplit(url)
        assert (parts.scheme, parts.hostname, parts.path) == (scheme, "127.0.0.1", path)
        with anyio.fail_after(START_TIMEOUT):
            async with Client(url, era="handshake") as client:
                result = await client.call_tool("hi", {})
        assert [getattr(block, "text", None) for block in result.content] == ["hi"]
