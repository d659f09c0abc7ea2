"""MCP wire types: msgspec structs for every message mcpkit speaks.

Layer 0 of mcpkit: depends on the standard library and msgspec only, does no I/O and has
no import side effects. Python attributes are snake_case; wire names are camelCase.
"""

from __future__ import annotations

from ._base import UNSET, Meta, UnsetType, WireModel
from ._common import (
    Annotations,
    ClientCapabilities,
    EmptyResult,
    Icon,
    Implementation,
    LoggingLevel,
    NotificationParams,
    PaginatedRequestParams,
    PromptsCapability,
    RequestParams,
    ResourcesCapability,
    Result,
    Role,
    RootsCapability,
    ServerCapabilities,
    ToolsCapability,
)
from ._completion import (
    CompleteRequestParams,
    CompleteResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    CompletionReference,
    PromptReference,
    ResourceTemplateReference,
)
from ._content import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    TextContent,
)
from ._discovery import (
    CacheScope,
    DiscoverResult,
    InputRequiredResult,
    InputResponseRequestParams,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)
from ._elicitation import (
    ElicitAction,
    ElicitationCompleteNotificationParams,
    ElicitationMode,
    ElicitContentValue,
    ElicitRequestParams,
    ElicitResult,
)
from ._jsonrpc import JSONRPC_VERSION, ErrorCode, ErrorObject, ProgressToken, RequestId
from ._lifecycle import InitializeRequestParams, InitializeResult, SetLevelRequestParams
from ._methods import (
    METHODS,
    MethodSpec,
    is_custom_method_name,
    is_reserved_method_name,
    method_spec,
)
from ._modern_meta import (
    CACHEABLE_METHODS,
    INPUT_REQUIRED_METHODS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    MODERN_VERSIONS,
)
from ._notifications import (
    CancelledNotificationParams,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
)
from ._prompts import (
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    Prompt,
    PromptArgument,
    PromptMessage,
)
from ._resources import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceUpdatedNotificationParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from ._roots import ListRootsResult, Root
from ._sampling import (
    CreateMessageRequestParams,
    CreateMessageResult,
    IncludeContext,
    ModelHint,
    ModelPreferences,
    SamplingContent,
    SamplingMessage,
    ToolChoice,
    ToolResultContent,
    ToolUseContent,
)
from ._tools import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsRequestParams,
    ListToolsResult,
    Tool,
    ToolAnnotations,
    ToolExecution,
)
from ._versions import (
    ALL_VERSIONS,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
    negotiate_version,
)

__all__ = [
    "CACHEABLE_METHODS",
    "INPUT_REQUIRED_METHODS",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "MODERN_VERSIONS",
    # base
    "UNSET",
    "Meta",
    "UnsetType",
    "WireModel",
    # JSON-RPC
    "JSONRPC_VERSION",
    "ErrorCode",
    "ErrorObject",
    "ProgressToken",
    "RequestId",
    # versions
    "ALL_VERSIONS",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "V2024_11_05",
    "V2025_03_26",
    "V2025_06_18",
    "V2025_11_25",
    "V2026_07_28",
    "negotiate_version",
    # methods
    "METHODS",
    "MethodSpec",
    "is_custom_method_name",
    "is_reserved_method_name",
    "method_spec",
    # common
    "Annotations",
    "ClientCapabilities",
    "EmptyResult",
    "Icon",
    "Implementation",
    "LoggingLevel",
    "NotificationParams",
    "PaginatedRequestParams",
    "PromptsCapability",
    "RequestParams",
    "ResourcesCapability",
    "Result",
    "Role",
    "RootsCapability",
    "ServerCapabilities",
    "ToolsCapability",
    # content
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "TextContent",
    # lifecycle
    "InitializeRequestParams",
    "InitializeResult",
    "SetLevelRequestParams",
    # notifications
    "CancelledNotificationParams",
    "LoggingMessageNotificationParams",
    "ProgressNotificationParams",
    # tools
    "CallToolRequestParams",
    "CallToolResult",
    "ListToolsRequestParams",
    "ListToolsResult",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
    # resources
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "Resource",
    "ResourceTemplate",
    "ResourceUpdatedNotificationParams",
    "SubscribeRequestParams",
    "UnsubscribeRequestParams",
    # prompts
    "GetPromptRequestParams",
    "GetPromptResult",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    # completion
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "CompletionReference",
    "PromptReference",
    "ResourceTemplateReference",
    # sampling
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "IncludeContext",
    "ModelHint",
    "ModelPreferences",
    "SamplingContent",
    "SamplingMessage",
    "ToolChoice",
    "ToolResultContent",
    "ToolUseContent",
    # elicitation
    "ElicitAction",
    "ElicitContentValue",
    "ElicitRequestParams",
    "ElicitResult",
    "ElicitationCompleteNotificationParams",
    "ElicitationMode",
    # roots
    "ListRootsResult",
    "Root",
    # 2026-07-28: discovery, subscriptions, multi round-trip requests, caching
    "CacheScope",
    "DiscoverResult",
    "InputRequiredResult",
    "InputResponseRequestParams",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
]
