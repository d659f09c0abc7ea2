"""Pure Streamable HTTP rules: media types, Accept (RFC 9110 §12.5.1), Host/Origin
allowlists against DNS rebinding, and session ids."""

from __future__ import annotations

import pytest

from mcpkit.exceptions import LocalProtocolError
from mcpkit.protocol import (
    SESSION_ID_MAX_LENGTH,
    TransportSecurity,
    accepts,
    media_type,
    new_session_id,
    valid_session_id,
)

JSON = "application/json"
SSE = "text/event-stream"
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
LOOPBACK_ORIGINS = (
    "http://localhost",
    "https://localhost",
    "http://127.0.0.1",
    "https://127.0.0.1",
    "http://[::1]",
    "https://[::1]",
)

# --------------------------------------------------------------------------- media types


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (JSON, JSON),
        ("Application/JSON; charset=utf-8", JSON),
        (" text/event-stream ; x=y", SSE),
        ("\tapplication/json\t", JSON),
        (b"application/json", JSON),
        ("application/vnd.api+json", "application/vnd.api+json"),
        (None, ""),
        ("", ""),
        (b"", ""),
        ("garbage", ""),
        ("application/", ""),
        ("/json", ""),
        ("application/json garbage", ""),
        ("application /json", ""),
        ("application/ json", ""),
        ("application/jsön", ""),
        (b"\xff/\xff", ""),
        ("text/plain\n", ""),
        (";charset=utf-8", ""),
        ("application/json/x", ""),
    ],
)
def test_media_type(value: str | bytes | None, expected: str) -> None:
    assert media_type(value) == expected


# --------------------------------------------------------------------------- Accept

RFC_EXAMPLE = "text/*;q=0, text/plain;format=flowed, */*"


@pytest.mark.parametrize(
    ("accept", "media", "expected"),
    [
        # No header: RFC 9110 says anything is acceptable; an empty header lists nothing.
        (None, JSON, True),
        ("", JSON, False),
        (JSON, JSON, True),
        (JSON, SSE, False),
        (f"{JSON}, {SSE}", JSON, True),
        (f"{JSON}, {SSE}", SSE, True),
        ("*/*", JSON, True),
        ("text/*", SSE, True),
        ("text/*", JSON, False),
        ("application/*", JSON, True),
        # q=0 excludes; every spelling of zero.
        (f"{JSON};q=0", JSON, False),
        (f"{JSON};q=0.0", JSON, False),
        (f"{JSON};q=0.000", JSON, False),
        (f"{JSON};Q=0", JSON, False),
        (f"{JSON};q=0.001", JSON, True),
        (f"{JSON};q=1", JSON, True),
        (f"{JSON};q=1.000", JSON, True),
        (f"{JSON};q=0.5", JSON, True),
        # The most specific range decides, whatever the order.
        ("text/*;q=0, text/event-stream", SSE, True),
        ("text/event-stream, text/*;q=0", SSE, True),
        ("*/*, application/json;q=0", JSON, False),
        ("*/*, application/json;q=0", SSE, True),
        ("*/*;q=0, application/json", JSON, True),
        ("*/*;q=0, application/json", SSE, False),
        ("text/event-stream;q=0, text/*", SSE, False),
        ("text/*, */*;q=0", SSE, True),
        ("application/*;q=0, */*", JSON, False),
        # Equally specific duplicates: the highest weight.
        (f"{JSON};q=0, {JSON}", JSON, True),
        # Parameters (RFC 9110 §12.5.1 example, with zero weights to make it boolean).
        (RFC_EXAMPLE, "text/plain", False),
        (RFC_EXAMPLE, "text/plain;format=flowed", True),
        (RFC_EXAMPLE, "text/html", False),
        (RFC_EXAMPLE, "image/jpeg", True),
        (RFC_EXAMPLE, "text/plain;format=fixed", False),
        # JSON and SSE are UTF-8 by definition: charset=utf-8 names what they are (the
        # official SDKs accept such a client); any other charset, or type, stays strict.
        (f"{JSON};charset=utf-8", JSON, True),
        (f"{JSON}; charset=UTF-8, {SSE}; charset=utf-8", SSE, True),
        (f'{SSE};charset="utf-8"', SSE, True),
        (f"{JSON};charset=latin-1", JSON, False),
        (f"{JSON};charset=utf-8;q=0, {JSON}", JSON, False),  # the more specific decides
        ("text/plain;charset=utf-8", "text/plain", False),
        (f"{JSON};charset=utf-8", f"{JSON};charset=UTF-8", True),
        (f"{JSON};charset=utf-8;q=0, */*", f"{JSON};charset=utf-8", False),
        (f"{JSON};q=0;charset=utf-8, */*", f"{JSON};charset=utf-8", False),  # q anywhere
        ('text/html;foo="a,b", application/json', JSON, True),
        ('text/html;foo="a,b"', 'text/html;foo="a,b"', True),
        ('text/html;foo="a\\"b"', 'text/html;foo="a\\"b"', True),
        ('text/html;foo="a,b"', "text/html;foo=a", False),
        # Case and whitespace.
        ("APPLICATION/JSON", JSON, True),
        ("Text/Event-Stream", SSE, True),
        (JSON, "Application/Json", True),
        (" application/json , text/event-stream ", SSE, True),
        ("application/json ; q=0", JSON, False),
        ("application/json;q=0 ", JSON, False),
        ("\tapplication/json\t", JSON, True),
        (",,application/json,,", JSON, True),
        (f"{JSON};", JSON, True),
        (f"{JSON};;q=0", JSON, False),
        (b"application/json, text/event-stream", SSE, True),
        # Malformed ranges match nothing (never turn a refusal into an acceptance).
        (f"{JSON};q=2", JSON, False),
        (f"{JSON};q=1.5", JSON, False),
        (f"{JSON};q=0.0000", JSON, False),
        (f"{JSON};q=abc", JSON, False),
        (f"{JSON};q=-1", JSON, False),
        (f"{JSON};q=", JSON, False),
        (f'{JSON};q="0.5"', JSON, False),
        (f"{JSON};q=0.5;q=0.7", JSON, False),
        (f"{JSON};foo", JSON, False),
        (f'{JSON};foo="abc', JSON, False),
        ("*/*, application/json;q=abc", JSON, True),  # the malformed range is ignored
        ("garbage", JSON, False),
        ("application", JSON, False),
        ("*/json", JSON, False),
        ("application/json/x", JSON, False),
        ("application /json", JSON, False),
        ("applicatión/json", JSON, False),
        (b"application/json\xff", JSON, False),
        ('text/html;x="a, application/json', JSON, False),  # unterminated quote swallows it
    ],
)
def test_accepts(accept: str | bytes | None, media: str, expected: bool) -> None:
    assert accepts(accept, media) is expected


