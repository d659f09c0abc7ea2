"""The client's requests on the 2026-07-28 era: the per-request ``_meta``, the cache, and
the multi round-trip loop (see :mod:`._modern`, :mod:`._cache` and :mod:`._mrtr`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from msgspec import UNSET

from ..aio import Endpoint, ProgressCallback
from ..exceptions import LocalProtocolError
from ..types import ClientCapabilities, Implementation, LoggingLevel
from ._cache import ResultCache
from ._callbacks import ClientHandlers, capabilities_for
from ._methods import Timeout
from ._modern import ModernServer, as_params, request_meta
from ._mrtr import Deprecations, InputFulfiller, result_kind, run_rounds, until_closed
from ._sending import SlotSending

__all__ = ["Stateless"]


class Stateless(SlotSending):
    """The 2026-07-28 request path of :class:`~mcpkit.client.Client`."""

    handlers: ClientHandlers
    capabilities: ClientCapabilities
    client_info: Implementation
    cache: ResultCache | None
    deprecations: Deprecations
    max_input_rounds: int
    input_deadline: float | None
    _declared: ClientCapabilities
    _modern: ModernServer | None
    _log_level: LoggingLevel | None
    _endpoint: Endpoint | None

    async def _probe_once(self, method: str, params: Any, timeout: float) -> bytes:
        return await self._request_once(method, params, timeout, timeout, None)

    def _is_modern(self) -> bool:
        return self._modern is not None

    def _use_log_level(self, level: LoggingLevel) -> None:
        # 2026-07-28 basic/index.mdx "_meta": logLevel opts in per request (deprecated).
        self.deprecations.use("logging", "Logging (io.modelcontextprotocol/logLevel)")
        self._log_level = level

    async def _discover_now(self, timeout: Timeout) -> None:
        """``server/discover`` past the cache: the liveness check that replaces ``ping``."""
        assert self._modern is not None
        params = {"_meta": self._meta(self._modern.version)}
        raw = await self._request_once("server/discover", params, timeout, UNSET, None)
        result_kind(raw, "server/discover")

    def _meta(self, version: str) -> dict[str, Any]:
        declared = capabilities_for(version, self.capabilities)
        return request_meta(version, declared, self.client_info, self._log_level)

    async def _modern_request(
        self,
        method: str,
        params: Any,
        timeout: Timeout,
        max_timeout: Timeout,
        on_progress: ProgressCallback | None,
    ) -> tuple[bytes, Callable[[], None]]:
        """Send ``method`` on 2026-07-28: from the cache while fresh, else with the era's
        ``_meta``, following input-required results. Returns the result and a function that
        caches it, for the caller to call once the result decoded (an invalid one, cached,
        would fail every later call for its ``ttlMs`` without asking the server again);
        only a complete first answer with a positive ``ttlMs`` is cached (a retried one
        never is: caching.mdx "Cache Key")."""
        assert self._modern is not None
        try:
            built = as_params(params, self._meta(self._modern.version))
        except TypeError as exc:
            raise LocalProtocolError(str(exc)) from None
        cache = self.cache
        key = cache.key(method, built) if cache is not None else None
        mark = None
        if cache is not None and key is not None:
            cached = cache.get(key)
            if cached is not None:
                return cached, _keep_nothing
            mark = cache.mark()

        async def send(current: dict[str, Any]) -> bytes:
            return await self._request_once(method, current, timeout, max_timeout, on_progress)

        fulfiller = InputFulfiller(self.handlers, self._declared, self.deprecations)
        assert self._endpoint is not None
        endpoint = self._endpoint
        raw, kind, retried = await run_rounds(
            send,
            method,
            built,
            until_closed(fulfiller.fulfil, endpoint.wait_closed),
            max_rounds=self.max_input_rounds,
            deadline=self.input_deadline,
        )
        if cache is None or key is None or retried:
            return raw, _keep_nothing
        uri = built.get("uri") if method == "resources/read" else None
        keep = functools.partial(
            cache.put,
            key,
            raw,
            kind.ttl_ms,
            kind.cache_scope,
            uri if isinstance(uri, str) else None,
            mark=mark,
        )
        return raw, keep


def _keep_nothing() -> None:
    """What :meth:`Stateless._modern_request` returns for a result not to be cached."""
