"""Streamable HTTP server: every status-code rule, over a real socket on 127.0.0.1.

``basic/transports.mdx`` (2025-03-26 ... 2025-11-25) and the security rules: 400 (missing
or malformed session, bad version header, invalid JSON), 403 (Origin), 404 (unknown or
ended session, wrong path), 405, 406, 408, 413, 415, 421 (Host), 431, 503 (session cap).
"""

from __future__ import annotations

import gzip
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from ._http_testserver import build_server
from ._httpserver import RunningServer, running_server
from ._mcphttp import (
    ACCEPT_BOTH,
    JSON_HEADERS,
    RawSession,
    initialize,
    messages_of,
    parse_sse,
    request,
)

pytestmark = pytest.mark.anyio

SERVER = build_server()
LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    app = SERVER.streamable_http_app(max_body_bytes=LIMIT, max_sessions=50, body_timeout=0.5)
    with running_server(app) as server:
        yield server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


def url_of(http: RunningServer) -> str:
    return http.url + "/mcp"


async def open_session(client: httpx.AsyncClient, url: str) -> RawSession:
    session = RawSession(client, url)
    await session.open()
    return session


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert body["jsonrpc"] == "2.0", body
    assert body["id"] is None, body
    error: dict[str, Any] = body["error"]
    return error


# -- requests that never reach a session ----------------------------------------------------

PROBES: list[tuple[str, dict[str, str], int]] = [
    # DNS rebinding: Host outside the allowlist -> 421, present but foreign Origin -> 403.
    ("host evil", {"host": "evil.example.com"}, 421),
    ("host userinfo", {"host": "localhost@evil.example.com"}, 421),
    ("host userinfo port", {"host": "localhost:80@evil.example.com"}, 421),
    ("host suffix", {"host": "127.0.0.1.evil.example.com"}, 421),
    ("origin null", {"origin": "null"}, 403),
    ("origin evil", {"origin": "http://evil.example.com"}, 403),
    ("origin lookalike", {"origin": "http://localhost.evil.example.com"}, 403),
    ("origin userinfo", {"origin": "http://localhost@evil.example.com"}, 403),
    # Content negotiation.
    ("text/plain body", {"content-type": "text/plain"}, 415),
    ("form body", {"content-type": "application/x-www-form-urlencoded"}, 415),
    ("gzip body", {"content-encoding": "gzip"}, 415),
    ("layered body", {"content-encoding": "identity, br"}, 415),
    ("empty accept", {"accept": ""}, 406),
    ("json only", {"accept": "application/json"}, 406),
    ("sse only", {"accept": "text/event-stream"}, 406),
    ("sse refused", {"accept": "application/json, text/event-stream;q=0"}, 406),
    # Sessions.
    ("unknown session", {"mcp-session-id": "no-such-session"}, 404),
    ("malformed session", {"mcp-session-id": "has space"}, 400),
]


@pytest.mark.parametrize(("headers", "status"), [p[1:] for p in PROBES], ids=[p[0] for p in PROBES])
async def test_refused_before_any_session(
    http: RunningServer, headers: dict[str, str], status: int
) -> None:
    hdrs = {**JSON_HEADERS, **headers}
    async with httpx.AsyncClient() as client:
        response = await client.post(url_of(http), content=initialize(), headers=hdrs)
        assert response.status_code == status, response.text
        assert "mcp-session-id" not in response.headers
        assert error_of(response)["message"]
        # The server stays up and serves a good client next.
        session = await open_session(client, url_of(http))
        assert (await session.call(2, "ping"))["result"] == {}


async def test_loopback_names_are_allowed(http: RunningServer) -> None:
    port = http.port
    async with httpx.AsyncClient() as client:
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost", "127.0.0.1"):
            hdrs = {**JSON_HEADERS, "host": host, "origin": f"http://localhost:{port}"}
            response = await client.post(url_of(http), content=initialize(), headers=hdrs)
            assert response.status_code == 200, (host, response.text)
            # CORS: an allowed browser origin may read the session id.
            assert response.headers["access-control-allow-origin"] == f"http://localhost:{port}"
            assert "mcp-session-id" in response.headers["access-control-expose-headers"]


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_unknown_method_is_405(http: RunningServer, method: str) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.request(method, url_of(http), headers=JSON_HEADERS)
    assert response.status_code == 405
    assert "POST" in response.headers["allow"]


