"""The Streamable HTTP client's view of messages: what an outgoing message is (its
request ids, whether it is ``initialize`` or a cancellation), what an incoming one is,
and one-line explanations of a refused POST. No I/O.
"""

from __future__ import annotations

import datetime
import email.utils
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..exceptions import LocalProtocolError, RemoteProtocolError, TransportError
from ..protocol import media_type
from ..types import RequestId
from ..types._echo import one_line, peer_text

if TYPE_CHECKING:
    import httpx

__all__ = [
    "Outgoing",
    "Unanswered",
    "check_url",
    "classify",
    "describe_failure",
    "describe_http_error",
    "endpoint_on_origin",
    "error_answer_id",
    "is_response",
    "negotiated_version",
    "one_line",
    "peek_incoming",
    "redirect_note",
    "stray_response",
]

_EXCERPT: Final = 200


class _Peek(msgspec.Struct):
    """The members of a JSON-RPC message that say what it is (the rest stays unparsed)."""

    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    result: Raw | UnsetType = UNSET
    error: Raw | UnsetType = UNSET


class _ErrorObject(msgspec.Struct):
    code: int
    message: str


class _ErrorBody(msgspec.Struct):
    error: _ErrorObject
    id: int | str | None = None


class _CancelParams(msgspec.Struct, rename="camel"):
    request_id: int | str


class _Cancel(msgspec.Struct):
    params: _CancelParams


class _InitResult(msgspec.Struct, rename="camel"):
    protocol_version: str


_PEEK: Final = msgspec.json.Decoder(_Peek | list[_Peek])
_ERROR_BODY: Final = msgspec.json.Decoder(_ErrorBody)
_ERROR_OBJECT: Final = msgspec.json.Decoder(_ErrorObject)
_CANCEL: Final = msgspec.json.Decoder(_Cancel)
_INIT_RESULT: Final = msgspec.json.Decoder(_InitResult)


@dataclass(frozen=True, slots=True)
class Outgoing:
    """What a message we send is: the ids of the requests in it (they expect an answer)."""

    request_ids: tuple[RequestId, ...]
    methods: tuple[str, ...]
    initialize_id: RequestId | None = None
    cancelled_id: RequestId | None = None


def classify(message: bytes) -> Outgoing:
    """Classify an outgoing message (a request has ``id`` and ``method``; a notification
    only ``method``; a response only ``id``). Undecodable input counts as "no request": the
    server's refusal is then reported by the POST."""
    try:
        decoded = _PEEK.decode(message)
    except msgspec.DecodeError:
        return Outgoing((), ())
    items = decoded if isinstance(decoded, list) else [decoded]
    ids: list[RequestId] = []
    methods: list[str] = []
    initialize_id: RequestId | None = None
    cancelled_id: RequestId | None = None
    for item in items:
        if isinstance(item.method, str):
            methods.append(item.method)
            if isinstance(item.id, (int, str)):
                ids.append(item.id)
                if item.method == "initialize":
                    initialize_id = item.id
            elif item.method == "notifications/cancelled" and not isinstance(decoded, list):
                try:
                    cancelled_id = _CANCEL.decode(message).params.request_id
                except msgspec.DecodeError:
                    pass
    return Outgoing(tuple(ids), tuple(methods), initialize_id, cancelled_id)


class Unanswered(set[RequestId]):
    """The ids of a POST's requests not yet answered; ``stray`` describes the last response
    on its stream that answered none of them, for the error that then fails them (a server
    that refused the request with an error whose ``id`` is null, JSON-RPC 2.0 section 5,
    has its message shown instead of "no answer")."""

    stray: str | None = None

    def explain(self, text: str) -> str:
        """``text``, followed by what the server sent instead of an answer, if anything."""
        return text if self.stray is None else f"{text}; instead it sent {self.stray}"


def stray_response(peek: _Peek) -> str:
    """A response that answers none of a POST's requests, described for an error message
    (the server's words in one short line)."""
    rid = "null" if peek.id is None else "(none)" if peek.id is UNSET else peer_text(peek.id)
    if isinstance(peek.error, Raw):
        try:
            error = _ERROR_OBJECT.decode(peek.error)
        except msgspec.DecodeError:
            pass
        else:
            what = f"{one_line(error.message)} (JSON-RPC code {error.code})"
            return f"an error for id {rid}: {what}"
    return f"a response for id {rid}"


def peek_incoming(data: bytes, *, allow_batch: bool) -> list[_Peek]:
    """Check that ``data`` is one JSON-RPC message object (or, when batches are allowed,
    an array of them) and return what identifies each.

    Raises:
        RemoteProtocolError: invalid JSON, or not an object (or allowed array).
    """
    try:
        decoded = _PEEK.decode(data)
    except msgspec.DecodeError as exc:
        raise RemoteProtocolError(
            f"the server sent an invalid JSON-RPC message: {one_line(str(exc))}"
        ) from None
    if isinstance(decoded, list):
        if not allow_batch or not decoded:
            raise RemoteProtocolError(
                "the server sent a JSON array, which is only a batch in protocol 2025-03-26"
            )
        return decoded
    return [decoded]


