"""``python -m bench http-inprocess``: each HTTP contender's ASGI app driven in process.

No sockets, no HTTP server, no kernel: a driver calls the app with a ready-made scope, a
``receive`` that hands over the whole body at once and a ``send`` that keeps what it is
given, for ``tools/call echo`` POSTs (the same bodies and headers as ``bench http``). Each
contender runs in a fresh process: ``initialize`` first for the stateful ones (a session
per request in flight), a warm-up, then ``N`` POSTs one at a time (each awaited by the
driver: the app's own cost) and ``N`` POSTs ``IN_FLIGHT`` at a time (each a task, as
uvicorn makes one per request: the cost with the event loop's share). Best of
``REPEATS``. Quick and steady (a few percent between runs), it shows the app's own cost
that ``bench http`` measures inside the whole server under load, where every microsecond
here costs about 1.8 (bench/README.md, thirteenth session). The contenders: the bare
floor, the flat reference endpoint, mcpkit's three modes, and mcpkit serving the same call
as a 2026-07-28 request (``_meta``, ``Mcp-Method`` and ``Mcp-Name``, no session; ``bench
http`` has it too, against the official SDK).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

# (the same contenders as http-icount, every one but the official SDK's, and its bodies)
from ._httpicount import NAMES, call_body
from ._httpload import MODERN_HEADERS, MODERN_META
from ._rawclient import INIT_PARAMS, PROTOCOL_VERSION, ServerError
from ._servers import ECHO_TEXT, ROOT

__all__ = ["run_http_inprocess"]

#: POSTs per measurement, best of ``REPEATS``, after ``WARMUP`` POSTs; ``IN_FLIGHT`` at a
#: time in the concurrent one.
N, REPEATS, WARMUP, IN_FLIGHT = 20_000, 3, 500, 64
_VERSION: Final = PROTOCOL_VERSION.encode()
_INIT: Final = json.dumps(
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS}
).encode()
_INITIALIZED: Final = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
MODERN: Final = "mcpkit 2026-07-28"
#: The contenders: http-icount's, and the same call as a 2026-07-28 request.
CONTENDERS: Final = (*NAMES, MODERN)
#: bench http's 2026-07-28 request: its headers (MCP-Protocol-Version apart) and _meta.
_MODERN_VERSION: Final = MODERN_HEADERS["MCP-Protocol-Version"].encode()
_MODERN_HEADERS: Final = [
    (name.lower().encode(), value.encode())
    for name, value in MODERN_HEADERS.items()
    if name != "MCP-Protocol-Version"
]
_MODERN_META: Final = b',"_meta":' + json.dumps(MODERN_META, separators=(",", ":")).encode() + b"}}"


def _body(name: str, rid: int) -> bytes:
    body = call_body(rid)
    return body[:-2] + _MODERN_META if name == MODERN else body


App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def _app(name: str) -> App:
    sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "examples")]
    if name == "bare json":
        from bare_http_server import app as bare

        return bare
    if name == "flat stateful+json":
        from flat_http_server import app as flat

        return flat
    from echo import server  # examples/echo.py, as `bench http` serves it
    from mcpkit.server._streamable import StreamableHTTPApp

    return StreamableHTTPApp(
        server, json_response=not name.endswith("sse"), stateless="stateless" in name
    )


class _Cycle:
    """One request's ``receive`` and ``send``: the whole body at once, answers kept.

    It stands for uvicorn's request cycle, so its ``receive`` carries the module name of
    uvicorn's HTTP protocols (below): mcpkit steps the ``receive`` of those by hand when
    the body is already there (``server/_asgi.py``, ``read_body``), and takes the path with
    a timeout for a ``receive`` it does not know (12 us more per POST than under uvicorn).
    """

    __slots__ = ("body", "out", "sent")

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sent = False
        self.out: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if not self.sent:
            self.sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await asyncio.Event().wait()  # (a disconnect never comes: the app answers first)
        raise AssertionError("unreachable")

    async def send(self, message: dict[str, Any]) -> None:
        self.out.append(message)


_Cycle.receive.__module__ = "uvicorn.protocols.http.bench"


async def _post(
    app: App, body: bytes, session: bytes | None, version: bytes | None, modern: bool = False
) -> Any:
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-length", b"%d" % len(body)),
    ]
    if session is not None:
        headers.append((b"mcp-session-id", session))
    if version is not None:
        headers.append((b"mcp-protocol-version", version))
    if modern:
        headers += _MODERN_HEADERS
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 5555),
        "server": ("127.0.0.1", 8000),
    }
    cycle = _Cycle(body)
    await app(scope, cycle.receive, cycle.send)
    return cycle.out


async def _measure(name: str) -> dict[str, float]:
    app = _app(name)
    events: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    started = asyncio.Event()

    async def lifespan_send(message: dict[str, Any]) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    await events.put({"type": "lifespan.startup"})
    lifespan = asyncio.ensure_future(
        app({"type": "lifespan", "asgi": {"version": "3.0"}}, events.get, lifespan_send)
    )
    await asyncio.wait_for(started.wait(), 30)
    stateful = name.startswith(("flat", "mcpkit stateful"))
    sessions: list[bytes | None] = []
    for _ in range(IN_FLIGHT):
        if not stateful:
            sessions.append(None)
            continue
        out = await _post(app, _INIT, None, None)
        found = [v for k, v in out[0]["headers"] if k == b"mcp-session-id"]
        if not found:
            raise ServerError(f"{name}: no session from initialize: {out!r:.300}")
        await _post(app, _INITIALIZED, found[0], _VERSION)
        sessions.append(found[0])
    modern = name == MODERN
    version = _MODERN_VERSION if modern else _VERSION if name != "bare json" else None
    rid = 1
    for _ in range(WARMUP):
        rid += 1
        out = await _post(app, _body(name, rid), sessions[0], version, modern)
    if ECHO_TEXT.encode() not in out[-1]["body"]:
        raise ServerError(f"{name}: unexpected answer {out!r:.300}")
    one: list[float] = []
    many: list[float] = []
    for _ in range(REPEATS):
        begin = time.perf_counter()
        for _ in range(N):
            rid += 1
            await _post(app, _body(name, rid), sessions[0], version, modern)
        one.append((time.perf_counter() - begin) / N)
        begin = time.perf_counter()
        for _ in range(N // IN_FLIGHT):
            batch = []
            for session in sessions:
                rid += 1
                posted = _post(app, _body(name, rid), session, version, modern)
                batch.append(asyncio.ensure_future(posted))
            await asyncio.gather(*batch)
        many.append((time.perf_counter() - begin) / (N // IN_FLIGHT * IN_FLIGHT))
    await events.put({"type": "lifespan.shutdown"})
    await asyncio.wait_for(lifespan, 30)
    return {"one_s": min(one), "in_flight_s": min(many)}


def run_http_inprocess(*, log: Callable[[str], None]) -> int:
    results: dict[str, dict[str, float]] = {}
    for name in CONTENDERS:
        done = subprocess.run(
            [sys.executable, "-m", "bench._httpinproc", name],
            cwd=str(ROOT),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            raise ServerError(f"{name}: {done.stderr[-1500:]}")
        results[name] = json.loads(done.stdout.strip().splitlines()[-1])
        log(f"  {name}: done")
    base = results["bare json"]
    log(f"us per POST in process     one at a time   / bare   {IN_FLIGHT} at a time   / bare")
    log("-" * 76)
    for name, row in results.items():
        one, many = row["one_s"] * 1e6, row["in_flight_s"] * 1e6
        log(
            f"{name:24} {one:10.2f} {one / (base['one_s'] * 1e6):9.2f}"
            f" {many:16.2f} {many / (base['in_flight_s'] * 1e6):9.2f}"
        )
    return 0


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_measure(sys.argv[1]))))
