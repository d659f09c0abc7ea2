"""The endpoint's bounds around writing: a request whose send never completes still ends at
its deadline, and a peer reusing an id whose answer is still being written is refused
without disturbing the first handler (run on asyncio and trio)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcpkit.aio import Endpoint, InboundRequest, memory_channel_pair
from mcpkit.exceptions import RequestTimeoutError

pytestmark = pytest.mark.anyio


async def _never_called(request: InboundRequest) -> Any:
    raise AssertionError(f"unexpected request {request.method}")


@pytest.mark.parametrize(
    ("timeout", "max_timeout"),
    [(0.05, None), (None, 0.05), (0.05, 10.0), (10.0, 0.05)],
    ids=["timeout", "max-timeout", "timeout-first", "max-first"],
)
async def test_a_send_the_peer_never_reads_ends_at_the_deadline(
    timeout: float | None, max_timeout: float | None
) -> None:
    # No buffer: the send waits until the peer reads, and this peer does not read.
    mine, theirs = memory_channel_pair(max_buffer=0)
    async with Endpoint(mine, on_request=_never_called) as endpoint:
        with anyio.fail_after(5):
            with pytest.raises(RequestTimeoutError):
                await endpoint.request("acme/op", {}, timeout=timeout, max_timeout=max_timeout)
        # The request never reached the peer, so no cancellation follows it: the next
        # thing the peer reads is the next request, and the connection works.
        async with anyio.create_task_group() as tg:
            results: list[Any] = []

            async def call() -> None:
                results.append(json.loads(bytes(await endpoint.request("ping", timeout=5))))

            tg.start_soon(call)
            with anyio.fail_after(5):
                message = json.loads(await theirs.receive())
            assert message["method"] == "ping", message
            await theirs.send(
                json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode()
            )
        assert results == [{}]
        assert endpoint.connection.pending_ids == []
    await theirs.aclose()


async def test_caller_cancelling_a_blocked_send_sends_no_cancellation() -> None:
    mine, theirs = memory_channel_pair(max_buffer=0)
    async with Endpoint(mine, on_request=_never_called) as endpoint:
        with anyio.move_on_after(0.05) as scope:
            await endpoint.request("acme/op", {})
        assert scope.cancelled_caught
        assert endpoint.connection.pending_ids == []
        async with anyio.create_task_group() as tg:
            tg.start_soon(endpoint.notify, "notifications/acme", {"n": 1})
            with anyio.fail_after(5):
                message = json.loads(await theirs.receive())
        assert message == {"jsonrpc": "2.0", "method": "notifications/acme", "params": {"n": 1}}
    await theirs.aclose()


async def test_reusing_an_id_whose_answer_is_still_being_written_is_refused() -> None:
    answered = anyio.Event()
    started: list[str] = []

    async def handler(request: InboundRequest) -> Any:
        started.append(request.method)
        if request.method == "acme/quick":
            # The answer is encoded right after this returns, with no checkpoint between;
            # sending it then waits, since the peer is not reading yet.
            answered.set()
            return {"quick": True}
        if request.method == "ping":
            return {}
        await anyio.sleep_forever()

    mine, theirs = memory_channel_pair(max_buffer=0)
    async with Endpoint(mine, on_request=handler) as endpoint:
        with anyio.fail_after(5):
            await theirs.send(b'{"jsonrpc":"2.0","id":1,"method":"acme/quick"}')
            await answered.wait()
            await theirs.send(b'{"jsonrpc":"2.0","id":1,"method":"acme/forever"}')
            replies = [json.loads(await theirs.receive()) for _ in range(2)]
        replies.sort(key=lambda reply: "error" in reply)
        assert replies[0] == {"jsonrpc": "2.0", "id": 1, "result": {"quick": True}}
        assert replies[1]["id"] == 1
        assert replies[1]["error"]["code"] == -32600
        assert "already in flight" in replies[1]["error"]["message"]
        assert started == ["acme/quick"]  # the second handler never ran
        # The connection goes on working.
        with anyio.fail_after(5):
            await theirs.send(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
            reply = json.loads(await theirs.receive())
        assert reply == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert endpoint.connection.in_flight_ids == []
    await theirs.aclose()
