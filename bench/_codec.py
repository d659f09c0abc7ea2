"""Codec benchmark: decode a ``tools/call`` request and encode its result, in-process.

One operation = the request bytes in, the response bytes out, with the echo "handler" in
between (the result's text is the request's ``arguments.text``), for three contenders:

``mcpkit``
    What the mcpkit server does per call: ``Connection.receive_message`` (envelope decode
    and classification, in-flight bookkeeping) gives a ``RequestReceived`` with raw params,
    ``msgspec.json.Decoder(CallToolRequestParams)`` decodes them, and
    ``Connection.send_result(id, CallToolResult(content=[TextContent(text=...)]))`` encodes
    the answer (which also retires the id, so the next op may reuse it).

``mcpkit-codec``
    mcpkit's codec alone, without the connection's in-flight bookkeeping: ``decode_message``
    (envelope decode and classification), the typed params decode, ``encode_result``.
    The codec target ("within 2x of bare msgspec") is judged on this contender; ``mcpkit``
    shows what the connection state adds on top.

``bare``
    The floor: plain ``msgspec`` structs, envelope and params decoded in one pass into one
    typed struct (``arguments`` as ``dict[str, Any]``, as mcpkit), and an equivalent
    response envelope struct encoded. No validation beyond the types.

``mcp``
    The official SDK ``mcp`` 2.3.0, mirroring its stdio server per inbound request:
    ``jsonrpc_message_adapter.validate_json`` (transport), ``progress_token_from_params``
    (dispatcher), ``_has_modern_envelope`` / ``_extract_meta`` /
    ``methods.validate_client_request`` / ``CallToolRequestParams.model_validate``
    (runner), then for the result ``_dump_result`` (``model_dump``),
    ``methods.serialize_server_result`` and ``_dump_result`` again (runner),
    ``JSONRPCResponse(...)`` (dispatcher) and ``model_dump_json(by_alias=True,
    exclude_unset=True)`` + UTF-8 encode (transport).

``mcp-models``
    For reference only: the SDK's pydantic models without the server's per-version surface
    validation (``validate_json`` + ``model_validate`` + ``model_dump`` +
    ``JSONRPCResponse(...).model_dump_json``), a lower bound for any pydantic-based server.

Payloads: a small and a 1 KiB ``text``, compact JSON (what most SDKs send), and the small
one with the spaces of Python's ``json.dumps`` defaults (a different decode path in mcpkit).
Framing (the trailing newline) is left out for every contender. Before timing, every
contender's output is checked to carry the same id and text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

import msgspec

from ._icount import instruction_counts
from ._timing import loop_overhead, time_ops

__all__ = ["PAYLOADS", "run_codec"]

REQUEST_ID: Final = 42
_KIB_TEXT: Final = ("The quick brown fox jumps over the lazy dog. " * 23)[:1024]
#: name -> (echoed text, compact JSON?). Compact is what most SDKs send; "spaced" is
#: Python's ``json.dumps`` default (``", "`` and ``": "`` separators).
PAYLOADS: Final[dict[str, tuple[str, bool]]] = {
    "small": ("hello, world", True),
    "1KiB": (_KIB_TEXT, True),
    "small spaced": ("hello, world", False),
}


def request_bytes(text: str, compact: bool = True) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": REQUEST_ID,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}},
        },
        separators=(",", ":") if compact else None,
    ).encode()


# -- contender: mcpkit ----------------------------------------------------------------


def mcpkit_op(request: bytes) -> Callable[[], bytes | None]:
    from mcpkit.protocol import Connection, RequestReceived
    from mcpkit.types import CallToolRequestParams, CallToolResult, TextContent

    connection = Connection()
    decoder = msgspec.json.Decoder(CallToolRequestParams)

    def op() -> bytes | None:
        event = connection.receive_message(request)
        if not isinstance(event, RequestReceived):
            raise AssertionError(f"unexpected event {event!r}")
        params = decoder.decode(event.params if event.params is not None else b"{}")
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        result = CallToolResult(content=[TextContent(text=arguments["text"])])
        return connection.send_result(event.request_id, result)

    return op


def mcpkit_codec_op(request: bytes) -> Callable[[], bytes]:
    from mcpkit.protocol import RequestReceived, decode_message, encode_result
    from mcpkit.types import CallToolRequestParams, CallToolResult, TextContent

    decoder = msgspec.json.Decoder(CallToolRequestParams)

    def op() -> bytes:
        message = decode_message(request)
        if type(message) is not RequestReceived:
            raise AssertionError(f"unexpected message {message!r}")
        params = decoder.decode(message.params if message.params is not None else b"{}")
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        result = CallToolResult(content=[TextContent(text=arguments["text"])])
        return encode_result(message.request_id, result)

    return op


# -- contender: bare msgspec ----------------------------------------------------------


class _BareParams(msgspec.Struct):
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)


class _BareRequest(msgspec.Struct):
    jsonrpc: str
    id: int | str
    method: str
    params: _BareParams


class _BareText(msgspec.Struct, tag="text", tag_field="type"):
    text: str


class _BareResult(msgspec.Struct):
    content: list[_BareText]


class _BareResponse(msgspec.Struct):
    jsonrpc: str
    id: int | str
    result: _BareResult


def bare_op(request: bytes) -> Callable[[], bytes]:
    decode = msgspec.json.Decoder(_BareRequest).decode
    encode = msgspec.json.Encoder().encode

    def op() -> bytes:
        message = decode(request)
        text = message.params.arguments["text"]
        return encode(_BareResponse("2.0", message.id, _BareResult([_BareText(text)])))

    return op


# -- contender: the official SDK ------------------------------------------------------


def mcp_server_op(request: bytes) -> Callable[[], bytes]:
    import mcp.server.runner as runner
    from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
    from mcp_types import (
        CallToolRequestParams,
        CallToolResult,
        JSONRPCRequest,
        JSONRPCResponse,
        TextContent,
        jsonrpc_message_adapter,
    )
    from mcp_types import methods as spec_methods

    version = "2025-11-25"  # what the handshake negotiates with the stdio benchmark client

    def op() -> bytes:
        # transport (mcp/server/stdio.py stdin_reader)
        message = jsonrpc_message_adapter.validate_json(request, by_name=False)
        if not isinstance(message, JSONRPCRequest):
            raise AssertionError(f"unexpected message {message!r}")
        params = message.params
        # dispatcher (_dispatch_request) and legacy loop (on_request)
        progress_token_from_params(params)
        if runner._has_modern_envelope(params):
            raise AssertionError("unexpected modern envelope")
        # runner (ServerRunner._on_request)
        runner._extract_meta(params)
        spec_methods.validate_client_request(message.method, version, params)
        typed = CallToolRequestParams.model_validate(
            {} if params is None else params, by_name=False
        )
        # the handler (bench/official_echo_server.py)
        text = (typed.arguments or {})["text"]
        result = CallToolResult(content=[TextContent(text=text)])
        # runner (_serialize, then _dump_result in _on_request)
        dumped = runner._dump_result(result)
        dumped = spec_methods.serialize_server_result(message.method, version, dumped)
        dumped = runner._dump_result(dumped)
        # dispatcher (_write_result) and transport (stdout_writer)
        response = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=dumped)
        return response.model_dump_json(by_alias=True, exclude_unset=True).encode()

    return op


def mcp_models_op(request: bytes) -> Callable[[], bytes]:
    from mcp_types import (
        CallToolRequestParams,
        CallToolResult,
        JSONRPCRequest,
        JSONRPCResponse,
        TextContent,
        jsonrpc_message_adapter,
    )

    def op() -> bytes:
        message = jsonrpc_message_adapter.validate_json(request, by_name=False)
        if not isinstance(message, JSONRPCRequest):
            raise AssertionError(f"unexpected message {message!r}")
        typed = CallToolRequestParams.model_validate(message.params or {}, by_name=False)
        text = (typed.arguments or {})["text"]
        result = CallToolResult(content=[TextContent(text=text)])
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        response = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=dumped)
        return response.model_dump_json(by_alias=True, exclude_unset=True).encode()

    return op


CONTENDERS: Final[dict[str, Callable[[bytes], Callable[[], object]]]] = {
    "mcpkit": mcpkit_op,
    "mcpkit-codec": mcpkit_codec_op,
    "bare": bare_op,
    "mcp": mcp_server_op,
    "mcp-models": mcp_models_op,
}


def _check(name: str, out: object, text: str) -> None:
    """Every contender must produce the same answer (modulo member order and isError)."""
    if not isinstance(out, bytes):
        raise AssertionError(f"{name}: produced {type(out).__name__}, not bytes")
    decoded = json.loads(out)
    ok = (
        decoded.get("jsonrpc") == "2.0"
        and decoded.get("id") == REQUEST_ID
        and decoded["result"]["content"] == [{"type": "text", "text": text}]
        and decoded["result"].get("isError", False) is False
    )
    if not ok:
        raise AssertionError(f"{name}: wrong answer {out[:200]!r}")


def run_codec(*, sample_s: float, repeats: int, instructions: bool = False) -> dict[str, Any]:
    """Run the codec benchmark; returns the JSON-ready section. With ``instructions``,
    also count CPU instructions per op with valgrind (deterministic on a noisy machine)."""
    payloads: dict[str, Any] = {}
    for payload, (text, compact) in PAYLOADS.items():
        request = request_bytes(text, compact)
        ops = {name: make(request) for name, make in CONTENDERS.items()}
        for name, op in ops.items():
            for _ in range(3):  # and the Connection really retires the id each time
                _check(name, op(), text)
        timings = time_ops(ops, sample_s=sample_s, repeats=repeats)
        best = {name: t.best for name, t in timings.items()}
        payloads[payload] = {
            "request_bytes": len(request),
            "contenders": {name: t.as_json() for name, t in timings.items()},
            "ratios": {
                "mcpkit/bare": best["mcpkit"] / best["bare"],
                "mcpkit-codec/bare": best["mcpkit-codec"] / best["bare"],
                "mcp/mcpkit": best["mcp"] / best["mcpkit"],
                "mcp-models/mcpkit": best["mcp-models"] / best["mcpkit"],
            },
        }
    counts = instruction_counts() if instructions else None
    return {
        "instructions": counts,
        "method": (
            "best of interleaved repeats of calibrated loops; seconds per decode+encode op; "
            "GC enabled; ratios from the best samples"
        ),
        "sample_s": sample_s,
        "repeats": repeats,
        "loop_overhead_s": loop_overhead(sample_s, repeats),
        "payloads": payloads,
    }