def is_response(peek: _Peek) -> bool:
    """Whether the peeked message is a response (it has ``result`` or ``error``)."""
    return peek.method is UNSET and (peek.result is not UNSET or peek.error is not UNSET)


def negotiated_version(peek: _Peek) -> str | None:
    """``result.protocolVersion`` of an ``initialize`` response, if it has one."""
    if not isinstance(peek.result, Raw):
        return None
    try:
        return _INIT_RESULT.decode(peek.result).protocol_version
    except msgspec.DecodeError:
        return None


def error_answer_id(body: bytes) -> RequestId | None:
    """The id of a JSON-RPC error response in an HTTP error body, if it is one."""
    try:
        parsed = _ERROR_BODY.decode(body)
    except msgspec.DecodeError:
        return None
    return parsed.id


def describe_failure(
    status: int, content_type: str | None, body: bytes, redirect: str | None = None
) -> str:
    """One line saying why the server refused a message: the JSON-RPC error it sent, else
    the content type and a short excerpt of the body. Either is the server's text: its
    whitespace (line breaks) is collapsed and it is cut to a short excerpt, so a server
    cannot put pages or forged log lines into the client's errors.

    A redirect (``redirect``: :func:`redirect_note`'s) names where it points: mcpkit
    never follows one (the session id and credentials would go wherever it points, and
    a POST's body is not resent the same way by every status), so the way out is to
    connect to that URL. An app mounted at ``/mcp`` under Starlette answers a POST to
    ``/mcp`` with a 307 to ``/mcp/``, for one."""
    if redirect is not None:
        return f"HTTP {status}: {redirect}"
    try:
        error = _ERROR_BODY.decode(body).error
    except msgspec.DecodeError:
        pass
    else:
        return f"HTTP {status}: {one_line(error.message)} (JSON-RPC code {error.code})"
    kind = media_type(content_type) or "no content type"
    excerpt = one_line(body[:_EXCERPT].decode("utf-8", "replace"))
    if not excerpt:
        return f"HTTP {status} ({kind}, empty body)"
    more = "..." if len(body) > _EXCERPT else ""
    return f"HTTP {status} ({kind}): {excerpt}{more}"


def redirect_note(response: httpx.Response) -> str | None:
    """For a redirect, what to say of it: where it points (its ``Location``, made
    absolute against the request's URL, echoed safely) and what to do; ``None`` for any
    other response. (See :func:`describe_failure` for why no redirect is followed.)"""
    location: str | None = response.headers.get("location")
    if location is None or not 300 <= response.status_code < 400:
        return None
    try:
        target = str(response.url.join(location))
    except Exception:  # (httpx.InvalidURL, ValueError) the server's own text, shown as is
        target = location
    return (
        f"a redirect to {peer_text(target)}; mcpkit does not follow redirects: "
        "connect to that URL instead"
    )


#: The longest Retry-After taken as given (a day): a server's number is not a promise.
_MAX_RETRY_AFTER: Final = 86400.0


def retry_after(response: httpx.Response) -> float | None:
    """The seconds a refusal's ``Retry-After`` asks for (RFC 9110 section 10.2.3: a number
    of seconds or an HTTP date), between 0 and a day; ``None`` when it is absent or not
    one of those."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():
        return _MAX_RETRY_AFTER if len(value) > 6 else min(float(value), _MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # (-0000: no zone given; HTTP dates are GMT)
        when = when.replace(tzinfo=datetime.timezone.utc)
    delay = (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    return min(max(delay, 0.0), _MAX_RETRY_AFTER)


def describe_http_error(exc: Exception) -> str:
    """``TypeName: message`` of an httpx error (some have an empty message)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def check_url(url: str) -> None:
    """Refuse a URL no request could be sent to (a bad port, an unclosed bracket, a host
    that is not valid IDNA), before anything is attempted.

    Raises:
        LocalProtocolError: the URL is unusable.
    """
    import httpx

    try:
        parsed = httpx.URL(url)
        parsed.host  # noqa: B018 (an invalid IDNA host raises when read)
    except (ValueError, UnicodeError, httpx.InvalidURL) as exc:
        raise LocalProtocolError(f"not a server URL ({exc}): {url!r}") from None


def endpoint_on_origin(url: str, data: bytes) -> str:
    """The absolute URL of a legacy HTTP+SSE ``endpoint`` event's ``data``, which must be
    on the origin of the SSE ``url`` (a server, or anything able to inject an event, could
    otherwise make the client send its messages and credentials elsewhere).

    Raises:
        TransportError: the endpoint is malformed or on another origin.
    """
    import httpx

    base = httpx.URL(url)
    try:
        target = base.join(data.decode("utf-8").strip())
        origin = (target.scheme, target.host, target.port)
    except (UnicodeError, ValueError, httpx.InvalidURL) as exc:
        # (UnicodeError: also idna's, from reading a host such as "xn--")
        raise TransportError(f"the server sent a malformed endpoint: {exc}") from None
    if origin != (base.scheme, base.host, base.port) or (
        target.userinfo and target.userinfo != base.userinfo
    ):
        raise TransportError(
            f"refusing the endpoint {peer_text(str(target))}: it is not on the origin of "
            f"{url} (scheme, host and port must match)"
        )
    return str(target)
