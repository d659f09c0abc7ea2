"""``Endpoint.answer_in_flight``: requests still running when their server goes away get
an error answer through their route, delivered once, when their handler stops (cancelled
by the endpoint's end), in place of the nothing a cancellation leaves, or of the result of
a handler that completes first. Handlers in tasks of their own (asyncio, trio) and inline
in the dispatching task (asyncio), with and without a route the caller wants."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import anyio.lowlevel
import pytest

from mcpkit.aio import Endpoint, InboundRequest, memory_channel_pair
from mcpkit.aio._route import ReplyRoute

pytestmark = pytest.mark.anyio

CODE: Final = -32603
MESSAGE: Final = "the server is shutting down"
LIMIT: Final = 5.0


class Route:
    """A reply route that records what it was given."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.finished: list[Any] = []

    async def send(self, message: bytes) -> None:
        pass

    async def finish(self, message: bytes | None) -> None:
        self.finished.append(None if message is None else json.loads(message))

    def close_connection(self, retry_ms: int | None = None) -> bool:
        return False


def request(rid: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "work"}).encode()


def wanted(route: ReplyRoute) -> bool:
    return isinstance(route, Route) and route.name == "stream"


FAREWELL: Final = {"jsonrpc": "2.0", "id": 1, "error": {"code": CODE, "message": MESSAGE}}


class Work:
    """The handlers' side: which requests started, and the gate they wait on."""

    def __init__(self) -> None:
        self.started: dict[Any, anyio.Event] = {1: anyio.Event(), 2: anyio.Event()}
        self.release = anyio.Event()

    async def handler(self, request: InboundRequest) -> Any:
        self.started[request.id].set()
        await self.release.wait()
        return {"done": True}


@asynccontextmanager
async def endpoint_for(work: Work) -> AsyncIterator[Endpoint]:
    mine, theirs = memory_channel_pair()
    endpoint = Endpoint(mine, on_request=work.handler, autoreceive=False)
    try:
        async with anyio.create_task_group() as tg:
            endpoint.attach(tg)
            yield endpoint
    finally:
        await theirs.aclose()


async def run_request(endpoint: Endpoint, work: Work, rid: int, route: Route | None = None) -> None:
    """Dispatch request ``rid`` (through ``route``, else the channel); return once its
    handler runs."""
    await endpoint.dispatch(endpoint.connection.receive_message(request(rid)), route)
    await work.started[rid].wait()


async def farewell_then_end(endpoint: Endpoint, work: Work, stream: Route, other: Route) -> None:
    await work.started[1].wait()
    await work.started[2].wait()
    chosen = endpoint.answer_in_flight(CODE, MESSAGE, wanted)
    assert chosen == {1: stream}
    assert not endpoint.connection.is_in_flight(1)  # answered, once
    assert endpoint.connection.is_in_flight(2)
    await endpoint.detach()  # cancels both handlers


async def test_a_cancelled_handler_in_a_task_delivers_the_farewell() -> None:
    work, stream, other = Work(), Route("stream"), Route("json")
    with anyio.fail_after(LIMIT):
        async with endpoint_for(work) as endpoint:
            for rid, route in ((1, stream), (2, other)):
                await endpoint.dispatch(endpoint.connection.receive_message(request(rid)), route)
            await farewell_then_end(endpoint, work, stream, other)
    assert stream.finished == [FAREWELL]
    # Cancelled by the end, as before: no answer (trio's scope still reports a None).
    assert [answer for answer in other.finished if answer is not None] == []
    assert endpoint.undelivered(1) is None


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # (inline handlers are asyncio's)
async def test_a_cancelled_inline_handler_delivers_the_farewell() -> None:
    work, stream, other = Work(), Route("stream"), Route("json")
    with anyio.fail_after(LIMIT):
        async with endpoint_for(work) as endpoint, anyio.create_task_group() as tg:
            for rid, route in ((1, stream), (2, other)):
                event = endpoint.connection.receive_message(request(rid))
                tg.start_soon(dispatch_inline, endpoint, event, route)
            await farewell_then_end(endpoint, work, stream, other)
    assert stream.finished == [FAREWELL]
    assert [answer for answer in other.finished if answer is not None] == []


async def dispatch_inline(endpoint: Endpoint, event: Any, route: Route) -> None:
    await endpoint.dispatch(event, route, inline=True)


async def test_a_handler_completing_first_is_answered_by_the_farewell_instead() -> None:
    work, stream = Work(), Route("stream")
    with anyio.fail_after(LIMIT):
        async with endpoint_for(work) as endpoint:
            await run_request(endpoint, work, 1, stream)
            assert endpoint.answer_in_flight(CODE, MESSAGE, wanted) == {1: stream}
            work.release.set()  # it completes before anyone cancels it
            while not stream.finished:
                await anyio.lowlevel.checkpoint()
            await endpoint.detach()
    assert stream.finished == [FAREWELL]  # its result is dropped: one answer per request


async def test_an_undelivered_farewell_is_handed_over_once() -> None:
    # (a handler that ignores its cancellation: the caller delivers the answer itself)
    work = Work()
    with anyio.fail_after(LIMIT):
        async with endpoint_for(work) as endpoint:
            route = Route("stream")
            await run_request(endpoint, work, 1, route)
            endpoint.answer_in_flight(CODE, MESSAGE, wanted)
            answer = endpoint.undelivered(1)
            assert answer is not None
            assert json.loads(answer) == FAREWELL
            assert endpoint.undelivered(1) is None
            await endpoint.detach()
    assert route.finished == [None]  # the handler, cancelled, had nothing left to send


# -- part_channel: requests answered over the channel (legacy HTTP+SSE, WebSocket) ------


def error_for(rid: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": CODE, "message": MESSAGE}}


async def test_part_channel_answers_each_channel_request_once_and_drops_its_result() -> None:
    work = Work()
    work.started[3] = anyio.Event()
    mine, theirs = memory_channel_pair()
    endpoint = Endpoint(mine, on_request=work.handler)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(endpoint.run)
            for rid in (1, 2):
                await theirs.send(request(rid))
            await work.started[1].wait()
            await work.started[2].wait()
            answers = [json.loads(answer) for answer in endpoint.part_channel(CODE, MESSAGE)]
            assert sorted(answers, key=lambda a: a["id"]) == [error_for(1), error_for(2)]
            assert endpoint.part_channel(CODE, MESSAGE) == []  # answered once
            work.release.set()  # they complete after all: their results go nowhere
            while not endpoint.idle:
                await anyio.lowlevel.checkpoint()
            # The next message the peer gets answers a new request: nothing came between.
            await theirs.send(request(3))
            assert json.loads(await theirs.receive()) == {
                "jsonrpc": "2.0",
                "id": 3,
                "result": {"done": True},
            }
            await theirs.aclose()


async def test_part_channel_leaves_routed_requests_to_their_routes() -> None:
    work = Work()
    with anyio.fail_after(LIMIT):
        async with endpoint_for(work) as endpoint:
            stream = Route("stream")
            await run_request(endpoint, work, 1, stream)
            await run_request(endpoint, work, 2)  # (over the channel)
            answers = endpoint.part_channel(CODE, MESSAGE)
            assert [json.loads(answer) for answer in answers] == [error_for(2)]
            assert endpoint.connection.is_in_flight(1)  # (its route answers it)
            await endpoint.detach()
    assert [answer for answer in stream.finished if answer is not None] == []
