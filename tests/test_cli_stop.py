"""``mcpkit run`` stops within a bound and quietly.

* stdio: once the client is gone (stdin closed) or on SIGINT or SIGTERM, the process ends
  within 5 s (status 0, 130, 143) even when a handler ignores its cancellation (it held the process for as long as it
  liked); a SIGINT under ``--backend trio`` exits 130 with nothing on stderr (trio
  reported it as an exception group, printed as a traceback).
* HTTP: SIGTERM with an SSE stream open (a Streamable HTTP GET stream, a legacy SSE
  session) ends the stream and the process at once, without waiting out uvicorn's grace
  period and without error records.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Final

import anyio
import httpx
import pytest

from ._httpserver import serving_process
from ._mcphttp import JSON_HEADERS, initialize
from ._rawstdio import INIT_PARAMS, RawStdioServer
from ._wire import MODERN, meta
from .conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.anyio

LIMIT: Final = 30.0

STUBBORN: Final = textwrap.dedent(
    """
    import sys
    import anyio
    from mcpkit import Server

    server = Server("stubborn", "1.0")

    @server.tool()
    async def stuck() -> str:
        print("started", file=sys.stderr, flush=True)
        try:
            await anyio.sleep(3600)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(60)  # ignores its cancellation for a minute
            raise
        return "never"
    """
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the test side; the servers are subprocesses


async def handshake(server: RawStdioServer) -> None:
    answer = await server.request(1, "initialize", INIT_PARAMS)
    assert "result" in answer, answer
    await server.send(method="notifications/initialized")
    # Answered once the notification before it was handled: a signal sent next finds the
    # server idle, not in the middle of that (on trio, a Ctrl-C there can cut a handler's
    # coroutine before its first step, and its "never awaited" warning lands on stderr).
    assert "result" in await server.request("settled", "ping")


@pytest.mark.parametrize("stop", ["stdin closed", "SIGINT", "SIGTERM"])
async def test_a_handler_that_ignores_cancellation_does_not_hold_the_process(
    tmp_path: Path, stop: str
) -> None:
    (tmp_path / "stubborn.py").write_text(STUBBORN)
    argv = [sys.executable, "-m", "mcpkit", "run", str(tmp_path / "stubborn.py")]
    with anyio.fail_after(LIMIT):
        async with RawStdioServer(argv) as server:
            await handshake(server)
            await server.send(id=2, method="tools/call", params={"name": "stuck"})
            process = server.process
            assert process is not None
            assert process.stderr is not None
            seen = b""
            while b"started" not in seen:  # the handler runs
                seen += await process.stderr.receive()
            started = time.monotonic()
            if stop.startswith("SIG"):
                process.send_signal(getattr(signal, stop))
            else:
                assert process.stdin is not None
                await process.stdin.aclose()
            status = await process.wait()
            took = time.monotonic() - started
    assert took < 9.0, took  # 5 s after the stop, not the handler's 60
    assert status == {"SIGINT": 130, "SIGTERM": 143}.get(stop, 0)


async def test_sigint_under_trio_exits_130_quietly() -> None:
    argv = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "echo.py")]
    with anyio.fail_after(LIMIT):
        async with RawStdioServer([*argv, "--backend", "trio"]) as server:
            await handshake(server)
            process = server.process
            assert process is not None
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 130
            assert process.stderr is not None
            rest = b"".join([chunk async for chunk in process.stderr])
    assert rest == b"", rest.decode(errors="replace")


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_sigterm_with_an_open_stream_stops_at_once_and_quietly(transport: str) -> None:
    with (
        http_process("--transport", transport) as (process, url),
        httpx.Client(timeout=10) as client,
    ):
        if transport == "http":
            opened = client.post(url, content=initialize(), headers=JSON_HEADERS)
            headers = {
                "accept": "text/event-stream",
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
        else:
            headers = {"accept": "text/event-stream"}
        with client.stream("GET", url, headers=headers) as stream:
            chunks = stream.iter_raw()
            assert next(chunks)  # the stream is open (its priming or endpoint event)
            took, errors = terminate(process, lambda: read_to_end(chunks))
    assert took < 3.0, took  # uvicorn's grace period is 5 s
    assert "ERROR" not in errors, errors
    assert "Traceback" not in errors, errors


def terminate(process: subprocess.Popen[bytes], drain: Callable[[], object]) -> tuple[float, str]:
    """SIGTERM, then ``drain()`` the open answer until the server ends it: the seconds
    until the process exited, and what it wrote on stderr."""
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    drain()
    process.wait(timeout=LIMIT)
    took = time.monotonic() - started
    assert process.stderr is not None
    return took, process.stderr.read().decode()


def read_to_end(chunks: Iterator[bytes]) -> None:
    """Read a stream until the server ends it."""
    for _ in chunks:
        pass


def read_quietly(response: httpx.Response) -> None:
    """Read to the end; a connection the server cut is an end too."""
    with contextlib.suppress(httpx.HTTPError):
        response.read()


def http_process(
    *flags: str, script: Path = EXAMPLES / "echo.py"
) -> AbstractContextManager[tuple[subprocess.Popen[bytes], str]]:
    """``mcpkit run examples/echo.py`` (or ``script``) on a free port with ``flags``: the
    process and its endpoint's URL (killed and reaped at the end, whatever happened)."""
    argv = [sys.executable, "-m", "mcpkit", "run", str(script), "--port", "0"]
    return serving_process([*argv, *flags], cwd=ROOT)


