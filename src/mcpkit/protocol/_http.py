"""Pure rules of the Streamable HTTP transport: media types, Accept, Host/Origin checks and
session ids (sans-I/O; the transports layer applies them to real requests).

References: RFC 9110 (HTTP semantics), RFC 3986 (URI authority), RFC 6454 (Origin) and MCP
2025-11-25 ``basic/transports.mdx``, "Streamable HTTP".
"""

from __future__ import annotations

import ipaddress
import re
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from ..exceptions import LocalProtocolError

__all__ = [
    "SESSION_ID_MAX_LENGTH",
    "TransportSecurity",
    "accepts",
    "media_type",
    "new_session_id",
    "valid_session_id",
]

# RFC 9110 §5.6.2: token = 1*tchar; §5.6.4: quoted-string; §5.6.3: OWS = *( SP / HTAB ).
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QUOTED = r'"(?:[\t !#-\[\]-~\x80-\xff]|\\[\t -~\x80-\xff])*"'
_MEDIA_TYPE = re.compile(rf"{_TOKEN}/{_TOKEN}")
_RANGE_HEAD = re.compile(rf"[ \t]*({_TOKEN})/({_TOKEN})")
_PARAM = re.compile(rf"[ \t]*;[ \t]*(?:({_TOKEN})=({_TOKEN}|{_QUOTED}))?")
_QUOTED_PAIR = re.compile(r"\\(.)")
# RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
_QVALUE = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")

_Range = tuple[str, str, dict[str, str], float]


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
    specific duplicates take the highest weight. Matching is case-insensitive. A malformed
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


# --------------------------------------------------------------------------- Host / Origin

# RFC 3986 §3.2.2 host (reg-name restricted to letters, digits, "-" and ".", the names DNS
# and browsers use), IPv4 literal or "[IPv6]" (no zone id, no IPvFuture); §3.2.3 port.
_AUTHORITY = re.compile(r"(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::([0-9]{1,5}|\*))?")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*")
_ANY_PORT: Final = -1  # an allowlist entry ``name:*``: any port, or none
_LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")
_LOOPBACK_ORIGINS: Final = tuple(f"{s}://{h}" for h in _LOOPBACK_HOSTS for s in ("http", "https"))

# (scheme, or "" for a Host value; canonical host; port, None, or _ANY_PORT in entries)
_Key = tuple[str, str, int | None]


def _parse_host(text: str, entry: bool = False) -> _Key | None:
    """``("", host, port)`` of a strictly valid ``host[:port]``, else None.

    Host names are lowercased; a trailing dot, empty labels and labels that start or end
    with "-" are rejected (no normalisation a rebinding probe could exploit). A name whose
    last label is numeric must be a dotted-quad IPv4 literal (WHATWG URL treats such names
    as IPv4, so ``127.1`` is rejected rather than guessed). ``:*`` only in allowlist entries.
    """
    match = _AUTHORITY.fullmatch(text)
    if match is None:
        return None
    v6, name, port_text = match.groups()
    if v6 is not None:
        try:
            host = f"[{ipaddress.IPv6Address(v6).compressed}]"
        except ValueError:
            return None
    else:
        host = name.lower()
        labels = host.split(".")
        if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
            return None
        if labels[-1].isdigit():
            try:
                host = str(ipaddress.IPv4Address(host))
            except ValueError:
                return None
    if port_text is None:
        return "", host, None
    if port_text == "*":
        return ("", host, _ANY_PORT) if entry else None
    port = int(port_text)
    return ("", host, port) if port <= 65535 else None


def _parse_origin(text: str, entry: bool = False) -> _Key | None:
    """``(scheme, host, port)`` of a serialized origin (RFC 6454 §6.2: ``scheme "://" host
    [ ":" port ]``, nothing after it), else None."""
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep or _SCHEME.fullmatch(scheme) is None:
        return None
    authority = _parse_host(rest, entry)
    return None if authority is None else (scheme, authority[1], authority[2])


def _header_key(value: str | bytes, parse: Callable[[str], _Key | None]) -> _Key | None:
    if isinstance(value, bytes):
        try:
            value = value.decode("ascii")
        except UnicodeDecodeError:
            return None
    return parse(value) if value.isascii() else None


