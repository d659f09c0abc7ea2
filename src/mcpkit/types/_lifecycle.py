"""Handshake-era lifecycle messages: ``initialize``, ``notifications/initialized``, ``ping``."""

from __future__ import annotations

from ._base import UNSET, UnsetType
from ._common import (
    ClientCapabilities,
    Implementation,
    LoggingLevel,
    RequestParams,
    Result,
    ServerCapabilities,
)

__all__ = ["InitializeRequestParams", "InitializeResult", "SetLevelRequestParams"]


class InitializeRequestParams(RequestParams, kw_only=True):
    """``initialize`` params: the client's preferred version, capabilities and identity."""

    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation


class InitializeResult(Result, kw_only=True):
    """``initialize`` result: the negotiated version, server capabilities and identity."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | UnsetType = UNSET


class SetLevelRequestParams(RequestParams, kw_only=True):
    """``logging/setLevel`` params (handshake era)."""

    level: LoggingLevel
