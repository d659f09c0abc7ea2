"""Pure rules of the Streamable HTTP transport: media types, Accept, Host/Origin checks and
session ids (sans-I/O; the transports layer applies them to real requests). Media types
and Accept are in ``_http_media.py``, re-exported here.

References: RFC 9110 (HTTP semantics), RFC 3986 (URI authority), RFC 6454 (Origin) and MCP
2025-11-25 ``basic/transports.mdx``, "Streamable HTTP".
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, Final

from ..exceptions import LocalProtocolError
from ._http_media import _MEMO_LIMIT, accepts, media_type

__all__ = [
    "SESSION_ID_MAX_LENGTH",
    "TransportSecurity",
    "accepts",
    "media_type",
    "new_session_id",
    "valid_session_id",
    "wildcard_bind",
]

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
        "_reported",
        "allowed_hosts",
        "allowed_origins",
    )

    #: How many distinct refused Host and Origin values a policy reports (first_refusal).
    report_limit: ClassVar[int] = 32

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
        self._reported: set[tuple[str, str]] = set()
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

    def first_refusal(self, kind: str, value: str) -> bool:
        """Whether a refused ``kind`` ("host", "origin") ``value`` (as the log shows it,
        cut short) is refused for the first time under this policy, among the first
        :attr:`report_limit` distinct ones: so that the server reports each once, and a
        scan cannot flood its log."""
        key = (kind, value)
        if key in self._reported or len(self._reported) >= self.report_limit:
            return False
        self._reported.add(key)
        return True

    @property
    def reports_ended(self) -> bool:
        """Whether :meth:`first_refusal` has said yes for the last time."""
        return len(self._reported) >= self.report_limit

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


def wildcard_bind(host: str) -> bool:
    """Whether a bind address listens on every interface (``0.0.0.0``, ``::``, ``""``):
    clients then reach the server by names the address does not give."""
    text = _unbracketed(host)
    try:
        return not text or ipaddress.ip_address(text).is_unspecified
    except ValueError:
        return False


def _unbracketed(host: str) -> str:
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _bind_host(host: str) -> str | None:
    """The canonical Host form of a bind address; ``None`` for a wildcard bind."""
    if wildcard_bind(host):
        return None
    text = _unbracketed(host)
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        key = _parse_host(text)
        if key is None or key[2] is not None:
            raise LocalProtocolError(f"not an IP address or host name: {host!r}") from None
        return key[1]
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
    import secrets  # here, not at import: it loads OpenSSL's hashing, which stdio never needs

    return secrets.token_urlsafe(24)


def valid_session_id(value: str | bytes | None) -> bool:
    """Whether ``value`` is a well-formed ``Mcp-Session-Id``: 1 to
    :data:`SESSION_ID_MAX_LENGTH` characters, each visible ASCII (0x21-0x7E)."""
    if isinstance(value, str):
        return _SESSION_ID.fullmatch(value) is not None
    if isinstance(value, bytes):
        return _SESSION_ID_BYTES.fullmatch(value) is not None
    return False