@pytest.mark.parametrize("media", ["*/*", "text/*", "garbage", "", "text/", f"{JSON};q=0.5"])
def test_accepts_needs_a_concrete_media_type(media: str) -> None:
    with pytest.raises(LocalProtocolError):
        accepts(JSON, media)


# --------------------------------------------------------------------------- Host

DEFAULT = TransportSecurity()
CUSTOM = TransportSecurity(
    allowed_hosts=["example.com", "api.example.com:8443", "[2001:db8::1]:*", "10.0.0.5"]
)
ANY = TransportSecurity(allowed_hosts=["*"], allowed_origins=["*"])

HOST_CASES: list[tuple[str | bytes | None, bool, bool, bool]] = [
    # value, default policy, custom policy, "*" policy
    ("localhost", True, False, True),
    ("localhost:8000", True, False, True),
    ("LOCALHOST:8000", True, False, True),
    ("LocalHost", True, False, True),
    (b"localhost:8000", True, False, True),
    ("localhost:0", True, False, True),
    ("localhost:65535", True, False, True),
    ("127.0.0.1", True, False, True),
    ("127.0.0.1:3000", True, False, True),
    ("[::1]", True, False, True),
    ("[::1]:8080", True, False, True),
    ("[0:0:0:0:0:0:0:1]:80", True, False, True),
    ("[0::1]", True, False, True),
    ("example.com", False, True, True),
    ("EXAMPLE.COM:1234", False, True, True),
    ("api.example.com:8443", False, True, True),
    ("api.example.com", False, False, True),
    ("api.example.com:443", False, False, True),
    ("sub.example.com", False, False, True),
    ("[2001:DB8::1]", False, True, True),
    ("[2001:db8:0::1]:9", False, True, True),
    ("10.0.0.5:80", False, True, True),
    ("[::ffff:127.0.0.1]", False, False, True),
    # DNS-rebinding and smuggling probes: never allowed, whatever the policy.
    (None, False, False, False),
    ("", False, False, False),
    (" localhost", False, False, False),
    ("localhost ", False, False, False),
    ("localhost\t", False, False, False),
    ("localhost\r\n", False, False, False),
    ("localhost\n", False, False, False),
    ("localhost\x00", False, False, False),
    ("local host", False, False, False),
    ("localhost@evil.example.com", False, False, False),
    ("user@localhost", False, False, False),
    ("localhost:80@evil", False, False, False),
    ("localhost/", False, False, False),
    ("localhost/evil", False, False, False),
    ("localhost?x", False, False, False),
    ("localhost#", False, False, False),
    ("localhost\\evil", False, False, False),
    ("localhost:abc", False, False, False),
    ("localhost:99999", False, False, False),
    ("localhost:65536", False, False, False),
    ("localhost:123456", False, False, False),
    ("localhost:", False, False, False),
    ("localhost:*", False, False, False),
    ("localhost:8000:8000", False, False, False),
    ("localhost:+80", False, False, False),
    ("localhost:-1", False, False, False),
    ("localhost.", False, False, False),
    ("localhost..", False, False, False),
    (".localhost", False, False, False),
    ("a..b", False, False, False),
    ("-localhost", False, False, False),
    ("localhost-", False, False, False),
    ("local_host", False, False, False),
    ("localhöst", False, False, False),
    (b"localh\xc3\xb6st", False, False, False),
    (b"localhost\xff", False, False, False),
    ("\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54", False, False, False),  # fullwidth
    ("xn--lcalhst-b1a", False, False, True),  # valid punycode name, just not listed
    ("evil.example.com", False, False, True),
    ("127.0.0.1.evil.example.com", False, False, True),
    ("localhost.evil.example.com", False, False, True),
    ("127.1", False, False, False),
    ("127.0.0.01", False, False, False),
    ("127.0.0.256", False, False, False),
    ("2130706433", False, False, False),
    ("0x7f.0.0.1", False, False, False),
    ("0x7f000001", False, False, True),  # a name (last label not numeric), not listed
    ("[::1", False, False, False),
    ("::1", False, False, False),
    ("[::1]:", False, False, False),
    ("[::1]x", False, False, False),
    ("[[::1]]", False, False, False),
    ("[127.0.0.1]", False, False, False),
    ("[fe80::1%25eth0]", False, False, False),
    ("[fe80::1%eth0]", False, False, False),
    ("[v1.abc]", False, False, False),
    ("[::1:]", False, False, False),
    ("*", False, False, False),
    ("x" * 64 + ".com", False, False, False),  # label too long
    (".".join(["a" * 63] * 4), False, False, False),  # 255 chars: name too long
]


