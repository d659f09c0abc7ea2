"""Handlers run inline, in the task that dispatches the request (``Endpoint.dispatch`` with
``inline=True``, what Streamable HTTP uses): answers, the first wait, cancellation by the
peer and by the end of the connection, the in-flight cap, and trio's fallback to tasks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcpkit.aio import Endpoint, InboundRequest, memory_channel_pair
from mcpkit.exceptions import RPCError
from mcpkit.protocol import RequestReceived

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # inline handlers are an asyncio feature (trio: see the last test)


class Route:
    """A reply route that records what it was given."""

    def __init__(self, expected: int = 1) -> None:
        self.sent: list[dict[str, Any]] = []
        self.finished: list[Any] = []
        self.expected = expected
        self.complete = anyio.Event()

    async def send(self, message: bytes) -> None:
        self.sent.append(json.loads(message))

    async def finish(self, message: bytes | None) -> None:
        self.finished.append(None if message is None else json.loads(message))
        if len(self.finished) == self.expected:
            self.complete.set()

    def close_connection(self, retry_ms: int | None = None) -> bool:
        return False


def message(**members: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **members}).encode()


@asynccontextmanager
async def attached(
    handler: Callable[[InboundRequest], Awaitable[Any]], **options: Any
) -> AsyncIterator[Endpoint]:
    mine, theirs = memory_channel_pair()
    endpoint = Endpoint(mine, on_request=handler, autoreceive=False, **options)
    try:
        async with anyio.create_task_group() as tg:
            endpoint.attach(tg)
            with anyio.fail_after(5):
                yield endpoint
                await endpoint.detach()
    finally:
        await theirs.aclose()


async def dispatch(
    endpoint: Endpoint, route: Route, on_suspend: Callable[[], None] | None = None, **req: Any
) -> int:
    event = endpoint.connection.receive_message(message(**req))
    return await endpoint.dispatch(event, route, inline=True, on_suspend=on_suspend)


async def test_instant_handler_answers_in_the_calling_task() -> None:
    tasks: list[object] = []

    async def handler(request: InboundRequest) -> Any:
        tasks.append(asyncio.current_task())
        if request.method == "fail":
            raise ValueError("secret")
        if request.method == "rpc":
            raise RPCError(-32042, "custom")
        return {"ok": request.id}

    suspended: list[bool] = []
    async with attached(handler) as endpoint:
        for rid, method in enumerate(("ok", "fail", "rpc"), 1):
            route = Route()
            count = await dispatch(
                endpoint, route, lambda: suspended.append(True), id=rid, method=method
            )
            # Answered when dispatch returns: the transport needs no wait, no stream.
            assert count == 1
            assert len(route.finished) == 1
        error = {"code": -32042, "message": "custom"}
        assert route.finished == [{"jsonrpc": "2.0", "id": 3, "error": error}]
    assert suspended == []
    assert set(tasks) == {asyncio.current_task()}


async def test_failing_handler_answers_internal_error() -> None:
    async def handler(request: InboundRequest) -> Any:
        raise ValueError("secret internal detail")

    async with attached(handler) as endpoint:
        route = Route()
        await dispatch(endpoint, route, id=1, method="x")
    answer = route.finished[0]
    assert answer is not None
    assert answer["error"]["code"] == -32603
    assert "secret" not in json.dumps(answer)


async def test_waiting_handler_reports_its_first_wait_once() -> None:
    async def handler(request: InboundRequest) -> Any:
        # A cancel scope and a lock held across waits: the handler stays in one task.
        lock = anyio.Lock()
        with anyio.fail_after(5):
            async with lock:
                for n in range(3):
                    await request.endpoint.notify("progress", {"n": n})
                    await anyio.lowlevel.checkpoint()
        return {"done": True}

    suspended: list[bool] = []
    async with attached(handler) as endpoint:
        route = Route()
        await dispatch(endpoint, route, lambda: suspended.append(True), id=1, method="slow")
    assert suspended == [True]
    assert [m["params"]["n"] for m in route.sent] == [0, 1, 2]
    assert route.finished == [{"jsonrpc": "2.0", "id": 1, "result": {"done": True}}]


async def test_a_failing_on_suspend_is_the_callers_error_not_the_handlers() -> None:
    """What ``on_suspend`` raises (Streamable HTTP: the app's task group gone when it
    opens a stream) reaches the caller as it is, the handler is closed and unregistered,
    and no answer is made up for it (the caller, which owns the failure, ends its POST)."""
    closed = anyio.Event()

    async def handler(request: InboundRequest) -> Any:
        try:
            await anyio.sleep_forever()
        finally:
            closed.set()

    def on_suspend() -> None:
        raise RuntimeError("the app's background task group is not running")

    async with attached(handler) as endpoint:
        route = Route()
        with pytest.raises(RuntimeError, match="task group is not running"):
            await dispatch(endpoint, route, on_suspend, id=1, method="slow")
        assert closed.is_set()
        assert route.finished == []
        assert route.sent == []
        assert endpoint.idle  # (nothing left running or registered)


async def test_peer_cancellation_stops_the_handler_not_the_caller() -> None:
    started = anyio.Event()
    cancelled: list[bool] = []

    async def handler(request: InboundRequest) -> Any:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise

    async with attached(handler) as endpoint:
        route = Route()

        async def cancel_when_started() -> None:
            await started.wait()
            event = endpoint.connection.receive_message(
                message(method="notifications/cancelled", params={"requestId": 1})
            )
            await endpoint.dispatch(event)

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_when_started)
            await dispatch(endpoint, route, id=1, method="wait")
            # The caller goes on: its own waits are not cancelled.
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
        assert cancelled == [True]
        assert route.finished == [None]  # no response for a cancelled request
        # The id is free again: it answers a new request.
        again = Route()
        started = anyio.Event()
        tg_ok = False
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_when_started)
            await dispatch(endpoint, again, id=1, method="wait")
            tg_ok = True
        assert tg_ok
        assert again.finished == [None]


@pytest.mark.parametrize("with_on_suspend", [False, True])
async def test_cancellation_before_the_first_wait_stops_the_handler(with_on_suspend: bool) -> None:
    # The handler's own first step has its request cancelled (here it hands the endpoint
    # the peer's notifications/cancelled itself) before it ever waits: the cancellation
    # reaches it at its first wait; the caller carries on.
    cancelled: list[bool] = []

    async def handler(request: InboundRequest) -> Any:
        event = request.endpoint.connection.receive_message(
            message(method="notifications/cancelled", params={"requestId": request.id})
        )
        await request.endpoint.dispatch(event)
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise

    suspended: list[bool] = []
    on_suspend = (lambda: suspended.append(True)) if with_on_suspend else None
    async with attached(handler) as endpoint:
        route = Route()
        assert await dispatch(endpoint, route, on_suspend, id=1, method="wait") == 1
        await anyio.lowlevel.checkpoint()  # the caller is not left cancelled
        assert endpoint.detach_idle()  # the handler is no longer in flight
    assert cancelled == [True]
    assert route.finished == [None]  # no response for a cancelled request
    assert suspended == ([True] if with_on_suspend else [])


async def test_end_of_connection_cancels_the_handler_and_releases_the_caller() -> None:
    started = anyio.Event()

    async def handler(request: InboundRequest) -> Any:
        started.set()
        await anyio.sleep_forever()

    returned: list[int] = []
    async with attached(handler) as endpoint:

        async def caller() -> None:
            returned.append(await dispatch(endpoint, Route(), id=1, method="wait"))
            await anyio.lowlevel.checkpoint()  # not left cancelled
            returned.append(2)

        async with anyio.create_task_group() as tg:
            tg.start_soon(caller)
            await started.wait()
            await endpoint.detach()  # cancels the handler and waits until it stopped
            assert returned[:1] == [1]
    assert returned == [1, 2]


async def test_the_callers_own_cancellation_is_not_swallowed() -> None:
    started = anyio.Event()

    async def handler(request: InboundRequest) -> Any:
        started.set()
        await anyio.sleep_forever()

    async with attached(handler) as endpoint:
        with anyio.CancelScope() as scope:

            async def cancel_when_started() -> None:
                await started.wait()
                scope.cancel()

            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_when_started)
                await dispatch(endpoint, Route(), id=1, method="wait")
                pytest.fail("dispatch returned although its task was cancelled")
        assert scope.cancelled_caught
        assert endpoint.detach_idle()  # the handler is no longer in flight


async def test_inline_handlers_count_against_the_in_flight_cap() -> None:
    started = anyio.Event()
    release = anyio.Event()

    async def handler(request: InboundRequest) -> Any:
        started.set()
        await release.wait()
        return {}

    async with attached(handler, max_in_flight=1) as endpoint:
        first = Route()

        async def hold() -> None:
            await dispatch(endpoint, first, id=1, method="hold")

        async with anyio.create_task_group() as tg:
            tg.start_soon(hold)
            await started.wait()
            busy = Route()
            await dispatch(endpoint, busy, id=2, method="hold")
            assert busy.finished[0] is not None
            assert busy.finished[0]["error"]["code"] == -32000
            release.set()
        assert first.finished == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_batches_and_trio_use_tasks(anyio_backend: str) -> None:
    async def handler(request: InboundRequest) -> Any:
        await anyio.lowlevel.checkpoint()
        return {"id": request.id}

    route = Route(expected=2)
    async with attached(handler) as endpoint:
        endpoint.connection.allow_batches = True
        batch = b"[" + message(id=1, method="a") + b"," + message(id=2, method="b") + b"]"
        event = endpoint.connection.receive_message(batch)
        assert not isinstance(event, RequestReceived)
        assert await endpoint.dispatch(event, route, inline=True) == 2
        await route.complete.wait()
    (reply,) = [m for m in route.finished if m is not None]  # the batch's one reply
    assert sorted(m["id"] for m in reply) == [1, 2]
    assert all(m["result"] == {"id": m["id"]} for m in reply)


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_on_trio_inline_falls_back_to_a_task(anyio_backend: str) -> None:
    release = anyio.Event()

    async def handler(request: InboundRequest) -> Any:
        await release.wait()
        return {}

    suspended: list[bool] = []
    async with attached(handler) as endpoint:
        route = Route()
        assert (
            await dispatch(endpoint, route, lambda: suspended.append(True), id=1, method="x") == 1
        )
        assert route.finished == []  # not answered yet: the handler runs in its own task
        release.set()
        await route.complete.wait()
    assert route.finished == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    assert suspended == []
