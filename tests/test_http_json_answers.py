"""A stateful JSON-mode POST (``json_response=True``) gets its one request's answer from
the handler running in the POST's own task, written by that task: these pin what that
path keeps from the general one. The app is driven in process (every ``send`` of the
POSTs and of the standalone GET stream recorded): records a handler logs reach the GET
stream, and failures, refusals, the peer's cancellation and the in-flight checks answer as
JSON (``basic/transports.mdx`` 2025-11-25, "Sending Messages to the Server";
``basic/utilities/cancellation.mdx``). Whether a record is handed to the GET stream just
before or just after the answer is not visible from outside, so it is not asserted."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import pytest
from anyio.abc import TaskGroup

from mcpkit.exceptions import RPCError
from mcpkit.server import Server, StreamableHTTPApp

from ._mcphttp import asgi_receive, asgi_scope, call, initialize, notification, request

pytestmark = pytest.mark.anyio

LOGGER: Final = "tests.json.answers"
VERSION: Final = b"2025-11-25"
#: Bound on every wait.
LIMIT: Final = 10.0


#: A held tool's events, by key: (started, release), made by the test before the call.
Gates = dict[str, tuple[anyio.Event, anyio.Event]]


def build() -> tuple[Server, Gates]:
    server = Server("json-answers", "1.0", max_in_flight=2)
    gates: Gates = {}

    @server.tool()
    async def chatty(n: int) -> str:
        """Log ``n`` records, then answer at once."""
        for i in range(n):
            logging.getLogger(LOGGER).warning("record %d", i)
        return "done"

    @server.tool()
    async def boom() -> str:
        """Fail at once."""
        raise ValueError("boom")

    @server.tool()
    async def refuse() -> str:
        """Fail at once with a JSON-RPC error of its own."""
        raise RPCError(-32042, "refused here", {"why": "test"})

    @server.tool()
    async def hold(key: str) -> str:
        """Wait until the test opens ``key``."""
        started, release = gates[key]
        started.set()
        await release.wait()
        return f"released {key}"

    return server, gates


class Wire:
    """What the app sent, in order, across every exchange (``(who, message)``)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def records(self) -> list[str]:
        """The log records the standalone GET stream carried, in order."""
        lines = [
            line
            for who, message in self.sent
            if who == "get"
            for line in bytes(message.get("body", b"")).decode().splitlines()
        ]
        return [
            json.loads(line[6:])["params"]["data"]
            for line in lines
            if line.startswith("data: ") and "notifications/message" in line
        ]


class Session:
    """One client session of ``app``, every exchange recorded on ``wire``."""

    def __init__(self, app: StreamableHTTPApp, wire: Wire) -> None:
        self.app = app
        self.wire = wire
        self.sid: bytes | None = None

    def headers(self) -> list[tuple[bytes, bytes]]:
        headers = [
            (b"accept", b"application/json, text/event-stream"),
            (b"content-type", b"application/json"),
        ]
        if self.sid is not None:
            headers += [(b"mcp-session-id", self.sid), (b"mcp-protocol-version", VERSION)]
        return headers

    async def post(self, body: bytes, who: str = "post") -> tuple[int, Any]:
        """POST ``body``; the status and the decoded JSON body (``None`` if empty)."""
        gone = anyio.Event()
        answer: dict[str, Any] = {}
        receive = asgi_receive(body, gone.wait)  # (the client stays until the answer is in)

        async def send(message: MutableMapping[str, Any]) -> None:
            self.wire.sent.append((who, dict(message)))
            answer.setdefault(message["type"], message)
            if message["type"] == "http.response.start":
                for name, value in message["headers"]:
                    if name == b"mcp-session-id":
                        self.sid = value

        headers = [*self.headers(), (b"content-length", b"%d" % len(body))]
        with anyio.fail_after(LIMIT):
            await self.app(asgi_scope("POST", headers), receive, send)
        gone.set()
        content = answer.get("http.response.body", {}).get("body", b"")
        return answer["http.response.start"]["status"], json.loads(content) if content else None

    async def open(self) -> None:
        status, _ = await self.post(initialize())
        assert status == 200
        assert self.sid is not None
        status, _ = await self.post(notification("notifications/initialized"))
        assert status == 202
        status, _ = await self.post(request(90, "logging/setLevel", {"level": "warning"}))
        assert status == 200

    @asynccontextmanager
    async def standalone(self) -> AsyncIterator[Callable[[], Awaitable[None]]]:
        """The standalone GET stream, open (recorded as ``"get"``) until the block ends;
        yields an event set whenever it has carried something more."""
        started = anyio.Event()
        leave = anyio.Event()
        more = [anyio.Event()]

        async def receive() -> MutableMapping[str, Any]:
            await leave.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            self.wire.sent.append(("get", dict(message)))
            more[0].set()
            if message["type"] == "http.response.start":
                assert message["status"] == 200
                started.set()

        async def wait_more() -> None:
            await more[0].wait()
            more[0] = anyio.Event()

        async with anyio.create_task_group() as group:
            group.start_soon(self.app, asgi_scope("GET", self.headers()), receive, send)
            with anyio.fail_after(LIMIT):
                await started.wait()
            try:
                yield wait_more
            finally:
                leave.set()