def _compile(
    values: Iterable[str], parse: Callable[[str, bool], _Key | None], what: str
) -> tuple[bool, frozenset[_Key], tuple[str, ...]]:
    """(allow all, keys, normalised texts) of an allowlist; no port means any port."""
    allow_all = False
    keys: list[_Key] = []
    texts: list[str] = []
    for value in values:
        if value == "*":
            allow_all = True
            texts.append("*")
            continue
        key = parse(value, True) if isinstance(value, str) else None
        if key is None:
            raise LocalProtocolError(f"malformed allowed {what}: {value!r}")
        scheme, host, port = key
        port = _ANY_PORT if port is None else port
        keys.append((scheme, host, port))
        prefix = f"{scheme}://" if scheme else ""
        texts.append(f"{prefix}{host}" if port == _ANY_PORT else f"{prefix}{host}:{port}")
    return allow_all, frozenset(keys), tuple(dict.fromkeys(texts))


def _matches(keys: frozenset[_Key], key: _Key) -> bool:
    return key in keys or (key[0], key[1], _ANY_PORT) in keys


class TransportSecurity:
    """DNS-rebinding protection: Host and Origin allowlists (MCP 2025-11-25
    ``basic/transports.mdx`` "Security Warning": servers MUST validate the Origin header and
    SHOULD bind to localhost only; MCP "Security Best Practices").

    Host entries: ``name``, ``name:*`` (any port or none), ``name:8000`` (exactly that
    port), IPv4 literals and ``[v6]`` in the same forms, or the single entry ``"*"`` (every
    syntactically valid host: an explicit opt-out). Origin entries: ``scheme://host`` (any
    port or none), ``scheme://host:*``, ``scheme://host:port``, or ``"*"`` (every
    syntactically valid origin). Matching is case-insensitive for scheme and host.

    Args:
        allowed_hosts: the Host allowlist; ``None`` means loopback only: ``localhost``,
            ``127.0.0.1`` and ``[::1]`` with any port or none.
        allowed_origins: the Origin allowlist; ``None`` means ``http://`` and ``https://``
            of those loopback hosts with any port or none.

    Raises:
        LocalProtocolError: an entry is malformed.
    """

    __slots__ = (
        "_any_host",
        "_any_origin",
        "_host_verdicts",
        "_hosts",
        "_origin_verdicts",
        "_origins",
        "allowed_hosts",
        "allowed_origins",
    )

    def __init__(
        self,
        *,
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
    ) -> None:
        hosts = _LOOPBACK_HOSTS if allowed_hosts is None else allowed_hosts
        origins = _LOOPBACK_ORIGINS if allowed_origins is None else allowed_origins
        if isinstance(hosts, str) or isinstance(origins, str):
            raise LocalProtocolError("allowed_hosts and allowed_origins are lists of strings")
        self._any_host, self._hosts, names = _compile(hosts, _parse_host, "host")
        self._any_origin, self._origins, urls = _compile(origins, _parse_origin, "origin")
        self._host_verdicts: dict[str | bytes | None, bool] = {}
        self._origin_verdicts: dict[str | bytes, bool] = {}
        #: The normalised host allowlist (``name:*`` is shown as ``name``).
        self.allowed_hosts: tuple[str, ...] = names
        #: The normalised origin allowlist.
        self.allowed_origins: tuple[str, ...] = urls

    @classmethod
    def for_bind(
        cls,
        host: str,
        port: int | None = None,
        *,
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
    ) -> TransportSecurity:
        """The policy for a server bound to ``host`` (and ``port``).

        The loopback defaults, plus: for a specific non-loopback address or name (or a
        loopback address other than ``127.0.0.1``/``::1``), that host (with ``port`` when
        given and non-zero, else any port) and its ``http``/``https`` origins, so clients
        reach the server by its bind address. A wildcard bind (``0.0.0.0``, ``::``, ``""``)
        adds nothing: the operator must list the names clients use. ``allowed_hosts`` and
        ``allowed_origins`` are added to the result.

        Raises:
            LocalProtocolError: ``host`` is not an IP address or valid host name, ``port``
                is out of range, or an allowlist entry is malformed.
        """
        if port is not None and (isinstance(port, bool) or not 0 <= port <= 65535):
            raise LocalProtocolError(f"invalid port: {port!r}")
        hosts = [*_LOOPBACK_HOSTS]
        origins = [*_LOOPBACK_ORIGINS]
        bind = _bind_host(host)
        if bind is not None and bind not in _LOOPBACK_HOSTS:
            entry = f"{bind}:{port}" if port else bind
            hosts.append(entry)
            origins += [f"http://{entry}", f"https://{entry}"]
        hosts += allowed_hosts or ()
        origins += allowed_origins or ()
        return cls(allowed_hosts=hosts, allowed_origins=origins)

    def host_allowed(self, host: str | bytes | None) -> bool:
        """Whether a ``Host`` header value (RFC 9110 §7.2) is allowed.

        The value must be a strictly valid ``host[:port]`` (no userinfo, path, whitespace or
        non-ASCII) and match the allowlist. A missing Host (``None``) is refused: HTTP/1.1
        requires it and ASGI servers always provide one.
        """
        verdict = self._host_verdicts.get(host)
        if verdict is None:
            key = None if host is None else _header_key(host, _parse_host)
            verdict = key is not None and (self._any_host or _matches(self._hosts, key))
            _remember(self._host_verdicts, host, verdict)
        return verdict

    def origin_allowed(self, origin: str | bytes | None) -> bool:
        """Whether an ``Origin`` header value (RFC 6454) is allowed.

        ``None`` (no header) is allowed: non-browser clients send none, and MCP asks servers
        to validate Origin when it is present. ``null`` (an opaque origin) is refused, as is
        anything beyond ``scheme://host[:port]`` (a path, even ``/``; userinfo; a query).
        """
        if origin is None:
            return True
        verdict = self._origin_verdicts.get(origin)
        if verdict is None:
            key = _header_key(origin, _parse_origin)
            verdict = key is not None and (self._any_origin or _matches(self._origins, key))
            _remember(self._origin_verdicts, origin, verdict)
        return verdict

    def __repr__(self) -> str:
        return (
            f"TransportSecurity(allowed_hosts={self.allowed_hosts!r}, "
            f"allowed_origins={self.allowed_origins!r})"
        )


