"""FdReader: reading a non-blocking descriptor with the descriptor registered once per
reader on asyncio (not once per read), never left registered while nobody reads, and no
data lost to a cancelled read."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import anyio
import pytest

from mcpkit.aio import FdReader

pytestmark = pytest.mark.anyio


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    yield read_fd, write_fd
    os.close(read_fd)
    os.close(write_fd)


async def test_read_returns_what_arrives(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = FdReader(read_fd, 1024)
    got: list[bytes] = []

    async def read() -> None:
        got.append(await reader.read())

    for data in (b"first", b"second"):  # one reader, many reads
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            await anyio.wait_all_tasks_blocked()
            assert data not in got
            os.write(write_fd, data)
    assert got == [b"first", b"second"]
    reader.close()


async def test_end_of_file_reads_empty() -> None:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    reader = FdReader(read_fd, 1024)
    os.close(write_fd)
    with anyio.fail_after(5):
        assert await reader.read() == b""
    reader.close()
    os.close(read_fd)


async def test_a_cancelled_read_loses_nothing(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = FdReader(read_fd, 1024)
    with anyio.move_on_after(0.01):
        await reader.read()
    os.write(write_fd, b"kept")
    with anyio.fail_after(5):
        assert await reader.read() == b"kept"
    reader.close()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("turns", [0, 1, 2, 3, 4])
async def test_a_read_cancelled_at_any_point_loses_nothing(turns: int) -> None:
    """The loop's callback reads for the waiting reader; a cancellation that lands after
    that (before the reader resumes) must not lose the data. Cancelling after 0 to 4 loop
    turns covers before, during and after that window."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    reader = FdReader(read_fd, 1024)
    task = asyncio.ensure_future(reader.read())
    await asyncio.sleep(0)  # the read is waiting
    os.write(write_fd, b"in flight")
    for _ in range(turns):
        await asyncio.sleep(0)
    task.cancel()
    got = b""
    try:
        got = await task
    except asyncio.CancelledError:
        pass
    if not got:
        with anyio.fail_after(5):
            got = await reader.read()
    assert got == b"in flight"
    reader.close()
    os.close(read_fd)
    os.close(write_fd)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_readable_while_nobody_reads_is_unregistered(pipe: tuple[int, int]) -> None:
    """Polling is level-triggered: a descriptor left registered with unread data would
    wake the loop on every iteration while its consumer is busy."""
    read_fd, write_fd = pipe
    reader = FdReader(read_fd, 1)
    os.write(write_fd, b"ab")
    with anyio.fail_after(5):
        assert await reader.read() == b"a"  # registers; one byte stays unread
    for _ in range(3):
        await asyncio.sleep(0)
    loop = asyncio.get_running_loop()
    assert loop.remove_reader(read_fd) is False  # nobody read: it was unregistered
    with anyio.fail_after(5):
        assert await reader.read() == b"b"  # registered again
    reader.close()
    assert loop.remove_reader(read_fd) is False


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_close_wakes_the_reader(pipe: tuple[int, int]) -> None:
    read_fd, _ = pipe
    reader = FdReader(read_fd, 1024)
    outcome: list[type[BaseException]] = []

    async def read() -> None:
        try:
            await reader.read()
        except anyio.ClosedResourceError as exc:
            outcome.append(type(exc))

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        await anyio.wait_all_tasks_blocked()
        reader.close()
    assert outcome == [anyio.ClosedResourceError]
    assert asyncio.get_running_loop().remove_reader(read_fd) is False


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_one_reader_at_a_time(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = FdReader(read_fd, 1024)
    async with anyio.create_task_group() as tg:
        tg.start_soon(reader.read)
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(anyio.BusyResourceError):
            await reader.read()
        os.write(write_fd, b"b")
    reader.close()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_read_cancelled_while_the_descriptor_is_read_keeps_the_data(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A signal handler runs during os.read (Ctrl-C: asyncio's runner cancels the main
    # task, which cancels the future it awaits): the callback then set the result of a
    # cancelled future (InvalidStateError, "Exception in callback") and the data was lost.
    read_fd, write_fd = pipe
    reader = FdReader(read_fd, 1024)
    loop = asyncio.get_running_loop()
    errors: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _, context: errors.append(context))
    real_read = os.read
    reading: list[asyncio.Task[bytes]] = []

    def read_interrupted(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        reading[0].cancel()  # what the signal handler does, between the read and its use
        return data

    monkeypatch.setattr(os, "read", read_interrupted)
    reading.append(asyncio.ensure_future(reader.read()))
    os.write(write_fd, b"kept")
    with pytest.raises(asyncio.CancelledError):
        await reading[0]
    monkeypatch.setattr(os, "read", real_read)
    assert errors == []
    with anyio.fail_after(5):
        assert await reader.read() == b"kept"
    reader.close()