@pytest.fixture
def forwarded() -> Iterator[tuple[Server, Gates]]:
    server, gates = build()
    log = logging.getLogger(LOGGER)
    handler = server.forward_logging(log)
    try:
        yield server, gates
    finally:
        log.removeHandler(handler)


@asynccontextmanager
async def opened(server: Server) -> AsyncIterator[tuple[Session, Wire]]:
    wire = Wire()
    session = Session(server.streamable_http_app(json_response=True), wire)
    await session.open()
    yield session, wire


@pytest.mark.parametrize("count", [1, 3])
async def test_records_an_instant_handler_logs_reach_the_standalone_stream(
    forwarded: tuple[Server, Gates], count: int
) -> None:
    """They are queued from synchronous code; the answer is still the POST's JSON body,
    and the records go where JSON mode sends everything else: the GET stream."""
    async with opened(forwarded[0]) as (session, wire), session.standalone() as more:
        status, answer = await session.post(call(7, "chatty", n=count))
        assert status == 200
        assert answer["result"]["content"][0]["text"] == "done"
        with anyio.fail_after(LIMIT):
            while len(wire.records()) < count:
                await more()
        assert wire.records() == [f"record {i}" for i in range(count)]


async def hold_call(
    session: Session, group: TaskGroup, gates: Gates, rid: int, key: str
) -> tuple[anyio.Event, list[Any]]:
    """POST a ``hold`` call from ``group``; returns once its handler runs: the event that
    releases it, and the list its POST's outcome lands in."""
    started, release = gates[key] = (anyio.Event(), anyio.Event())
    outcome: list[Any] = []

    async def post() -> None:
        outcome.append(await session.post(call(rid, "hold", key=key)))

    group.start_soon(post)
    with anyio.fail_after(LIMIT):
        await started.wait()
    return release, outcome


@pytest.mark.parametrize(
    ("body", "check"),
    [
        pytest.param(call(3, "boom"), lambda a: a["result"]["isError"] is True, id="raises"),
        pytest.param(
            call(3, "refuse"),
            lambda a: (
                a["error"] == {"code": -32042, "message": "refused here", "data": {"why": "test"}}
            ),
            id="rpc-error",
        ),
        pytest.param(
            request(3, "no/such/method"), lambda a: a["error"]["code"] == -32601, id="no-method"
        ),
        pytest.param(
            request(3, "tools/call", {"name": 5}),
            lambda a: a["error"]["code"] == -32602,
            id="params",
        ),
        pytest.param(request(3, "ping"), lambda a: a["result"] == {}, id="ping"),
    ],
)
async def test_each_outcome_is_one_json_answer(body: bytes, check: Any) -> None:
    server, _ = build()
    async with opened(server) as (session, _wire):
        status, answer = await session.post(body)
        assert status == 200
        assert answer["id"] == 3
        assert check(answer), answer
        # The id is free again: the same request is answered the same way.
        assert await session.post(body) == (status, answer)


async def test_a_second_request_with_an_id_in_flight_is_refused_and_the_first_answered() -> None:
    server, gates = build()
    async with opened(server) as (session, _wire), anyio.create_task_group() as group:
        release, first = await hold_call(session, group, gates, 5, "dup")
        status, answer = await session.post(call(5, "chatty", n=0))
        assert status == 400  # (refused as it is read: basic/transports.mdx, a bad message)
        assert answer["id"] == 5
        assert answer["error"]["code"] == -32600
        assert "already in flight" in answer["error"]["message"]
        release.set()
    assert first == [(200, {"jsonrpc": "2.0", "id": 5, "result": first[0][1]["result"]})]
    assert first[0][1]["result"]["content"][0]["text"] == "released dup"


async def test_the_in_flight_cap_refuses_as_busy_and_frees_its_places() -> None:
    server, gates = build()  # max_in_flight=2
    async with opened(server) as (session, _wire), anyio.create_task_group() as group:
        release_a, first = await hold_call(session, group, gates, 1, "a")
        release_b, second = await hold_call(session, group, gates, 2, "b")
        status, busy = await session.post(call(3, "chatty", n=0))
        assert status == 200
        assert busy["error"]["code"] == -32000
        assert busy["error"]["data"] == {"maxInFlight": 2}
        release_a.set()
        release_b.set()
    assert [first[0][1]["id"], second[0][1]["id"]] == [1, 2]
    status, answer = await session.post(call(4, "chatty", n=0))
    assert answer["result"]["content"][0]["text"] == "done"


async def test_a_request_the_peer_cancels_gets_no_answer_and_the_session_goes_on() -> None:
    server, gates = build()
    async with opened(server) as (session, _wire), anyio.create_task_group() as group:
        _, outcome = await hold_call(session, group, gates, 8, "never")
        cancel = notification("notifications/cancelled", {"requestId": 8, "reason": "test"})
        assert await session.post(cancel) == (202, None)
    # basic/utilities/cancellation: no response for a cancelled request; the POST ends.
    assert len(outcome) == 1
    assert outcome[0] == (202, None), outcome
    _, answer = await session.post(call(8, "chatty", n=0))  # the id is free again
    assert answer["result"]["content"][0]["text"] == "done"
