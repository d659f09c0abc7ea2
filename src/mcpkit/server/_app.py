"""The high-level server API: tools, resources, prompts and completions as decorated
Python functions, on top of :class:`LowLevelServer`.

Everything a session emits passes through :mod:`._compat` for the negotiated revision, so
one server definition serves every client from 2024-11-05 to 2025-11-25. This module holds
registration and notifications; the MCP methods' handlers are in ``_app_handlers.py``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar, overload

from msgspec import UNSET

from .._version import __version__
from ..exceptions import ConnectionClosedError, LocalProtocolError
from ..protocol import ParamHeader
from ..types import (
    Annotations,
    Completion,
    CompletionReference,
    Icon,
    Meta,
    PromptsCapability,
    ResourcesCapability,
    ServerCapabilities,
    ToolAnnotations,
    ToolsCapability,
)
from ._app_handlers import AppHandlers
from ._files import DirectoryResources
from ._listen import (
    LIST_CHANGED,
    announce_changed,
    resource_updated_message,
)
from ._logbridge import McpLogHandler, current_request
from ._lowlevel import LowLevelServer
from ._prompts import PromptRegistry
from ._resources import ResourceRegistry
from ._session import ServerSession
from ._tools import ToolRegistry

__all__ = ["CompletionHandler", "Server"]

logger = logging.getLogger("mcpkit.server")

F = TypeVar("F", bound=Callable[..., Any])
#: ``(ref, argument, value, context_arguments) -> values`` (sync or async).
CompletionHandler = Callable[
    [CompletionReference, str, str, dict[str, str]],
    Awaitable[Sequence[str] | Completion] | Sequence[str] | Completion,
]


def _requesting_session() -> ServerSession | None:
    """The connection of the request being handled in this task, if any."""
    ctx = current_request.get()
    return None if ctx is None else ctx.session


class Server(AppHandlers, LowLevelServer):
    """An MCP server defined by decorated functions::

        server = Server("weather", "1.0.0")

        @server.tool()
        async def forecast(city: str, days: int = 3) -> list[str]:
            '''The forecast for a city.'''
            ...

    Args:
        name: the server's name (``serverInfo.name``).
        version: the server's version.
        title, instructions: as for :class:`LowLevelServer`.
        page_size: items per page of every list result (default 100; ``None``: no paging).
        strict: validate tool arguments without coercion ("5" is not an int).
        mask_errors: report a failing tool as "failed" without the exception's message.
        **options: passed to :class:`LowLevelServer` (limits, supported versions, ...),
            among them ``lifespan``: ``lifespan(server)`` returns an async context manager
            entered once before serving begins and exited after it ends (once per HTTP
            app, not per session); what it yields is ``ctx.lifespan`` in every handler.
    """

    def __init__(
        self,
        name: str,
        version: str = __version__,
        *,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int | None = 100,
        strict: bool = True,
        mask_errors: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(
            name,
            version,
            title=title,
            instructions=instructions,
            page_size=page_size,
            mask_errors=mask_errors,
            **options,
        )
        self.tool_registry = ToolRegistry(strict=strict, mask_errors=mask_errors)
        self.resource_registry = ResourceRegistry()
        self.prompt_registry = PromptRegistry()
        self._completion: CompletionHandler | None = None
        route = self.set_request_handler
        route("tools/list", self._list_tools)
        route("tools/call", self._call_tool)
        route("resources/list", self._list_resources)
        route("resources/templates/list", self._list_templates)
        route("resources/read", self._read_resource)
        route("resources/subscribe", self._subscribe)
        route("resources/unsubscribe", self._unsubscribe)
        route("prompts/list", self._list_prompts)
        route("prompts/get", self._get_prompt)
        route("completion/complete", self._complete)

    # -- registration -------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: Sequence[Icon] | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        meta: Meta | None = None,
        strict: bool | None = None,
    ) -> Callable[[F], F]: ...
    def tool(self, fn: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Register a function as a tool (``@server.tool`` or ``@server.tool(...)``).

        The input schema comes from the type hints (or ``input_schema``, kept exactly as
        given), the description from the docstring, the output schema from the return
        annotation. A ``RequestContext`` parameter receives the request's context.

        Raises:
            LocalProtocolError: invalid or duplicate name, or a signature that cannot be
                described as a JSON Schema.
        """

        def register(func: F) -> F:
            self.tool_registry.add(func, **options)
            self._changed("tools")
            return func

        return register(fn) if fn is not None else register

    def add_tool(self, tool: Any, handler: Any, *, validate: bool = True) -> None:
        """Not available on :class:`Server`: use ``@server.tool()`` (or
        :class:`LowLevelServer` for hand-built tool definitions).

        Raises:
            LocalProtocolError: always.
        """
        raise LocalProtocolError(
            "Server.add_tool() is LowLevelServer's API; on Server, decorate the function "
            "with @server.tool() (input_schema= keeps a hand-written schema)"
        )

    def param_headers(self, tool_name: str) -> tuple[ParamHeader, ...]:
        """As :meth:`LowLevelServer.param_headers`, for the decorated tools."""
        entry = self.tool_registry.get(tool_name)
        return () if entry is None else entry.param_headers

    def remove_tool(self, name: str) -> None:
        """Unregister a tool and tell connected clients.

        Raises:
            LocalProtocolError: no such tool.
        """
        if not self.tool_registry.remove(name):
            raise LocalProtocolError(f"no tool named {name!r}")
        self._changed("tools")

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Annotations | None = None,
        icons: Sequence[Icon] | None = None,
        meta: Meta | None = None,
    ) -> Callable[[F], F]:
        """Register a function as a resource (a URI) or a resource template (an RFC 6570
        template such as ``users://{id}/profile``, whose variables are the parameters).

        The function returns text (``text/plain`` unless ``mime_type`` says otherwise),
        bytes (a base64 blob), :class:`ResourceContents`, a list of those (one part each),
        or data (a dict, a list, a struct, a dataclass), read as JSON text
        (``application/json`` unless ``mime_type`` says otherwise).

        A value stops at '/', '?' and '#' (``{id}``); one that spans path segments takes
        reserved expansion: ``files://{+path}`` reads ``files://a/b.txt`` with
        ``path="a/b.txt"`` (a ``{path*}`` template, FastMCP's wildcard, warns: in RFC
        6570 it still stops at '/').

        Template values arrive percent-decoded: ``notes://{name}`` read as
        ``notes://..%2F..%2Fetc%2Fpasswd`` gives ``name="../../etc/passwd"``. A function
        that builds a file path from one must check it (or serve files with
        :meth:`add_directory`, which does).

        Raises:
            LocalProtocolError: duplicate URI, invalid template, or parameters that are not
                template variables.
        """

        def register(func: F) -> F:
            self.resource_registry.add(
                uri,
                func,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                size=size,
                annotations=annotations,
                icons=icons,
                meta=meta,
            )
            self._changed("resources")
            return func

        return register

    def add_directory(
        self,
        root: str | os.PathLike[str],
        *,
        uri_prefix: str = "files://",
        max_size: int = 8 * 1024 * 1024,
        name: str = "files",
    ) -> DirectoryResources:
        """Serve the files under ``root`` as the template ``<uri_prefix>{+path}``, never
        escaping ``root`` (see :class:`DirectoryResources`).

        Raises:
            LocalProtocolError: ``root`` is not a directory, or the template is taken.
        """
        directory = DirectoryResources(root, uri_prefix=uri_prefix, max_size=max_size, name=name)
        directory.register(self)
        return directory

    def remove_resource(self, uri: str) -> None:
        """Unregister a resource or template and tell connected clients.

        Raises:
            LocalProtocolError: no such resource.
        """
        if not self.resource_registry.remove(uri):
            raise LocalProtocolError(f"no resource {uri!r}")
        self._changed("resources")

    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Icon] | None = None,
        meta: Meta | None = None,
    ) -> Callable[[F], F]: ...
    def prompt(self, fn: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Register a function as a prompt; its parameters are the prompt's arguments.

        Raises:
            LocalProtocolError: duplicate name or an undescribable signature.
        """

        def register(func: F) -> F:
            self.prompt_registry.add(func, **options)
            self._changed("prompts")
            return func

        return register(fn) if fn is not None else register

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt and tell connected clients.

        Raises:
            LocalProtocolError: no such prompt.
        """
        if not self.prompt_registry.remove(name):
            raise LocalProtocolError(f"no prompt named {name!r}")
        self._changed("prompts")

    def completion(self) -> Callable[[F], F]:
        """Register the completion handler: ``(ref, argument, value, context) -> values``,
        one for every prompt argument and template variable (``ref`` says which). A plain
        function runs in a worker thread, as tools do.

        It returns a list of strings, up to 100 of them (more are cut, with ``total`` and
        ``hasMore`` set), or a :class:`Completion`.

        Raises:
            LocalProtocolError: a completion handler is already registered.
        """

        def register(func: F) -> F:
            if self._completion is not None:
                raise LocalProtocolError(
                    "a completion handler is already registered: one handler answers for "
                    "every prompt and template (its ref argument says which)"
                )
            self._completion = func
            return func

        return register

    def forward_logging(
        self, logger: str | logging.Logger | None = None, *, level: int = logging.INFO
    ) -> logging.Handler:
        """Send what ``logger`` (default: the root logger) logs while a request is being
        handled to that request's client as MCP log messages, from ``level`` up (the
        logger's own level still applies first). Returns the handler (remove it with
        ``logger.removeHandler`` to stop)."""
        target = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)
        handler = McpLogHandler(level)
        target.addHandler(handler)
        return handler

    def capabilities(self) -> ServerCapabilities:
        """What this server offers: computed from what is registered."""
        caps = super().capabilities()
        caps.tools = ToolsCapability(list_changed=True) if self.tool_registry else UNSET
        caps.resources = (
            ResourcesCapability(subscribe=True, list_changed=True)
            if self.resource_registry
            else UNSET
        )
        caps.prompts = PromptsCapability(list_changed=True) if self.prompt_registry else UNSET
        caps.completions = {} if self._completion is not None else UNSET
        return caps

    # -- notifications ------------------------------------------------------------------

    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> None:
        """Tell clients that the ``kind`` list changed (registering or removing a tool,
        prompt or resource does this itself; call it when a list depends on outside
        state): every initialized handshake-era client, and the ``subscriptions/listen``
        streams that asked for it. Any thread may call it.

        Raises:
            LocalProtocolError: ``kind`` is not tools, prompts or resources.
        """
        if kind not in LIST_CHANGED:
            raise LocalProtocolError(f"unknown list {kind!r}; use tools, prompts or resources")
        self._changed(kind)

    def _changed(self, kind: str) -> None:
        """Tell every initialized client that a list changed (see announce_changed)."""
        announce_changed(self, kind, _requesting_session())

    async def notify_resource_updated(self, uri: str) -> int:
        """Tell the clients subscribed to ``uri`` that it changed
        (``notifications/resources/updated``): handshake-era ``resources/subscribe``
        sessions (sent before this returns) and ``subscriptions/listen`` streams (queued
        for them). Published on the server's bus, so with a shared bus other processes'
        clients hear it too. Returns how many subscribers in this process it reached."""
        told = self.bus.publish(resource_updated_message(uri))
        own = _requesting_session()
        for session in list(self.sessions):
            try:
                await session.resource_updates.flush(related=session is own)
            except ConnectionClosedError:
                logger.debug("a subscribed client left before its resource update")
        return told
