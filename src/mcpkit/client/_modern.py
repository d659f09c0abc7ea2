"""The 2026-07-28 era on the client: finding out which era a server speaks, and the
per-request ``_meta`` that replaces ``initialize``.

2026-07-28 ``basic/versioning.mdx`` "Backward Compatibility" and
``basic/transports/stdio.mdx`` "Backward Compatibility": a dual-era client probes with
``server/discover`` carrying its modern ``_meta``. A ``DiscoverResult`` means a modern
server; a recognized modern error (``UnsupportedProtocolVersionError``, -32022, with its
``supported`` list) means a modern server that wants another version: pick one from the
list rather than falling back. Any other error, no answer in time, or (Streamable HTTP) a
4xx without a modern JSON-RPC body means a legacy server: ``initialize``. The fallback is
not keyed to one error code.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET

from ..exceptions import (
    MessageNotDelivered,
    RemoteProtocolError,
    RequestTimeoutError,
    RPCError,
)
from ..types import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MODERN_VERSIONS,
    ClientCapabilities,
    DiscoverResult,
    ErrorCode,
    Implementation,
    LoggingLevel,
)
from ._mrtr import result_kind
from ._urls import falls_back_to_sse

__all__ = ["Era", "ModernServer", "as_params", "discover", "request_meta"]

logger = logging.getLogger("mcpkit.client")

#: Which era a :class:`~mcpkit.client.Client` speaks: ``"auto"`` probes and falls back,
#: ``"2026-07-28"`` requires the stateless era, ``"handshake"`` always uses ``initialize``.
Era = Literal["auto", "2026-07-28", "handshake"]
#: Errors that only a modern server sends: the server is modern, do not fall back.
_MODERN_ERRORS: Final = frozenset(
    {
        ErrorCode.HEADER_MISMATCH,
        ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
    }
)

SendOnce = Callable[[str, Any, float], Awaitable[bytes]]


@dataclass(frozen=True, slots=True)
class ModernServer:
    """What ``server/discover`` said about a 2026-07-28 server."""

    version: str
    discovered: DiscoverResult
    server_info: Implementation


class _Discovered(DiscoverResult, kw_only=True):
    # Some servers put serverInfo at the top level instead of in _meta; accepted here.
    server_info: Any = msgspec.field(default=UNSET, name="serverInfo")


_DISCOVERED: Final = msgspec.json.Decoder(_Discovered)


def request_meta(
    version: str,
    capabilities: ClientCapabilities,
    client_info: Implementation,
    log_level: LoggingLevel | None,
) -> dict[str, Any]:
    """The ``_meta`` members every 2026-07-28 request carries (``basic/index.mdx``
    "``_meta``"): the version and capabilities (required), the client's identity
    (SHOULD) and the log level, only when the user chose one (no level: no logs)."""
    meta: dict[str, Any] = {
        META_PROTOCOL_VERSION: version,
        META_CLIENT_CAPABILITIES: msgspec.to_builtins(capabilities),
        META_CLIENT_INFO: msgspec.to_builtins(client_info),
    }
    if log_level is not None:
        meta[META_LOG_LEVEL] = log_level
    return meta


def as_params(params: Any, meta: dict[str, Any]) -> dict[str, Any]:
    """``params`` (a struct, a mapping or ``UNSET``) as a JSON object with ``meta`` merged
    into its ``_meta`` (the caller's own ``_meta`` members are kept)."""
    built = {} if params is UNSET or params is None else msgspec.to_builtins(params)
    if not isinstance(built, dict):
        raise TypeError(f"request params must be an object, not {type(built).__name__}")
    own = built.get("_meta")
    built["_meta"] = {**own, **meta} if isinstance(own, dict) else dict(meta)
    return built


def _pick(supported: Any) -> str | None:
    if not isinstance(supported, list):
        return None
    mine = [version for version in supported if version in MODERN_VERSIONS]
    return max(mine) if mine else None


def _server_info(result: _Discovered) -> Implementation:
    meta = result.meta if isinstance(result.meta, dict) else {}
    for candidate in (meta.get(META_SERVER_INFO), result.server_info):
        if isinstance(candidate, dict):
            try:
                return msgspec.convert(candidate, Implementation)
            except msgspec.ValidationError:
                logger.warning("ignoring an invalid serverInfo in the discover result")
    # serverInfo is a SHOULD; without it the server stays anonymous.
    return Implementation(name="", version="")


async def discover(
    send: SendOnce,
    meta_for: Callable[[str], dict[str, Any]],
    timeout: float,
) -> ModernServer | str:
    """Probe with ``server/discover``: the modern server found, or why the server is
    taken for a legacy one (then ``initialize`` follows).

    Raises:
        RPCError: a recognized modern error (the server is modern, but refused the probe
            itself, or refused the version it listed as supported).
        MessageNotDelivered: unreachable, or an HTTP status other than a 4xx that means
            "not this kind of endpoint" (401, 403, 408, 429, 5xx).
        ConnectionClosedError: the connection ended.
    """
    version = MODERN_VERSIONS[-1]
    for attempt in range(2):
        try:
            raw = await send("server/discover", {"_meta": meta_for(version)}, timeout)
        except RPCError as exc:
            if exc.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and attempt == 0:
                # versioning.mdx: retry with a mutually supported version from the list
                # (the same one again if the server lists what it just refused), or use
                # a listed handshake version through initialize.
                data = exc.data if isinstance(exc.data, dict) else {}
                retry = _pick(data.get("supported"))
                if retry is None:
                    return f"the server supports none of {', '.join(MODERN_VERSIONS)} ({exc})"
                version = retry
                continue
            if exc.code in _MODERN_ERRORS:
                raise
            return f"server/discover was refused ({exc})"
        except RequestTimeoutError:
            return f"server/discover got no answer within {timeout} s"
        except RemoteProtocolError as exc:  # e.g. a result that is not an object
            return f"server/discover got an answer that is not a discover result ({exc})"
        except MessageNotDelivered as exc:
            # streamable-http.mdx "Backward Compatibility": a 4xx without a modern error
            # body means a legacy server; authentication failures, 5xx and unreachable
            # servers would fail initialize the same way, so they are reported.
            if not falls_back_to_sse(exc):
                raise
            return f"server/discover was refused over HTTP ({exc})"
        break
    try:
        result_kind(raw, "server/discover")
        result = _DISCOVERED.decode(raw)
    except (RemoteProtocolError, msgspec.ValidationError) as exc:
        # Not a DiscoverResult: a legacy server answering an unknown method its own way.
        return f"server/discover got an answer that is not a discover result ({exc})"
    supported = result.supported_versions
    chosen = version if version in supported else _pick(supported)
    if chosen is None:
        return f"the server's supported versions ({', '.join(supported)}) include no stateless one"
    return ModernServer(chosen, result, _server_info(result))
