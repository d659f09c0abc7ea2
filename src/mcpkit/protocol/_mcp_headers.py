"""The MCP request headers of Streamable HTTP 2026-07-28 (SEP-2243), sans-I/O: the
``=?base64?...?=`` value codec, the headers a client sends with a request (``Mcp-Method``,
``Mcp-Name``, ``Mcp-Param-{Name}``) and the server's check of those headers against the
body.

2026-07-28 ``basic/transports/streamable-http.mdx``: "Standard Request Headers", "Custom
Headers from Tool Parameters" ("Value Encoding", "Server Behavior for Custom Headers") and
"Server Validation".
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..exceptions import LocalProtocolError, RemoteProtocolError
from ..types import Tool
from ..types._echo import peer_text
from ._header_params import ParamHeader, param_headers

__all__ = [
    "MAX_SAFE_INTEGER",
    "NAMED_METHODS",
    "SENTINEL_PREFIX",
    "SENTINEL_SUFFIX",
    "decode_header_value",
    "encode_header_value",
    "header_text",
    "headers_for_request",
    "needs_encoding",
    "request_header_problem",
]

SENTINEL_PREFIX: Final = "=?base64?"
SENTINEL_SUFFIX: Final = "?="
#: Mirrored integers stay within what an IEEE 754 double holds exactly (2^53 - 1).
MAX_SAFE_INTEGER: Final = 2**53 - 1
#: Methods whose target travels in ``Mcp-Name``, and the params member naming it.
NAMED_METHODS: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# "Value Encoding": a plain value is visible ASCII and spaces with no space at either end
# (RFC 9110 field values drop surrounding whitespace); the empty string is plain too.
_PLAIN: Final = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?")
# What may arrive in a header at all (RFC 9110 §5.5 field-vchar, SP, HTAB): obs-text
# (0x80-0xFF) or control characters are "invalid characters" (Server Behavior).
_RECEIVABLE: Final = re.compile(r"[\t\x20-\x7e]*")
_BASE64: Final = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
# A JSON number: an integer parameter is compared numerically ("42.0" equals 42).
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _sentinel_shaped(value: str) -> bool:
    return value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX)


def needs_encoding(value: str) -> bool:
    """Whether ``value`` must travel Base64-encoded: it holds non-ASCII or control
    characters, starts or ends with whitespace, or looks like the sentinel itself."""
    return not _PLAIN.fullmatch(value) or _sentinel_shaped(value)


def encode_header_value(value: str) -> str:
    """``value`` as an ``Mcp-Name`` / ``Mcp-Param-*`` header value: as it is when plain,
    else ``=?base64?{Base64 of UTF-8}?=``."""
    if not needs_encoding(value):
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{SENTINEL_PREFIX}{encoded}{SENTINEL_SUFFIX}"


def decode_header_value(value: str) -> str:
    """A received ``Mcp-Name`` / ``Mcp-Param-*`` value with the sentinel decoded; a value
    without both markers is literal.

    Raises:
        RemoteProtocolError: characters a header may not carry, or a sentinel whose content
            is not padded standard Base64 of UTF-8 text.
    """
    if not _RECEIVABLE.fullmatch(value):
        raise RemoteProtocolError("the value holds characters a header may not carry")
    if not _sentinel_shaped(value) or len(value) < len(SENTINEL_PREFIX + SENTINEL_SUFFIX):
        return value
    inner = value[len(SENTINEL_PREFIX) : -len(SENTINEL_SUFFIX)]
    # b64decode(validate=True) still accepts non-zero pad bits; one canonical spelling per
    # value keeps a proxy and the server from reading two different strings.
    if not _BASE64.fullmatch(inner):
        raise RemoteProtocolError("the =?base64?...?= value is not padded standard Base64")
    try:
        decoded = base64.b64decode(inner, validate=True)
        if base64.b64encode(decoded).decode("ascii") != inner:
            raise ValueError("non-canonical padding bits")
        return decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        raise RemoteProtocolError(
            "the =?base64?...?= value is not canonical Base64 of UTF-8 text"
        ) from None


def header_text(value: Any) -> str:
    """An argument value as header text before encoding ("Type conversion"): strings as
    they are, integers in decimal, booleans as ``true`` / ``false``.

    Raises:
        LocalProtocolError: a value no header can mirror (an object, an array, a
            fractional number) or an integer beyond the safe range (2^53 - 1).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise LocalProtocolError(f"{value} is beyond the safe integer range of a header")
        return str(value)
    raise LocalProtocolError(
        f"a {type(value).__name__} cannot be mirrored into a header "
        "(only strings, integers and booleans)"
    )


