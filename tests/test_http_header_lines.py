"""Header values the HTTP transports must read as RFC 9110 means them, over a real socket
on 127.0.0.1: fields sent in more than one field line, and media-range parameters.

RFC 9110 section 5.3: a list-valued field (``Accept``) may be split over several field
lines, and the recipient combines them, in order, with commas, without changing the
meaning; a single-valued field (``Content-Type``) sent twice is ambiguous (a proxy may act
on one line and the server on the other), so it is refused, never settled by picking one.
Both HTTP transports: Streamable HTTP (POST and GET) and the 2024-11-05 HTTP+SSE one.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx
import pytest

from mcpkit.server import SSEApp

from ._http_testserver import build_server
from ._httpserver import RunningServer, running_server
from ._mcphttp import RawSession, messages_of, request

pytestmark = pytest.mark.anyio

SERVER = build_server()
LIMIT = 20.0
JSON = ("content-type", "application/json")


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    with running_server(SERVER.streamable_http_app()) as server:
        yield server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


def lines(session: RawSession, *extra: tuple[str, str]) -> list[tuple[str, str]]:
    """The session's headers without Accept and Content-Type, then ``extra`` in order."""
    kept = [(k, v) for k, v in session.headers().items() if k not in ("accept", "content-type")]
    return [*kept, *extra]


@pytest.mark.parametrize(
    "accept",
    [
        ["application/json", "text/event-stream"],
        ["text/event-stream", "application/json"],
        ["application/json;q=0.9", "text/event-stream;q=0.5"],
        ["application/json", "", "text/event-stream"],
    ],
    ids=["json-then-sse", "sse-then-json", "weighted", "with-an-empty-line"],
)
async def test_accept_split_over_field_lines_is_one_list_on_post(
    http: RunningServer, accept: list[str]
) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient() as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open()
            headers = lines(session, JSON, *(("accept", value) for value in accept))
            response = await client.post(session.url, content=request(2, "ping"), headers=headers)
            assert response.status_code == 200, response.text
            assert messages_of(response) == [{"jsonrpc": "2.0", "id": 2, "result": {}}]


async def test_accept_split_over_field_lines_still_refuses_what_it_excludes(
    http: RunningServer,
) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient() as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open()
            # Combined, the second line's q=0 withdraws SSE: 406 as for one line.
            excluded = ("accept", "application/json"), ("accept", "text/event-stream;q=0")
            response = await client.post(
                session.url, content=request(2, "ping"), headers=lines(session, JSON, *excluded)
            )
            assert response.status_code == 406, response.text


async def test_accept_split_over_field_lines_opens_the_get_stream(http: RunningServer) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient() as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open()
            headers = lines(session, ("accept", "text/event-stream"), ("accept", "text/html"))
            get = client.build_request("GET", session.url, headers=headers)
            response = await client.send(get, stream=True)
            try:
                assert response.status_code == 200
                assert response.headers["content-type"] == "text/event-stream"
            finally:
                await response.aclose()


@pytest.mark.parametrize(
    ("accept", "status"),
    [
        ("application/json; charset=utf-8, text/event-stream", 200),
        ("application/json, text/event-stream;charset=UTF-8", 200),
        ("application/json; charset=iso-8859-1, text/event-stream", 406),
    ],
    ids=["json-utf-8", "sse-utf-8", "json-latin-1"],
)
async def test_a_utf_8_charset_in_accept_is_what_json_and_sse_already_are(
    http: RunningServer, accept: str, status: int
) -> None:
    # RFC 8259 section 8.1: JSON is UTF-8 (no charset parameter is defined); SSE is always
    # UTF-8. The official SDKs answer such clients; so must this one (any other charset
    # still excludes the type).
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient() as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open()
            headers = lines(session, JSON, ("accept", accept))
            response = await client.post(session.url, content=request(2, "ping"), headers=headers)
            assert response.status_code == status, response.text


@pytest.mark.parametrize(
    "types",
    [
        ["text/plain", "application/json"],
        ["application/json", "text/plain"],
        ["application/json", "application/json"],
    ],
    ids=["text-then-json", "json-then-text", "json-twice"],
)
async def test_content_type_twice_is_refused_and_the_session_goes_on(
    http: RunningServer, types: list[str]
) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient() as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open()
            twice = [("content-type", value) for value in types]
            headers = lines(session, ("accept", "application/json, text/event-stream"), *twice)
            response = await client.post(session.url, content=request(2, "ping"), headers=headers)
            assert response.status_code == 400, response.text
            error = response.json()["error"]
            assert error["code"] == -32600
            assert "more than one Content-Type" in error["message"]
            assert (await session.call(3, "ping"))["result"] == {}


async def test_legacy_sse_reads_accept_lines_and_refuses_content_type_twice() -> None:
    with running_server(SSEApp(SERVER)) as server, anyio.fail_after(LIMIT):
        async with httpx.AsyncClient() as client:
            accept = [("accept", "text/event-stream"), ("accept", "application/json")]
            get = client.build_request("GET", server.url + "/sse", headers=accept)
            response = await client.send(get, stream=True)
            try:
                assert response.status_code == 200
                endpoint = b""
                async for chunk in response.aiter_bytes():
                    endpoint += chunk
                    if b"\n\n" in endpoint:
                        break
                path = endpoint.split(b"data: ", 1)[1].split(b"\n", 1)[0].decode()
                twice = [("content-type", "text/plain"), JSON]
                post = await client.post(
                    server.url + path, content=request(1, "ping"), headers=twice
                )
                assert post.status_code == 400, post.text
                assert "more than one Content-Type" in post.json()["error"]["message"]
            finally:
                await response.aclose()
