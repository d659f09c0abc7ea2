"""Which JSON Schema dialect a schema document is written in (its ``$schema``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..exceptions import LocalProtocolError

__all__ = ["dialect_of"]

_DIALECTS = {
    "json-schema.org/draft/2020-12/schema": "2020-12",
    "json-schema.org/draft/2019-09/schema": "2019-09",
    "json-schema.org/draft-07/schema": "draft-07",
}


def dialect_of(schema: Any) -> str:
    """The dialect: "2020-12" (the default), "2019-09" or "draft-07".

    Raises:
        LocalProtocolError: ``$schema`` names another dialect.
    """
    uri = schema.get("$schema") if isinstance(schema, Mapping) else None
    if uri is None:
        return "2020-12"
    name = None
    if isinstance(uri, str):
        bare = uri.removesuffix("#")
        for scheme in ("https://", "http://"):
            if bare.startswith(scheme):
                name = _DIALECTS.get(bare[len(scheme) :])
    if name is None:
        raise LocalProtocolError(
            f"unsupported $schema dialect {uri!r}: use JSON Schema 2020-12, 2019-09 or draft-07"
        )
    return name
