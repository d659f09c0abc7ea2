"""Property tests (hypothesis) for the codec and the connection state machine."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from mcpkit.exceptions import LocalProtocolError
from mcpkit.protocol import (
    CancelReceived,
    Connection,
    DecodedResponse,
    DecodeFailure,
    Event,
    LineBuffer,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    decode_message,
    encode_notification,
    encode_request,
    encode_result,
)

ids = st.one_of(st.integers(min_value=-(2**80), max_value=2**80), st.text(max_size=20))
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
methods = st.text(min_size=1, max_size=30).filter(lambda m: not m.startswith("rpc."))


@given(st.binary(max_size=300))
@settings(max_examples=500)
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    result = decode_message(data)
    assert isinstance(
        result, (RequestReceived, NotificationReceived, DecodedResponse, DecodeFailure)
    )


@given(st.binary(max_size=200))
@settings(max_examples=300)
def test_arbitrary_bytes_into_a_connection_never_raise(data: bytes) -> None:
    conn = Connection()
    event = conn.receive_message(data)
    if isinstance(event, MessageRejected) and event.reply is not None:
        reply = json.loads(event.reply)
        assert reply["jsonrpc"] == "2.0"
        assert isinstance(reply["error"]["code"], int)


@given(json_values)
@settings(max_examples=300)
def test_arbitrary_json_values_never_raise(value: Any) -> None:
    decode_message(json.dumps(value).encode())


@given(ids, methods, objects)
def test_request_round_trip(rid: int | str, method: str, params: dict[str, Any]) -> None:
    decoded = decode_message(encode_request(rid, method, params))
    assert isinstance(decoded, RequestReceived)
    assert decoded.request_id == rid
    assert type(decoded.request_id) is type(rid)
    assert decoded.method == method
    assert decoded.params is not None
    assert json.loads(bytes(decoded.params)) == params


@given(methods, objects)
def test_notification_round_trip(method: str, params: dict[str, Any]) -> None:
    decoded = decode_message(encode_notification(method, params))
    assert isinstance(decoded, NotificationReceived)
    assert decoded.method == method


whitespace = st.sampled_from(["", " ", "  ", "\n", "\t", "\r\n  "])
#: Method and string ids with spaces (which can hide length differences) and escapes.
spaced_text = st.text(alphabet=st.sampled_from(' ab/"\\é'), max_size=12)


@st.composite
def formatted_requests(draw: st.DrawFn) -> tuple[bytes, Any, str, bool]:
    """A request in any formatting, perhaps with one envelope member written twice;
    returns the bytes, the id, the method and whether a member is duplicated."""
    rid = draw(st.one_of(st.integers(min_value=-(2**70), max_value=2**70), spaced_text))
    method = draw(spaced_text.filter(lambda m: not m.startswith("rpc.")))
    members = [("jsonrpc", '"2.0"'), ("id", json.dumps(rid)), ("method", json.dumps(method))]
    if draw(st.booleans()):
        params = draw(objects)
        members.append(("params", json.dumps(params, indent=draw(st.sampled_from([None, 1])))))
    members = draw(st.permutations(members))
    duplicate = draw(st.booleans())
    if duplicate:
        name, _ = draw(st.sampled_from(members))
        value = {
            "jsonrpc": '"2.0"',
            "id": json.dumps(draw(ids)),
            "method": json.dumps(draw(spaced_text)),
            "params": "{}",
        }[name]
        members.insert(draw(st.integers(0, len(members))), (name, value))
    parts = [
        draw(whitespace) + json.dumps(k) + draw(whitespace) + ":" + draw(whitespace) + v
        for k, v in members
    ]
    text = "{" + ",".join(p + draw(whitespace) for p in parts) + "}"
    return text.encode(), rid, method, duplicate


@given(formatted_requests())
@settings(max_examples=400)
def test_any_formatting_classifies_exactly(case: tuple[bytes, Any, str, bool]) -> None:
    data, rid, method, duplicate = case
    decoded = decode_message(data)
    if duplicate:
        assert isinstance(decoded, DecodeFailure)
        assert decoded.error.code == -32600
        assert decoded.id is None
    else:
        assert isinstance(decoded, RequestReceived)
        assert (decoded.request_id, decoded.method) == (rid, method)
        assert type(decoded.request_id) is type(rid)


@st.composite
def nearly_compact_requests(draw: st.DrawFn) -> tuple[bytes, int, bool]:
    """A request with params last, a few bytes longer than compact (``json.dumps``
    separators, or one space before params' value), perhaps with a short member written
    twice: what the fast path's slack proof must classify exactly."""
    rid = draw(st.integers(min_value=0, max_value=10**20))
    comma, colon = draw(st.sampled_from([(", ", ": "), (",", ": "), (", ", ":"), (",", ":")]))
    members = [("jsonrpc", '"2.0"'), ("id", json.dumps(rid)), ("method", '"m"')]
    members = draw(st.permutations(members))
    duplicate = draw(st.booleans())
    if duplicate:
        name, value = draw(st.sampled_from([("id", "0"), ("id", "7"), ("method", '""')]))
        members.insert(draw(st.integers(0, len(members))), (name, value))
    params = json.dumps(draw(objects), separators=(comma, colon))
    parts = [f'"{name}"{colon}{value}' for name, value in members]
    parts.append(f'"params"{draw(st.sampled_from([colon, ": "]))}{params}')
    return ("{" + comma.join(parts) + "}").encode(), rid, duplicate


@given(nearly_compact_requests())
@settings(max_examples=300)
def test_nearly_compact_requests_classify_exactly(case: tuple[bytes, int, bool]) -> None:
    data, rid, duplicate = case
    decoded = decode_message(data)
    if duplicate:
        assert isinstance(decoded, DecodeFailure)
        assert (decoded.error.code, decoded.id) == (-32600, None)
    else:
        assert isinstance(decoded, RequestReceived)
        assert (decoded.request_id, decoded.method) == (rid, "m")


@given(ids, objects)
def test_result_round_trip(rid: int | str, result: dict[str, Any]) -> None:
    decoded = decode_message(encode_result(rid, result))
    assert isinstance(decoded, DecodedResponse)
    assert decoded.id == rid
    assert type(decoded.id) is type(rid)
    assert decoded.result is not None
    assert json.loads(bytes(decoded.result)) == result


any_floats_values = st.recursive(
    st.one_of(json_scalars, st.floats(), st.sampled_from(["\u02c0", "null"])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


@given(any_floats_values, st.sampled_from([0, 500, 3000, 9000]))
@settings(max_examples=400)
def test_non_finite_floats_are_refused_at_every_size(value: Any, padding: int) -> None:
    """NaN and infinity are refused wherever they are, whichever way the message's size
    has it checked (scan, MessagePack proof, walk); everything else encodes unchanged."""
    result = {"pad": "x" * padding, "v": value}
    if _has_non_finite(value):
        try:
            encode_result(1, result)
        except LocalProtocolError:
            return
        raise AssertionError("a non-finite float was encoded")
    assert json.loads(encode_result(1, result))["result"] == result


@given(st.lists(st.binary(max_size=40), max_size=20), st.integers(min_value=1, max_value=50))
def test_framing_reassembles_any_chunking(pieces: list[bytes], limit: int) -> None:
    """However a stream is chunked, the frames are the same as for the whole stream."""
    stream = b"".join(pieces)

    def run(chunks: list[bytes]) -> list[Any]:
        buf = LineBuffer(limit)
        out: list[Any] = []
        for chunk in chunks:
            buf.feed(chunk)
            while (frame := buf.next_frame()) is not None:
                out.append(frame)
        out.append(buf.end_of_input())
        return out

    assert run(pieces) == run([stream])
    assert all(len(f) <= limit for f in run(pieces) if isinstance(f, bytes))


class ConnectionMachine(RuleBasedStateMachine):
    """Drive two connected Connections with random calls; check the invariants."""

    def __init__(self) -> None:
        super().__init__()
        self.client = Connection()
        self.server = Connection()
        self.outstanding: dict[int | str, bool] = {}  # rid -> cancelled by client
        self.answered: set[int | str] = set()
        self.responses_seen: list[int | str] = []

    def _to_client(self, data: bytes | None) -> Event | None:
        if data is None:
            return None
        event = self.client.receive_message(data)
        if isinstance(event, ResponseReceived):
            self.responses_seen.append(event.request_id)
        return event

    @rule(progress=st.booleans())
    def send_request(self, progress: bool) -> None:
        rid, data = self.client.send_request("tools/call", {"name": "x"}, progress=progress)
        event = self.server.receive_message(data)
        assert isinstance(event, RequestReceived)
        assert (event.progress_token is not None) is progress
        self.outstanding[rid] = False

    @rule(data=st.data())
    def answer(self, data: st.DataObject) -> None:
        live = [
            rid
            for rid in self.outstanding
            if self.server.is_in_flight(rid) or self.outstanding[rid]
        ]
        if not live:
            return
        rid = data.draw(st.sampled_from(live))
        cancelled = self.outstanding.pop(rid)
        out = self.server.send_result(rid, {})
        if cancelled:
            assert out is None
        else:
            assert out is not None
            event = self._to_client(out)
            assert isinstance(event, ResponseReceived)
        self.answered.add(rid)

    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        live = [rid for rid, cancelled in self.outstanding.items() if not cancelled]
        if not live:
            return
        rid = data.draw(st.sampled_from(live))
        note = self.client.cancel(rid, "test")
        assert note is not None
        event = self.server.receive_message(note)
        assert isinstance(event, CancelReceived)
        self.outstanding[rid] = True

    @rule(data=st.data(), value=st.floats(min_value=0, max_value=100))
    def progress(self, data: st.DataObject, value: float) -> None:
        live = [rid for rid, cancelled in self.outstanding.items() if not cancelled]
        if not live:
            return
        rid = data.draw(st.sampled_from(live))
        try:
            note = self.server.send_progress(rid, value)
        except LocalProtocolError:
            return  # not increasing: refused locally, nothing sent
        event = self._to_client(note)
        assert event is None or isinstance(event, (ProgressReceived, MessageRejected))

    @rule()
    def answer_unknown_is_refused(self) -> None:
        try:
            self.server.send_result("never-sent", {})
        except LocalProtocolError:
            return
        raise AssertionError("answering an unknown request must fail")

    @invariant()
    def every_response_is_unique(self) -> None:
        assert len(self.responses_seen) == len(set(self.responses_seen))

    @invariant()
    def tables_agree(self) -> None:
        assert set(self.server.in_flight_ids) == set(self.outstanding)
        uncancelled = {rid for rid, c in self.outstanding.items() if not c}
        assert set(self.client.pending_ids) == uncancelled


TestConnectionMachine = ConnectionMachine.TestCase
TestConnectionMachine.settings = settings(max_examples=100, stateful_step_count=40)
