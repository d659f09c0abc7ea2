"""The official SDK's and FastMCP's reliability bugs (``docs/anchors.md`` in the shared
notes, section 3.1, items 10, 12 and 14) replayed against real server processes: mcpkit's
CLI serving over Streamable HTTP on 127.0.0.1 or over stdio, killed, aborted on or
abandoned the way the reports describe.

* 10: a server killed (SIGKILL) in the middle of a call fails the call at once with an
  mcpkit error, and the client still closes (stdio: ``test_e2e_stdio_process.py``
  ``test_server_crash_fails_pending_calls``).
* 12: clients that abort their requests or GET streams again and again leave the server
  answering, with its descriptors back at their baseline.
* 14: a client cancelled while it connects or while a call runs leaves no process behind
  (a stubborn one killed after the grace period; a server ignoring SIGTERM on a live
  session: ``test_client_kills_a_server_that_ignores_eof_and_sigterm``), and a stdio
  server exits when the process that started it dies.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import ConnectionClosedError, MCPError, TransportError
from mcpkit.transports import ProcessChannel, StreamableHTTPTransport
from mcpkit.types import ProgressNotificationParams

from ._mcphttp import RawSession, call
from .conftest import ROOT
from .test_e2e_stdio_process import wait_pid_exit

pytestmark = pytest.mark.anyio

#: How soon a failure must show ("promptly"), and the bound on every other wait.
PROMPT: Final = 10.0
LIMIT: Final = 20.0

#: A server whose tool blocks until cancelled, saying on stderr when a call starts and
#: when it ends (its progress opens the answer's SSE stream first, when there is one).
BLOCKING: Final = textwrap.dedent(
    """
    import sys
    import anyio
    from mcpkit.server import RequestContext, Server

    server = Server("blocking", "1.0")

    @server.tool()
    async def block(ctx: RequestContext) -> str:
        await ctx.report_progress(0, 1)
        print("started", file=sys.stderr, flush=True)
        try:
            await anyio.sleep(3600)
        finally:
            print("ended", file=sys.stderr, flush=True)
        return "never"
    """
)


async def until(condition: Callable[[], bool], timeout: float = LIMIT) -> None:
    """Poll ``condition`` (another process's state) until it holds, within ``timeout``."""
    with anyio.fail_after(timeout):
        while not condition():  # noqa: ASYNC110  (another process's state)
            await anyio.sleep(0.01)


def reaped(pid: int) -> bool:
    """Whether ``pid`` (once our child) is gone and reaped: no zombie left."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


class Served:
    """``mcpkit run BLOCKING --transport http --port 0 ARGS`` in a subprocess: its URL, and
    how many calls its tool started and ended (read from its stderr)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.url = ""
        self.started = 0
        self.ended = 0
        self.announced = threading.Event()
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if match := re.search(r"mcpkit: serving .* on (http://\S+)", line):
                self.url = match[1]
                self.announced.set()
            self.started += line.strip() == "started"
            self.ended += line.strip() == "ended"
        self.announced.set()

    def open_fds(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))


