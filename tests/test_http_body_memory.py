"""A request body sent a few bytes at a time is held in one buffer: the HTTP apps' memory
per request stays near the body limit whatever the chunking (a list of chunks held ~45
bytes per 4-byte chunk: eleven times the limit). The app is called in-process, so every
chunk reaches it as sent (a real server may merge them)."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import MutableMapping
from typing import Any

import anyio
import pytest

from mcpkit.server import LowLevelServer, StreamableHTTPApp

pytestmark = pytest.mark.anyio

LIMIT = 256 * 1024
HEADERS = [
    (b"host", b"127.0.0.1"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]


def scope() -> dict[str, Any]:
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": HEADERS,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }


@pytest.mark.parametrize("chunk_size", [4, 64], ids=lambda n: f"{n}-byte-chunks")
async def test_a_body_in_tiny_chunks_is_held_in_one_buffer(chunk_size: int) -> None:
    app = StreamableHTTPApp(LowLevelServer("t", "1"), max_body_bytes=LIMIT)
    pad = "x" * (LIMIT - 200)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"experimental": {"pad": {"p": pad}}},
                "clientInfo": {"name": "c", "version": "1"},
            },
        }
    ).encode()
    assert len(body) <= LIMIT
    chunks = [body[i : i + chunk_size] for i in range(0, len(body), chunk_size)]
    position = 0
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal position
        if position < len(chunks):
            position += 1
            more = position < len(chunks)
            return {"type": "http.request", "body": chunks[position - 1], "more_body": more}
        return {"type": "http.disconnect"}  # (after the answer: the client has gone)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    with anyio.fail_after(30):
        tracemalloc.start()
        try:
            await app(scope(), receive, send)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert sent[0]["status"] == 200, sent
    # The body's buffer, its copy as bytes and the decoded initialize: a few times the
    # limit; a list of 4-byte chunks alone took eleven.
    assert peak < 5 * LIMIT, f"peak {peak / LIMIT:.1f} x the limit"