async def test_head_answers_headers_only_and_the_connection_goes_on(http: RunningServer) -> None:
    """HEAD: the answer's headers carry a Content-Length but no body follows (the
    built-in runner writes headers and body together when it can; here only headers)."""
    async with httpx.AsyncClient() as client:
        # Promptly: headers held for a body that never comes would otherwise go out only
        # when the connection closes (keep-alive timeout, 5 s).
        with anyio.fail_after(3):
            head = await client.head(url_of(http), headers=JSON_HEADERS)
        assert head.status_code == 405
        assert int(head.headers["content-length"]) > 0
        assert head.content == b""
        # The same kept-alive connection serves the next request.
        response = await client.post(url_of(http), content=initialize(), headers=JSON_HEADERS)
        assert response.status_code == 200
        assert response.json()["result"]["protocolVersion"] == "2025-11-25"


async def test_wrong_path_is_404(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.post(
            http.url + "/other", content=initialize(), headers=JSON_HEADERS
        )
    assert response.status_code == 404


async def test_cors_preflight(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        ok = await client.options(url_of(http), headers={"origin": "http://localhost:3000"})
        bad = await client.options(url_of(http), headers={"origin": "https://evil.example.com"})
    assert ok.status_code == 204
    assert "mcp-session-id" in ok.headers["access-control-allow-headers"]
    assert bad.status_code == 403


# -- limits -----------------------------------------------------------------------------------


def padded(size: int) -> bytes:
    """A valid ping request of exactly ``size`` bytes."""
    base = request(9, "ping", {"pad": ""})
    return base.replace(b'"pad": ""', b'"pad": "' + b"x" * (size - len(base)) + b'"')


async def test_body_limit_exact_and_one_over(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = await open_session(client, url_of(http))
        at_limit = await session.post(padded(LIMIT))
        assert at_limit.status_code == 200, at_limit.text
        over = await session.post(padded(LIMIT + 1))
        assert over.status_code == 413
        # Just over the limit: the rest is read and dropped, so an honest client still
        # sending gets this answer (not a reset) and keeps its connection.
        assert "connection" not in over.headers
        assert str(LIMIT) in error_of(over)["message"]

        # Chunked (no Content-Length): refused as soon as it grows past the limit.
        async def chunks() -> Any:
            body = padded(LIMIT + 1)
            for start in range(0, len(body), 4096):
                yield body[start : start + 4096]

        chunked = await client.post(url_of(http), content=chunks(), headers=session.headers())
        assert chunked.status_code == 413
        assert (await session.call(3, "ping"))["result"] == {}


async def test_compressed_bodies_are_415_naming_what_is_accepted(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = await open_session(client, url_of(http))
        packed = gzip.compress(request(5, "ping"))
        headers = {**session.headers(), "content-encoding": "gzip"}
        refused = await client.post(url_of(http), content=packed, headers=headers)
        assert refused.status_code == 415
        assert refused.headers["accept-encoding"] == "identity"  # RFC 9110 section 15.5.16
        assert "Content-Encoding 'gzip'" in error_of(refused)["message"]
        assert "connection" not in refused.headers  # a framed body: read and dropped
        # "identity" is no coding at all; the session went on either way.
        headers["content-encoding"] = "Identity"
        plain = await client.post(url_of(http), content=request(6, "ping"), headers=headers)
        assert plain.status_code == 200, plain.text
        assert (await session.call(7, "ping"))["result"] == {}


def raw_exchange(port: int, data: bytes, timeout: float = 10.0) -> bytes:
    """Send raw bytes on a fresh connection; return everything until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return received
            received += chunk


async def test_lying_content_length_and_slow_body(http: RunningServer) -> None:
    # A declared length over the limit is refused before the body is read.
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{http.port}\r\n"
        f"content-type: application/json\r\naccept: {ACCEPT_BOTH}\r\n"
    )
    over = (head + f"content-length: {LIMIT + 1}\r\nconnection: close\r\n\r\n").encode()
    answer = await anyio.to_thread.run_sync(raw_exchange, http.port, over)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    # Announced far over the limit (10 GB): the client asks to keep the connection alive,
    # but the server closes it after the answer (raw_exchange returns only then; it fails
    # after 3 s, before uvicorn's 5 s keep-alive would end the connection anyway) instead
    # of reading and discarding what the client may go on sending.
    absurd = (head + f"content-length: {10**10}\r\n\r\n").encode() + b'{"jsonrpc":'
    answer = await anyio.to_thread.run_sync(raw_exchange, http.port, absurd, 3.0)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    assert b"\r\nconnection: close\r\n" in answer.lower(), answer[:300]
    # A body that stops arriving gets 408 after the body timeout (0.5 s here).
    slow = (head + "content-length: 100\r\n\r\n{").encode()
    answer = await anyio.to_thread.run_sync(raw_exchange, http.port, slow)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
    assert b"\r\nconnection: close\r\n" in answer.lower(), answer[:300]


async def test_header_block_limit(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        hdrs = {**JSON_HEADERS, "x-filler": "y" * (17 * 1024)}
        response = await client.post(url_of(http), content=initialize(), headers=hdrs)
    assert response.status_code == 431


# -- sessions and messages --------------------------------------------------------------------


async def test_post_rules_within_a_session(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = await open_session(client, url_of(http))
        # A notification or a response: 202 and no body.
        note = await session.post(b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}')
        assert (note.status_code, note.content) == (202, b"")
        late = await session.post(b'{"jsonrpc":"2.0","id":"nope","result":{}}')
        assert late.status_code == 400  # a response to a request never sent
        # Invalid JSON: 400 with a -32700 error and no id.
        garbage = await session.post(b"{not json")
        assert garbage.status_code == 400
        assert error_of(garbage)["code"] == -32700
        # Invalid JSON-RPC (a float id): -32600.
        float_id = await session.post(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}')
        assert float_id.status_code == 400
        assert error_of(float_id)["code"] == -32600
        # A batch is not allowed after 2025-03-26.
        batch = await session.post(b'[{"jsonrpc":"2.0","id":7,"method":"ping"}]')
        assert batch.status_code == 400
        assert error_of(batch)["code"] == -32600
        # The version header must match the negotiated version when present...
        mismatch = await session.post(request(8, "ping"), mcp_protocol_version="2025-06-18")
        assert mismatch.status_code == 400
        assert "does not match" in error_of(mismatch)["message"]
        # ... and may be absent (the session knows its version).
        headers = session.headers()
        del headers["mcp-protocol-version"]
        absent = await client.post(url_of(http), content=request(9, "ping"), headers=headers)
        assert absent.status_code == 200
        # initialize again on the same session: a JSON-RPC error, not a new session.
        again = await session.post(initialize(rid=10))
        assert again.status_code == 200
        assert messages_of(again)[0]["error"]["code"] == -32600
        assert "mcp-session-id" not in again.headers


async def test_session_id_required_and_first_message_initialize(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        no_session = await client.post(
            url_of(http), content=request(1, "ping"), headers=JSON_HEADERS
        )
        assert no_session.status_code == 400
        assert "Mcp-Session-Id" in error_of(no_session)["message"]
        # initialize with bad params: an error answer and no session is created.
        bad = await client.post(
            url_of(http),
            content=request(1, "initialize", {"protocolVersion": 5}),
            headers=JSON_HEADERS,
        )
        assert bad.status_code == 200
        assert messages_of(bad)[0]["error"]["code"] == -32602
        assert "mcp-session-id" not in bad.headers


async def test_session_ids_are_unguessable_and_visible_ascii(http: RunningServer) -> None:
    ids = set()
    async with httpx.AsyncClient() as client:
        for _ in range(20):
            session = await open_session(client, url_of(http))
            assert session.session_id is not None
            ids.add(session.session_id)
            assert all(0x21 <= ord(c) <= 0x7E for c in session.session_id)
            assert len(session.session_id) >= 22  # >= 128 bits in URL-safe base64
            assert (await client.delete(url_of(http), headers=session.headers())).status_code == 204
    assert len(ids) == 20


async def test_delete_ends_the_session(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = await open_session(client, url_of(http))
        deleted = await client.delete(url_of(http), headers=session.headers())
        assert deleted.status_code == 204
        for response in (
            await session.post(request(2, "ping")),
            await client.get(url_of(http), headers=session.headers(accept="text/event-stream")),
            await client.delete(url_of(http), headers=session.headers()),
        ):
            assert response.status_code == 404, response.text


async def test_get_rules(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = await open_session(client, url_of(http))
        not_sse = await client.get(url_of(http), headers=session.headers(accept="application/json"))
        assert not_sse.status_code == 406
        no_session = await client.get(url_of(http), headers={"accept": "text/event-stream"})
        assert no_session.status_code == 400
        bad_resume = await client.get(
            url_of(http), headers=session.headers(accept="text/event-stream", last_event_id="9_9")
        )
        assert bad_resume.status_code == 400
        assert "Last-Event-ID" in error_of(bad_resume)["message"]
        # Two resume positions, even equal ones, are ambiguous: refused like other headers.
        twice = [*session.headers(accept="text/event-stream", last_event_id="0_1").items()]
        doubled = await client.get(url_of(http), headers=[*twice, ("Last-Event-ID", "0_1")])
        assert doubled.status_code == 400
        assert "more than one Last-Event-ID" in error_of(doubled)["message"]
        # An empty Last-Event-ID names no event (what other SDKs' clients may send): the
        # standalone stream opens, as without the header.
        empty = session.headers(accept="text/event-stream", last_event_id="")
        async with client.stream("GET", url_of(http), headers=empty) as standalone:
            assert standalone.status_code == 200
            assert standalone.headers["content-type"].startswith("text/event-stream")


async def test_session_cap_answers_503_and_recovers() -> None:
    app = SERVER.streamable_http_app(max_sessions=2)
    with running_server(app) as http:
        async with httpx.AsyncClient() as client:
            first = await open_session(client, url_of(http))
            await open_session(client, url_of(http))
            full = await client.post(url_of(http), content=initialize(), headers=JSON_HEADERS)
            assert full.status_code == 503
            assert error_of(full)["code"] == -32000
            assert full.headers["retry-after"]
            # What could never start a session is told why, full or not.
            malformed = await client.post(
                url_of(http), content=b'{"jsonrpc":', headers=JSON_HEADERS
            )
            assert (malformed.status_code, error_of(malformed)["code"]) == (400, -32700)
            no_session = await client.post(
                url_of(http), content=request(7, "ping"), headers=JSON_HEADERS
            )
            assert no_session.status_code == 400
            assert "Mcp-Session-Id header is required" in error_of(no_session)["message"]
            await client.delete(url_of(http), headers=first.headers())
            await open_session(client, url_of(http))


async def test_batch_in_2025_03_26(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = RawSession(client, url_of(http))
        await session.open(version="2025-03-26")
        batch = json.dumps(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "b"}},
                },
            ]
        ).encode()
        response = await session.post(batch)
        assert response.status_code == 200
        replies = messages_of(response)
        assert sorted(r["id"] for r in replies) == [1, 2]
        only_notes = b'[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]'
        assert (await session.post(only_notes)).status_code == 202
        # Responses to requests never sent: 400, in a batch as alone.
        unknown = [b'{"jsonrpc":"2.0","id":"nope%d","result":{}}' % n for n in (1, 2)]
        assert (await session.post(unknown[0])).status_code == 400
        refused = await session.post(b"[" + b",".join(unknown) + b"]")
        assert refused.status_code == 400
        assert "nope1" in error_of(refused)["message"], refused.text
        # One of them beside an accepted notification: the batch was accepted (202).
        mixed = b"[" + unknown[1] + b"," + only_notes[1:-1] + b"]"
        assert (await session.post(mixed)).status_code == 202


async def test_concurrent_posts_on_one_session(http: RunningServer) -> None:
    async with httpx.AsyncClient() as client:
        session = await open_session(client, url_of(http))
        results: dict[int, str] = {}

        async def call(rid: int) -> None:
            answer = await session.call(
                rid, "tools/call", {"name": "echo", "arguments": {"text": str(rid)}}
            )
            results[rid] = answer["result"]["content"][0]["text"]

        async with anyio.create_task_group() as tg:
            for rid in range(10, 30):
                tg.start_soon(call, rid)
        assert results == {rid: str(rid) for rid in range(10, 30)}


async def test_duplicate_in_flight_id_is_refused(http: RunningServer) -> None:
    from ._http_testserver import GATES

    async with httpx.AsyncClient() as client:
        session = await open_session(client, url_of(http))
        body = request(5, "tools/call", {"name": "hold", "arguments": {"key": "dup"}})
        async with session.stream(body) as first:
            assert first.status_code == 200
            await anyio.to_thread.run_sync(GATES.get("dup:started").wait, 10)
            again = await session.post(body)
            assert again.status_code == 400
            assert again.json()["id"] == 5
            assert "already in flight" in again.json()["error"]["message"]
            GATES.open("dup")
            replies = [json.loads(e.data) for e in parse_sse(await first.aread()) if e.data]
        assert replies[-1]["result"]["content"][0]["text"] == "released dup"


def trickle_headers(port: int, limit: float, first: bytes = b"") -> tuple[bytes, float]:
    """Slowloris: send a request line and then one header byte at a time, never the
    blank line; return what the server sent and how long it kept the connection.
    ``first``: a whole request sent (and its answer read) before, on the same connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=limit) as sock:
        if first:
            sock.sendall(first)
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += sock.recv(65536)
            head, _, body = answer.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            while len(body) < length:
                body += sock.recv(65536)
            assert head.startswith(b"HTTP/1.1 200"), head
        sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ")
        started = time.monotonic()
        received = b""
        while time.monotonic() - started < limit:
            try:
                sock.sendall(b"a")
            except OSError:  # the server closed the connection: what we wanted
                break
            # Waiting on the socket (not sleeping): a close ends the wait at once.
            sock.settimeout(0.1)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            received += chunk
        return received, time.monotonic() - started


async def test_slowloris_headers_are_cut_off() -> None:
    # uvicorn alone would wait forever for the headers (its issue #157); the built-in
    # runner gives a connection `header_timeout` seconds to send them.
    app = SERVER.streamable_http_app()
    with running_server(app, header_timeout=0.5) as http:
        received, held = await anyio.to_thread.run_sync(trickle_headers, http.port, 10.0)
        assert held < 5.0, f"the server kept a trickling connection for {held:.1f} s"
        assert received == b"" or received.startswith(b"HTTP/1.1 4"), received[:100]
        # The same on a kept-alive connection, after a request answered in time: the
        # deadline moves with each request.
        body = initialize()
        first = (
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            f"accept: {ACCEPT_BOTH}\r\ncontent-length: {len(body)}\r\n\r\n"
        ).encode() + body
        received, held = await anyio.to_thread.run_sync(trickle_headers, http.port, 10.0, first)
        assert held < 5.0, f"the server kept a trickling keep-alive connection for {held:.1f} s"
        assert received == b"" or received.startswith(b"HTTP/1.1 4"), received[:100]
        # Everyone else is served as before.
        async with httpx.AsyncClient() as client:
            response = await client.post(
                http.url + "/mcp", content=initialize(), headers=JSON_HEADERS
            )
            assert response.status_code == 200
