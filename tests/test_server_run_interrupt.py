"""``Server.run`` on Ctrl-C (SIGINT) and SIGTERM: the server shuts down (its lifespan exits), then
``run`` raises ``mcpkit.exceptions.Interrupted``, a ``KeyboardInterrupt`` that is also
``SystemExit(130)``. Left uncaught, the program ends with status 130 and nothing on stderr
(it printed the event loop's traceback, the incumbent SDK's most reported annoyance when a
server is stopped from a terminal); caught as a ``KeyboardInterrupt``, code after it runs.
SIGTERM stops a stdio server the same way, then exits with 143 (it ended the process at
once, the lifespan never exited).

On trio, Ctrl-C during a flood of requests used to raise KeyboardInterrupt in whatever
code ran, which could cut a handler's coroutine before its first step ("coroutine ... was
never awaited" on stderr at exit); now SIGINT cancels the serving task group, as asyncio's
runner does. The catching form is pinned in tests/test_cli_stop.py. Called from async code,
``run`` says what to await instead.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import textwrap
import time
from pathlib import Path
from typing import Final

import anyio
import httpx
import pytest

from mcpkit import Server
from mcpkit.exceptions import LocalProtocolError

from ._httpserver import serving_process
from ._mcphttp import JSON_HEADERS, initialize
from ._rawstdio import RawStdioServer

pytestmark = pytest.mark.anyio

LIMIT: Final = 30.0

SCRIPT: Final = textwrap.dedent(
    """
    import contextlib
    import sys
    import time

    import anyio
    from mcpkit import Server


    @contextlib.asynccontextmanager
    async def lifespan(server):
        try:
            yield None
        finally:
            print("lifespan exited", file=sys.stderr, flush=True)


    server = Server("interrupted", "1.0", lifespan=lifespan)


    @server.tool()
    def echo(text: str) -> str:
        return text


    @server.tool()
    async def stubborn() -> str:
        print("stubborn", file=sys.stderr, flush=True)
        try:
            await anyio.sleep(3600)
        except BaseException:
            print("ignoring the cancellation", file=sys.stderr, flush=True)
            with anyio.CancelScope(shield=True):
                await anyio.sleep(60)
            raise
        return "never"


    @server.tool()
    async def spin() -> str:
        # Busy for a second without a checkpoint (no await), then done.
        print("spinning", file=sys.stderr, flush=True)
        try:
            until = time.monotonic() + 1.0
            while time.monotonic() < until:
                pass
        except BaseException as exc:
            print("spin got", type(exc).__name__, file=sys.stderr, flush=True)
            raise
        return "spun"


    transport, backend = sys.argv[1:3]
    if transport == "stdio":
        server.run(backend=backend)
    else:
        server.run(transport, port=0)
    print("run() returned", file=sys.stderr, flush=True)
    """
)

CAUGHT: Final = textwrap.dedent(
    """
    import sys

    from mcpkit import Server
    from mcpkit.exceptions import Interrupted

    try:
        Server("caught", "1.0").run(backend=sys.argv[1])
    except KeyboardInterrupt as exc:
        print(type(exc) is Interrupted, exc.code, file=sys.stderr, flush=True)
    print("carried on", file=sys.stderr, flush=True)
    """
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the test side; the servers are subprocesses


def echo_call(rid: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
        b'"params":{"name":"echo","arguments":{"text":"hi"}}}\n' % rid
    )


async def stderr_of(process: anyio.abc.Process) -> bytes:
    assert process.stderr is not None
    return b"".join([chunk async for chunk in process.stderr])


async def stderr_until(process: anyio.abc.Process, marker: bytes, seen: bytes = b"") -> bytes:
    """What the process has said on stderr once ``marker`` is among it."""
    assert process.stderr is not None
    while marker not in seen:
        seen += await process.stderr.receive()
    return seen


async def signalled(argv: list[str], signum: signal.Signals) -> tuple[int, bytes]:
    """Start the stdio server ``argv``, initialize it, and send ``signum`` once it is idle:
    its exit status and what it said on stderr."""
    with anyio.fail_after(LIMIT):
        async with RawStdioServer(argv) as server:
            await server.initialize()
            await server.assert_silent()
            process = server.process
            assert process is not None
            process.send_signal(signum)
            status = await process.wait()
            return status, await stderr_of(process)


def stdio_script(tmp_path: Path, backend: str) -> RawStdioServer:
    """``SCRIPT`` serving stdio on ``backend``."""
    (tmp_path / "server.py").write_text(SCRIPT)
    return RawStdioServer([sys.executable, str(tmp_path / "server.py"), "stdio", backend])


async def calling(
    server: RawStdioServer, tool: str, marker: bytes
) -> tuple[anyio.abc.Process, bytes]:
    """Initialize, call ``tool``, and wait until it says ``marker`` on stderr."""
    await server.initialize()
    await server.send(id=1, method="tools/call", params={"name": tool})
    assert server.process is not None
    return server.process, await stderr_until(server.process, marker)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
async def test_ctrl_c_during_a_flood_of_calls_ends_stdio_run_quietly_with_130(
    tmp_path: Path, backend: str
) -> None:
    (tmp_path / "server.py").write_text(SCRIPT)
    argv = [sys.executable, str(tmp_path / "server.py"), "stdio", backend]
    with anyio.fail_after(LIMIT):
        async with RawStdioServer(argv) as server, anyio.create_task_group() as tg:
            await server.initialize()
            process = server.process
            assert process is not None

            async def flood() -> None:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    for rid in range(1, 100_000):
                        await server.write(echo_call(rid))

            tg.start_soon(flood)
            for _ in range(200):  # calls are being answered (or refused while 100 are in
                assert b'"id":' in await server.read_line()  # flight): the flood is on
            process.send_signal(signal.SIGINT)
            status = await process.wait()
            tg.cancel_scope.cancel()
            said = await stderr_of(process)
    assert status == 130, said.decode(errors="replace")
    assert said == b"lifespan exited\n", said.decode(errors="replace")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
async def test_sigterm_stops_stdio_run_gracefully_with_143(tmp_path: Path, backend: str) -> None:
    # SIGTERM (docker stop; an MCP host whose server did not leave when stdin closed)
    # ended the process at once: the lifespan never exited.
    (tmp_path / "server.py").write_text(SCRIPT)
    argv = [sys.executable, str(tmp_path / "server.py"), "stdio", backend]
    status, said = await signalled(argv, signal.SIGTERM)
    assert status == 143, said.decode(errors="replace")
    assert said == b"lifespan exited\n", said.decode(errors="replace")


OWN_HANDLER: Final = textwrap.dedent(
    """
    import os
    import signal
    import sys

    from mcpkit import Server


    def mine(signum, frame):
        print("its own handler", file=sys.stderr, flush=True)
        os._exit(7)


    signal.signal(getattr(signal, sys.argv[2]), mine)
    Server("own", "1.0").run(backend=sys.argv[1])
    """
)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
async def test_a_program_s_own_signal_handler_stays_in_charge(
    tmp_path: Path, backend: str, stop: str
) -> None:
    (tmp_path / "own.py").write_text(OWN_HANDLER)
    argv = [sys.executable, str(tmp_path / "own.py"), backend, stop]
    status, said = await signalled(argv, getattr(signal, stop))
    assert (status, said) == (7, b"its own handler\n"), said.decode(errors="replace")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize(
    ("first", "then"),
    [("SIGINT", "SIGINT"), ("SIGINT", "SIGTERM"), ("stdin closed", "SIGTERM")],
)
async def test_a_signal_while_a_stop_is_under_way_ends_the_process_at_once(
    tmp_path: Path, backend: str, first: str, then: str
) -> None:
    # A handler ignoring its cancellation holds the stop; the stop's 5 s bound would end
    # the process with the first stop's status. A signal now (Ctrl-C pressed again; an
    # MCP host's SIGTERM after it closed the server's input and waited) ends it at once,
    # with that signal's status.
    with anyio.fail_after(LIMIT):
        async with stdio_script(tmp_path, backend) as server:
            process, seen = await calling(server, "stubborn", b"stubborn\n")
            if first == "stdin closed":
                assert process.stdin is not None
                await process.stdin.aclose()
            else:
                process.send_signal(getattr(signal, first))
            seen = await stderr_until(process, b"ignoring the cancellation\n", seen)
            process.send_signal(getattr(signal, then))
            insisted = time.monotonic()
            status = await process.wait()
            took = time.monotonic() - insisted
    assert status == 128 + getattr(signal, then), seen.decode(errors="replace")
    assert took < 2.0, took  # (not what is left of the stop's 5 s bound)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
async def test_ctrl_c_does_not_raise_inside_a_running_handler(tmp_path: Path, backend: str) -> None:
    # On trio, Ctrl-C raised KeyboardInterrupt inside whatever code was running: here a
    # tool's own loop. Now the stop waits for the next checkpoint, as on asyncio (a
    # handler that never reaches one is bounded by run()'s 5 s exit watchdog).
    with anyio.fail_after(LIMIT):
        async with stdio_script(tmp_path, backend) as server:
            process, seen = await calling(server, "spin", b"spinning\n")
            process.send_signal(signal.SIGINT)
            status = await process.wait()
            said = seen + await stderr_of(process)
    assert status == 130, said.decode(errors="replace")
    assert said == b"spinning\nlifespan exited\n", said.decode(errors="replace")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
async def test_ctrl_c_comes_out_of_run_as_interrupted_for_code_that_catches_it(
    tmp_path: Path, backend: str
) -> None:
    (tmp_path / "caught.py").write_text(CAUGHT)
    argv = [sys.executable, str(tmp_path / "caught.py"), backend]
    status, said = await signalled(argv, signal.SIGINT)
    assert (status, said) == (0, b"True 130\ncarried on\n"), said.decode(errors="replace")


@pytest.mark.parametrize("transport", ["http", "sse", "ws"])
def test_ctrl_c_ends_http_run_quietly_with_130(tmp_path: Path, transport: str) -> None:
    (tmp_path / "server.py").write_text(SCRIPT)
    argv = [sys.executable, str(tmp_path / "server.py"), transport, "asyncio"]
    with serving_process(argv) as (process, url):
        if transport == "http":  # a session open at the time
            with httpx.Client(timeout=10) as client:
                opened = client.post(url, content=initialize(), headers=JSON_HEADERS)
                assert opened.status_code == 200, opened.text
        process.send_signal(signal.SIGINT)
        status = process.wait(LIMIT)
        assert process.stderr is not None
        said = process.stderr.read()
    assert status == 130, said.decode(errors="replace")
    assert said == b"lifespan exited\n", said.decode(errors="replace")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_run_from_async_code_says_what_to_await_instead(backend: str, transport: str) -> None:
    # anyio.run's own words were "Already running asyncio in this thread".
    caught: list[BaseException] = []

    async def inside() -> None:
        try:
            Server("nested", "1.0").run(transport, port=0)
        except BaseException as exc:
            caught.append(exc)

    anyio.run(inside, backend=backend)
    assert [type(exc) for exc in caught] == [LocalProtocolError], caught
    assert str(caught[0]) == (
        f"run() starts an event loop of its own, and {backend} is already running in this "
        "thread: from async code, await server.serve_stdio() or "
        "server.serve_http(transport, ...) instead"
    )
