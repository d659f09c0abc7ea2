"""DNS-rebinding protection on every HTTP-based transport: the Host and Origin checks,
and saying in the server's log why a request was refused (2025-11-25
``basic/transports.mdx``, "Security Warning": servers MUST validate the Origin header)."""

from __future__ import annotations

import logging

from ..protocol import TransportSecurity
from ..types._echo import peer_text
from ._asgi import Headers

__all__ = ["check_security"]

logger = logging.getLogger("mcpkit.server.http")


def check_security(
    security: TransportSecurity, headers: Headers, *, handshake: bool = False
) -> tuple[int, str] | None:
    """Apply DNS-rebinding protection; returns ``(status, reason)`` to refuse with.

    A Host outside the allowlist gets 421 Misdirected Request (RFC 9110 15.5.20: this
    server does not answer for that name); a present but unlisted Origin gets 403
    (``basic/transports.mdx`` 2025-11-25, "Security Warning"). A missing Host, or Host or
    Origin given more than once, is a malformed request, not a name to allow: 400 (RFC
    9112 section 3.2: "more than one Host header field line"; a proxy may have read the
    other line). ``handshake``: a WebSocket opening handshake, where every refusal is 403
    (docs/websocket.md section 2). The first refusals of each unlisted value are logged
    with the setting that would allow it: behind a proxy or on a public name, every
    request is refused until the operator lists the name, and the client alone hears why.
    """
    host = headers.get(b"host")
    if host is None or b"host" in headers.duplicated:
        return _malformed(
            "the Host header is missing" if host is None else "more than one Host header",
            handshake,
        )
    if not security.host_allowed(host):
        shown = peer_text(host.decode("latin-1"))
        _report(security, "host", shown)
        if handshake:
            return 403, f"Forbidden: host {shown} is not allowed"
        return 421, f"Misdirected Request: host {shown} is not allowed"
    origin = headers.get(b"origin")
    if b"origin" in headers.duplicated:
        return _malformed("more than one Origin header", handshake)
    if not security.origin_allowed(origin):
        shown = peer_text((origin or b"").decode("latin-1"))
        _report(security, "origin", shown)
        return 403, f"Forbidden: origin {shown} is not allowed"
    return None


def _malformed(why: str, handshake: bool) -> tuple[int, str]:
    return (403, f"Forbidden: {why}") if handshake else (400, f"Bad Request: {why}")


def _report(security: TransportSecurity, kind: str, shown: str) -> None:
    # (keyed by the shown text, which is cut short: 32 long values hold little memory)
    if not security.first_refusal(kind, shown):
        return
    allowed = security.allowed_hosts if kind == "host" else security.allowed_origins
    logger.warning(
        "refused a request with %s %s (allowed: %s); if clients reach this server by it, "
        "add it with TransportSecurity(allowed_%ss=[...]) or `mcpkit run --allow-%s VALUE` "
        "(DNS-rebinding protection)%s",
        kind,
        shown,
        ", ".join(allowed) or "none",
        kind,
        kind,
        "; further refusals are not logged" if security.reports_ended else "",
    )