def _remember(memo: dict[Any, bool], value: Any, verdict: bool) -> None:
    """Memoize a header verdict (per policy: the allowlists are fixed once built)."""
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[value] = verdict


def _bind_host(host: str) -> str | None:
    """The canonical Host form of a bind address; ``None`` for a wildcard bind."""
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not text:
        return None
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        key = _parse_host(text)
        if key is None or key[2] is not None:
            raise LocalProtocolError(f"not an IP address or host name: {host!r}") from None
        return key[1]
    if ip.is_unspecified:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        # A zone id ("fe80::1%eth0") cannot appear in a Host header: add nothing.
        return None if ip.scope_id else f"[{ip.compressed}]"
    return str(ip)


# --------------------------------------------------------------------------- session ids

#: The longest session id accepted (MCP sets no limit; this bounds what a peer can send).
SESSION_ID_MAX_LENGTH: Final = 256
_SESSION_ID = re.compile(rf"[\x21-\x7e]{{1,{SESSION_ID_MAX_LENGTH}}}")
_SESSION_ID_BYTES = re.compile(_SESSION_ID.pattern.encode())


def new_session_id() -> str:
    """A new session id: 192 random bits from :mod:`secrets`, 32 URL-safe characters.

    MCP 2025-11-25 "Session Management": the id "SHOULD be globally unique and
    cryptographically secure" and "MUST only contain visible ASCII characters (ranging from
    0x21 to 0x7E)".
    """
    return secrets.token_urlsafe(24)


def valid_session_id(value: str | bytes | None) -> bool:
    """Whether ``value`` is a well-formed ``Mcp-Session-Id``: 1 to
    :data:`SESSION_ID_MAX_LENGTH` characters, each visible ASCII (0x21-0x7E)."""
    if isinstance(value, str):
        return _SESSION_ID.fullmatch(value) is not None
    if isinstance(value, bytes):
        return _SESSION_ID_BYTES.fullmatch(value) is not None
    return False