@pytest.mark.parametrize(("host", "default", "custom", "any_host"), HOST_CASES)
def test_host_allowed(
    host: str | bytes | None, default: bool, custom: bool, any_host: bool
) -> None:
    assert DEFAULT.host_allowed(host) is default
    assert CUSTOM.host_allowed(host) is custom
    assert ANY.host_allowed(host) is any_host


def test_allowlists_are_normalised() -> None:
    policy = TransportSecurity(
        allowed_hosts=["LOCALHOST:*", "localhost", "[0::1]:80", "Example.COM:443"],
        allowed_origins=["HTTP://LOCALHOST:*", "https://[0::1]:443", "*"],
    )
    assert policy.allowed_hosts == ("localhost", "[::1]:80", "example.com:443")
    assert policy.allowed_origins == ("http://localhost", "https://[::1]:443", "*")
    assert DEFAULT.allowed_hosts == LOOPBACK_HOSTS
    assert DEFAULT.allowed_origins == LOOPBACK_ORIGINS
    assert "TransportSecurity(allowed_hosts=" in repr(DEFAULT)


def test_empty_allowlists_allow_nothing() -> None:
    policy = TransportSecurity(allowed_hosts=[], allowed_origins=[])
    assert not policy.host_allowed("localhost")
    assert not policy.origin_allowed("http://localhost")
    assert policy.origin_allowed(None)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"allowed_hosts": ["localhost/"]},
        {"allowed_hosts": ["http://localhost"]},
        {"allowed_hosts": [""]},
        {"allowed_hosts": ["localhost:99999"]},
        {"allowed_hosts": ["*.example.com"]},
        {"allowed_hosts": "localhost"},
        {"allowed_origins": ["localhost"]},
        {"allowed_origins": ["http://localhost/"]},
        {"allowed_origins": ["null"]},
        {"allowed_origins": ["http://"]},
        {"allowed_origins": "http://localhost"},
    ],
)
def test_malformed_allowlist_entries(kwargs: dict[str, list[str] | str]) -> None:
    with pytest.raises(LocalProtocolError):
        TransportSecurity(**kwargs)