@pytest.mark.parametrize("modern", [False, True], ids=["stateless", "2026-07-28"])
def test_sigterm_with_a_sessionless_post_running_stops_at_once_and_quietly(
    modern: bool,
) -> None:
    """Stateless and 2026-07-28 POSTs have a session of their own, for the POST: the
    shutdown ends them too (they held it for uvicorn's whole grace period, then each
    logged a traceback). The handler reports progress, so its answer is an SSE stream
    whose headers show it is running."""
    flags = [] if modern else ["--stateless"]
    with http_process("--transport", "http", *flags) as (process, url):
        params: dict[str, Any] = {
            "name": "sleep",
            "arguments": {"seconds": 60},
            "_meta": {"progressToken": "p"},
        }
        headers = dict(JSON_HEADERS)
        if modern:
            params["_meta"] = {**meta(), "progressToken": "p"}
            headers.update(
                {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "sleep"}
            )
        else:
            headers["mcp-protocol-version"] = "2025-11-25"
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        with (
            httpx.Client(timeout=LIMIT) as client,
            client.stream("POST", url, content=body, headers=headers) as response,
        ):
            assert response.headers["content-type"].startswith("text/event-stream")
            took, errors = terminate(process, lambda: read_quietly(response))
    assert took < 3.0, took  # uvicorn's grace period is 5 s
    assert "Traceback" not in errors, errors


KEYBOARD: Final = textwrap.dedent(
    """
    import sys
    from mcpkit import Server

    server = Server("keyboard", "1.0")
    try:
        server.run(backend=sys.argv[1])
    except KeyboardInterrupt:
        print("KeyboardInterrupt", file=sys.stderr, flush=True)
    except BaseException as exc:
        print("not a KeyboardInterrupt:", repr(exc), file=sys.stderr, flush=True)
    """
)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
async def test_ctrl_c_comes_out_of_server_run_as_keyboard_interrupt(
    tmp_path: Path, backend: str
) -> None:
    # The usual `except KeyboardInterrupt` around Server.run: under trio the interrupt
    # came out wrapped in an exception group.
    (tmp_path / "keyboard.py").write_text(KEYBOARD)
    with anyio.fail_after(LIMIT):
        async with RawStdioServer(
            [sys.executable, str(tmp_path / "keyboard.py"), backend]
        ) as server:
            await handshake(server)
            process = server.process
            assert process is not None
            process.send_signal(signal.SIGINT)
            await process.wait()
            assert process.stderr is not None
            said = b"".join([chunk async for chunk in process.stderr])
    assert said.strip() == b"KeyboardInterrupt", said.decode(errors="replace")
