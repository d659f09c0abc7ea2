"""A real HTTP server on 127.0.0.1 for end-to-end tests: uvicorn (through mcpkit's own
hardened runner) in a background thread with its own asyncio loop, so tests drive it from
asyncio or trio alike."""

from __future__ import annotations

import asyncio
import contextvars
import subprocess
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from mcpkit.transports import HttpServer, serve_http

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]

#: Bound on starting and stopping the server thread.
_THREAD_TIMEOUT = 20.0


async def serve_lifespan(receive: Any, send: Any) -> None:
    """A plain ASGI app's lifespan: every event completed at once, until the shutdown."""
    while True:
        event = await receive()
        kind = event["type"].removeprefix("lifespan.")
        await send({"type": f"lifespan.{kind}.complete"})
        if kind == "shutdown":
            return


def _submit(coroutine: Any, loop: asyncio.AbstractEventLoop) -> Any:
    """``run_coroutine_threadsafe`` in an empty context: the task must not inherit the
    caller's context variables (sniffio's, set by trio, would make code on the server's
    asyncio loop believe it runs on trio)."""
    return contextvars.Context().run(asyncio.run_coroutine_threadsafe, coroutine, loop)


class RunningServer:
    """A server running in a thread; ``url`` is its base URL (no path)."""

    def __init__(self, http: HttpServer, loop: asyncio.AbstractEventLoop) -> None:
        self.http = http
        self.loop = loop
        self.url = http.url
        self.port = http.port

    def run(self, fn: Callable[[], Awaitable[Any]]) -> Any:
        """Await ``fn()`` on the server's loop and return its result (bounded)."""
        future: Any = _submit(_await(fn), self.loop)
        return future.result(timeout=_THREAD_TIMEOUT)

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the server's loop thread and return its result (bounded)."""
        future: Any = _submit(_call(fn), self.loop)
        return future.result(timeout=_THREAD_TIMEOUT)


async def _serve(
    serve: Callable[[Callable[[HttpServer], None]], Awaitable[None]],
    ready: Callable[[HttpServer], None],
) -> None:
    await serve(ready)


async def _call(fn: Callable[[], Any]) -> Any:
    return fn()


async def _await(fn: Callable[[], Awaitable[Any]]) -> Any:
    return await fn()


def running_server(
    app: ASGIApp, *, host: str = "127.0.0.1", **options: Any
) -> AbstractContextManager[RunningServer]:
    """Serve ``app`` on ``host`` at a free port for the duration of the block."""
    return running(lambda ready: serve_http(app, host=host, port=0, ready=ready, **options))


@contextmanager
def running(
    serve: Callable[[Callable[[HttpServer], None]], Awaitable[None]],
) -> Iterator[RunningServer]:
    """Run ``serve(ready)`` (which must listen on a free port and call ``ready``) in a
    thread of its own for the duration of the block: for servers started another way than
    :func:`running_server`'s, e.g. ``Server.serve_http``."""
    ready = threading.Event()
    box: dict[str, Any] = {}

    def on_ready(http: HttpServer) -> None:
        box["http"] = http
        box["loop"] = asyncio.get_running_loop()
        ready.set()

    def main() -> None:
        try:
            asyncio.run(_serve(serve, on_ready))
        except BaseException as exc:  # reported to the test thread below
            box["error"] = exc
            ready.set()

    thread = threading.Thread(target=main, name="test-http-server", daemon=True)
    thread.start()
    if not ready.wait(_THREAD_TIMEOUT):
        raise TimeoutError("the test HTTP server did not start")
    if "error" in box:
        raise box["error"]
    server = RunningServer(box["http"], box["loop"])
    try:
        yield server
    finally:
        server.http.stop()
        thread.join(_THREAD_TIMEOUT)
        if thread.is_alive():
            raise TimeoutError("the test HTTP server did not stop")
        if "error" in box:
            raise box["error"]


@contextmanager
def serving_process(
    argv: Sequence[str], *, cwd: Path | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A server process that says ``... serving <transport> on <url>`` first on stderr
    (``mcpkit run``, ``server.run``): the process and that URL (killed and reaped at the
    end, whatever happened; the rest of stderr is left to read)."""
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        yield process, process.stderr.readline().decode().rsplit(" on ", 1)[1].strip()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