# --------------------------------------------------------------------------- Origin

CUSTOM_ORIGINS = TransportSecurity(
    allowed_origins=[
        "https://app.example.com",
        "chrome-extension://abcdef",
        "http://localhost:3000",
        "http://[::1]:*",
    ]
)

ORIGIN_CASES: list[tuple[str | bytes | None, bool, bool, bool]] = [
    # value, default policy, custom policy, "*" policy
    (None, True, True, True),  # no Origin: a non-browser client
    ("http://localhost:3000", True, True, True),
    ("http://localhost:3001", True, False, True),
    ("http://localhost", True, False, True),
    ("https://localhost:8443", True, False, True),
    ("https://127.0.0.1", True, False, True),
    ("http://127.0.0.1:5173", True, False, True),
    ("http://[::1]:8080", True, True, True),
    ("http://[::1]", True, True, True),
    ("HTTP://LOCALHOST:3000", True, True, True),
    (b"http://localhost", True, False, True),
    ("https://app.example.com", False, True, True),
    ("https://app.example.com:8443", False, True, True),
    ("http://app.example.com", False, False, True),
    ("chrome-extension://abcdef", False, True, True),
    ("chrome-extension://ABCDEF", False, True, True),
    ("http://evil.example.com", False, False, True),
    ("http://localhost.evil.example.com", False, False, True),
    ("http://127.0.0.1.evil.example.com", False, False, True),
    ("ws://localhost", False, False, True),
    # Malformed or opaque: never allowed.
    ("null", False, False, False),
    ("", False, False, False),
    ("http://localhost@evil.example.com", False, False, False),
    ("http://user@localhost", False, False, False),
    ("http://localhost/", False, False, False),
    ("http://localhost:3000/path", False, False, False),
    ("http://localhost?x=1", False, False, False),
    ("http://localhost#x", False, False, False),
    ("http://localhost:99999", False, False, False),
    ("http://localhost:", False, False, False),
    ("http://localhost:*", False, False, False),
    ("http://", False, False, False),
    ("file://", False, False, False),
    ("file:///etc/passwd", False, False, False),
    ("localhost:3000", False, False, False),
    ("//localhost", False, False, False),
    ("http:/localhost", False, False, False),
    (" http://localhost", False, False, False),
    ("http://localhost ", False, False, False),
    ("http://localhöst", False, False, False),
    (b"http://localhost\xff", False, False, False),
    ("http://[::1", False, False, False),
    ("1http://localhost", False, False, False),
    ("*", False, False, False),
]


@pytest.mark.parametrize(("origin", "default", "custom", "any_origin"), ORIGIN_CASES)
def test_origin_allowed(
    origin: str | bytes | None, default: bool, custom: bool, any_origin: bool
) -> None:
    assert DEFAULT.origin_allowed(origin) is default
    assert CUSTOM_ORIGINS.origin_allowed(origin) is custom
    assert ANY.origin_allowed(origin) is any_origin


# --------------------------------------------------------------------------- for_bind


@pytest.mark.parametrize(
    ("host", "port", "extra_hosts"),
    [
        ("127.0.0.1", 8000, ()),
        ("localhost", 8000, ()),
        ("LOCALHOST", None, ()),
        ("::1", 8000, ()),
        ("[::1]", 8000, ()),
        ("0.0.0.0", 8000, ()),
        ("::", 8000, ()),
        ("[::]", None, ()),
        ("", 8000, ()),
        ("fe80::1%eth0", 8000, ()),  # a zone id cannot appear in a Host header
        ("127.0.0.2", 8000, ("127.0.0.2:8000",)),  # loopback, but not in the defaults
        ("192.168.1.5", 8000, ("192.168.1.5:8000",)),
        ("192.168.1.5", None, ("192.168.1.5",)),
        ("192.168.1.5", 0, ("192.168.1.5",)),  # an ephemeral port: any port
        ("MyHost.Internal", 9000, ("myhost.internal:9000",)),
        ("2001:db8::1", 8000, ("[2001:db8::1]:8000",)),
        ("[2001:DB8::1]", None, ("[2001:db8::1]",)),
    ],
)
def test_for_bind(host: str, port: int | None, extra_hosts: tuple[str, ...]) -> None:
    policy = TransportSecurity.for_bind(host, port)
    assert policy.allowed_hosts == LOOPBACK_HOSTS + extra_hosts
    extra_origins = tuple(f"{s}://{h}" for h in extra_hosts for s in ("http", "https"))
    assert policy.allowed_origins == LOOPBACK_ORIGINS + extra_origins
    assert policy.host_allowed("localhost:1234")
    assert not policy.host_allowed("evil.example.com")


