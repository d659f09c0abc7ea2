"""One server serving sessions on two event loops (say stdio on the main thread and HTTP
on another, or two ASGI servers each on a thread of its own): a list change reaches the
clients on every loop, each told from its own loop, whichever thread made the change.
(Before, every session was told from the first session's loop: a trio session was then
touched from a foreign thread, and its client never heard of the change.)"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from anyio.lowlevel import EventLoopToken

from mcpkit.aio import runs_event_loop, soon_on_loop
from mcpkit.client import Client
from mcpkit.server import Server

LIMIT = 10.0
BACKENDS = ("asyncio", "trio")


class Loops:
    """A client per backend, each in a thread running its own event loop, connected to
    ``server`` in process; they record the list changes they hear of."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.ready = {name: threading.Event() for name in BACKENDS}
        self.heard = {name: threading.Event() for name in BACKENDS}
        self.tokens: dict[str, EventLoopToken] = {}
        self.done = threading.Event()
        self.errors: list[BaseException] = []
        self.threads = [threading.Thread(target=self._run, args=(name,)) for name in BACKENDS]

    def _run(self, backend: str) -> None:
        async def main() -> None:
            def on_list_changed(kind: str) -> None:
                if kind == "tools":
                    self.heard[backend].set()

            with anyio.fail_after(LIMIT):
                async with Client(self.server, era="handshake", on_list_changed=on_list_changed):
                    self.tokens[backend] = anyio.lowlevel.current_token()
                    self.ready[backend].set()
                    # The session stays open, its loop running, until the test ends.
                    await anyio.to_thread.run_sync(self.done.wait, LIMIT)

        try:
            anyio.run(main, backend=backend)
        except BaseException as exc:  # reported by the test
            self.errors.append(exc)

    def run_on(self, backend: str, fn: Callable[[], None]) -> None:
        """Call ``fn`` on the thread of ``backend``'s loop, and wait for it."""
        anyio.from_thread.run_sync(fn, token=self.tokens[backend])

    def __enter__(self) -> Loops:
        for thread in self.threads:
            thread.start()
        for name in BACKENDS:
            assert self.ready[name].wait(LIMIT), f"the {name} client did not connect"
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(LIMIT)
        assert not any(thread.is_alive() for thread in self.threads)
        assert self.errors == []


def two_loop_server() -> Server:
    server = Server("two loops")

    @server.tool()
    def first() -> str:
        """A tool, so that the tools list exists from the start."""
        return "first"

    return server


def add_tool(server: Server, name: str) -> None:
    def tool() -> str:
        return name

    server.tool(name=name)(tool)


@pytest.mark.parametrize("where", ["main thread", "asyncio loop", "trio loop"])
def test_a_list_change_reaches_the_clients_on_every_loop(where: str) -> None:
    server = two_loop_server()
    with Loops(server) as loops:
        if where == "main thread":  # (no loop: every loop is told from outside)
            add_tool(server, "second")
        else:  # on one loop's thread: its own clients directly, the other loop's from afar
            loops.run_on(where.split()[0], lambda: add_tool(server, "second"))
        for name in BACKENDS:
            assert loops.heard[name].wait(LIMIT), f"the {name} client was not told"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_list_change_from_a_loop_without_sessions_never_waits_for_the_others(
    backend: str,
) -> None:
    # An event loop's thread serving none of the server's sessions changes a list while
    # both session loops are busy until it says so: handed to each loop without waiting,
    # the change lets it go on at once. (It waited for the first session's loop, which
    # waited for it: both stalled until the loops' waits gave up.)
    server = two_loop_server()
    released = threading.Event()
    blocking = {name: threading.Event() for name in BACKENDS}
    unblocked: dict[str, bool] = {}

    finished = {name: threading.Event() for name in BACKENDS}

    def block(name: str) -> None:
        blocking[name].set()
        unblocked[name] = released.wait(LIMIT)  # (the loop's thread, held)
        finished[name].set()

    async def change() -> None:
        for name in BACKENDS:
            await anyio.to_thread.run_sync(blocking[name].wait, LIMIT)
        add_tool(server, "second")  # (from a running loop of its own)
        released.set()

    with Loops(server) as loops:
        for thread, name in zip(loops.threads, BACKENDS, strict=True):
            assert soon_on_loop(thread.ident, loops.tokens[name], block, name)
        anyio.run(change, backend=backend)
        for name in BACKENDS:
            assert finished[name].wait(LIMIT)
        assert unblocked == dict.fromkeys(BACKENDS, True)
        for name in BACKENDS:
            assert loops.heard[name].wait(LIMIT), f"the {name} client was not told"


# -- soon_on_loop: the hand-over itself ------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_soon_on_loop_runs_on_the_loop_logs_failures_and_refuses_an_ended_loop(
    backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[int] = []
    done = threading.Event()
    box: dict[str, Any] = {}

    def record() -> None:
        ran.append(threading.get_ident())
        done.set()

    def fail() -> None:
        raise ValueError("boom")

    async def main() -> None:
        box["token"], box["thread"] = anyio.lowlevel.current_token(), threading.get_ident()
        box["ready"].set()
        await anyio.to_thread.run_sync(done.wait, LIMIT)

    box["ready"] = threading.Event()
    thread = threading.Thread(target=anyio.run, args=(main,), kwargs={"backend": backend})
    thread.start()
    assert box["ready"].wait(LIMIT)
    token, loop_thread = box["token"], box["thread"]
    assert soon_on_loop(loop_thread, token, fail)  # logged on the loop, not raised here
    assert soon_on_loop(loop_thread, token, record)
    thread.join(LIMIT)
    assert not thread.is_alive()
    assert ran == [loop_thread]
    assert "failed on its event loop" in caplog.text
    assert not soon_on_loop(loop_thread, token, record)  # the loop has ended
    assert ran == [loop_thread]


@pytest.mark.parametrize("backend", BACKENDS)
def test_runs_event_loop_tells_a_loop_thread_from_a_plain_one(backend: str) -> None:
    seen: dict[str, bool] = {}

    async def main() -> None:
        seen["in the loop"] = runs_event_loop()
        seen["in its worker thread"] = await anyio.to_thread.run_sync(runs_event_loop)

    anyio.run(main, backend=backend)
    seen["after it"] = runs_event_loop()
    assert seen == {"in the loop": True, "in its worker thread": False, "after it": False}