def headers_for_request(
    method: str, params: Mapping[str, Any] | None, tool: Tool | None = None
) -> dict[str, str]:
    """The MCP headers of a 2026-07-28 POST carrying ``method``: ``Mcp-Method``,
    ``Mcp-Name`` for ``tools/call`` / ``prompts/get`` / ``resources/read``, and for
    ``tools/call`` one ``Mcp-Param-{Name}`` per annotated argument that has a value
    (``tool`` is the called tool's definition; without it no ``Mcp-Param`` is sent).

    Raises:
        LocalProtocolError: a method name that is not plain visible ASCII, a ``tool`` that
            is not the one called or has invalid ``x-mcp-header`` annotations, or an
            annotated argument no header can carry (see :func:`header_text`).
    """
    if needs_encoding(method) or not method:
        raise LocalProtocolError(f"method {method!r} cannot travel in the Mcp-Method header")
    headers = {"Mcp-Method": method}
    member = NAMED_METHODS.get(method)
    target = params.get(member) if params is not None and member is not None else None
    if isinstance(target, str):
        headers["Mcp-Name"] = encode_header_value(target)
    if tool is not None and method == "tools/call":
        if target != tool.name:
            raise LocalProtocolError(f"tool {tool.name!r} is not the one called ({target!r})")
        arguments = params.get("arguments") if params is not None else None
        for param in param_headers(tool.input_schema):
            value = param.value_in(arguments)
            if value is not None:
                try:
                    text = header_text(value)
                except LocalProtocolError as exc:
                    raise LocalProtocolError(f"{param.where} ({param.header}): {exc}") from None
                headers[param.header] = encode_header_value(text)
    return headers


def _mismatch(text: str, value: Any) -> str | None:
    """Why decoded header ``text`` does not mirror body ``value``, or ``None``."""
    if isinstance(value, bool):
        return None if text == ("true" if value else "false") else "does not match"
    if isinstance(value, (int, float)):
        if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
            return "mirrors an integer beyond the safe range (2^53 - 1)"
        if not _NUMBER.fullmatch(text):
            return "is not a number"
        from decimal import Decimal  # exact comparison, loaded only for numbers

        # streamable-http.mdx, "Server Validation": integers compare numerically.
        try:
            return None if Decimal(text) == Decimal(value) else "does not match"
        except ArithmeticError:  # an exponent beyond what Decimal represents
            return "does not match"
    if isinstance(value, str):
        return None if text == value else "does not match"
    return "cannot mirror a non-primitive value"


def request_header_problem(
    method: str,
    params: Mapping[str, Any] | None,
    headers: Mapping[str, str],
    params_mirrored: Sequence[ParamHeader] = (),
) -> str | None:
    """Why a 2026-07-28 POST's MCP headers disagree with its body, or ``None``: the
    server answers a problem with HTTP 400 and -32020 ``HeaderMismatch``.

    Args:
        method: the body's method.
        params: the body's params (``None``: absent or not an object).
        headers: the request's headers, names in lower case.
        params_mirrored: for ``tools/call``, the called tool's :func:`param_headers`.
    """
    sent = headers.get("mcp-method")
    if sent is None:
        return "the Mcp-Method header is required"
    if sent != method:
        return f"Mcp-Method {peer_text(sent)} does not match the body's method {peer_text(method)}"
    member = NAMED_METHODS.get(method)
    target = params.get(member) if params is not None and member is not None else None
    if isinstance(target, str):
        raw = headers.get("mcp-name")
        if raw is None:
            return f"the Mcp-Name header is required for {method}"
        try:
            if decode_header_value(raw) != target:
                return f"Mcp-Name does not match params.{member}"
        except RemoteProtocolError as exc:
            return f"Mcp-Name: {exc}"
    if method != "tools/call" or params is None:
        return None
    arguments = params.get("arguments")
    for param in params_mirrored:
        raw = headers.get(param.header.lower())
        value = param.value_in(arguments)
        if value is None:
            # "Parameter value is null / not in arguments: Server MUST NOT expect the
            # header"; one sent anyway names a value the body does not hold.
            if raw is not None:
                return f"{param.header} is sent but {param.where} has no value"
            continue
        if raw is None:
            return f"the {param.header} header is required: {param.where} has a value"
        try:
            text = decode_header_value(raw)
        except RemoteProtocolError as exc:
            return f"{param.header}: {exc}"
        problem = _mismatch(text, value)
        if problem is not None:
            return f"{param.header} {problem} {param.where}"
    return None