def test_for_bind_specific_address_is_reachable_by_it() -> None:
    policy = TransportSecurity.for_bind("192.168.1.5", 8000)
    assert policy.host_allowed("192.168.1.5:8000")
    assert not policy.host_allowed("192.168.1.5:9000")
    assert not policy.host_allowed("192.168.1.5")
    assert policy.origin_allowed("http://192.168.1.5:8000")
    assert policy.origin_allowed("https://192.168.1.5:8000")
    assert not policy.origin_allowed("http://192.168.1.5:9000")


def test_for_bind_adds_explicit_entries_to_the_defaults() -> None:
    policy = TransportSecurity.for_bind(
        "0.0.0.0",
        8000,
        allowed_hosts=["mcp.example.com"],
        allowed_origins=["https://app.example.com"],
    )
    assert policy.allowed_hosts == (*LOOPBACK_HOSTS, "mcp.example.com")
    assert policy.allowed_origins == (*LOOPBACK_ORIGINS, "https://app.example.com")
    assert policy.host_allowed("mcp.example.com:8000")
    assert policy.host_allowed("127.0.0.1:8000")
    assert not policy.host_allowed("10.1.2.3:8000")  # the wildcard bind alone adds nothing


@pytest.mark.parametrize(
    ("host", "port"),
    [
        ("not a host!", None),
        ("localhost:8000", None),
        ("localhost.", None),
        ("http://localhost", None),
        ("localhost", 70000),
        ("localhost", -1),
        ("localhost", True),
    ],
)
def test_for_bind_rejects(host: str, port: int | None) -> None:
    with pytest.raises(LocalProtocolError):
        TransportSecurity.for_bind(host, port)


# --------------------------------------------------------------------------- session ids


def test_new_session_id() -> None:
    drawn = [new_session_id() for _ in range(1000)]
    assert len(set(drawn)) == 1000
    for value in drawn:
        assert len(value) == 32  # 24 random bytes, base64url
        assert all(0x21 <= ord(c) <= 0x7E for c in value)
        assert valid_session_id(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a", True),
        ("!", True),
        ("~", True),
        ("".join(map(chr, range(0x21, 0x7F))), True),
        ("x" * SESSION_ID_MAX_LENGTH, True),
        ("x" * (SESSION_ID_MAX_LENGTH + 1), False),
        (b"abc-123", True),
        ("", False),
        (b"", False),
        (None, False),
        (" ", False),
        ("a b", False),
        ("\x7f", False),
        ("a\x7f", False),
        ("\t", False),
        ("a\n", False),
        ("a\r\n", False),
        ("\x00", False),
        ("é", False),
        ("\u00a0", False),
        (b"\x80", False),
        (b"abc\xff", False),
    ],
)
def test_valid_session_id(value: str | bytes | None, expected: bool) -> None:
    assert valid_session_id(value) is expected


def test_session_id_max_length() -> None:
    assert SESSION_ID_MAX_LENGTH == 256


def test_verdicts_stay_right_past_the_memo_bound() -> None:
    # Verdicts are memoized per header value (bounded); many distinct values must neither
    # grow memory without bound nor mix up answers.
    security = TransportSecurity()
    for n in range(1_000):
        assert security.host_allowed(f"localhost:{n}")
        assert not security.host_allowed(f"evil{n}.example.com")
        assert security.origin_allowed(f"http://127.0.0.1:{n}")
        assert not security.origin_allowed(f"http://evil{n}.example.com")
        assert accepts(f"application/json;q=0.{n % 10}", "application/json") is (n % 10 > 0)
        assert not accepts(f"text/x-{n}", "application/json")
