"""End to end: process behaviour of the stdio transports (stdout purity, exit on parent
death, shutdown escalation, stderr handling)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Final, Literal

import anyio
import pytest

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import ConnectionClosedError, TransportError

from ._rawstdio import INIT_PARAMS, RawStdioServer
from .conftest import ROOT

pytestmark = pytest.mark.anyio
FIXTURES = ROOT / "tests" / "fixtures"


async def wait_pid_exit(pid: int, timeout: float) -> None:
    """Wait for a process that is not our child to exit (Linux pidfd; no polling)."""
    fd = os.pidfd_open(pid)
    try:
        with anyio.fail_after(timeout):
            await anyio.wait_readable(fd)
    finally:
        os.close(fd)


async def test_stdout_carries_only_protocol_messages() -> None:
    argv = [sys.executable, "-m", "mcpkit", "run", str(FIXTURES / "noisy_server.py")]
    async with RawStdioServer(argv) as s:
        await s.initialize()
        reply = await s.request(1, "tools/call", {"name": "noisy", "arguments": {}})
        assert reply["result"]["content"][0]["text"] == "done"
        assert await s.close_stdin_and_wait() == 0
        assert s.process is not None
        assert s.process.stderr is not None
        stderr = b""
        async for chunk in s.process.stderr:
            stderr += chunk
    for line in s.received:
        assert json.loads(line)["jsonrpc"] == "2.0"
    # Everything the tool printed went to stderr instead.
    for text in (
        b"import-time print",
        b"print from a tool",
        b"os.write to fd 1",
        b"child process print",
    ):
        assert text in stderr


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfd_open")
async def test_server_exits_when_its_parent_dies() -> None:
    parent = await anyio.open_process(
        [sys.executable, str(FIXTURES / "orphaning_parent.py")], stdout=subprocess.PIPE
    )
    holder_pid = None
    try:
        assert parent.stdout is not None
        with anyio.fail_after(15):
            line = b""
            while not line.endswith(b"\n"):
                line += await parent.stdout.receive()
        server_pid, holder_pid = (int(x) for x in line.split())
        parent.kill()
        await parent.wait()
        # The server's stdin is still open (the holder has it); it must notice the parent.
        await wait_pid_exit(server_pid, timeout=10)
    finally:
        if holder_pid is not None:
            os.kill(holder_pid, signal.SIGKILL)
        if parent.returncode is None:
            parent.kill()
        await parent.aclose()


async def test_client_kills_a_server_that_ignores_eof_and_sigterm() -> None:
    transport = StdioTransport(
        sys.executable, [str(FIXTURES / "stubborn_server.py")], terminate_timeout=0.3
    )
    channel = transport.connect()
    with anyio.fail_after(10):
        async with Client(channel, era="handshake") as client:
            assert client.server_info.name == "stubborn"
    # Reaped: the exit status is known (killed by SIGKILL), so no zombie is left.
    assert channel.returncode == -signal.SIGKILL


async def test_client_terminates_a_server_that_ignores_eof() -> None:
    transport = StdioTransport(
        sys.executable,
        [str(FIXTURES / "stubborn_server.py"), "--honour-sigterm"],
        terminate_timeout=0.3,
    )
    channel = transport.connect()
    with anyio.fail_after(10):
        async with Client(channel, era="handshake") as client:
            assert client.server_info.name == "stubborn"
    # SIGTERM was enough: no escalation to SIGKILL.
    assert channel.returncode == -signal.SIGTERM


async def test_client_shuts_down_a_well_behaved_server_with_eof(
    echo_server_argv: list[str],
) -> None:
    channel = StdioTransport(echo_server_argv).connect()
    with anyio.fail_after(10):
        async with Client(channel) as client:
            await client.ping()
            pid = channel.pid
    assert channel.returncode == 0
    assert pid is not None


async def test_an_open_channel_is_not_started_twice(echo_server_argv: list[str]) -> None:
    with anyio.fail_after(10):
        async with StdioTransport(echo_server_argv).connect() as channel:
            pid = channel.pid
            async with Client(channel) as client:
                await client.ping()
                assert channel.pid == pid
            # The client closed the channel it was given: the server was shut down.
            assert channel.returncode == 0


async def test_stderr_capture(echo_server_argv: list[str]) -> None:
    lines: list[str] = []
    argv = [*echo_server_argv, "--log-level", "DEBUG"]
    channel = StdioTransport(argv, stderr="capture", on_stderr=lines.append).connect()
    with anyio.fail_after(10):
        async with Client(channel, era="handshake") as client:
            await client.ping()
    assert any("initialized" in line for line in lines)


async def test_missing_command_is_a_transport_error() -> None:
    with pytest.raises(TransportError, match="cannot start"):
        async with Client(StdioTransport("/nonexistent/mcp-server")):
            pass


async def test_server_crash_fails_pending_calls(echo_server_argv: list[str]) -> None:
    from mcpkit.exceptions import ConnectionClosedError

    channel = StdioTransport(echo_server_argv).connect()
    with anyio.fail_after(10):
        async with Client(channel) as client:
            async with anyio.create_task_group() as tg:
                outcome: list[BaseException] = []

                async def call() -> None:
                    try:
                        await client.call_tool("sleep", {"seconds": 30})
                    except ConnectionClosedError as exc:
                        outcome.append(exc)

                tg.start_soon(call)
                await client.ping()  # the sleep call is on the wire before the ping's answer
                assert channel.pid is not None
                os.kill(channel.pid, signal.SIGKILL)
            assert len(outcome) == 1


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_the_client_leaves_no_descriptor_open(echo_server_argv: list[str]) -> None:
    """The pipes to the server are the client's own: closed after a session, after a
    server that would not stop, and after a command that could not start."""

    async def session() -> None:
        async with Client(StdioTransport(echo_server_argv)) as client:
            await client.ping()

    with anyio.fail_after(30):
        await session()  # warm-up: the event loop's own descriptors
        before = _open_fds()
        for _ in range(3):
            await session()
        stubborn = StdioTransport(
            sys.executable, [str(FIXTURES / "stubborn_server.py")], terminate_timeout=0.2
        )
        async with Client(stubborn, era="handshake") as client:
            assert client.server_info.name == "stubborn"
        with pytest.raises(TransportError):
            async with Client(StdioTransport("/nonexistent/mcp-server")):
                pass
    assert _open_fds() == before


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (fields 14 and 15)


def test_a_client_that_stops_reading_does_not_make_the_server_spin(
    echo_server_argv: list[str],
) -> None:
    """With its stdout full the server stops reading stdin; unread input must not wake its
    event loop over and over (stdin's registration is dropped while nobody reads)."""
    process = subprocess.Popen(echo_server_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS}
        process.stdin.write(json.dumps(init).encode() + b"\n")
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        process.stdin.flush()
        assert b'"result"' in process.stdout.readline()
        # Answers of 200 KB each fill the server's stdout at once; we never read them.
        os.set_blocking(process.stdin.fileno(), False)
        call = {
            "jsonrpc": "2.0",
            "method": "tools/call",
            "params": {"name": "blob", "arguments": {"size": 200_000}},
        }
        sent = 0
        give_up = time.monotonic() + 10
        while time.monotonic() < give_up:
            line = json.dumps({**call, "id": sent + 1}).encode() + b"\n"
            try:
                written = os.write(process.stdin.fileno(), line)
            except BlockingIOError:
                break  # stdin is full too: the server stopped reading
            if written < len(line):
                break
            sent += 1
        else:
            raise AssertionError("the server kept reading although nobody read its answers")
        before = _cpu_ticks(process.pid)
        time.sleep(1.0)  # the measurement window (not a synchronisation)
        used = _cpu_ticks(process.pid) - before
        # A loop woken on every turn by unread input burns the whole core (~100 ticks).
        assert used <= 30, f"the server used {used} ticks of CPU in 1 s while blocked"
    finally:
        process.kill()
        process.wait()
        for pipe in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                pipe.close()


def test_a_server_whose_stdout_reader_left_ends(echo_server_argv: list[str]) -> None:
    """Once nothing can read its answers (the client closed its end of the server's
    stdout), the server stops serving and exits, rather than running requests whose
    answers go nowhere; it says why on stderr."""
    process = subprocess.Popen(
        echo_server_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS}
        process.stdin.write(json.dumps(init).encode() + b"\n")
        process.stdin.flush()
        assert b'"result"' in process.stdout.readline()
        process.stdout.close()  # the reader leaves; stdin stays open
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        # Answered from a handler task, not from the reading loop (as a ping is).
        call = {"name": "echo", "arguments": {"text": "x"}}
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
        process.stdin.write(json.dumps(request).encode() + b"\n")
        process.stdin.flush()
        assert process.wait(timeout=10) == 0
        assert process.stderr is not None
        assert b"output is gone" in process.stderr.read()
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait(timeout=10)
        process.stdin.close()
        if process.stderr is not None:
            process.stderr.close()


@pytest.mark.parametrize("ending", ["eof", "crash"])
async def test_closing_the_client_ends_what_the_server_started(ending: str) -> None:
    argv = ["-m", "mcpkit", "run", str(FIXTURES / "parent_server.py")]
    transport = StdioTransport(sys.executable, argv, terminate_timeout=2)
    with anyio.fail_after(20):
        async with Client(transport, era="handshake") as client:
            child = int((await client.call_tool("spawn")).content[0].text)  # type: ignore[union-attr]
            if ending == "crash":
                with pytest.raises(ConnectionClosedError):
                    await client.call_tool("crash")
        # The server exited (on end of input, or by itself); its child is ended with the
        # session the client started it in (already gone and reaped, or going).
        with contextlib.suppress(ProcessLookupError):
            await wait_pid_exit(child, 10)


CRASHING: Final = textwrap.dedent(
    """
    import sys
    print("fatal: the config file /etc/example.toml is missing", file=sys.stderr, flush=True)
    sys.exit(3)
    """
)


@pytest.mark.parametrize("stderr", ["capture", "devnull"])
async def test_a_server_that_exits_before_answering_says_why(
    tmp_path: Path, stderr: Literal["capture", "devnull"]
) -> None:
    # It was a bare "the connection closed", whatever the server had said.
    (tmp_path / "crashing.py").write_text(CRASHING)
    seen: list[str] = []
    transport = StdioTransport(
        sys.executable, [str(tmp_path / "crashing.py")], stderr=stderr, on_stderr=seen.append
    )
    with anyio.fail_after(30), pytest.raises(ConnectionClosedError) as closed:
        async with Client(transport):
            pass
    message = str(closed.value)
    assert "exited with status 3" in message
    assert ("config file /etc/example.toml is missing" in message) is (stderr == "capture")


CHATTY: Final = textwrap.dedent(
    """
    import sys
    # A misconfigured server: half a megabyte of log lines on stdout before it reads its
    # stdin (the client answers each with a -32700 it must not wait to write).
    line = b"2026-01-01 12:00:00 INFO loading plugin %05d with the default settings: ok\\n"
    for i in range(6000):
        sys.stdout.buffer.write(line % i)
    sys.stdout.buffer.flush()
    from mcpkit import Server
    server = Server("chatty")

    @server.tool()
    def hi() -> str:
        return "hi"

    server.run()
    """
)


async def test_a_server_that_logs_to_stdout_before_reading_does_not_deadlock_the_client(
    tmp_path: Path,
) -> None:
    # The receive loop wrote each -32700 answer before reading on: with both pipes full
    # (the server writing its log, not reading), neither side moved; initialize timed out.
    (tmp_path / "chatty.py").write_text(CHATTY)
    transport = StdioTransport(sys.executable, [str(tmp_path / "chatty.py")], stderr="devnull")
    with anyio.fail_after(30):
        async with Client(transport, era="handshake", timeout=20) as client:
            result = await client.call_tool("hi")
    assert result.content[0].text == "hi"  # type: ignore[union-attr]


NOISY: Final = textwrap.dedent(
    """
    import sys
    err = sys.stderr.buffer
    err.write(b"first\\nsecond ")  # lines split across writes, one of 3 MB
    err.flush()
    for _ in range(48):
        err.write(b"x" * 65536)
        err.flush()
    err.write(b"\\r\\nthird\\nunfinished")
    err.flush()
    """
)


async def test_captured_stderr_is_split_into_lines_however_it_arrives(tmp_path: Path) -> None:
    (tmp_path / "noisy.py").write_text(NOISY)
    lines: list[str] = []
    channel = StdioTransport(
        sys.executable, [str(tmp_path / "noisy.py")], stderr="capture", on_stderr=lines.append
    ).connect()
    with anyio.fail_after(30):
        async with channel:
            await channel.exit_reason(wait=20)
    assert lines == ["first", "second " + "x" * 48 * 65536, "third", "unfinished"]


STDIN_READER: Final = textwrap.dedent(
    """
    import select, subprocess, sys
    from mcpkit import Server

    server = Server("stdin")
    CHILD = (
        "import os, select; r, _, _ = select.select([0], [], [], 2.0); "
        "print(repr(os.read(0, 65536)) if r else 'waited')"
    )

    @server.tool()
    def child_reads_stdin() -> str:
        done = subprocess.run([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
        return done.stdout.strip()

    @server.tool()
    def reads_stdin() -> str:
        return repr(sys.stdin.read())
    """
)


async def test_a_tool_and_its_children_read_end_of_file_not_the_protocol(
    tmp_path: Path,
) -> None:
    # A child process inherited the protocol's stdin: reading it, it took the client's
    # next requests off the pipe (lost; the client waited for its timeout). Now stdin is
    # /dev/null for everyone but the protocol: end of file at once.
    (tmp_path / "stdin_reader.py").write_text(STDIN_READER)
    argv = ["-m", "mcpkit", "run", str(tmp_path / "stdin_reader.py")]
    transport = StdioTransport(sys.executable, argv, cwd=str(tmp_path))
    with anyio.fail_after(20):
        async with Client(transport, era="handshake") as client:
            child = await client.call_tool("child_reads_stdin")
            assert child.content[0].text == "b''"  # type: ignore[union-attr]
            tool = await client.call_tool("reads_stdin")
            assert tool.content[0].text == "''"  # type: ignore[union-attr]
            await client.ping()  # and the protocol's own input is intact


ORPHANING: Final = textwrap.dedent(
    """
    import json, os, subprocess, sys
    from pathlib import Path
    # A process in a session of its own (out of the client's signals' reach) that holds
    # our stdout open after we are gone.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    Path(sys.argv[1]).write_text(str(holder.pid))
    info = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "orphaning", "version": "0"}}
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "initialize":
            result = info
        elif message["params"]["name"] == "crash":
            os._exit(3)
        else:  # the last answer, bigger than the pipe holds, then gone
            result = {"content": [{"type": "text", "text": "x" * 200_000}]}
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        sys.stdout.buffer.write(json.dumps(answer).encode() + b"\\n")
        sys.stdout.buffer.flush()
        if message["method"] == "tools/call":
            os._exit(0)
    """
)


@pytest.mark.parametrize("ending", ["crash", "last answer"])
async def test_a_server_gone_is_seen_though_a_process_it_started_holds_its_stdout(
    tmp_path: Path, ending: str
) -> None:
    # The end of input waited for the holder: pending and new calls waited their timeout.
    (tmp_path / "orphaning.py").write_text(ORPHANING)
    pid_file = tmp_path / "holder.pid"
    transport = StdioTransport(
        sys.executable, [str(tmp_path / "orphaning.py"), str(pid_file)], stderr="devnull"
    )
    try:
        with anyio.fail_after(15):
            async with Client(transport, era="handshake", timeout=60) as client:
                if ending == "crash":
                    with pytest.raises(ConnectionClosedError):
                        await client.call_tool("crash")
                else:  # what the server wrote before it exited is still delivered
                    result = await client.call_tool("last")
                    assert result.content[0].text == "x" * 200_000  # type: ignore[union-attr]
                with pytest.raises(ConnectionClosedError):
                    await client.ping()
    finally:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
