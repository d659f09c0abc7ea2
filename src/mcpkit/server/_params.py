"""The params of the requests a :class:`~mcpkit.server.ServerSession` answers itself
(``initialize``, ``ping``, ``logging/setLevel``), decoded with their -32602 errors."""

from __future__ import annotations

from typing import Final

import msgspec

from ..protocol import decode_params
from ..types import InitializeRequestParams, RequestParams, SetLevelRequestParams

__all__ = ["INIT_DECODER", "PING_DECODER", "SET_LEVEL_DECODER", "decode_params"]

INIT_DECODER: Final = msgspec.json.Decoder(InitializeRequestParams)
SET_LEVEL_DECODER: Final = msgspec.json.Decoder(SetLevelRequestParams)
PING_DECODER: Final = msgspec.json.Decoder(RequestParams)
