"""Stopping a served process: SIGINT and SIGTERM as a graceful stop, and a watchdog that
ends the process when a stop takes too long (``serve_stdio(exit_after=...)``)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anyio

__all__ = ["ExitWatchdog", "on_sigint", "stop_signals"]

logger = logging.getLogger("mcpkit.server")


class ExitWatchdog:
    """Ends the process ``seconds`` after the first call, unless it ended before."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._timer: threading.Timer | None = None

    def __call__(self, status: int) -> None:
        if self._timer is not None:
            return
        self._timer = threading.Timer(self.seconds, self._fire, args=(status,))
        self._timer.daemon = True
        self._timer.start()

    def stop_signal(self, status: int) -> None:
        """A stop signal: the first arms the watchdog (as a client leaving does); one while
        a stop is under way insists, and the process ends now with ``status``. (An MCP
        host's SIGTERM comes after it closed the server's stdin and waited,
        ``basic/lifecycle.mdx`` "Shutdown"; Ctrl-C pressed again.)"""
        if self._timer is not None:
            _flush_and_exit(status)
        self(status)

    def _fire(self, status: int) -> None:
        logger.warning(
            "the server did not stop within %g s of its client leaving or a stop signal "
            "(a handler that ignores cancellation?); exiting",
            self.seconds,
        )
        _flush_and_exit(status)


def _flush_and_exit(status: int) -> None:
    for stream in (sys.stderr, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    os._exit(status)


@contextlib.contextmanager
def on_sigint(hook: Callable[[], None] | None) -> Iterator[None]:
    """Call ``hook`` on SIGINT, before the handler in place (asyncio's or trio's, which
    starts the shutdown). Only in the main thread, where signal handlers live."""
    if hook is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum: int, frame: Any) -> None:
        hook()
        if callable(previous):
            previous(signum, frame)
        else:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _runtime_handles(signum: int) -> bool:
    """Whether ``signum``'s handler is the default or the event loop's (asyncio's, anyio's
    or trio's), not one the program installed (or ``SIG_IGN``: a background job's SIGINT)."""
    handler = signal.getsignal(signum)
    if handler is signal.SIG_DFL or handler is signal.default_int_handler:
        return True
    module = getattr(getattr(handler, "func", handler), "__module__", None) or ""
    return module.split(".")[0] in ("asyncio", "anyio", "trio")


@contextlib.contextmanager
def stop_signals(wanted: bool) -> Iterator[tuple[AsyncIterator[int] | None, bool]]:
    """SIGINT and SIGTERM as a stream of signals, and whether SIGINT is among them, for
    a graceful stop on either, on either backend: the serving task group is cancelled, so
    every handler sees a cancellation at a checkpoint and the lifespan exits. Left to the
    runtime, SIGTERM ended the process at once (no lifespan exit), and on trio Ctrl-C
    raised KeyboardInterrupt in whatever code ran, which could cut a handler's coroutine
    before its first step ("coroutine ... was never awaited" on stderr at exit). A signal
    whose handler is the program's own is left to it; a second signal while stopping is
    the caller's to act on (``serve_stdio`` then ends the process at once). ``(None,
    False)`` unless ``wanted``, in the main thread, on a loop that can (asyncio's on
    Windows cannot). The handlers in place before are put back afterwards.
    """
    taken = [s for s in (signal.SIGINT, signal.SIGTERM) if wanted and _runtime_handles(s)]
    if not taken or threading.current_thread() is not threading.main_thread():
        yield None, False
        return
    previous = {signum: signal.getsignal(signum) for signum in taken}
    try:
        receiver = anyio.open_signal_receiver(*taken)
        signals = receiver.__enter__()
    except NotImplementedError:  # pragma: no cover - asyncio's Windows loops only
        # (They have no add_signal_handler, and the suite runs on Linux. Ctrl-C keeps the
        # runtime's handling there, with on_sigint chained to it, as before.)
        yield None, False
        return
    try:
        yield signals, signal.SIGINT in taken
    finally:
        receiver.__exit__(None, None, None)
        for signum, handler in previous.items():  # (asyncio's exit leaves the defaults)
            if handler is not None:
                signal.signal(signum, handler)
