"""The sans-I/O connection: ids, pending and in-flight tables, progress and cancellation.

No event loop: bytes in, events out; calls in, bytes out.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpkit.exceptions import LocalProtocolError
from mcpkit.protocol import (
    CancelReceived,
    Connection,
    ErrorReceived,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseInvalid,
    ResponseReceived,
)
from mcpkit.types import CallToolRequestParams


def msg(**members: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **members}).encode()


def reply_of(event: object) -> dict[str, Any]:
    assert isinstance(event, MessageRejected)
    assert event.reply is not None
    decoded: dict[str, Any] = json.loads(event.reply)
    return decoded


# -- inbound requests -------------------------------------------------------------------


def test_request_becomes_in_flight_until_answered() -> None:
    conn = Connection()
    event = conn.receive_message(msg(id=7, method="ping"))
    assert event == RequestReceived(7, "ping", None, None)
    assert conn.is_in_flight(7)
    data = conn.send_result(7, {})
    assert data is not None
    assert json.loads(data) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert not conn.is_in_flight(7)


@pytest.mark.parametrize("rid", [1, "1", 2**64, 10**30, "x" * 100])
def test_duplicate_in_flight_id_is_refused_and_first_survives(rid: int | str) -> None:
    conn = Connection()
    assert isinstance(conn.receive_message(msg(id=rid, method="tools/call")), RequestReceived)
    second = reply_of(conn.receive_message(msg(id=rid, method="ping")))
    assert second["id"] == rid
    assert second["error"]["code"] == -32600
    # The first is still in flight, answerable and cancellable.
    assert conn.is_in_flight(rid)
    event = conn.receive_message(msg(method="notifications/cancelled", params={"requestId": rid}))
    assert event == CancelReceived(rid, None)


def test_same_value_different_type_is_not_a_duplicate() -> None:
    conn = Connection()
    assert isinstance(conn.receive_message(msg(id=1, method="ping")), RequestReceived)
    assert isinstance(conn.receive_message(msg(id="1", method="ping")), RequestReceived)
    assert json.loads(conn.send_result("1", {}) or b"")["id"] == "1"
    assert json.loads(conn.send_result(1, {}) or b"")["id"] == 1


def test_id_can_be_reused_after_answer() -> None:
    conn = Connection()
    conn.receive_message(msg(id=1, method="ping"))
    conn.send_result(1, {})
    assert isinstance(conn.receive_message(msg(id=1, method="ping")), RequestReceived)


@pytest.mark.parametrize("method", ["rpc.discover", "rpc.", "rpc.anything/else"])
def test_rpc_methods_are_never_dispatched(method: str) -> None:
    reply = reply_of(Connection().receive_message(msg(id=1, method=method)))
    assert reply["error"]["code"] == -32601
    assert reply["id"] == 1


def test_method_names_are_case_sensitive() -> None:
    event = Connection().receive_message(msg(id=1, method="Tools/List"))
    assert isinstance(event, RequestReceived)
    assert event.method == "Tools/List"


def test_answering_twice_is_a_local_error_and_sends_nothing() -> None:
    conn = Connection()
    conn.receive_message(msg(id=1, method="ping"))
    assert conn.send_result(1, {}) is not None
    with pytest.raises(LocalProtocolError):
        conn.send_result(1, {})
    with pytest.raises(LocalProtocolError):
        conn.send_error(1, -32603, "x")


def test_answering_an_unknown_request_is_a_local_error() -> None:
    with pytest.raises(LocalProtocolError):
        Connection().send_result(99, {})


def test_unencodable_result_leaves_request_answerable_with_an_error() -> None:
    conn = Connection()
    conn.receive_message(msg(id=1, method="m"))
    with pytest.raises(LocalProtocolError):
        conn.send_result(1, {"x": float("nan")})
    data = conn.send_error(1, -32603, "Internal error")
    assert data is not None
    assert json.loads(data)["error"]["code"] == -32603


# -- progress tokens --------------------------------------------------------------------


@pytest.mark.parametrize("token", ["tok", 0, 17, 2**70])
def test_progress_token_is_extracted(token: int | str) -> None:
    conn = Connection()
    event = conn.receive_message(
        msg(id=1, method="tools/call", params={"name": "x", "_meta": {"progressToken": token}})
    )
    assert isinstance(event, RequestReceived)
    assert event.progress_token == token


@pytest.mark.parametrize("token", [True, False, 1.5, None, [1], {"a": 1}])
def test_invalid_progress_token_is_invalid_params(token: Any) -> None:
    reply = reply_of(
        Connection().receive_message(
            msg(id=1, method="m", params={"_meta": {"progressToken": token}})
        )
    )
    assert reply["error"]["code"] == -32602
    assert reply["id"] == 1


def test_meta_must_be_an_object() -> None:
    reply = reply_of(
        Connection().receive_message(msg(id=1, method="m", params={"_meta": 5, "progressToken": 1}))
    )
    assert reply["error"]["code"] == -32602


def test_progress_sent_only_while_in_flight_and_increasing() -> None:
    conn = Connection()
    conn.receive_message(msg(id=1, method="m", params={"_meta": {"progressToken": "t"}}))
    first = conn.send_progress(1, 1, 10, "one")
    assert first is not None
    assert json.loads(first)["params"] == {
        "progressToken": "t",
        "progress": 1,
        "total": 10,
        "message": "one",
    }
    with pytest.raises(LocalProtocolError):
        conn.send_progress(1, 1)
    with pytest.raises(LocalProtocolError):
        conn.send_progress(1, 0.5)
    assert conn.send_progress(1, 2.5) is not None
    conn.send_result(1, {})
    # Never progress after the response.
    assert conn.send_progress(1, 3) is None


def test_no_progress_without_token() -> None:
    conn = Connection()
    conn.receive_message(msg(id=1, method="m"))
    assert conn.send_progress(1, 1) is None


# -- outbound requests ------------------------------------------------------------------


def test_outbound_ids_are_unique_and_never_reused() -> None:
    conn = Connection()
    ids = []
    for _ in range(50):
        rid, _ = conn.send_request("ping")
        ids.append(rid)
        conn.receive_message(msg(id=rid, result={}))
    assert len(set(ids)) == 50


def test_response_settles_pending_once() -> None:
    conn = Connection()
    rid, data = conn.send_request("tools/list", {"cursor": "c"})
    assert json.loads(data) == {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/list",
        "params": {"cursor": "c"},
    }
    event = conn.receive_message(msg(id=rid, result={"tools": []}))
    assert isinstance(event, ResponseReceived)
    assert json.loads(bytes(event.result)) == {"tools": []}
    late = conn.receive_message(msg(id=rid, result={}))
    assert isinstance(late, MessageRejected)
    assert late.reply is None


def test_response_with_wrong_id_type_does_not_settle() -> None:
    conn = Connection()
    rid, _ = conn.send_request("ping")
    event = conn.receive_message(msg(id=str(rid), result={}))
    assert isinstance(event, MessageRejected)
    assert event.reply is None
    assert conn.pending_ids == [rid]


def test_error_response_and_both_members() -> None:
    conn = Connection()
    rid, _ = conn.send_request("ping")
    event = conn.receive_message(
        msg(id=rid, result={"ok": 1}, error={"code": -32000, "message": "boom"})
    )
    assert isinstance(event, ErrorReceived)
    assert event.error.code == -32000


@pytest.mark.parametrize(
    "members",
    [{}, {"result": []}, {"result": None}, {"error": {"code": "x", "message": "m"}}],
)
def test_malformed_response_fails_the_pending_call(members: dict[str, Any]) -> None:
    conn = Connection()
    rid, _ = conn.send_request("ping")
    event = conn.receive_message(msg(id=rid, **members))
    assert isinstance(event, ResponseInvalid)
    assert event.request_id == rid
    assert conn.pending_ids == []


def test_unknown_response_is_dropped_and_logged() -> None:
    event = Connection().receive_message(msg(id=42, result={}))
    assert isinstance(event, MessageRejected)
    assert event.reply is None
    assert event.level == "warning"


def test_progress_routing_and_ordering() -> None:
    conn = Connection()
    rid, data = conn.send_request("tools/call", CallToolRequestParams(name="x"), progress=True)
    token = json.loads(data)["params"]["_meta"]["progressToken"]
    assert token == rid
    ev = conn.receive_message(
        msg(method="notifications/progress", params={"progressToken": token, "progress": 1})
    )
    assert isinstance(ev, ProgressReceived)
    assert ev.params.progress == 1
    stale = conn.receive_message(
        msg(method="notifications/progress", params={"progressToken": token, "progress": 1})
    )
    assert isinstance(stale, MessageRejected)
    unknown = conn.receive_message(
        msg(method="notifications/progress", params={"progressToken": "zz", "progress": 5})
    )
    assert isinstance(unknown, MessageRejected)
    conn.receive_message(msg(id=rid, result={"content": []}))
    after = conn.receive_message(
        msg(method="notifications/progress", params={"progressToken": token, "progress": 9})
    )
    assert isinstance(after, MessageRejected)
    assert after.reply is None


def test_progress_token_merges_into_existing_meta_without_mutation() -> None:
    conn = Connection()
    params = {"name": "x", "_meta": {"trace": "abc"}}
    _, data = conn.send_request("tools/call", params, progress=True)
    assert json.loads(data)["params"]["_meta"] == {"trace": "abc", "progressToken": 1}
    assert params == {"name": "x", "_meta": {"trace": "abc"}}
    struct = CallToolRequestParams(name="y", meta={"k": 1})
    _, data = conn.send_request("tools/call", struct, progress=True)
    assert json.loads(data)["params"]["_meta"] == {"k": 1, "progressToken": 2}
    assert struct.meta == {"k": 1}


def test_cancel_emits_notification_and_drops_late_response() -> None:
    conn = Connection()
    rid, _ = conn.send_request("tools/call", {"name": "slow"})
    data = conn.cancel(rid, "timed out")
    assert data is not None
    assert json.loads(data) == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": rid, "reason": "timed out"},
    }
    late = conn.receive_message(msg(id=rid, result={}))
    assert isinstance(late, MessageRejected)
    assert late.level == "debug"
    # Cancelling again (or after completion) yields nothing.
    assert conn.cancel(rid) is None


def test_cancel_after_response_is_a_no_op() -> None:
    conn = Connection()
    rid, _ = conn.send_request("ping")
    conn.receive_message(msg(id=rid, result={}))
    assert conn.cancel(rid) is None


def test_initialize_is_never_cancelled_on_the_wire() -> None:
    conn = Connection()
    rid, _ = conn.send_request("initialize", {})
    assert conn.cancel(rid) is None
    assert conn.pending_ids == []


# -- inbound cancellation ---------------------------------------------------------------


def test_inbound_cancel_suppresses_the_response() -> None:
    conn = Connection()
    conn.receive_message(msg(id=5, method="tools/call"))
    event = conn.receive_message(
        msg(method="notifications/cancelled", params={"requestId": 5, "reason": "bye"})
    )
    assert event == CancelReceived(5, "bye")
    assert not conn.is_in_flight(5)
    # A result racing the cancel is not sent: exactly one outcome (none) on the wire.
    assert conn.send_result(5, {}) is None
    assert conn.in_flight_ids == []


@pytest.mark.parametrize(
    "params",
    [{"requestId": 99}, {"requestId": "5"}, {}, {"reason": "x"}],
)
def test_cancel_of_unknown_request_is_ignored(params: dict[str, Any]) -> None:
    conn = Connection()
    conn.receive_message(msg(id=5, method="tools/call"))
    event = conn.receive_message(msg(method="notifications/cancelled", params=params))
    assert isinstance(event, MessageRejected)
    assert event.reply is None
    assert conn.is_in_flight(5)


def test_cancel_of_completed_request_is_ignored() -> None:
    conn = Connection()
    conn.receive_message(msg(id=5, method="tools/call"))
    conn.send_result(5, {})
    event = conn.receive_message(msg(method="notifications/cancelled", params={"requestId": 5}))
    assert isinstance(event, MessageRejected)
    assert event.level == "debug"


def test_initialize_cannot_be_cancelled() -> None:
    conn = Connection()
    conn.receive_message(msg(id=1, method="initialize", params={}))
    event = conn.receive_message(msg(method="notifications/cancelled", params={"requestId": 1}))
    assert isinstance(event, MessageRejected)
    assert conn.is_in_flight(1)


def test_invalid_cancel_params_are_dropped() -> None:
    event = Connection().receive_message(
        msg(method="notifications/cancelled", params={"requestId": 1.5})
    )
    assert isinstance(event, MessageRejected)
    assert event.reply is None


def test_other_notifications_pass_through() -> None:
    event = Connection().receive_message(msg(method="notifications/roots/list_changed"))
    assert event == NotificationReceived("notifications/roots/list_changed", None)


def test_oversized_frame_answered_with_parse_error() -> None:
    reply = reply_of(Connection().receive_oversized(1024))
    assert reply == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32700,
            "message": "Parse error: message exceeds the limit of 1024 bytes",
        },
    }


@pytest.mark.parametrize(
    ("data", "shown"),
    [
        (b"some log line from print()", "'some log line from print()'"),
        (b'{"partial": ', "'{\"partial\": '"),
        (b"\xff\xfeA", "'\ufffd\ufffdA'"),  # invalid UTF-8: replaced, never raised
        (b"x" * 500, repr("x" * 60)[:-1]),  # cut: the start identifies it
        (b"\x1b[31mred\r\nforged", "'\\x1b[31mred\\r\\nforged'"),  # escaped: one log line
    ],
)
def test_unparsable_message_is_logged_with_its_start_and_answered_without(
    data: bytes, shown: str
) -> None:
    event = Connection().receive_message(data)
    assert isinstance(event, MessageRejected)
    assert event.reason.startswith("Parse error: ")
    assert f"; the message began {shown}" in event.reason
    assert "\n" not in event.reason
    assert "\r" not in event.reason
    # The answer to the peer is the plain parse error, without its own bytes.
    assert event.reply is not None
    reply = json.loads(event.reply)
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700
    assert "began" not in reply["error"]["message"]
