"""Serve a directory's files as resources, never escaping the directory.

Every request is resolved inside the root: ``..`` segments (also percent-encoded, which
the URI template matcher decodes once), absolute paths, NUL bytes and backslashes are
refused; symbolic links are followed only when the real target stays inside the root; the
containment test compares whole path components (so ``/srv/data2`` is not inside
``/srv/data``); and the file actually opened is checked to be the file that was resolved.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..exceptions import LocalProtocolError, RPCError
from ..types import ErrorCode, ResourceContents

if TYPE_CHECKING:
    from ._app import Server

__all__ = ["DirectoryResources"]

_NOT_FOUND: Final = -32002  # resources.mdx "Error Handling" (handshake era)


class DirectoryResources:
    """The files under ``root`` as the resource template ``<uri_prefix>{+path}``.

    Args:
        root: the directory to serve (it must exist).
        uri_prefix: the URI prefix, e.g. ``"files://"`` (URIs do not reveal ``root``).
        max_size: largest file served, in bytes (larger: an error, nothing is read). The
            default, 8 MiB, keeps a binary file's base64 form (a third larger) well within
            the 16 MiB message limit common to clients.
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
            raise RPCError.invalid_params(f"Invalid file path: {path!r}")
        parts = path.split("/")
        if any(part in ("..", ".") for part in parts) or (len(path) > 1 and path[1] == ":"):
            raise RPCError.invalid_params(f"Invalid file path: {path!r}")
        target = os.path.realpath(os.path.join(self.root, *parts))
        try:
            inside = os.path.commonpath([self.root, target]) == self.root
        except ValueError:  # different drives on Windows
            inside = False
        if not inside:
            raise RPCError.invalid_params(f"Invalid file path: {path!r} leaves the directory")
        if not os.path.isfile(target):
            raise RPCError(_NOT_FOUND, "Resource not found", {"uri": self.uri_prefix + path})
        return target

    def read(self, path: str) -> ResourceContents:
        """Read a file as resource contents (text when it is UTF-8 text, else a blob).

        Raises:
            RPCError: as :meth:`resolve`, or -32603 when the file is too large or unreadable.
        """
        target = self.resolve(path)
        uri = self.uri_prefix + path
        try:
            fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            raise RPCError(ErrorCode.INTERNAL_ERROR, f"Cannot read {uri}: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as file:
            opened = os.fstat(file.fileno())
            resolved = os.stat(target)
            # The file read must be the file resolved (no swap in between).
            if (opened.st_dev, opened.st_ino) != (resolved.st_dev, resolved.st_ino) or not (
                stat.S_ISREG(opened.st_mode)
            ):
                raise RPCError.invalid_params(f"Invalid file path: {path!r}")
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
            blob = base64.b64encode(data).decode("ascii")
            return ResourceContents(
                uri=uri, mime_type=mime or "application/octet-stream", blob=blob
            )
        return ResourceContents(uri=uri, mime_type=mime or "text/plain", text=text)
