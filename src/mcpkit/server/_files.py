"""Serve a directory's files as resources, never escaping the directory.

Every request is resolved inside the root: ``..`` segments (also percent-encoded, which
the URI template matcher decodes once), absolute paths, NUL bytes and backslashes are
refused; symbolic links are followed only when the real target stays inside the root; the
containment test compares whole path components (so ``/srv/data2`` is not inside
``/srv/data``); and the resolved file is opened one component at a time from the root,
following no link, so a directory swapped for a link in between cannot lead outside
(CVE-2025-53109/53110 were such escapes in another server).
"""

from __future__ import annotations

import base64
import errno
import mimetypes
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import quote

import msgspec

from ..exceptions import LocalProtocolError, RPCError
from ..types import ErrorCode, ResourceContents
from ..types._echo import peer_text

if TYPE_CHECKING:
    from ._app import Server

__all__ = ["DirectoryResources"]

_NOT_FOUND: Final = ErrorCode.RESOURCE_NOT_FOUND  # resources.mdx "Error Handling" (handshake era)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_NOCTTY: Final = getattr(os, "O_NOCTTY", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_WALKS: Final = os.open in os.supports_dir_fd and _NOFOLLOW != 0 and _DIRECTORY != 0
_GONE: Final = frozenset({errno.ELOOP, errno.ENOTDIR, errno.ENOENT})
#: Characters a URI path keeps as they are (RFC 3986 pchar: sub-delims, ":" and "@").
_PATH_SAFE: Final = "/!$&'()*+,;=:@"


def _not_found(uri: str) -> RPCError:
    return RPCError(_NOT_FOUND, "Resource not found", {"uri": uri})


class DirectoryResources:
    """The files under ``root`` as the resource template ``<uri_prefix>{+path}``.

    Args:
        root: the directory to serve (it must exist).
        uri_prefix: the URI prefix, e.g. ``"files://"`` (URIs do not reveal ``root``).
        max_size: largest file served, in bytes (larger: an error, nothing is read). The
            default, 8 MiB, keeps a file's base64 form (a third larger; text that JSON
            would inflate more is sent so too) well within the 16 MiB message limit
            common to clients.
        name: the template's name in ``resources/templates/list``.

    Raises:
        LocalProtocolError: ``root`` is not a directory or the prefix holds ``{``/``}``.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        uri_prefix: str = "files://",
        max_size: int = 8 * 1024 * 1024,
        name: str = "files",
    ) -> None:
        real = os.path.realpath(root)
        if not os.path.isdir(real):
            raise LocalProtocolError(f"{root!s} is not a directory")
        if "{" in uri_prefix or "}" in uri_prefix:
            raise LocalProtocolError("uri_prefix must not contain template braces")
        self.root = real
        self.uri_prefix = uri_prefix
        self.max_size = max_size
        self.name = name

    @property
    def template(self) -> str:
        return self.uri_prefix + "{+path}"

    def register(self, server: Server) -> None:
        """Add the template to ``server``.

        Raises:
            LocalProtocolError: the template is already registered.
        """
        directory = self

        def read_file(path: str) -> ResourceContents:
            return directory.read(path)

        read_file.__doc__ = f"Files under the {self.name!r} directory."
        server.resource(self.template, name=self.name)(read_file)

    def resolve(self, path: str) -> str:
        """The real path of ``path`` (relative to the root), checked to stay inside it.

        Raises:
            RPCError: -32602 for a path that tries to leave the root or is malformed,
                -32002 when nothing is there.
        """
        if not path or "\x00" in path or "\\" in path or path.startswith("/"):
            raise RPCError.invalid_params(f"Invalid file path: {peer_text(path)}")
        parts = path.split("/")
        # (An empty part: "a//b" or "a/", a second name for "a/b" or "a" the OS refuses.)
        if any(part in ("..", ".", "") for part in parts) or (len(path) > 1 and path[1] == ":"):
            raise RPCError.invalid_params(f"Invalid file path: {peer_text(path)}")
        try:
            target = os.path.realpath(os.path.join(self.root, *parts))
        except OSError:  # a link changed while it was followed
            raise _not_found(self.uri_for(path)) from None
        try:
            inside = os.path.commonpath([self.root, target]) == self.root
        except ValueError:  # different drives on Windows
            inside = False
        if not inside:
            raise RPCError.invalid_params(
                f"Invalid file path: {peer_text(path)} leaves the directory"
            )
        if not os.path.isfile(target):
            raise _not_found(self.uri_for(path))
        return target

    def uri_for(self, path: str) -> str:
        """The URI of the file at ``path``: percent-encoded where a URI needs it (a space,
        ``%``, ``?``, ``#``, non-ASCII), so that it reads the same file again."""
        return self.uri_prefix + quote(path, safe=_PATH_SAFE)

    def read(self, path: str) -> ResourceContents:
        """Read a file as resource contents (text when it is UTF-8 text that JSON does not
        inflate, else a blob).

        Raises:
            RPCError: as :meth:`resolve`, or -32603 when the file is too large or unreadable.
        """
        target = self.resolve(path)
        uri = self.uri_for(path)
        try:
            fd = self._open_beneath(target)
        except OSError as exc:
            if exc.errno in _GONE:  # changed since it was resolved (a link, or removed)
                raise _not_found(uri) from None
            raise RPCError(ErrorCode.INTERNAL_ERROR, f"Cannot read {uri}: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as file:
            opened = os.fstat(file.fileno())
            if not stat.S_ISREG(opened.st_mode):  # swapped for a FIFO, a device...
                raise _not_found(uri)
            if opened.st_size > self.max_size:
                raise RPCError(
                    ErrorCode.INTERNAL_ERROR,
                    f"{uri} is {opened.st_size} bytes, more than the {self.max_size} allowed",
                )
            data = file.read(self.max_size + 1)
        if len(data) > self.max_size:
            raise RPCError(ErrorCode.INTERNAL_ERROR, f"{uri} grew past {self.max_size} bytes")
        mime = mimetypes.guess_type(Path(target).name)[0]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        # Text JSON escapes heavily (a control character takes six bytes) is sent as a
        # blob, which never takes more than 4/3 of the file: max_size bounds the message.
        if text is None or len(msgspec.json.encode(text)) > len(data) * 4 // 3 + 8:
            blob = base64.b64encode(data).decode("ascii")
            return ResourceContents(
                uri=uri, mime_type=mime or "application/octet-stream", blob=blob
            )
        return ResourceContents(uri=uri, mime_type=mime or "text/plain", text=text)

    def _open_beneath(self, target: str) -> int:
        """Open the resolved ``target`` one path component at a time from the root,
        following no symbolic link: a directory swapped for a link between the check and
        the open fails the open instead of leading outside (``O_NOFOLLOW`` alone guards
        only the last component). Non-blocking, so a file swapped for a FIFO cannot hang
        the open (its type is checked once open).

        Raises:
            OSError: a component is missing or became a link (ELOOP, ENOTDIR, ENOENT).
        """
        parts = os.path.relpath(target, self.root).split(os.sep)
        last = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC
        if not _WALKS:  # no dir_fd (Windows): the last component alone is guarded
            return os.open(target, last)
        directory = os.open(self.root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            for part in parts[:-1]:
                inner = os.open(
                    part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=directory
                )
                os.close(directory)
                directory = inner
            return os.open(parts[-1], last, dir_fd=directory)
        finally:
            os.close(directory)
