"""The superset structs stay valid for every revision when only its members are set.

For each revision, instances of the resources, prompts, completion, sampling, elicitation,
roots and 2026-07-28 discovery types are built with every member that revision defines,
encoded, and validated against that revision's ``schema.json``: the definition of the same
name where the revision has one, and for params the enclosing request or notification
(params were inline before 2025-11-25). A second walk over the encoded document fails on
any member the revision's schema does not declare, so the builders below cannot slip a
newer revision's member into an older revision's case (the schemas themselves are open and
would accept it). ``_meta`` objects are open in every revision and are not walked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import jsonschema
import msgspec
import pytest
from jsonschema.validators import validator_for

from mcpkit.types import (
    ALL_VERSIONS,
    METHODS,
    UNSET,
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
    Annotations,
    AudioContent,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    ContentBlock,
    CreateMessageRequestParams,
    CreateMessageResult,
    DiscoverResult,
    ElicitationCompleteNotificationParams,
    ElicitContentValue,
    ElicitRequestParams,
    ElicitResult,
    EmbeddedResource,
    GetPromptRequestParams,
    GetPromptResult,
    Icon,
    ImageContent,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListRootsResult,
    ModelHint,
    ModelPreferences,
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptReference,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceContents,
    ResourceLink,
    ResourcesCapability,
    ResourceTemplate,
    ResourceTemplateReference,
    ResourceUpdatedNotificationParams,
    Result,
    Root,
    SamplingContent,
    SamplingMessage,
    ServerCapabilities,
    SubscribeRequestParams,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
    TextContent,
    Tool,
    ToolAnnotations,
    ToolChoice,
    ToolResultContent,
    ToolsCapability,
    ToolUseContent,
    UnsetType,
    UnsubscribeRequestParams,
)

SPEC = Path(__file__).parent / "fixtures" / "spec"
T = TypeVar("T")

# The request / notification definition that carries each method's params.
ENVELOPES = {
    "resources/read": "ReadResourceRequest",
    "resources/subscribe": "SubscribeRequest",
    "resources/unsubscribe": "UnsubscribeRequest",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "prompts/get": "GetPromptRequest",
    "completion/complete": "CompleteRequest",
    "sampling/createMessage": "CreateMessageRequest",
    "elicitation/create": "ElicitRequest",
    "notifications/elicitation/complete": "ElicitationCompleteNotification",
    "subscriptions/listen": "SubscriptionsListenRequest",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}


# -- schema access --------------------------------------------------------------------


@cache
def schema(revision: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SPEC / revision / "schema.json").read_bytes())
    return loaded


def defs(revision: str) -> dict[str, Any]:
    root = schema(revision)
    found: dict[str, Any] = root["$defs"] if "$defs" in root else root["definitions"]
    return found


def validator(revision: str, node: dict[str, Any]) -> Any:
    """A validator for ``node``, a definition or any part of one, with ``$ref`` working."""
    root = schema(revision)
    key = "$defs" if "$defs" in root else "definitions"
    wrapper = {"$schema": root["$schema"], key: root[key], **node}
    return validator_for(wrapper)(wrapper)


def resolve(revision: str, node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs(revision)[node["$ref"].rsplit("/", 1)[-1]]
    return node


def undeclared(revision: str, node: dict[str, Any], value: Any, path: str) -> list[str]:
    """Members of ``value`` that ``node`` (and what it refers to) does not declare."""
    node = resolve(revision, node)
    for keyword in ("anyOf", "oneOf"):
        if keyword in node:
            fitting = [b for b in node[keyword] if validator(revision, b).is_valid(value)]
            assert fitting, f"{path}: no branch of {keyword} fits"
            return min((undeclared(revision, b, value, path) for b in fitting), key=len)
    found: list[str] = []
    if isinstance(value, dict):
        declared = node.get("properties")
        extra = node.get("additionalProperties")
        for name, member in value.items():
            where = f"{path}.{name}"
            if name == "_meta":
                continue  # open in every revision
            if declared is not None and name in declared:
                found += undeclared(revision, declared[name], member, where)
            elif isinstance(extra, dict) and extra:
                found += undeclared(revision, extra, member, where)
            elif declared and extra is None:
                found.append(where)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for index, item in enumerate(value):
            found += undeclared(revision, node["items"], item, f"{path}[{index}]")
    return found


def check(revision: str, definition: dict[str, Any], document: Any) -> None:
    validator(revision, definition).validate(document)
    assert undeclared(revision, definition, document, "$") == []


def to_json(value: Any) -> Any:
    return json.loads(msgspec.json.encode(value))


# -- builders: every member a revision has, and only those -----------------------------


def at(revision: str, first: str, value: T, last: str = V2026_07_28) -> T | UnsetType:
    """``value`` when the member exists in ``revision`` (``first`` .. ``last``), else UNSET."""
    return value if first <= revision <= last else UNSET


DATA_META = {"com.example/trace": "t-1"}


def data_meta(revision: str) -> dict[str, Any] | UnsetType:
    """``_meta`` on data types (resources, prompts, content blocks, roots): 2025-06-18+."""
    return at(revision, V2025_06_18, DATA_META)


RESULT_META = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
#: ``_meta`` of a notification delivered on a 2026-07-28 listen stream (and its result).
LISTEN_META = {"io.modelcontextprotocol/subscriptionId": "l-1"}


def request_meta(revision: str) -> dict[str, Any] | UnsetType:
    """Params ``_meta``: declared on named params from 2025-11-25; required in 2026-07-28."""
    if revision >= V2026_07_28:
        return {
            "io.modelcontextprotocol/protocolVersion": revision,
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": "p-1",
        }
    return at(revision, V2025_11_25, {"progressToken": "p-1"})


def cache_members(revision: str) -> dict[str, Any]:
    """``ttlMs`` / ``cacheScope`` of the cacheable 2026-07-28 results."""
    return {
        "ttl_ms": at(revision, V2026_07_28, 60000),
        "cache_scope": at(revision, V2026_07_28, "private"),
    }


def display_annotations(revision: str) -> Annotations:
    return Annotations(
        audience=["user", "assistant"],
        priority=0.5,
        last_modified=at(revision, V2025_06_18, "2025-01-12T15:00:58Z"),
    )


def icons(revision: str) -> list[Icon] | UnsetType:
    icon = Icon(
        src="https://example.com/i.png", mime_type="image/png", sizes=["48x48"], theme="dark"
    )
    return at(revision, V2025_11_25, [icon])


def text(revision: str, value: str = "hello") -> TextContent:
    return TextContent(
        text=value, annotations=display_annotations(revision), meta=data_meta(revision)
    )


def image(revision: str) -> ImageContent:
    return ImageContent(
        data="aGk=",
        mime_type="image/png",
        annotations=display_annotations(revision),
        meta=data_meta(revision),
    )


def audio(revision: str) -> AudioContent:
    return AudioContent(
        data="aGk=",
        mime_type="audio/wav",
        annotations=display_annotations(revision),
        meta=data_meta(revision),
    )


def contents(revision: str) -> list[ResourceContents]:
    meta = data_meta(revision)
    return [
        ResourceContents(uri="file:///a.txt", mime_type="text/plain", text="a", meta=meta),
        ResourceContents(uri="file:///b.png", mime_type="image/png", blob="aGk=", meta=meta),
    ]


def content_blocks(revision: str) -> list[ContentBlock]:
    """One block of each kind the revision has (audio 2025-03-26+, links 2025-06-18+)."""
    blocks: list[ContentBlock] = [text(revision), image(revision)]
    if revision >= V2025_03_26:
        blocks.append(audio(revision))
    if revision >= V2025_06_18:
        link = ResourceLink(
            uri="file:///a.txt",
            name="a.txt",
            title="A",
            description="the file a",
            mime_type="text/plain",
            size=1,
            icons=icons(revision),
            annotations=display_annotations(revision),
            meta=data_meta(revision),
        )
        blocks.append(link)
    embedded = EmbeddedResource(
        resource=contents(revision)[0],
        annotations=display_annotations(revision),
        meta=data_meta(revision),
    )
    blocks.append(embedded)
    return blocks


Case = tuple[str, Any, "str | None"]  # (label, instance, method whose params it is)


def resource_cases(r: str) -> Iterator[Case]:
    cache_ = cache_members(r)
    resource = Resource(
        uri="file:///project/README.md",
        name="README.md",
        title=at(r, V2025_06_18, "Project documentation"),
        description="The read-me",
        mime_type="text/markdown",
        size=1024,
        annotations=display_annotations(r),
        icons=icons(r),
        meta=data_meta(r),
    )
    template = ResourceTemplate(
        uri_template="file:///{path}",
        name="files",
        title=at(r, V2025_06_18, "Project files"),
        description="Any file",
        mime_type="application/octet-stream",
        annotations=display_annotations(r),
        icons=icons(r),
        meta=data_meta(r),
    )
    yield "resource", resource, None
    yield "template", template, None
    yield "list", ListResourcesResult(resources=[resource], next_cursor="c", **cache_), None
    templates = ListResourceTemplatesResult(
        resource_templates=[template], next_cursor="c", **cache_
    )
    yield "list-templates", templates, None
    yield "read-result", ReadResourceResult(contents=contents(r), **cache_), None
    read = ReadResourceRequestParams(
        uri="file:///a.txt",
        input_responses=at(r, V2026_07_28, {"login": {"action": "decline"}}),
        request_state=at(r, V2026_07_28, "state-1"),
        meta=request_meta(r),
    )
    yield "read-params", read, "resources/read"
    if r <= V2025_11_25:
        subscribe = SubscribeRequestParams(uri="file:///a.txt", meta=request_meta(r))
        yield "subscribe", subscribe, "resources/subscribe"
        unsubscribe = UnsubscribeRequestParams(uri="file:///a.txt", meta=request_meta(r))
        yield "unsubscribe", unsubscribe, "resources/unsubscribe"
    meta = LISTEN_META if r >= V2026_07_28 else at(r, V2025_11_25, DATA_META)
    updated = ResourceUpdatedNotificationParams(uri="file:///a.txt", meta=meta)
    yield "updated", updated, "notifications/resources/updated"


def prompt_cases(r: str) -> Iterator[Case]:
    argument = PromptArgument(
        name="code", title=at(r, V2025_06_18, "Code"), description="to review", required=True
    )
    prompt = Prompt(
        name="review",
        title=at(r, V2025_06_18, "Review"),
        description="Reviews code",
        arguments=[argument],
        icons=icons(r),
        meta=data_meta(r),
    )
    messages = [PromptMessage(role="user", content=block) for block in content_blocks(r)]
    yield "argument", argument, None
    yield "prompt", prompt, None
    for message in messages:
        yield f"message-{message.content.__class__.__name__}", message, None
    yield "list", ListPromptsResult(prompts=[prompt], next_cursor="c", **cache_members(r)), None
    get = GetPromptRequestParams(
        name="review",
        arguments={"code": "x = 1"},
        input_responses=at(r, V2026_07_28, {"login": {"action": "cancel"}}),
        request_state=at(r, V2026_07_28, "state-1"),
        meta=request_meta(r),
    )
    yield "get-params", get, "prompts/get"
    yield "get-result", GetPromptResult(description="Review", messages=messages), None


def completion_cases(r: str) -> Iterator[Case]:
    prompt_ref = PromptReference(name="review", title=at(r, V2025_06_18, "Review"))
    template_ref = ResourceTemplateReference(uri="file:///{path}")
    yield "prompt-ref", prompt_ref, None
    yield "template-ref", template_ref, None
    for ref in (prompt_ref, template_ref):
        params = CompleteRequestParams(
            ref=ref,
            argument=CompletionArgument(name="language", value="py"),
            context=at(r, V2025_06_18, CompletionContext(arguments={"framework": "flask"})),
            meta=request_meta(r),
        )
        yield f"params-{ref.__class__.__name__}", params, "completion/complete"
    completion = Completion(values=["python", "pytorch"], total=10, has_more=True)
    yield "result", CompleteResult(completion=completion), None


def sampling_cases(r: str) -> Iterator[Case]:
    preferences = ModelPreferences(
        hints=[ModelHint(name="claude"), ModelHint()],
        cost_priority=0.3,
        speed_priority=0.8,
        intelligence_priority=0.5,
    )
    tool_use = ToolUseContent(id="call-1", name="weather", input={"city": "Paris"}, meta=DATA_META)
    tool_result = ToolResultContent(
        tool_use_id="call-1",
        content=[text(r, "18 C")],
        structured_content={"celsius": 18},
        is_error=False,
        meta=DATA_META,
    )
    single: list[SamplingContent] = [text(r), image(r)]
    if r >= V2025_03_26:
        single.append(audio(r))
    meta = at(r, V2025_11_25, DATA_META)
    messages = [SamplingMessage(role="user", content=block, meta=meta) for block in single]
    if r >= V2025_11_25:  # sampling with tools: lists of blocks
        messages.append(SamplingMessage(role="assistant", content=[tool_use], meta=meta))
        messages.append(SamplingMessage(role="user", content=[tool_result], meta=meta))
        yield "tool-use", tool_use, None
        yield "tool-result", tool_result, None
        yield "tool-choice", ToolChoice(mode="required"), None
    yield "hint", ModelHint(name="claude"), None
    yield "preferences", preferences, None
    for index, message in enumerate(messages):
        yield f"message-{index}", message, None
    yield "params", create_message_params(r, messages, preferences), "sampling/createMessage"
    # Not a Result in 2026-07-28 (no resultType), but _meta exists in every revision.
    result = CreateMessageResult(
        role="assistant", content=text(r), model="m-1", stop_reason="endTurn", meta=DATA_META
    )
    yield "result", result, None
    if r >= V2025_11_25:
        tools = CreateMessageResult(
            role="assistant", content=[tool_use, tool_use], model="m-1", stop_reason="toolUse"
        )
        yield "result-tool-use", tools, None


def create_message_params(
    r: str, messages: list[SamplingMessage], preferences: ModelPreferences
) -> CreateMessageRequestParams:
    tool = Tool(
        name="weather",
        title="Weather",
        description="Current weather",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        annotations=ToolAnnotations(read_only_hint=True),
    )
    return CreateMessageRequestParams(
        messages=messages,
        max_tokens=100,
        model_preferences=preferences,
        system_prompt="Be brief.",
        include_context="thisServer",
        temperature=0.2,
        stop_sequences=["\n\n"],
        metadata={"provider": {"top_k": 5}},
        tools=at(r, V2025_11_25, [tool]),
        tool_choice=at(r, V2025_11_25, ToolChoice(mode="auto")),
        task=at(r, V2025_11_25, {"ttl": 60000}, last=V2025_11_25),
        meta=at(r, V2025_11_25, {"progressToken": "p-1"}, last=V2025_11_25),
    )


def elicit_form(r: str) -> ElicitRequestParams:
    requested = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1},
            "age": {"type": "integer", "minimum": 18},
            "ok": {"type": "boolean"},
        },
        "required": ["name"],
    }
    return ElicitRequestParams(
        mode=at(r, V2025_11_25, "form"),
        message="Who are you?",
        requested_schema=requested,
        task=at(r, V2025_11_25, {"ttl": 60000}, last=V2025_11_25),
        meta=at(r, V2025_11_25, {"progressToken": "p-1"}, last=V2025_11_25),
    )


def elicitation_cases(r: str) -> Iterator[Case]:
    if r < V2025_06_18:
        return
    yield "form", elicit_form(r), "elicitation/create"
    if r >= V2025_11_25:
        url = ElicitRequestParams(
            mode="url",
            message="Set your API key.",
            url="https://example.com/key",
            elicitation_id=at(r, V2025_11_25, "e-1", last=V2025_11_25),
            task=at(r, V2025_11_25, {"ttl": 60000}, last=V2025_11_25),
            meta=at(r, V2025_11_25, {"progressToken": "p-1"}, last=V2025_11_25),
        )
        yield "url", url, "elicitation/create"
    # Integral numbers only: schema.json types the values string|integer|boolean, although
    # schema.ts says string|number|boolean (a float is valid MCP, but not schema.json).
    content: dict[str, ElicitContentValue] = {"name": "octocat", "age": 30, "ok": True}
    if r >= V2025_11_25:
        content["colors"] = ["red", "green"]  # multi-select
    meta = at(r, V2025_06_18, DATA_META, last=V2025_11_25)
    yield "result", ElicitResult(action="accept", content=content, meta=meta), None
    if r == V2025_11_25:
        done = ElicitationCompleteNotificationParams(elicitation_id="e-1")
        yield "complete", done, "notifications/elicitation/complete"


def roots_cases(r: str) -> Iterator[Case]:
    root = Root(uri="file:///home/user/project", name="Project", meta=data_meta(r))
    yield "root", root, None
    # Not a Result in 2026-07-28: no resultType, no _meta.
    meta = at(r, V2024_11_05, DATA_META, last=V2025_11_25)
    result = ListRootsResult(roots=[root, Root(uri="file:///home/user/other")], meta=meta)
    yield "list", result, None


def discovery_cases(r: str) -> Iterator[Case]:
    if r < V2026_07_28:
        return
    discover = DiscoverResult(
        supported_versions=[V2025_11_25, V2026_07_28],
        capabilities=ServerCapabilities(tools=ToolsCapability(), resources=ResourcesCapability()),
        instructions="Use the weather tool.",
        ttl_ms=3600000,
        cache_scope="public",
    )
    subscriptions = SubscriptionFilter(
        tools_list_changed=True,
        prompts_list_changed=True,
        resources_list_changed=False,
        resource_subscriptions=["file:///project/config.json"],
    )
    listen = SubscriptionsListenRequestParams(notifications=subscriptions, meta=request_meta(r))
    acknowledged = SubscriptionsAcknowledgedNotificationParams(
        notifications=subscriptions, meta=LISTEN_META
    )
    closed = SubscriptionsListenResult(meta=LISTEN_META)
    input_requests = {
        "login": {"method": "elicitation/create", "params": to_json(elicit_form(r))},
        "roots": {"method": "roots/list"},
    }
    input_required = InputRequiredResult(input_requests=input_requests, request_state="s-1")
    yield "discover", discover, None
    yield "filter", subscriptions, None
    yield "listen-params", listen, "subscriptions/listen"
    yield "acknowledged", acknowledged, "notifications/subscriptions/acknowledged"
    yield "listen-result", closed, None
    yield "input-required", input_required, None


# Input responses in 2026-07-28: not a ``Result`` there (no ``resultType``); their
# ``_meta`` is set by the builders.
NOT_RESULTS_IN_2026 = (CreateMessageResult, ElicitResult, ListRootsResult)
FEATURES = (
    resource_cases,
    prompt_cases,
    completion_cases,
    sampling_cases,
    elicitation_cases,
    roots_cases,
    discovery_cases,
)


def cases(revision: str) -> list[Case]:
    """Every case of ``revision``; results get the revision's ``_meta`` and ``resultType``."""
    found = []
    for feature in FEATURES:
        for label, value, method in feature(revision):
            if isinstance(value, Result) and not isinstance(value, NOT_RESULTS_IN_2026):
                extra = value.meta if isinstance(value.meta, dict) else {}
                value.meta = {**RESULT_META, **extra}
                if revision >= V2026_07_28:
                    kind = (
                        "input_required" if isinstance(value, InputRequiredResult) else "complete"
                    )
                    value.result_type = kind
            found.append((f"{feature.__name__.removesuffix('_cases')}-{label}", value, method))
    return found


