"""The 2026-07-28 era on the server: stateless requests that carry their protocol version
and the client's capabilities in ``params._meta``.

2026-07-28 ``basic/index.mdx`` "Statelessness" and ``basic/versioning.mdx``: there is no
``initialize``; every request names its version (``io.modelcontextprotocol/protocolVersion``)
and the client's capabilities (``io.modelcontextprotocol/clientCapabilities``), may name
the client (``clientInfo``) and opt in to log messages (``logLevel``). A request missing a
required member is malformed (-32602); an unsupported version gets -32022 with the
supported list; a version that differs from the HTTP ``MCP-Protocol-Version`` header gets
-32020. One server serves both eras: a request is "modern" when it says so (these members,
a modern-only method, or a modern HTTP header); everything else follows the handshake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, get_args

import msgspec
from msgspec import Raw

from ..exceptions import RPCError
from ..types import (
    CACHEABLE_METHODS,
    HANDSHAKE_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    METHODS,
    V2026_07_28,
    ClientCapabilities,
    ErrorCode,
    Implementation,
    LoggingLevel,
    method_spec,
)
from ..types._echo import one_line, peer_text

__all__ = [
    "ABSENT_REQUESTS",
    "CACHEABLE_METHODS",
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "MODERN_ONLY_METHODS",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "ModernRequest",
    "exists_in_modern",
    "is_modern",
    "missing_capability",
    "parse_modern",
]

# The _meta keys and method sets are shared with the client (types/_modern_meta.py).
PROTOCOL_VERSION: Final = META_PROTOCOL_VERSION
CLIENT_CAPABILITIES: Final = META_CLIENT_CAPABILITIES
CLIENT_INFO: Final = META_CLIENT_INFO
LOG_LEVEL: Final = META_LOG_LEVEL
SERVER_INFO: Final = META_SERVER_INFO
SUBSCRIPTION_ID: Final = META_SUBSCRIPTION_ID

#: Methods that exist only in the stateless era: their presence alone makes a request
#: modern (a ``server/discover`` without ``_meta`` is a malformed modern request, -32602).
MODERN_ONLY_METHODS: Final = frozenset({"server/discover", "subscriptions/listen"})
_LEVELS: Final = frozenset(get_args(LoggingLevel))


class _Probe(msgspec.Struct):
    meta: Any = msgspec.field(default=None, name="_meta")


_PROBE: Final = msgspec.json.Decoder(_Probe)


class _ValidMeta(msgspec.Struct):
    """A well-formed 2026-07-28 ``_meta``, decoded in one pass (see :func:`parse_modern`)."""

    version: str = msgspec.field(name=PROTOCOL_VERSION)
    capabilities: ClientCapabilities = msgspec.field(name=CLIENT_CAPABILITIES)
    info: Implementation | None = msgspec.field(default=None, name=CLIENT_INFO)
    level: LoggingLevel | None = msgspec.field(default=None, name=LOG_LEVEL)


class _ValidParams(msgspec.Struct):
    meta: _ValidMeta = msgspec.field(name="_meta")


_VALID: Final = msgspec.json.Decoder(_ValidParams)


@dataclass(frozen=True, slots=True)
class ModernRequest:
    """What a 2026-07-28 request says about itself (its ``_meta``)."""

    protocol_version: str
    client_capabilities: ClientCapabilities
    client_info: Implementation | None
    log_level: LoggingLevel | None


def _meta_of(params: Raw | None) -> Any:
    if params is None:
        return None
    try:
        return _PROBE.decode(params).meta
    except msgspec.DecodeError:
        return None  # not an object: the params decoder reports it


def is_modern(method: str, params: Raw | None, header_version: str | None = None) -> bool:
    """Whether a request belongs to the 2026-07-28 era.

    Over HTTP the ``MCP-Protocol-Version`` header decides when present: a handshake-era
    version means the handshake era, anything else (2026-07-28, or a version this server
    does not know) is judged as a modern request, so an unknown version gets -32022.
    """
    if header_version is not None:
        return header_version not in HANDSHAKE_VERSIONS
    if method in MODERN_ONLY_METHODS:
        return True
    meta = _meta_of(params)
    return isinstance(meta, dict) and (PROTOCOL_VERSION in meta or CLIENT_CAPABILITIES in meta)


def parse_modern(
    params: Raw | None, supported: Sequence[str], header_version: str | None = None
) -> ModernRequest:
    """Read and check the ``_meta`` of a modern request.

    Raises:
        RPCError: -32602 for a missing or invalid member, -32020 when the version differs
            from the HTTP header, -32022 for a version not in ``supported``.
    """
    if params is not None:
        # The common case in one typed decode: a well-formed _meta of a served version.
        # Anything else takes the checks below, which say what is wrong, in their order.
        try:
            valid = _VALID.decode(params).meta
        except msgspec.DecodeError:  # (ValidationError included)
            pass
        else:
            declared = valid.version
            if (header_version is None or header_version == declared) and declared in supported:
                return ModernRequest(declared, valid.capabilities, valid.info, valid.level)
    meta = _meta_of(params)
    version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if not isinstance(version, str):
        # The version first, wherever it is known: a request of a later revision whose
        # _meta looks otherwise must learn which versions are served (-32022), not be
        # told its params are wrong (versioning.mdx: "MUST respond with an
        # UnsupportedProtocolVersionError").
        if header_version is not None and header_version not in supported:
            raise _unsupported(header_version, supported)
        if not isinstance(meta, dict):
            raise RPCError.invalid_params(
                f"Invalid params: a {V2026_07_28} request carries params._meta with "
                f"{PROTOCOL_VERSION!r} and {CLIENT_CAPABILITIES!r}"
            )
        raise RPCError.invalid_params(
            f"Invalid params: _meta[{PROTOCOL_VERSION!r}] is required (a string)"
        )
    if header_version is not None and header_version != version:
        raise RPCError(
            ErrorCode.HEADER_MISMATCH,
            f"Header mismatch: MCP-Protocol-Version is {peer_text(header_version)} but "
            f"_meta[{PROTOCOL_VERSION!r}] is {peer_text(version)}",
        )
    if version not in supported:
        raise _unsupported(version, supported)
    assert isinstance(meta, dict)
    if CLIENT_CAPABILITIES not in meta:
        raise RPCError.invalid_params(
            f"Invalid params: _meta[{CLIENT_CAPABILITIES!r}] is required ({{}} for none)"
        )
    capabilities = _convert(meta[CLIENT_CAPABILITIES], ClientCapabilities, CLIENT_CAPABILITIES)
    info = meta.get(CLIENT_INFO)
    client_info = None if info is None else _convert(info, Implementation, CLIENT_INFO)
    level = meta.get(LOG_LEVEL)
    if level is not None and level not in _LEVELS:
        raise RPCError.invalid_params(
            f"Invalid params: _meta[{LOG_LEVEL!r}] must be one of {sorted(_LEVELS)}, "
            f"not {peer_text(level)}"
        )
    return ModernRequest(version, capabilities, client_info, level)


def _unsupported(version: str, supported: Sequence[str]) -> RPCError:
    return RPCError(
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
        f"Unsupported protocol version {peer_text(version)}; supported: {', '.join(supported)}",
        {"supported": list(supported), "requested": version},
    )


def _convert(value: Any, kind: type[Any], key: str) -> Any:
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise RPCError.invalid_params(
            f"Invalid params: _meta[{peer_text(key)}]: {one_line(str(exc))}"
        ) from None


def exists_in_modern(method: str) -> bool:
    """Whether an MCP method exists in 2026-07-28 (vendor methods are judged by the
    server's routes). ``initialize``, ``ping``, ``logging/setLevel`` and resource
    (un)subscription do not: they get -32601 (HTTP 404)."""
    spec = method_spec(method)
    return spec is None or spec.in_version(V2026_07_28)


def _absent_requests(version: str) -> frozenset[str]:
    return frozenset(
        spec.name
        for spec in METHODS.values()
        if spec.kind == "request" and spec.sender != "server" and not spec.in_version(version)
    )


#: Per handshake-era version, the client requests that do not exist in it (2026-07-28's
#: ``subscriptions/listen``, ``server/discover``; 2025-11-25's tasks in older ones ...):
#: -32601 on a session of that version, however the server's routes are shared.
ABSENT_REQUESTS: Final = {version: _absent_requests(version) for version in HANDSHAKE_VERSIONS}


def missing_capability(name: str, value: Any = None, why: str = "") -> RPCError:
    """-32021: serving the request needs a client capability it did not declare;
    ``data.requiredCapabilities`` is a ``ClientCapabilities`` object naming it."""
    detail = f" ({why})" if why else ""
    return RPCError(
        ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {name}{detail}",
        {"requiredCapabilities": {name: {} if value is None else value}},
    )
