"""FdChannel, the stdio channel. A line half written to a pipe is never cut by
cancelling its sender: the rest follows (within a bound) so the next message starts on a
line of its own; a reader stalled past the bound leaves the channel broken instead of
corrupting what follows. A slow reader is waited for. Descriptors get their blocking mode
back."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from mcpkit.transports import FdChannel

pytestmark = pytest.mark.anyio

#: Far more than a pipe holds (64 KiB on Linux), so the write is left half done.
BIG = b'{"jsonrpc":"2.0","method":"notifications/acme","params":{"x":"' + b"a" * 1_000_000 + b'"}}'
NEXT = b'{"jsonrpc":"2.0","method":"notifications/next"}'


@asynccontextmanager
async def channel_and_reader(
    finish_line_timeout: float = 5.0,
) -> AsyncIterator[tuple[FdChannel, int]]:
    """A channel writing into a pipe whose read end (non-blocking) the test holds."""
    unused_r, unused_w = os.pipe()
    data_r, data_w = os.pipe()
    os.set_blocking(data_r, False)
    channel = FdChannel(unused_r, data_w, owned=True, finish_line_timeout=finish_line_timeout)
    try:
        yield channel, data_r
    finally:
        await channel.aclose()
        os.close(unused_w)
        os.close(data_r)


async def read_some(fd: int) -> bytes:
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            await anyio.wait_readable(fd)
            continue
        return chunk


async def test_cancelling_a_sender_mid_line_still_finishes_the_line() -> None:
    async with channel_and_reader() as (channel, reader):
        sender = anyio.CancelScope()

        async def send_big() -> None:
            with sender:
                await channel.send(BIG)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(send_big)
                first = await read_some(reader)  # the line has started
                sender.cancel()
                # The next message waits for the cut-short sender's line to be finished.
                tg.start_soon(channel.send, NEXT)
                data = first
                while data.count(b"\n") < 2:
                    chunk = await read_some(reader)
                    assert chunk, "the pipe closed early"
                    data += chunk
        assert data.split(b"\n") == [BIG, NEXT, b""]


async def test_a_reader_stalled_past_the_bound_after_a_cancel_breaks_the_channel(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with channel_and_reader(finish_line_timeout=0.05) as (channel, reader):
        sender = anyio.CancelScope()

        async def send_big() -> None:
            with sender:
                await channel.send(BIG)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(send_big)
                await read_some(reader)  # the line has started; then nobody reads
                sender.cancel()
        assert sender.cancelled_caught  # the sender saw its cancellation, nothing else
        assert "took more than 0.05 s" in caplog.text
        # Nothing more goes into the cut stream: the next send is refused.
        with pytest.raises((anyio.BrokenResourceError, anyio.ClosedResourceError)):
            await channel.send(NEXT)


async def test_a_reader_that_pauses_longer_than_the_bound_gets_every_line() -> None:
    # Nobody cancels the sender: a reader that is slow, not gone, is waited for. (The bound
    # used to start with any partial write, and a 5 s pause ended the session.)
    async with channel_and_reader(finish_line_timeout=0.05) as (channel, reader):
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(channel.send, BIG)
                data = await read_some(reader)  # the line has started
                await anyio.sleep(0.3)  # the pause itself is what is tested: 6x the bound
                tg.start_soon(channel.send, NEXT)
                while data.count(b"\n") < 2:
                    data += await read_some(reader)
        assert data.split(b"\n") == [BIG, NEXT, b""]


async def test_blocking_mode_is_restored_when_stdin_and_stdout_are_one_terminal() -> None:
    # A terminal's stdin and stdout are one open file description: the second mode read
    # used to be the non-blocking one just set for the first, and the terminal was left
    # non-blocking for the next program (which then failed at once reading it).
    controller, terminal = os.openpty()
    shared = os.dup(terminal)  # (stdin and stdout of a process in that terminal)
    try:
        assert os.get_blocking(terminal)
        channel = FdChannel(terminal, shared)
        assert not os.get_blocking(terminal)
        await channel.aclose()
        assert os.get_blocking(terminal)
        assert os.get_blocking(shared)
    finally:
        for fd in (controller, terminal, shared):
            os.close(fd)


async def test_end_input_receives_what_is_in_the_pipe_then_end_of_file() -> None:
    # The server process exited but a process it started holds the pipe's write end: a
    # receive waited for data that would never come. (ProcessChannel calls end_input.)
    data_r, data_w = os.pipe()
    unused_r, unused_w = os.pipe()
    channel = FdChannel(data_r, unused_w, owned=True)
    received: list[bytes] = []

    async def receive_all() -> None:
        while True:
            try:
                frame = await channel.receive()
            except anyio.EndOfStream:
                received.append(b"<end of file>")
                return
            assert isinstance(frame, bytes)
            received.append(frame)

    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(receive_all)
                os.write(data_w, NEXT + b"\n")
                await anyio.wait_all_tasks_blocked()  # received; waiting for more
                os.write(data_w, b"[1]\n" + b"x" * 30_000 + b"\n[2]\n")
                channel.end_input()
        assert received == [NEXT, b"[1]", b"x" * 30_000, b"[2]", b"<end of file>"]
    finally:
        await channel.aclose()
        os.close(data_w)
        os.close(unused_r)
