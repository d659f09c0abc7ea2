"""Exactly one response per request: a handler that fails after its request was already
answered is logged locally, and nothing more goes out for that id."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest

from mcpkit.aio import Endpoint, InboundRequest, memory_channel_pair

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("failure", ["exception", "result"])
async def test_a_handler_failing_after_its_answer_sends_nothing_more(
    failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def handler(request: InboundRequest) -> Any:
        if request.method == "ping":
            return {}
        # The handler answers on its own through the connection...
        data = request.endpoint.connection.send_result(request.id, {"early": True})
        assert data is not None
        await request.endpoint.send_raw(data)
        # ...and then fails, or returns a second result.
        if failure == "exception":
            raise RuntimeError("after the answer")
        return {"late": True}

    mine, theirs = memory_channel_pair()
    caplog.set_level(logging.ERROR, logger="mcpkit.aio")
    async with Endpoint(mine, on_request=handler) as endpoint:
        with anyio.fail_after(5):
            await theirs.send(b'{"jsonrpc":"2.0","id":7,"method":"acme/op"}')
            first = json.loads(await theirs.receive())
            # Ordering proves silence: the next thing on the wire answers the probe.
            await theirs.send(b'{"jsonrpc":"2.0","id":"probe","method":"ping"}')
            second = json.loads(await theirs.receive())
        assert first == {"jsonrpc": "2.0", "id": 7, "result": {"early": True}}
        assert second == {"jsonrpc": "2.0", "id": "probe", "result": {}}
        assert endpoint.connection.in_flight_ids == []
    await theirs.aclose()
    assert any("already answered" in record.getMessage() for record in caplog.records)
