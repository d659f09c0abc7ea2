"""ReadableWaiter: waiting for a descriptor to be readable, registered once per waiter on
asyncio (not once per wait), and never left registered while nobody waits."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import anyio
import pytest

from mcpkit.aio import ReadableWaiter

pytestmark = pytest.mark.anyio


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    yield read_fd, write_fd
    os.close(read_fd)
    os.close(write_fd)


async def test_wait_returns_once_data_arrives(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    waiter = ReadableWaiter(read_fd)
    woke = anyio.Event()

    async def wait() -> None:
        await waiter.wait()
        woke.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        assert not woke.is_set()
        os.write(write_fd, b"x")
        with anyio.fail_after(5):
            await woke.wait()
    assert os.read(read_fd, 10) == b"x"
    # Again, for the next message (the same waiter, many waits).
    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter.wait)
        await anyio.wait_all_tasks_blocked()
        os.write(write_fd, b"y")
    assert os.read(read_fd, 10) == b"y"
    waiter.close()


async def test_a_cancelled_wait_leaves_the_waiter_usable(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    waiter = ReadableWaiter(read_fd)
    with anyio.move_on_after(0.01):
        await waiter.wait()
    os.write(write_fd, b"z")
    with anyio.fail_after(5):
        await waiter.wait()
    waiter.close()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_readable_while_nobody_waits_is_unregistered(pipe: tuple[int, int]) -> None:
    """Polling is level-triggered: a descriptor left registered with unread data would
    wake the loop on every iteration while its consumer is busy."""
    read_fd, write_fd = pipe
    waiter = ReadableWaiter(read_fd)
    os.write(write_fd, b"a")
    with anyio.fail_after(5):
        await waiter.wait()  # registers, fires at once
    # Nobody waits now and the byte stays unread: the next callback unregisters.
    for _ in range(3):
        await asyncio.sleep(0)
    loop = asyncio.get_running_loop()
    assert loop.remove_reader(read_fd) is False
    # The next wait registers again and sees the unread byte.
    with anyio.fail_after(5):
        await waiter.wait()
    waiter.close()
    assert loop.remove_reader(read_fd) is False


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_close_wakes_the_waiter(pipe: tuple[int, int]) -> None:
    read_fd, _ = pipe
    waiter = ReadableWaiter(read_fd)
    outcome: list[type[BaseException]] = []

    async def wait() -> None:
        try:
            await waiter.wait()
        except anyio.ClosedResourceError as exc:
            outcome.append(type(exc))

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        waiter.close()
    assert outcome == [anyio.ClosedResourceError]
    assert asyncio.get_running_loop().remove_reader(read_fd) is False


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_one_waiter_at_a_time(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    waiter = ReadableWaiter(read_fd)
    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter.wait)
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(anyio.BusyResourceError):
            await waiter.wait()
        os.write(write_fd, b"b")
    waiter.close()
