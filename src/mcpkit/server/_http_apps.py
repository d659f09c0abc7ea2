"""Picking the ASGI application for an HTTP transport by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..exceptions import LocalProtocolError

if TYPE_CHECKING:
    from ._asgi import ASGIApp
    from ._lowlevel import LowLevelServer

__all__ = ["app_for"]


def app_for(server: LowLevelServer, transport: str, **options: Any) -> ASGIApp:
    """The ASGI app serving ``server`` over ``transport`` ("http", "sse" or "ws").

    Raises:
        LocalProtocolError: unknown transport or option.
    """
    if transport == "http":
        from ._streamable import StreamableHTTPApp

        try:
            return StreamableHTTPApp(server, **options)
        except TypeError as exc:
            raise LocalProtocolError(f"invalid option for the http transport: {exc}") from None
    if transport == "sse":
        from ._sse_app import SSEApp

        if "path" in options:  # the CLI's --path names the endpoint clients connect to
            options["sse_path"] = options.pop("path")
        try:
            return SSEApp(server, **options)
        except TypeError as exc:
            raise LocalProtocolError(f"invalid option for the sse transport: {exc}") from None
    if transport == "ws":
        from ._ws_app import WebSocketApp

        try:
            return WebSocketApp(server, **options)
        except TypeError as exc:
            raise LocalProtocolError(f"invalid option for the ws transport: {exc}") from None
    raise LocalProtocolError(
        f"unknown HTTP transport {transport!r}; available: 'http', 'sse', 'ws'"
    )
