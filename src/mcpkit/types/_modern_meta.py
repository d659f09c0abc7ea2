"""The ``_meta`` keys and method sets of the 2026-07-28 stateless era.

2026-07-28 ``basic/index.mdx`` "``_meta``": every request carries
``io.modelcontextprotocol/protocolVersion`` and ``io.modelcontextprotocol/clientCapabilities``
(required), ``io.modelcontextprotocol/clientInfo`` (SHOULD) and, to opt in to log messages,
``io.modelcontextprotocol/logLevel``; results SHOULD carry
``io.modelcontextprotocol/serverInfo``. ``basic/patterns/mrtr.mdx`` "Supported Requests"
and ``server/utilities/caching.mdx`` "Cacheable Results" name the method sets below.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CACHEABLE_METHODS",
    "INPUT_REQUIRED_METHODS",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "MODERN_VERSIONS",
]

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
#: On every notification of a subscriptions/listen stream: the listen request's id.
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"

#: Revisions without ``initialize`` that mcpkit speaks, oldest first.
MODERN_VERSIONS: Final[tuple[str, ...]] = ("2026-07-28",)
#: Requests a server may answer with ``resultType: "input_required"``; no other.
INPUT_REQUIRED_METHODS: Final = frozenset({"prompts/get", "resources/read", "tools/call"})
#: Requests whose complete results carry ``ttlMs`` and ``cacheScope``.
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