# Where our name differs from a revision's definition name.
RENAMED = {
    ("ResourceTemplateReference", V2024_11_05): "ResourceReference",
    ("ResourceTemplateReference", V2025_03_26): "ResourceReference",
}


def definition_name(value: Any, revision: str) -> str:
    name = type(value).__name__
    return RENAMED.get((name, revision), name)


CASES = [
    pytest.param(revision, value, method, id=f"{revision}/{label}")
    for revision in ALL_VERSIONS
    for label, value, method in cases(revision)
]


@pytest.mark.parametrize(("revision", "value", "method"), CASES)
def test_type_fits_the_revision_schema(revision: str, value: Any, method: str | None) -> None:
    document = to_json(value)
    name = definition_name(value, revision)
    if method is None:
        assert name in defs(revision), f"{name} is not defined in {revision}"
        check(revision, defs(revision)[name], document)
        return
    spec = METHODS[method]
    envelope = resolve(revision, defs(revision)[ENVELOPES[method]])
    if spec.in_version(revision):
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": document}
        if spec.kind == "request":
            message["id"] = 1
    else:  # 2026-07-28 input request: {method, params} inside an InputRequiredResult
        assert revision >= V2026_07_28, method
        assert spec.sender == "server", method
        message = {"method": method, "params": document}
    validator(revision, envelope).validate(message)
    assert undeclared(revision, envelope["properties"]["params"], document, "$.params") == []
    assert isinstance(value, spec.params)
    if name in defs(revision):  # named params types: 2025-11-25+
        check(revision, defs(revision)[name], document)


