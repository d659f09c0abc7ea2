"""The async endpoint over in-memory channels, on asyncio and trio.

One side is an :class:`Endpoint`; the other is either another endpoint or a raw peer that
reads and writes JSON messages directly, so each rule is observed on the wire.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from msgspec import Raw

from mcpkit.aio import Endpoint, InboundRequest, MemoryChannel, memory_channel_pair
from mcpkit.exceptions import (
    ConnectionClosedError,
    RemoteProtocolError,
    RequestTimeoutError,
    RPCError,
)
from mcpkit.types import ProgressNotificationParams

pytestmark = pytest.mark.anyio


class RawPeer:
    """The far end of a channel, speaking JSON by hand."""

    def __init__(self, channel: MemoryChannel) -> None:
        self.channel = channel

    async def send(self, **members: Any) -> None:
        await self.channel.send(json.dumps({"jsonrpc": "2.0", **members}).encode())

    async def send_bytes(self, data: bytes) -> None:
        await self.channel.send(data)

    async def receive(self, timeout: float = 5) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            data = await self.channel.receive()
        assert isinstance(data, bytes)
        decoded: dict[str, Any] = json.loads(data)
        return decoded

    async def request_reply(self, rid: Any, method: str = "ping") -> dict[str, Any]:
        await self.send(id=rid, method=method)
        return await self.receive()

    async def assert_silent(self) -> None:
        """Nothing more is sent: proven by a ping answered right after (ordering)."""
        await self.send(id="__probe__", method="ping")
        reply = await self.receive()
        assert reply.get("id") == "__probe__", reply


async def echo_handler(request: InboundRequest) -> Any:
    if request.method == "ping":
        return {}
    if request.method == "echo":
        return json.loads(bytes(request.params)) if request.params is not None else {}
    if request.method == "fail":
        raise ValueError("secret internal detail")
    if request.method == "rpc-error":
        raise RPCError(-32042, "custom", {"x": 1})
    if request.method == "nan":
        return {"value": float("nan")}
    if request.method == "sleep":
        await anyio.sleep_forever()
    raise RPCError.method_not_found(request.method)


@asynccontextmanager
async def endpoint_and_peer(**options: Any) -> AsyncIterator[tuple[Endpoint, RawPeer]]:
    mine, theirs = memory_channel_pair()
    options.setdefault("on_request", echo_handler)
    try:
        async with Endpoint(mine, **options) as endpoint:
            yield endpoint, RawPeer(theirs)
    finally:
        await theirs.aclose()


async def test_requests_are_answered_with_same_id() -> None:
    async with endpoint_and_peer() as (_, peer):
        for rid in (1, "1", 2**64, 10**30, ""):
            await peer.send(id=rid, method="echo", params={"v": rid})
            reply = await peer.receive()
            assert reply == {"jsonrpc": "2.0", "id": rid, "result": {"v": rid}}


async def test_handler_exception_is_internal_error_without_details() -> None:
    async with endpoint_and_peer() as (_, peer):
        await peer.send(id=1, method="fail")
        reply = await peer.receive()
        assert reply["error"] == {"code": -32603, "message": "Internal error"}
        assert "secret" not in json.dumps(reply)
        await peer.assert_silent()


async def test_rpc_error_is_sent_verbatim() -> None:
    async with endpoint_and_peer() as (_, peer):
        await peer.send(id=1, method="rpc-error")
        assert (await peer.receive())["error"] == {
            "code": -32042,
            "message": "custom",
            "data": {"x": 1},
        }


async def test_unencodable_result_becomes_internal_error_and_connection_survives() -> None:
    async with endpoint_and_peer() as (_, peer):
        await peer.send(id=1, method="nan")
        reply = await peer.receive()
        assert reply["id"] == 1
        assert reply["error"]["code"] == -32603
        await peer.send(id=2, method="echo", params={"ok": True})
        assert (await peer.receive())["result"] == {"ok": True}


async def test_no_handler_means_method_not_found() -> None:
    async with endpoint_and_peer(on_request=None) as (_, peer):
        await peer.send(id=1, method="anything")
        assert (await peer.receive())["error"]["code"] == -32601


async def test_parse_error_then_reading_goes_on() -> None:
    async with endpoint_and_peer() as (_, peer):
        await peer.send_bytes(b"{not json")
        assert (await peer.receive())["error"]["code"] == -32700
        await peer.send(id=3, method="ping")
        assert (await peer.receive()) == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_invalid_notification_is_never_answered() -> None:
    async with endpoint_and_peer() as (_, peer):
        await peer.send(method="x", params=[1])
        await peer.send(method="notifications/whatever")
        await peer.assert_silent()


async def test_duplicate_in_flight_id_refused_first_still_cancellable() -> None:
    async with endpoint_and_peer() as (_, peer):
        await peer.send(id=1, method="sleep")
        await peer.send(id=1, method="ping")
        reply = await peer.receive()
        assert reply["id"] == 1
        assert reply["error"]["code"] == -32600
        await peer.send(method="notifications/cancelled", params={"requestId": 1})
        await peer.assert_silent()
        # The id is free again once the cancelled handler has finished.
        with anyio.fail_after(5):
            while True:
                await peer.send(id=1, method="ping")
                reply = await peer.receive()
                if "result" in reply:
                    break


async def test_peer_cancel_stops_handler_and_sends_nothing() -> None:
    stopped = anyio.Event()

    async def handler(request: InboundRequest) -> Any:
        if request.method == "ping":
            return {}
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()

    async with endpoint_and_peer(on_request=handler) as (_, peer):
        await peer.send(id="a", method="slow")
        await peer.send(
            method="notifications/cancelled", params={"requestId": "a", "reason": "user"}
        )
        with anyio.fail_after(5):
            await stopped.wait()
        await peer.assert_silent()


async def test_cancel_right_behind_the_request_frees_the_id() -> None:
    """Requests cancelled right after they were sent all end, and their ids become free.

    (Over stdio the cancel can even be processed before the handler's first step; the
    end-to-end test test_cancel_stops_the_tool_and_no_response_is_sent covers that.)
    """
    async with endpoint_and_peer() as (_, peer):
        ids = [f"x{i}" for i in range(20)]
        for rid in ids:
            await peer.send(id=rid, method="sleep")
            await peer.send(method="notifications/cancelled", params={"requestId": rid})
        with anyio.fail_after(5):
            for rid in ids:
                # Until its handler has unwound, reusing an id is refused (-32600).
                while "result" not in (reply := await peer.request_reply(rid)):
                    assert reply["error"]["code"] == -32600


async def test_handler_cap_answers_busy() -> None:
    async with endpoint_and_peer(max_in_flight=2) as (_, peer):
        await peer.send(id=1, method="sleep")
        await peer.send(id=2, method="sleep")
        await peer.send(id=3, method="sleep")
        reply = await peer.receive()
        assert reply["id"] == 3
        assert reply["error"]["code"] == -32000
        assert reply["error"]["data"] == {"maxInFlight": 2}


async def test_progress_from_handler_only_while_in_flight() -> None:
    proceed = anyio.Event()
    leaked: list[bool] = []

    async def handler(request: InboundRequest) -> Any:
        assert await request.report_progress(1, 2, "half")
        await proceed.wait()
        return {"done": True}

    async with endpoint_and_peer(on_request=handler) as (_, peer):
        await peer.send(id=1, method="work", params={"_meta": {"progressToken": "p"}})
        note = await peer.receive()
        assert note == {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p", "progress": 1, "total": 2, "message": "half"},
        }
        proceed.set()
        assert (await peer.receive())["result"] == {"done": True}
    assert leaked == []


# -- outbound requests ------------------------------------------------------------------


async def test_request_and_response_between_two_endpoints() -> None:
    a, b = memory_channel_pair()
    async with Endpoint(a) as client, Endpoint(b, on_request=echo_handler):
        raw = await client.request("echo", {"k": [1, 2]})
        assert json.loads(bytes(raw)) == {"k": [1, 2]}
        with pytest.raises(RPCError) as info:
            await client.request("rpc-error")
        assert info.value.code == -32042
        assert info.value.data == {"x": 1}


async def test_invalid_response_fails_the_call() -> None:
    async with endpoint_and_peer() as (endpoint, peer):
        async with anyio.create_task_group() as tg:
            outcome: list[BaseException] = []

            async def call() -> None:
                try:
                    await endpoint.request("x", timeout=5)
                except RemoteProtocolError as exc:
                    outcome.append(exc)

            tg.start_soon(call)
            request = await peer.receive()
            await peer.send(id=request["id"], result=[1])
        assert len(outcome) == 1


async def test_timeout_sends_cancel_and_drops_late_response() -> None:
    async with endpoint_and_peer() as (endpoint, peer):
        with pytest.raises(RequestTimeoutError):
            await endpoint.request("slow", timeout=0.05)
        request = await peer.receive()
        cancel = await peer.receive()
        assert cancel == {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request["id"], "reason": "timed out"},
        }
        # The late answer is dropped, and the connection keeps working.
        await peer.send(id=request["id"], result={"late": True})
        async with anyio.create_task_group() as tg:
            got: list[Raw] = []

            async def call() -> None:
                got.append(await endpoint.request("ping", timeout=5))

            tg.start_soon(call)
            ping = await peer.receive()
            assert ping["id"] != request["id"]
            await peer.send(id=ping["id"], result={})
        assert json.loads(bytes(got[0])) == {}


async def test_progress_extends_timeout_but_not_past_the_maximum() -> None:
    seen: list[float] = []

    async with endpoint_and_peer() as (endpoint, peer):

        async def keep_reporting() -> None:
            request = await peer.receive()
            token = request["params"]["_meta"]["progressToken"]
            value = 0
            while True:
                value += 1
                await peer.send(
                    method="notifications/progress",
                    params={"progressToken": token, "progress": value},
                )
                await anyio.sleep(0.02)

        async with anyio.create_task_group() as tg:
            tg.start_soon(keep_reporting)
            start = anyio.current_time()
            with pytest.raises(RequestTimeoutError):
                await endpoint.request(
                    "slow",
                    timeout=0.1,
                    max_timeout=0.4,
                    on_progress=lambda p: seen.append(p.progress),
                )
            elapsed = anyio.current_time() - start
            tg.cancel_scope.cancel()
    # Progress every 20 ms kept the 100 ms inactivity timeout from firing...
    assert elapsed >= 0.35
    # ...but the absolute maximum still ended the wait.
    assert elapsed < 2.0
    assert seen == sorted(seen)
    assert len(seen) >= 5


async def test_progress_callback_sees_early_progress_in_order() -> None:
    seen: list[float] = []

    async def record(p: ProgressNotificationParams) -> None:
        seen.append(p.progress)

    async with endpoint_and_peer() as (endpoint, peer), anyio.create_task_group() as tg:

        async def serve() -> None:
            request = await peer.receive()
            token = request["params"]["_meta"]["progressToken"]
            for value in (1, 2, 3):
                await peer.send(
                    method="notifications/progress",
                    params={"progressToken": token, "progress": value},
                )
            await peer.send(id=request["id"], result={})

        tg.start_soon(serve)
        await endpoint.request("work", {}, timeout=5, on_progress=record)
    assert seen == [1, 2, 3]


async def test_caller_cancellation_sends_cancel() -> None:
    async with endpoint_and_peer() as (endpoint, peer):
        with anyio.move_on_after(0.05):
            await endpoint.request("slow")
        request = await peer.receive()
        cancel = await peer.receive()
        assert cancel["method"] == "notifications/cancelled"
        assert cancel["params"]["requestId"] == request["id"]


async def test_close_fails_pending_calls_promptly() -> None:
    mine, theirs = memory_channel_pair()
    errors: list[BaseException] = []
    async with Endpoint(mine) as endpoint:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                try:
                    await endpoint.request("slow")
                except ConnectionClosedError as exc:
                    errors.append(exc)

            for _ in range(3):
                tg.start_soon(call)
            for _ in range(3):
                await theirs.receive()
            with anyio.fail_after(5):
                await theirs.aclose()
        assert endpoint.closed
        with pytest.raises(ConnectionClosedError):
            await endpoint.request("after")
    assert len(errors) == 3


async def test_run_returns_when_peer_closes() -> None:
    mine, theirs = memory_channel_pair()
    endpoint = Endpoint(mine, on_request=echo_handler)
    async with anyio.create_task_group() as tg:
        tg.start_soon(endpoint.run)
        peer = RawPeer(theirs)
        await peer.send(id=1, method="ping")
        assert (await peer.receive())["result"] == {}
        await theirs.aclose()
        with anyio.fail_after(5):
            await endpoint.wait_closed()


async def test_max_in_flight_must_be_positive() -> None:
    mine, theirs = memory_channel_pair()
    with pytest.raises(ValueError):
        Endpoint(mine, max_in_flight=0)
    await mine.aclose()
    await theirs.aclose()
