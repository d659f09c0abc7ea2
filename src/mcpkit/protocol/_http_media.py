"""Pure rules of the Streamable HTTP transport for media types: the essence of a
``Content-Type`` and whether an ``Accept`` value admits a media type (RFC 9110), memoized;
and the syntax of the header fields a client is given to send with every request.

Separate from ``_http.py`` (Host/Origin checks and session ids), which re-exports these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from ..exceptions import LocalProtocolError

__all__ = ["accepts", "checked_header_fields", "media_type"]


# RFC 9110 §5.6.2: token = 1*tchar; §5.6.4: quoted-string; §5.6.3: OWS = *( SP / HTAB ).
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QUOTED = r'"(?:[\t !#-\[\]-~\x80-\xff]|\\[\t -~\x80-\xff])*"'
_MEDIA_TYPE = re.compile(rf"{_TOKEN}/{_TOKEN}")
_RANGE_HEAD = re.compile(rf"[ \t]*({_TOKEN})/({_TOKEN})")
_PARAM = re.compile(rf"[ \t]*;[ \t]*(?:({_TOKEN})=({_TOKEN}|{_QUOTED}))?")
_QUOTED_PAIR = re.compile(r"\\(.)")
# RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
_QVALUE = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")
_FIELD_NAME = re.compile(_TOKEN)
# RFC 9110 §5.5: a field value is visible characters, SP and HTAB. CR and LF would end the
# field there and start another (header injection); NUL and the rest are refused too.
_FIELD_VALUE_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")

_Range = tuple[str, str, dict[str, str], float]

#: Media types that are UTF-8 by definition: JSON (RFC 8259 section 8.1, which defines
#: no charset parameter) and SSE (HTML "Server-sent events", always UTF-8). A range's
#: ``charset=utf-8`` names what they already are, so it does not make the range miss them.
_UTF8_ONLY: Final = frozenset({("application", "json"), ("text", "event-stream")})


def media_type(content_type: str | bytes | None) -> str:
    """The lowercase essence ``type/subtype`` of a ``Content-Type`` value (RFC 9110 §8.3.1),
    without parameters or surrounding whitespace; ``""`` for ``None``, an empty value or one
    that is not ``token/token``. Parameters are not validated."""
    if not content_type:
        return ""
    text = content_type.decode("latin-1") if isinstance(content_type, bytes) else content_type
    essence = text.split(";", 1)[0].strip(" \t")
    return essence.lower() if _MEDIA_TYPE.fullmatch(essence) else ""


#: Verdicts memoized per (header value, media type): a server sees a handful of distinct
#: Accept values, and parsing one costs more than the rest of a small request's checks.
_ACCEPT_VERDICTS: dict[tuple[str | bytes | None, str], bool] = {}
_MEMO_LIMIT: Final = 256


def accepts(accept: str | bytes | None, media: str) -> bool:
    """Whether an ``Accept`` header value admits ``media`` (RFC 9110 §12.5.1).

    The media ranges that match ``media`` (``*/*``, ``type/*``, ``type/subtype``; a range's
    parameters must all be present in ``media``) are ranked by specificity; the most
    specific decides, and it accepts unless its weight is 0 (``q=0``, ``q=0.0``...). Equally
    specific duplicates take the highest weight. Matching is case-insensitive. JSON and SSE
    are UTF-8 by definition, so for them a range's ``charset=utf-8`` is already met
    (``application/json; charset=utf-8`` admits ``application/json``). A malformed
    range (bad syntax, a ``q`` outside the RFC 9110 §12.4.2 grammar, two ``q`` parameters)
    matches nothing: being lenient there could turn a refusal into an acceptance.

    ``None`` (no header) returns ``True``: RFC 9110 says a request without Accept accepts
    any type. MCP requires POST requests to list both JSON and SSE, so callers that enforce
    that rule must check for a missing header themselves. A present but empty header lists
    nothing and accepts nothing.

    Raises:
        LocalProtocolError: ``media`` is not a concrete ``type/subtype`` (parameters allowed).
    """
    key = (accept, media)
    verdict = _ACCEPT_VERDICTS.get(key)
    if verdict is None:
        verdict = _accepts(accept, media)
        if len(_ACCEPT_VERDICTS) >= _MEMO_LIMIT:
            _ACCEPT_VERDICTS.clear()  # bounded: many distinct values just stop benefiting
        _ACCEPT_VERDICTS[key] = verdict
    return verdict


def _accepts(accept: str | bytes | None, media: str) -> bool:
    target = _parse_range(media)
    if target is None or "*" in (target[0], target[1]) or target[3] != 1.0:
        raise LocalProtocolError(f"not a concrete media type: {media!r}")
    if accept is None:
        return True
    text = accept.decode("latin-1") if isinstance(accept, bytes) else accept
    mtype, subtype, mparams, _ = target
    if (mtype, subtype) in _UTF8_ONLY and "charset" not in mparams:
        mparams = {**mparams, "charset": "utf-8"}
    best: tuple[int, int] = (-1, -1)
    weight = 0.0
    for element in _split_list(text):
        parsed = _parse_range(element)
        if parsed is None:
            continue
        rtype, rsub, rparams, q = parsed
        if rtype != "*" and (rtype != mtype or (rsub != "*" and rsub != subtype)):
            continue
        if any(mparams.get(name) != value for name, value in rparams.items()):
            continue
        rank = ((rtype != "*") + (rsub != "*"), len(rparams))
        if rank > best:
            best, weight = rank, q
        elif rank == best:
            weight = max(weight, q)
    return weight > 0.0


def _split_list(text: str) -> list[str]:
    # RFC 9110 §5.6.1 lists are comma-separated; a comma inside a quoted-string is data.
    if '"' not in text:
        return text.split(",")
    parts: list[str] = []
    start, quoted, escaped = 0, False, False
    for i, char in enumerate(text):
        if escaped:
            escaped = False
        elif quoted:
            if char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == ",":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _parse_range(element: str) -> _Range | None:
    """``media-range [weight]`` -> (type, subtype, params, q), or None if malformed/empty."""
    head = _RANGE_HEAD.match(element)
    if head is None:
        return None
    rtype, rsub = head.group(1).lower(), head.group(2).lower()
    if rtype == "*" and rsub != "*":
        return None
    params: dict[str, str] = {}
    q: float | None = None
    pos, end = head.end(), len(element)
    while pos < end:
        match = _PARAM.match(element, pos)
        if match is None:
            if element[pos:].strip(" \t"):
                return None
            break
        pos = match.end()
        name, raw = match.group(1), match.group(2)
        if name is None:  # an empty parameter (";;") is allowed by the grammar
            continue
        name = name.lower()
        if name == "q":
            # §12.5.1: "process any parameter named 'q' as weight, regardless of ordering".
            if q is not None or _QVALUE.fullmatch(raw) is None:
                return None
            q = float(raw)
        else:
            value = _QUOTED_PAIR.sub(r"\1", raw[1:-1]) if raw.startswith('"') else raw
            params[name] = value.lower()
    return rtype, rsub, params, 1.0 if q is None else q


#: Header fields a client transport sets itself (message framing, content negotiation,
#: MCP's own), lower-case: a caller's value would clash with the transport's, or send
#: a stale session id or version with a new session's first request.
TRANSPORT_FIELDS: Final = frozenset(
    {
        "accept",
        "accept-encoding",
        "connection",
        "content-length",
        "content-type",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
        "sec-websocket-protocol",
        "transfer-encoding",
        "upgrade",
    }
)


def checked_header_fields(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Header fields to send with every request, checked once, when they are given: each
    name an RFC 9110 token and none the transport sets itself (:data:`TRANSPORT_FIELDS`),
    each value a string of visible ASCII, spaces and tabs (section 5.5; non-ASCII text
    has to be encoded first, as RFC 8187 does).

    Raises:
        LocalProtocolError: a name or value that no request could carry, or a field the
            transport sets, named.
    """
    fields = dict(headers or {})
    for name, value in fields.items():
        if not isinstance(name, str) or not _FIELD_NAME.fullmatch(name):
            raise LocalProtocolError(f"invalid header name {name!r}: not an RFC 9110 token")
        if name.lower() in TRANSPORT_FIELDS:
            raise LocalProtocolError(f"header {name}: the transport sets it, not the caller")
        if not isinstance(value, str):
            raise LocalProtocolError(f"header {name}: the value must be a str, not {value!r}")
        if _FIELD_VALUE_CONTROL.search(value) or not value.isascii():
            raise LocalProtocolError(
                f"header {name}: invalid value {value!r} (control characters such as CR and "
                "LF, and non-ASCII text, cannot be sent as they are)"
            )
    return fields