EVERY_REVISION = """
    Resource ResourceTemplate ListResourcesResult ListResourceTemplatesResult
    ReadResourceRequestParams ReadResourceResult ResourceUpdatedNotificationParams
    Prompt PromptArgument PromptMessage ListPromptsResult GetPromptRequestParams
    GetPromptResult PromptReference ResourceTemplateReference CompleteRequestParams
    CompleteResult ModelHint ModelPreferences SamplingMessage CreateMessageRequestParams
    CreateMessageResult Root ListRootsResult
"""
ONLY_2026 = """
    DiscoverResult SubscriptionFilter SubscriptionsListenRequestParams
    SubscriptionsListenResult SubscriptionsAcknowledgedNotificationParams InputRequiredResult
"""


@pytest.mark.parametrize("revision", ALL_VERSIONS)
def test_every_type_is_exercised(revision: str) -> None:
    """Each revision's cases cover every new type that exists in that revision."""
    built = {type(value).__name__ for _, value, _ in cases(revision)}
    expected = set(EVERY_REVISION.split())
    if revision <= V2025_11_25:
        expected |= {"SubscribeRequestParams", "UnsubscribeRequestParams"}
    if revision >= V2025_06_18:
        expected |= {"ElicitRequestParams", "ElicitResult"}
    if revision >= V2025_11_25:
        expected |= {"ToolUseContent", "ToolResultContent", "ToolChoice"}
    if revision == V2025_11_25:
        expected |= {"ElicitationCompleteNotificationParams"}
    if revision >= V2026_07_28:
        expected |= set(ONLY_2026.split())
    assert built == expected


