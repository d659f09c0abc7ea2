"""What every 2026-07-28 result carries: ``resultType``, the server's identity in
``_meta`` and, on cacheable results, ``ttlMs`` and ``cacheScope``.

2026-07-28 ``basic/index.mdx`` (``resultType`` is required on every result; servers SHOULD
put ``io.modelcontextprotocol/serverInfo`` in every result's ``_meta``) and
``server/utilities/caching.mdx`` (``ttlMs`` >= 0 and ``cacheScope`` are REQUIRED on complete
results of ``server/discover``, the list methods and ``resources/read``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import msgspec
from msgspec import UNSET

from ..types import V2026_07_28, DiscoverResult, InputRequiredResult
from ._compat import capabilities_for
from ._modern import CACHEABLE_METHODS, SERVER_INFO

if TYPE_CHECKING:
    from ._lowlevel import LowLevelServer

__all__ = ["STRIPPERS", "discover_result", "finish_handshake", "finish_modern"]

#: Result members 2026-07-28 added: a handshake-era client never sees them.
_MODERN_ONLY: Final = ("result_type", "ttl_ms", "cache_scope")


def discover_result(server: LowLevelServer) -> DiscoverResult:
    """The ``server/discover`` result: every version this server speaks (newest first;
    the handshake-era ones are reached through ``initialize``), its capabilities as
    2026-07-28 defines them, and its instructions."""
    versions = sorted({*server.modern_versions, *server.supported_versions}, reverse=True)
    return DiscoverResult(
        supported_versions=versions,
        capabilities=capabilities_for(V2026_07_28, server.capabilities()),
        ttl_ms=server.cache_ttl_ms,
        cache_scope=server.cache_scope,
        instructions=UNSET if server.instructions is None else server.instructions,
    )


def finish_modern(server: LowLevelServer, method: str, result: Any) -> Any:
    """``result`` as a 2026-07-28 result of ``method``."""
    input_required = isinstance(result, InputRequiredResult)
    kind = "input_required" if input_required else "complete"
    cacheable = method in CACHEABLE_METHODS and not input_required
    if isinstance(result, msgspec.Struct):
        changes: dict[str, Any] = {}
        fields = result.__struct_fields__
        if "result_type" in fields and _member(result, "result_type") is UNSET:
            changes["result_type"] = kind
        if "meta" in fields:
            meta = _member(result, "meta")
            meta = {} if meta is UNSET else dict(meta)
            meta.setdefault(SERVER_INFO, server.info)
            changes["meta"] = meta
        if cacheable and "ttl_ms" in fields and _member(result, "ttl_ms") is UNSET:
            changes["ttl_ms"] = server.cache_ttl_ms
        if cacheable and "cache_scope" in fields and _member(result, "cache_scope") is UNSET:
            changes["cache_scope"] = server.cache_scope
        return msgspec.structs.replace(result, **changes) if changes else result
    if isinstance(result, dict):
        # A low-level handler's plain object: the same members, added where missing.
        result = dict(result)
        result.setdefault("resultType", kind)
        meta = dict(result.get("_meta") or {})
        meta.setdefault(SERVER_INFO, msgspec.to_builtins(server.info))
        result["_meta"] = meta
        if cacheable:
            result.setdefault("ttlMs", server.cache_ttl_ms)
            result.setdefault("cacheScope", server.cache_scope)
    return result


def finish_handshake(result: Any) -> Any:
    """``result`` without the members only 2026-07-28 defines (a handler may return a
    result with caching hints for both eras; older revisions do not have them)."""
    kind = type(result)
    strip = STRIPPERS.get(kind) or _stripper(kind)
    return strip(result)


def _unchanged(result: Any) -> Any:
    return result


def _stripper(kind: type) -> Callable[[Any], Any]:
    """For a result type: the function that unsets its 2026-only members (memoized; one
    C call reads them all, and a type without them costs a dict lookup and a call)."""
    names: tuple[str, ...] = ()
    if issubclass(kind, msgspec.Struct):
        fields = kind.__struct_fields__
        names = tuple(n for n in _MODERN_ONLY if n in fields)
    strip: Callable[[Any], Any] = _unchanged
    if names:
        read = operator.attrgetter(*names)
        unset = UNSET if len(names) == 1 else (UNSET,) * len(names)
        cleared = dict.fromkeys(names, UNSET)

        def strip(result: Any) -> Any:
            if read(result) == unset:
                return result
            return msgspec.structs.replace(result, **cleared)

    if len(STRIPPERS) < 256:  # bounded: result types are a handful
        STRIPPERS[kind] = strip
    return strip


#: Per result type, its :func:`_stripper`.
STRIPPERS: dict[type, Callable[[Any], Any]] = {}


def _member(struct: msgspec.Struct, name: str) -> Any:
    """A member of whichever result struct a handler returned (``UNSET`` if it has none)."""
    return getattr(struct, name, UNSET)
