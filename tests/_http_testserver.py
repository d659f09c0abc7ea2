"""The server the HTTP transport tests run: tools that block on gates the test opens, so
every interleaving is forced by the test instead of left to timing."""

from __future__ import annotations

import threading
from collections import defaultdict

import anyio

from mcpkit.server import RequestContext, Server

#: Bound on any gate wait inside a tool.
GATE_TIMEOUT = 20.0


class Gates:
    """Named thread-safe events shared by the test thread and the server's loop thread."""

    def __init__(self) -> None:
        self._events: defaultdict[str, threading.Event] = defaultdict(threading.Event)
        self._lock = threading.Lock()

    def get(self, name: str) -> threading.Event:
        with self._lock:
            return self._events[name]

    def open(self, name: str) -> None:
        self.get(name).set()

    def forget(self, *names: str) -> None:
        """Drop gates no longer needed (tests that use many keep memory flat)."""
        with self._lock:
            for name in names:
                self._events.pop(name, None)

    async def wait(self, name: str) -> None:
        """Wait (from any async backend) until ``name`` is opened."""
        event = self.get(name)
        ok = await anyio.to_thread.run_sync(event.wait, GATE_TIMEOUT)
        if not ok:
            raise TimeoutError(f"gate {name!r} was never opened")


GATES = Gates()


async def hang_until_cancelled(cancelled: threading.Event, limit: float) -> str:
    """Wait (at most ``limit`` seconds) until cancelled, then set ``cancelled``: a tool
    body whose cancellation a test observes from its own thread."""
    try:
        await anyio.sleep(limit)
    except anyio.get_cancelled_exc_class():
        cancelled.set()
        raise
    return "never"


def build_server() -> Server:
    server = Server("http-test-server", "1.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    async def hold(ctx: RequestContext, key: str) -> str:
        """Log, signal ``<key>:started``, then wait for gate ``key``."""
        await ctx.log("info", f"holding {key}")
        GATES.open(f"{key}:started")
        await GATES.wait(key)
        return f"released {key}"

    @server.tool()
    async def poll(ctx: RequestContext, key: str) -> str:
        """Close this request's SSE connection (SEP-1699 polling), then wait for gate
        ``key`` before answering on the resumed stream."""
        closed = ctx.close_sse_stream(retry_ms=10)
        GATES.open(f"{key}:closed" if closed else f"{key}:not-closed")
        await GATES.wait(key)
        return f"polled {key}"

    @server.tool()
    async def progress(ctx: RequestContext) -> str:
        """Three progress notifications, then the answer."""
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3)
        return "progressed"

    @server.tool()
    async def ask(ctx: RequestContext, prompt: str) -> str:
        """Ask the client's model (sampling) and return its text."""
        result = await ctx.sample(prompt, max_tokens=10)
        text = getattr(result.content, "text", "")
        return f"model said {text}"

    return server
