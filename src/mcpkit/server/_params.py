"""The params of the requests a :class:`~mcpkit.server.ServerSession` answers itself
(``initialize``, ``ping``, ``logging/setLevel``), decoded with their -32602 errors."""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import Raw

from ..exceptions import RPCError
from ..types import InitializeRequestParams, RequestParams, SetLevelRequestParams
from ..types._echo import one_line

__all__ = ["INIT_DECODER", "PING_DECODER", "SET_LEVEL_DECODER", "decode_params"]

INIT_DECODER: Final = msgspec.json.Decoder(InitializeRequestParams)
SET_LEVEL_DECODER: Final = msgspec.json.Decoder(SetLevelRequestParams)
PING_DECODER: Final = msgspec.json.Decoder(RequestParams)


def decode_params(decoder: msgspec.json.Decoder[Any], params: Raw | None, method: str) -> Any:
    """Decode a request's params with the method's decoder.

    Raises:
        RPCError: -32602 naming the field and the problem.
    """
    try:
        return decoder.decode(params if params is not None else b"{}")
    except msgspec.ValidationError as exc:
        raise RPCError.invalid_params(
            f"Invalid params for {method}: {one_line(str(exc))}"
        ) from None
