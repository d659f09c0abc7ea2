"""A hand-driven WebSocket client for the tests of ``tests/test_websocket.py``: any
handshake headers, any frames (RFC 6455), over an anyio TCP stream, so it runs on asyncio
and trio alike."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import anyio.abc

__all__ = ["CLOSE", "TEXT", "RawSocket", "frame", "raw"]

TEXT: Final = 0x1
CLOSE: Final = 0x8


def frame(opcode: int, payload: bytes) -> bytes:
    """One final client frame (masked, RFC 6455 section 5.2)."""
    size = len(payload)
    if size < 126:
        head = bytes([0x80 | opcode, 0x80 | size])
    elif size < 1 << 16:
        head = bytes([0x80 | opcode, 0x80 | 126]) + size.to_bytes(2, "big")
    else:
        head = bytes([0x80 | opcode, 0x80 | 127]) + size.to_bytes(8, "big")
    mask = os.urandom(4)
    return head + mask + bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))


class RawSocket:
    """A hand-driven WebSocket client: any handshake headers, any frames."""

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self.stream = stream
        self.buffer = b""
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = b""

    async def _read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self.buffer += await self.stream.receive()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    async def handshake(self, path: str, headers: dict[str, str | None]) -> None:
        lines = [f"GET {path} HTTP/1.1"]
        lines += [f"{name}: {value}" for name, value in headers.items() if value is not None]
        await self.stream.send(("\r\n".join(lines) + "\r\n\r\n").encode())
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += await self.stream.receive()
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        status_line, *fields = head.decode("latin-1").split("\r\n")
        self.status = int(status_line.split()[1])
        for field in fields:
            name, _, value = field.partition(":")
            self.headers[name.strip().lower()] = value.strip()
        self.body = await self._read(int(self.headers.get("content-length", "0")))

    async def send(self, payload: bytes, opcode: int = TEXT) -> None:
        await self.stream.send(frame(opcode, payload))

    async def receive(self) -> tuple[int, bytes]:
        """The next frame from the server (they are unmasked and, here, never fragmented)."""
        first, second = await self._read(2)
        assert first & 0x80, "a final frame"
        assert not second & 0x80, "unmasked"
        size = second & 0x7F
        if size >= 126:
            size = int.from_bytes(await self._read(2 if size == 126 else 8), "big")
        return first & 0x0F, await self._read(size)

    async def message(self) -> dict[str, Any]:
        opcode, payload = await self.receive()
        assert opcode == TEXT, (opcode, payload)
        value = json.loads(payload)
        assert isinstance(value, dict)
        return value

    async def close_code(self) -> int:
        """Skip messages until the server's close frame; its status code."""
        opcode, payload = await self.receive()
        while opcode != CLOSE:
            opcode, payload = await self.receive()
        return int.from_bytes(payload[:2], "big")


@asynccontextmanager
async def raw(port: int, path: str = "/ws", **headers: str | None) -> AsyncIterator[RawSocket]:
    """Open a TCP connection and send a handshake: the defaults of a well-behaved client
    (loopback Host, subprotocol ``mcp``, no Origin), overridden by ``headers`` (``_`` in
    names is ``-``; ``None`` drops a header)."""
    fields: dict[str, str | None] = {
        "host": f"127.0.0.1:{port}",
        "upgrade": "websocket",
        "connection": "Upgrade",
        "sec-websocket-key": base64.b64encode(os.urandom(16)).decode(),
        "sec-websocket-version": "13",
        "sec-websocket-protocol": "mcp",
    }
    fields.update({name.replace("_", "-"): value for name, value in headers.items()})
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        socket = RawSocket(stream)
        await socket.handshake(path, fields)
        yield socket