def test_a_newer_member_is_caught() -> None:
    """The harness can fail: a list of blocks is not a 2024-11-05 sampling message, and a
    2026-07-28 cache member is undeclared in 2025-11-25."""
    message = to_json(SamplingMessage(role="user", content=[TextContent(text="a")]))
    with pytest.raises(jsonschema.ValidationError):
        check(V2024_11_05, defs(V2024_11_05)["SamplingMessage"], message)
    result = to_json(ListPromptsResult(prompts=[], ttl_ms=1, cache_scope="public"))
    assert undeclared(V2025_11_25, defs(V2025_11_25)["ListPromptsResult"], result, "$") == [
        "$.ttlMs",
        "$.cacheScope",
    ]


def test_struct_invariants_are_checked_on_decode() -> None:
    """What the spec requires beyond member types is enforced when decoding."""
    with pytest.raises(msgspec.ValidationError, match="url"):
        msgspec.json.decode(b'{"mode": "url", "message": "m"}', type=ElicitRequestParams)
    with pytest.raises(msgspec.ValidationError, match="requestedSchema"):
        msgspec.json.decode(b'{"message": "m"}', type=ElicitRequestParams)
    with pytest.raises(msgspec.ValidationError, match="requestState"):
        msgspec.json.decode(b'{"resultType": "input_required"}', type=InputRequiredResult)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"resultType": "complete"}', type=SubscriptionsListenResult)
