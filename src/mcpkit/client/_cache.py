"""The client's cache of 2026-07-28 results that carry caching hints.

2026-07-28 ``server/utilities/caching.mdx``: complete results of ``server/discover``, the
list methods and ``resources/read`` carry ``ttlMs`` (fresh while ``now < t_received +
ttlMs``; absent or negative means 0, immediately stale) and ``cacheScope``. The key is the
method plus the params that affect the result (the ``uri``, the ``cursor``); a request
carrying ``inputResponses`` or ``requestState`` (a multi round-trip retry) and an
``input_required`` result are never cached; a relevant ``list_changed`` / ``updated``
notification invalidates at once.

A cache belongs to one :class:`~mcpkit.client.Client`, so it serves one authorization
context: a ``"private"`` entry is never shared with another caller, and a ``"public"`` one
is not shared either (sharing across clients is not offered).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from ..types import CACHEABLE_METHODS

__all__ = ["ResultCache"]

#: The longest a result is cached: a year (a server may ask for more; nothing fits forever).
_MAX_TTL_MS: Final = 365 * 24 * 3600 * 1000
#: Params members that belong to a multi round-trip retry: never part of a cacheable request.
_RETRY_MEMBERS: Final = ("inputResponses", "requestState")
#: Which cached methods a notification makes stale.
_INVALIDATES: Final = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
    "notifications/resources/updated": ("resources/read",),
}


@dataclass(frozen=True, slots=True)
class _Entry:
    raw: bytes
    expires: float
    scope: str
    uri: str | None
    #: What it counts against ``max_bytes``: the result and the uri kept with it.
    size: int


class ResultCache:
    """A bounded store of fresh results, keyed by method and result-affecting params.

    Args:
        max_entries: most results kept; the least recently used goes first.
        max_bytes: most bytes of results (with their uris) kept, likewise (a result
            larger than a quarter of it is not kept: a server cannot make the client hold
            what it likes; keys are fixed-size digests).
        clock: seconds from a monotonic clock (injectable for tests).

    Raises:
        ValueError: ``max_entries`` or ``max_bytes`` is not positive.
    """

    def __init__(
        self,
        max_entries: int = 256,
        *,
        max_bytes: int = 32 * 1024 * 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("max_entries and max_bytes must be at least 1")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.clock = clock
        self._entries: OrderedDict[tuple[str, bytes], _Entry] = OrderedDict()
        self._bytes = 0
        #: Counts invalidations: a result fetched across one of its method is not stored
        #: (see mark); ``_stale_at`` has the generation of each method's last one, and
        #: ``_cleared_at`` that of the last :meth:`clear` (which is one of every method).
        self._generation = 0
        self._stale_at: dict[str, int] = {}
        self._cleared_at = 0

    def mark(self) -> int:
        """Take before sending a request; give to :meth:`put` with its result. A result
        whose request was in flight when a notification made such results stale may
        already be stale itself (caching.mdx): it is then not stored. Other notifications
        (a log message, another list's change) do not stop it."""
        return self._generation

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def key(method: str, params: dict[str, Any]) -> tuple[str, bytes] | None:
        """The cache key of a request, or ``None`` when it must not be cached (not a
        cacheable method, or a multi round-trip retry). ``_meta`` is not part of the key:
        it names the client and the protocol, which are the same for every request.
        The params are kept as a digest: a cursor is the server's to choose, and a key
        holding it whole would let a server grow the cache past ``max_bytes``."""
        if method not in CACHEABLE_METHODS or any(m in params for m in _RETRY_MEMBERS):
            return None
        affecting = {name: value for name, value in params.items() if name != "_meta"}
        encoded = msgspec.json.encode(affecting, order="sorted")
        return method, hashlib.blake2b(encoded, digest_size=32).digest()

    def get(self, key: tuple[str, bytes]) -> bytes | None:
        """The cached result for ``key`` while it is fresh (a stale one is dropped)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if self.clock() >= entry.expires:
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return entry.raw

    def put(
        self,
        key: tuple[str, bytes],
        raw: bytes,
        ttl_ms: Any,
        scope: Any,
        uri: str | None = None,
        *,
        mark: int | None = None,
    ) -> None:
        """Store a complete result for ``ttl_ms`` milliseconds. A missing, non-integer or
        non-positive ``ttl_ms`` means immediately stale: nothing is stored; nor is it when
        an invalidation came after ``mark`` (see :meth:`mark`), or it is too large (the
        result and ``uri`` together)."""
        self._drop(key)
        if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms <= 0:
            return
        size = len(raw) + (0 if uri is None else len(uri))
        if mark is not None and max(self._cleared_at, self._stale_at.get(key[0], 0)) > mark:
            return
        if size * 4 > self.max_bytes:
            return
        scope = scope if scope in ("public", "private") else "private"
        # Capped: a number of hundreds of digits does not fit a float (OverflowError).
        ttl_s = min(ttl_ms, _MAX_TTL_MS) / 1000.0
        self._entries[key] = _Entry(raw, self.clock() + ttl_s, scope, uri, size)
        self._bytes += size
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))

    def _drop(self, key: tuple[str, bytes]) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry.size

    def invalidate(self, notification: str, uri: str | None = None) -> None:
        """Drop what ``notification`` makes stale: the matching list results, or the reads
        of ``uri`` for ``notifications/resources/updated``."""
        methods = _INVALIDATES.get(notification, ())
        if not methods:
            return  # nothing cached depends on it: results in flight stay cacheable
        self._generation += 1
        for method in methods:
            self._stale_at[method] = self._generation
        if notification == "notifications/resources/updated":
            doomed = [
                key
                for key, entry in self._entries.items()
                if key[0] == "resources/read" and (uri is None or entry.uri == uri)
            ]
        else:
            doomed = [key for key in self._entries if key[0] in methods]
        for key in doomed:
            self._drop(key)

    def clear(self) -> None:
        """Forget everything."""
        self._generation += 1
        self._cleared_at = self._generation
        self._entries.clear()
        self._bytes = 0
