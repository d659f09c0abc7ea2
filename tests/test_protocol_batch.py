"""JSON-RPC batches: accepted only when 2025-03-26 is negotiated (sans-I/O, table-driven)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpkit.protocol import (
    BatchReceived,
    Connection,
    Limits,
    MessageRejected,
    NotificationReceived,
    RequestReceived,
)


def batching(limits: Limits | None = None) -> Connection:
    conn = Connection(limits=limits) if limits else Connection()
    conn.allow_batches = True
    return conn


def req(rid: Any, method: str = "ping", **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, **extra}


def note(method: str = "notifications/roots/list_changed") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method}


def receive(conn: Connection, members: Any) -> Any:
    return conn.receive_message(json.dumps(members).encode())


def test_refused_unless_negotiated() -> None:
    event = receive(Connection(), [req(1)])
    assert isinstance(event, MessageRejected)
    assert event.reply is not None
    assert json.loads(event.reply)["error"]["code"] == -32600


def test_requests_are_answered_in_one_array() -> None:
    conn = batching()
    event = receive(conn, [req(1), note(), req("b", "tools/list")])
    assert isinstance(event, BatchReceived)
    assert event.reply is None
    kinds = [type(e) for e in event.events]
    assert kinds == [RequestReceived, NotificationReceived, RequestReceived]
    assert conn.send_result(1, {}) is None  # one still pending
    data = conn.send_result("b", {"tools": []})
    assert data is not None
    assert sorted(json.loads(data), key=lambda r: str(r["id"])) == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": "b", "result": {"tools": []}},
    ]


def test_notification_only_batch_gets_no_reply() -> None:
    event = receive(batching(), [note(), note("acme/x")])
    assert isinstance(event, BatchReceived)
    assert event.reply is None
    assert len(event.events) == 2


@pytest.mark.parametrize(
    ("batch", "codes"),
    [
        pytest.param([{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}], [-32600], id="bad id"),
        pytest.param([1, "x"], [-32600, -32600], id="not objects"),
        pytest.param([req(1, params=[1])], [-32602], id="array params"),
        pytest.param([[req(1)]], [-32600], id="nested batch"),
        pytest.param(
            [req(1, "initialize", params={"protocolVersion": "2025-03-26"})],
            [-32600],
            id="initialize",
        ),
        pytest.param([req(1), req(1)], [-32600], id="duplicate id in batch"),
    ],
)
def test_invalid_elements_are_answered_inside_the_array(batch: list[Any], codes: list[int]) -> None:
    conn = batching()
    event = receive(conn, batch)
    assert isinstance(event, BatchReceived)
    pending = [e.request_id for e in event.events if isinstance(e, RequestReceived)]
    reply = event.reply
    for rid in pending:
        reply = conn.send_result(rid, {})
    assert reply is not None
    errors = [r["error"]["code"] for r in json.loads(reply) if "error" in r]
    assert errors == codes


@pytest.mark.parametrize(
    ("data", "code"),
    [
        pytest.param(b"[]", -32600, id="empty"),
        pytest.param(b"[{]", -32700, id="malformed"),
    ],
)
def test_whole_batch_errors_are_single_responses(data: bytes, code: int) -> None:
    event = batching().receive_message(data)
    assert isinstance(event, MessageRejected)
    assert event.reply is not None
    assert json.loads(event.reply)["error"]["code"] == code


def test_batch_length_cap() -> None:
    conn = batching(Limits(max_batch=3))
    assert isinstance(receive(conn, [note()] * 3), BatchReceived)
    event = receive(conn, [note()] * 4)
    assert isinstance(event, MessageRejected)
    assert event.reply is not None
    assert json.loads(event.reply)["error"]["code"] == -32600


def test_cancelled_request_is_left_out_and_last_cancel_releases_the_array() -> None:
    conn = batching()
    event = receive(conn, [req(1), req(2)])
    assert isinstance(event, BatchReceived)
    assert conn.send_result(1, {}) is None
    cancel = receive(
        conn, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    )
    assert cancel.request_id == 2
    data = conn.discard(2)
    assert data is not None
    assert json.loads(data) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_all_cancelled_sends_nothing() -> None:
    conn = batching()
    receive(conn, [req(1)])
    receive(
        conn, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    )
    assert conn.send_result(1, {}) is None


def test_errors_join_the_array() -> None:
    conn = batching()
    receive(conn, [req(1), req(2)])
    assert conn.send_error(1, -32601, "nope") is None
    data = conn.send_result(2, {})
    assert data is not None
    assert {r["id"]: ("error" in r) for r in json.loads(data)} == {1: True, 2: False}


@pytest.mark.parametrize("size", [4097, 5000, 100_000])
def test_a_batch_over_the_message_limit_is_refused_whole(size: int) -> None:
    """-32700, as for one message over the limit (a batch over it recursed until
    RecursionError, which ended the connection)."""
    conn = batching(Limits(max_message_bytes=4096))
    padding = "x" * size
    data = json.dumps([req(1, params={"pad": padding}), req(2)]).encode()
    event = conn.receive_message(data)
    assert isinstance(event, MessageRejected)
    assert event.reply is not None
    reply = json.loads(event.reply)
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700
    assert "exceeds the limit of 4096 bytes" in reply["error"]["message"]
    # The connection goes on: the next batch is served.
    assert isinstance(conn.receive_message(json.dumps([req(3)]).encode()), BatchReceived)


def test_an_answered_id_is_in_flight_until_its_batch_is_answered() -> None:
    """Its answer waits for the batch's array: for the peer the id is unanswered, so a
    request reusing it is refused (it was accepted: two responses with that id)."""
    conn = batching()
    assert isinstance(receive(conn, [req(1), req(2)]), BatchReceived)
    assert conn.send_result(2, {}) is None  # held for the array
    refused = conn.receive_message(json.dumps(req(2)).encode())
    assert isinstance(refused, MessageRejected)
    assert refused.reply is not None
    assert json.loads(refused.reply)["id"] == 2
    assert json.loads(refused.reply)["error"]["code"] == -32600
    array = conn.send_result(1, {})
    assert array is not None
    assert sorted(m["id"] for m in json.loads(array)) == [1, 2]
    # Answered on the wire now: the id may be used again.
    assert isinstance(conn.receive_message(json.dumps(req(2)).encode()), RequestReceived)