@contextlib.contextmanager
def served(tmp_path: Path, *args: str) -> Iterator[Served]:
    (tmp_path / "blocking.py").write_text(BLOCKING)
    argv = [sys.executable, "-m", "mcpkit", "run", str(tmp_path / "blocking.py")]
    process = subprocess.Popen(
        [*argv, "--transport", "http", "--port", "0", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = Served(process)
    try:
        server.announced.wait(LIMIT)
        assert server.url, f"no URL announced (exit status {process.poll()})"
        yield server
    finally:
        process.kill()
        process.wait(timeout=LIMIT)
        server.reader.join(timeout=LIMIT)
        assert process.stderr is not None
        process.stderr.close()


# -- 10: the server dies mid-call -------------------------------------------------------


@pytest.mark.parametrize(
    ("era", "answer"), [("2026-07-28", "sse"), ("handshake", "sse"), ("handshake", "json")]
)
async def test_a_server_killed_mid_call_fails_the_call_promptly(
    tmp_path: Path, era: Literal["2026-07-28", "handshake"], answer: str
) -> None:
    # The official client waited forever for the answer of a server that had died
    # (``--json-response`` holds the answer's headers until the answer: handshake era).
    with served(tmp_path, *(["--json-response"] if answer == "json" else [])) as server:
        streaming = anyio.Event()

        def on_progress(_: ProgressNotificationParams) -> None:
            streaming.set()  # the answer's SSE stream is open and the tool running

        async def kill_mid_call() -> None:
            if answer == "sse":
                await streaming.wait()
            else:
                await until(lambda: server.started == 1)
            server.process.kill()

        with anyio.fail_after(LIMIT):
            async with Client(StreamableHTTPTransport(server.url), era=era) as client:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(kill_mid_call)
                    with anyio.fail_after(PROMPT), pytest.raises(MCPError) as failed:
                        await client.call_tool("block", on_progress=on_progress)
                assert isinstance(failed.value, (TransportError, ConnectionClosedError))
                assert server.process.wait(timeout=LIMIT) == -signal.SIGKILL
                # The next call finds nobody there, and says so just as promptly.
                with anyio.fail_after(PROMPT), pytest.raises(TransportError):
                    await client.list_tools()
            # ...and the client closed without an error and within the bound.


# -- 12: clients abort again and again --------------------------------------------------

ABORTS: Final = 50


async def abort_posts(server: Served, session: RawSession) -> None:
    """Send a call of ``block`` and close the connection once it runs, ``ABORTS`` times."""
    address = urlsplit(server.url)
    assert address.hostname is not None
    assert address.port is not None
    headers = "".join(f"{name}: {value}\r\n" for name, value in session.headers().items())
    for n in range(ABORTS):
        body = call(1000 + n, "block")
        head = f"POST {address.path} HTTP/1.1\r\nhost: {address.netloc}\r\n{headers}"
        stream = await anyio.connect_tcp(address.hostname, address.port)
        async with stream:
            await stream.send(f"{head}content-length: {len(body)}\r\n\r\n".encode() + body)
            await until(lambda n=n: server.started == n + 1)  # type: ignore[misc]


async def abort_gets(server: Served, session: RawSession) -> None:
    """Open the session's GET stream and close the connection once it answers, ``ABORTS``
    times: each time the stream is the session's only one, so the last one must be gone."""
    address = urlsplit(server.url)
    assert address.hostname is not None
    assert address.port is not None
    headers = session.headers(accept="text/event-stream")
    del headers["content-type"]
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    request = f"GET {address.path} HTTP/1.1\r\nhost: {address.netloc}\r\n{head}\r\n".encode()
    for _ in range(ABORTS):
        statuses: list[bytes] = []
        # The server learns of the last abort from its socket: until then it may refuse a
        # second stream (409), but not for long.
        while not statuses or statuses[-1] != b"200":
            stream = await anyio.connect_tcp(address.hostname, address.port)
            async with stream:
                await stream.send(request)
                response = b""
                while b"\r\n\r\n" not in response:
                    response += await stream.receive()
                statuses.append(response.split(b" ", 2)[1])
            assert set(statuses) <= {b"200", b"409"}, statuses
            assert len(statuses) < 100, statuses


@pytest.mark.parametrize(
    ("args", "aborts"),
    [
        ((), abort_posts),
        (("--json-response",), abort_posts),
        (("--stateless",), abort_posts),
        ((), abort_gets),
    ],
    ids=["post-sse", "post-json", "post-stateless", "get"],
)
async def test_aborted_requests_leave_the_server_answering_without_leaks(
    tmp_path: Path,
    args: tuple[str, ...],
    aborts: Callable[[Served, RawSession], Awaitable[None]],
) -> None:
    # The official server answered tools/list with a 0-byte SSE body after such aborts,
    # and held about 6 more descriptors per aborted client.
    with served(tmp_path, *args) as server:
        async with httpx.AsyncClient(timeout=PROMPT) as http:
            session = RawSession(http, server.url)
            if "--stateless" in args:
                session.version = "2025-11-25"
            else:
                await session.open()
            await session.call(1, "tools/list")
            baseline = server.open_fds()
            with anyio.fail_after(LIMIT * 2):
                await aborts(server, session)
                tools = await session.call(2, "tools/list")
                assert [tool["name"] for tool in tools["result"]["tools"]] == ["block"]
                if session.session_id is not None:
                    # A disconnect is not a cancellation (the stateful calls run on until
                    # the session ends): ending the session ends them all.
                    ended = await http.delete(server.url, headers=session.headers())
                    assert ended.status_code == 204, ended.text
                await until(lambda: server.ended == server.started)
                # One descriptor of slack: the test's own connection may be open or not.
                await until(lambda: server.open_fds() <= baseline + 1)
            # And a new client is served in full.
            fresh = RawSession(http, server.url)
            if "--stateless" in args:
                fresh.version = "2025-11-25"
            else:
                await fresh.open()
            tools = await fresh.call(3, "tools/list")
            assert tools["result"]["tools"], tools


async def cancel_when(
    ready: anyio.Event,
    work: Callable[[], Coroutine[Any, Any, None]],
    channel: ProcessChannel,
    status: int,
) -> None:
    """Run ``work`` and cancel it once ``ready`` is set: the server process it talks to
    must then have ended promptly, with ``status``, and been reaped."""
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(work)
            await ready.wait()
            cancelled = anyio.current_time()
            tg.cancel_scope.cancel()
    assert anyio.current_time() - cancelled < PROMPT
    assert channel.pid is not None
    assert channel.returncode == status
    assert reaped(channel.pid)


# -- 14: stdio clients cancelled, stdio servers orphaned ------------------------------------

#: A "server" that reads the first request and never answers it; then, by its argument,
#: exits at end of input ("eof"), ignores it ("sigterm": only a signal ends it), or ignores
#: SIGTERM as well ("sigkill").
SILENT: Final = textwrap.dedent(
    """
    import signal, sys, time
    if sys.argv[1] == "sigkill":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stdin.buffer.readline()
    print("read", file=sys.stderr, flush=True)
    sys.stdin.buffer.read()
    while sys.argv[1] != "eof":
        time.sleep(1)
    """
)


@pytest.mark.parametrize(
    ("behaviour", "status"),
    [("eof", 0), ("sigterm", -signal.SIGTERM), ("sigkill", -signal.SIGKILL)],
)
async def test_a_client_cancelled_while_connecting_leaves_no_process(
    tmp_path: Path, behaviour: str, status: int
) -> None:
    # Cancelling the official stdio_client could deadlock its shutdown, and a child that
    # ignored the signals was left running.
    (tmp_path / "silent.py").write_text(SILENT)
    read = anyio.Event()
    transport = StdioTransport(
        sys.executable,
        [str(tmp_path / "silent.py"), behaviour],
        stderr="capture",
        on_stderr=lambda line: read.set(),
        terminate_timeout=0.5,
    )
    channel = transport.connect()

    async def connect() -> None:
        async with Client(channel):
            pytest.fail("the silent server answered")

    # The first request read means the client is connecting. The process ends within the
    # grace periods: end of input, then SIGTERM, then SIGKILL, 0.5 s each.
    await cancel_when(read, connect, channel, status)


STUBBORN_HANDLER: Final = BLOCKING.replace(
    "        await anyio.sleep(3600)\n",
    "        await anyio.sleep(3600)\n"
    "    except BaseException:\n"
    "        with anyio.CancelScope(shield=True):\n"
    "            await anyio.sleep(60)  # ignores its cancellation for a minute\n"
    "        raise\n",
)


@pytest.mark.parametrize(
    ("handler", "status", "grace"),
    # The server lets a request run for 2 s after its input ends (the endpoint's drain),
    # then cancels it: the client's grace outlasts that, and the process exits by itself.
    # A handler that ignores its cancellation holds the process: the client's SIGTERM,
    # sooner, ends it (at once, 128 + SIGTERM: the stop was under way, its input closed).
    [(BLOCKING, 0, 8.0), (STUBBORN_HANDLER, 128 + signal.SIGTERM, 1.0)],
    ids=["cancellable", "stubborn"],
)
async def test_a_client_cancelled_mid_call_ends_its_server(
    tmp_path: Path, handler: str, status: int, grace: float
) -> None:
    # Cancelling the client closes the server's input; the server cancels its handler
    # (after its drain) and exits, or, holding on, gets SIGTERM after the client's grace.
    (tmp_path / "server.py").write_text(handler)
    started = anyio.Event()
    transport = StdioTransport(
        sys.executable,
        ["-m", "mcpkit", "run", str(tmp_path / "server.py")],
        stderr="capture",
        on_stderr=lambda line: started.set() if line.strip() == "started" else None,
        terminate_timeout=grace,
    )
    channel = transport.connect()

    async def call() -> None:
        async with Client(channel, era="handshake") as client:
            await client.call_tool("block")

    await cancel_when(started, call, channel, status)


#: Starts ``mcpkit run SERVER`` with mcpkit's client, calls its blocking tool, prints the
#: server's pid once the call runs, and waits to be killed.
MIDDLE: Final = textwrap.dedent(
    """
    import sys
    import anyio
    from mcpkit.client import Client, StdioTransport

    async def main() -> None:
        started = anyio.Event()
        transport = StdioTransport(
            sys.executable,
            ["-m", "mcpkit", "run", sys.argv[1]],
            stderr="capture",
            on_stderr=lambda line: started.set() if line.strip() == "started" else None,
        )
        channel = transport.connect()
        async with Client(channel, era="handshake") as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "block")
                await started.wait()
                print(channel.pid, flush=True)

    anyio.run(main)
    """
)


async def test_a_stdio_server_exits_when_its_client_process_is_killed(tmp_path: Path) -> None:
    # FastMCP's stdio servers outlived their clients (about 1,500 orphans in one report).
    # The server runs in a session of its own, so no signal reaches it: it must see the
    # end of its input (``test_e2e_stdio_process.py`` covers a parent that dies while
    # another process holds the server's input open).
    (tmp_path / "blocking.py").write_text(BLOCKING)
    (tmp_path / "middle.py").write_text(MIDDLE)
    argv = [sys.executable, str(tmp_path / "middle.py"), str(tmp_path / "blocking.py")]
    middle = await anyio.open_process(argv, stdout=subprocess.PIPE)
    server_pid = None
    try:
        assert middle.stdout is not None
        with anyio.fail_after(LIMIT):
            line = b""
            while not line.endswith(b"\n"):
                line += await middle.stdout.receive()
        server_pid = int(line)
        middle.kill()
        await middle.wait()
        await wait_pid_exit(server_pid, timeout=PROMPT)
    finally:
        if middle.returncode is None:
            middle.kill()
        with anyio.CancelScope(shield=True):
            await middle.aclose()
        if server_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(server_pid, signal.SIGKILL)
