"""TLS: ``mcpkit run --ssl-certfile/--ssl-keyfile`` (and ``serve_http``'s ``ssl_*``) serve
HTTPS and WSS only, the client transports trust a private CA through ``ssl_context``, and
a certificate that cannot be loaded is refused before anything is bound, saying why."""

from __future__ import annotations

import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import pytest
import trustme
from cryptography.hazmat.primitives import serialization

from mcpkit.client import Client
from mcpkit.exceptions import LocalProtocolError, MessageNotDelivered
from mcpkit.server import LowLevelServer
from mcpkit.transports import (
    SSETransport,
    StreamableHTTPTransport,
    WebSocketTransport,
    serve_http,
)

from .conftest import EXAMPLES, ROOT
from .test_cli_serve import serving

pytestmark = pytest.mark.anyio

#: Bound on every wait.
LIMIT = 20.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server is a subprocess


class Files:
    """A throwaway CA, and a certificate for 127.0.0.1 and localhost it issued."""

    def __init__(self, root: Path) -> None:
        self.ca = trustme.CA()
        issued = self.ca.issue_cert("127.0.0.1", "localhost")
        self.cert = root / "cert.pem"
        self.key = root / "key.pem"
        self.both = root / "both.pem"  # the chain and the key in one file
        self.encrypted = root / "encrypted-key.pem"
        for blob in issued.cert_chain_pems:
            blob.write_to_path(str(self.cert), append=True)
        issued.private_key_pem.write_to_path(str(self.key))
        self.both.write_bytes(self.cert.read_bytes() + self.key.read_bytes())
        key = serialization.load_pem_private_key(self.key.read_bytes(), password=None)
        self.encrypted.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.BestAvailableEncryption(b"s3cret"),
            )
        )
        self.other_key = root / "other-key.pem"
        trustme.CA().issue_cert("127.0.0.1").private_key_pem.write_to_path(str(self.other_key))

    def trusting(self) -> ssl.SSLContext:
        context = ssl.create_default_context()
        self.ca.configure_trust(context)
        return context


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    return Files(tmp_path_factory.mktemp("tls"))


def tls(files: Files) -> tuple[str, ...]:
    return ("--ssl-certfile", str(files.cert), "--ssl-keyfile", str(files.key))


async def test_streamable_http_over_tls(files: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    with serving("--transport", "http", *tls(files)) as url, anyio.fail_after(LIMIT):
        assert urlsplit(url).scheme == "https"
        transport = StreamableHTTPTransport(url, ssl_context=files.trusting())
        async with Client(transport) as client:
            result = await client.call_tool("echo", {"text": "sealed"})
            assert result.content[0].text == "sealed"  # type: ignore[union-attr]
        # The URL alone, with the context: the transports it picks use it.
        async with Client(url, ssl_context=files.trusting()) as client:
            assert (await client.call_tool("echo", {"text": "by url"})).content
        # Not trusted: refused at once, saying why; and no plain HTTP on that port.
        with pytest.raises(MessageNotDelivered, match="CERTIFICATE_VERIFY_FAILED"):
            async with Client(url):
                pass
        async with httpx.AsyncClient(timeout=LIMIT) as plain:
            with pytest.raises(httpx.HTTPError):
                await plain.get(url.replace("https://", "http://", 1))
        # A CA named by SSL_CERT_FILE, as httpx reads it, is trusted by default.
        authority = files.cert.parent / "ca.pem"
        files.ca.cert_pem.write_to_path(str(authority))
        monkeypatch.setenv("SSL_CERT_FILE", str(authority))
        async with Client(url) as client:
            assert (await client.call_tool("echo", {"text": "by env"})).content


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_the_other_transports_over_tls(files: Files, transport: str) -> None:
    with serving("--transport", transport, *tls(files)) as url, anyio.fail_after(LIMIT):
        scheme = urlsplit(url).scheme
        channel: Any
        if transport == "sse":
            assert scheme == "https"
            channel = SSETransport(url, ssl_context=files.trusting())
        else:
            assert scheme == "wss"
            channel = WebSocketTransport(url, ssl_context=files.trusting())
        async with Client(channel) as client:
            result = await client.call_tool("echo", {"text": transport})
            assert result.content[0].text == transport  # type: ignore[union-attr]


async def test_one_file_with_both_and_an_encrypted_key(files: Files) -> None:
    # The chain and key in one PEM file; an encrypted key's password from the environment.
    for args, env in [
        (("--ssl-certfile", str(files.both)), {}),
        (
            ("--ssl-certfile", str(files.cert), "--ssl-keyfile", str(files.encrypted)),
            {"MCPKIT_SSL_KEYFILE_PASSWORD": "s3cret"},
        ),
    ]:
        argv = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "echo.py"), "--port", "0"]
        with (
            serving("--transport", "http", *args, argv=argv, env=env) as url,
            anyio.fail_after(LIMIT),
        ):
            transport = StreamableHTTPTransport(url, ssl_context=files.trusting())
            async with Client(transport) as client:
                assert (await client.call_tool("echo", {"text": "ok"})).content


def cases(files: Files) -> Iterator[tuple[dict[str, Any], str]]:
    yield {"ssl_certfile": files.cert.parent / "absent.pem"}, "no such TLS certificate or key file"
    yield {"ssl_certfile": files.cert, "ssl_keyfile": "absent-key.pem"}, "no such TLS"
    yield {"ssl_keyfile": files.key}, "ssl_keyfile and ssl_keyfile_password need ssl_certfile"
    yield {"ssl_certfile": files.cert}, "cannot load the TLS certificate"  # no key in it
    yield {"ssl_certfile": files.cert, "ssl_keyfile": files.other_key}, "key must match"
    yield {"ssl_certfile": files.cert, "ssl_keyfile": files.encrypted}, "needs its password"
    yield {"ssl_certfile": files.key, "ssl_keyfile": files.key}, "cannot load"  # a key


async def test_a_certificate_that_cannot_be_loaded_is_refused_first(files: Files) -> None:
    app = LowLevelServer("tls").streamable_http_app()
    for options, message in cases(files):
        with pytest.raises(LocalProtocolError, match=message), anyio.fail_after(LIMIT):
            await serve_http(app, port=0, **options)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--ssl-keyfile", "key.pem"), "--ssl-keyfile needs --ssl-certfile"),
        (("--ssl-certfile", "absent.pem"), "no such TLS certificate or key file: 'absent.pem'"),
    ],
)
def test_the_cli_says_what_is_wrong(args: tuple[str, ...], message: str) -> None:
    echo = str(EXAMPLES / "echo.py")
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", echo, "--transport", "http", "--port", "0", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=LIMIT,
    )
    assert done.returncode == 2
    assert f"mcpkit: {message}" in done.stderr
