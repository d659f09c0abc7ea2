"""A raw stdio peer for end-to-end tests: spawns a server and speaks bytes to it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import anyio
import anyio.abc

INIT_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw-test", "version": "0"},
}


class RawStdioServer:
    """A server subprocess driven with raw NDJSON. Every read is bounded by a timeout."""

    def __init__(self, argv: Sequence[str], *, timeout: float = 10.0) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self.process: anyio.abc.Process | None = None
        self._buffer = b""
        self.sent: list[bytes] = []
        self.received: list[bytes] = []

    async def __aenter__(self) -> RawStdioServer:
        self.process = await anyio.open_process(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self.process is not None
        with anyio.CancelScope(shield=True):
            if self.process.returncode is None:
                self.process.kill()
            await self.process.aclose()

    async def write(self, data: bytes) -> None:
        assert self.process is not None
        assert self.process.stdin is not None
        self.sent.append(data)
        await self.process.stdin.send(data)

    async def send(self, **members: Any) -> None:
        await self.write(json.dumps({"jsonrpc": "2.0", **members}).encode() + b"\n")

    async def read_line(self) -> bytes:
        assert self.process is not None
        assert self.process.stdout is not None
        with anyio.fail_after(self.timeout):
            while b"\n" not in self._buffer:
                self._buffer += await self.process.stdout.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.received.append(line)
        return line

    async def receive(self) -> dict[str, Any]:
        line = await self.read_line()
        decoded: dict[str, Any] = json.loads(line)
        return decoded

    async def request(self, rid: Any, method: str, params: Any = None) -> dict[str, Any]:
        members: dict[str, Any] = {"id": rid, "method": method}
        if params is not None:
            members["params"] = params
        await self.send(**members)
        return await self.receive()

    async def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        reply = await self.request(
            "init", "initialize", {**INIT_PARAMS, "protocolVersion": version}
        )
        await self.send(method="notifications/initialized")
        return reply

    async def assert_silent(self) -> None:
        """No unexpected message is pending: a ping sent now is answered next."""
        reply = await self.request("__probe__", "ping")
        assert reply == {"jsonrpc": "2.0", "id": "__probe__", "result": {}}, reply

    async def close_stdin_and_wait(self) -> int:
        assert self.process is not None
        assert self.process.stdin is not None
        await self.process.stdin.aclose()
        with anyio.fail_after(self.timeout):
            return await self.process.wait()
