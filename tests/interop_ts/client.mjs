// An MCP client written with the TypeScript SDK (`Client` over `StdioClientTransport` or
// `StreamableHTTPClientTransport`), for interop tests: tests/test_interop_typescript.py and
// tests/test_interop_typescript_http.py run it against mcpkit's servers.
//
//     node tests/interop_ts/client.mjs PLAN_JSON COMMAND [ARG...]    (stdio)
//     node tests/interop_ts/client.mjs PLAN_JSON http://HOST:PORT/PATH  (Streamable HTTP)
//
// Over stdio it launches COMMAND (the server); over HTTP it connects to a running server.
// It initializes, lists whatever the server offers (tools, resources, resource templates,
// prompts), runs the steps of PLAN_JSON in order, closes, and prints one JSON summary of
// what it saw to stdout:
//
//   PLAN_JSON  {"steps": [STEP...], "client": CLIENT?}, each STEP one of
//     {"op": "callTool", "name": N, "arguments": {...}, "progress": true?}
//     {"op": "readResource", "uri": U}
//     {"op": "getPrompt", "name": N, "arguments": {...}}
//     {"op": "complete", "ref": {...}, "argument": {"name": A, "value": V}}
//     {"op": "setLoggingLevel", "level": L}
//     {"op": "ping"}
//   and optionally "expectError": CODE when the server must answer with that JSON-RPC error.
//   CLIENT (optional) declares capabilities and answers the server's requests:
//     {"sampling": TEXT?, "elicitation": CONTENT?, "roots": [ROOT...]?}: sampling answers
//     "TEXT: <the first message's text>", elicitation accepts with CONTENT, roots lists ROOTs.
//
//   summary    {serverInfo, protocolVersion, capabilities, instructions, tools, resources,
//               resourceTemplates, prompts, steps: [{...STEP, result | error, progressUpdates}],
//               wire: [["out" | "in", message]...], logs: [params...],
//               serverRequests: [method...], clientErrors: [text...], serverStderr,
//               serverExit: {code, signal}, http, failures: [text...]}
//
// `wire` is every JSON-RPC message in the order it crossed the transport ("in": from the
// server, "out": to it), so the order of progress notifications and responses can be
// checked from the bytes, not from callback timing. Over HTTP the messages of different
// streams (POST answers, the GET stream) interleave in arrival order.
//
// Over HTTP, `serverStderr` and `serverExit` are null (the test owns the server) and
// `http` is {sessionId, terminated, afterTerminate, requests}: the session id the server
// issued, whether terminateSession() (DELETE) succeeded, the HTTP status of a ping POSTed
// with the old session id afterwards (404: the server ended the session; null without a
// session), and every HTTP exchange of the transport in order: {method, sessionId,
// protocolVersion, lastEventId (the headers sent), status, contentType (the answer's)}.
//
// Exit status: 0 when every step went as planned, 1 otherwise (the summary is printed in
// both cases when the connection could be made; `failures` says what went wrong).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
    CreateMessageRequestSchema,
    ElicitRequestSchema,
    ListRootsRequestSchema,
    LoggingMessageNotificationSchema,
    McpError
} from '@modelcontextprotocol/sdk/types.js';

// Every request's bound; the Python test bounds the whole run as well.
const REQUEST_TIMEOUT_MS = 20_000;
// StdioClientTransport.close() escalates to SIGTERM after 2 s and SIGKILL after 4 s.
const EXIT_TIMEOUT_MS = 6_000;

/** A Transport that records every message crossing `inner`, in order, into `wire`. */
class TappedTransport {
    constructor(inner, wire) {
        this.inner = inner;
        this.wire = wire;
        inner.onmessage = (message, extra) => {
            wire.push(['in', message]);
            this.onmessage?.(message, extra);
        };
        inner.onclose = () => this.onclose?.();
        inner.onerror = error => this.onerror?.(error);
    }
    async start() {
        await this.inner.start();
    }
    async send(message, options) {
        this.wire.push(['out', message]);
        await this.inner.send(message, options);
    }
    async close() {
        await this.inner.close();
    }
    // What `Client.connect` reads and calls when the transport has them (HTTP): the
    // session id, and the negotiated version for the MCP-Protocol-Version header.
    get sessionId() {
        return this.inner.sessionId;
    }
    setProtocolVersion(version) {
        this.inner.setProtocolVersion?.(version);
    }
}

/** Declare the capabilities of `options` (plan.client) and answer the server's requests. */
function clientCapabilities(options) {
    const capabilities = {};
    if (options.sampling !== undefined) capabilities.sampling = {};
    if (options.elicitation !== undefined) capabilities.elicitation = { form: {} };
    if (options.roots !== undefined) capabilities.roots = { listChanged: true };
    return capabilities;
}

function answerServerRequests(client, options, serverRequests) {
    if (options.sampling !== undefined) {
        client.setRequestHandler(CreateMessageRequestSchema, request => {
            serverRequests.push(request.method);
            const content = request.params.messages[0]?.content;
            return {
                role: 'assistant',
                content: { type: 'text', text: `${options.sampling}: ${content?.text ?? ''}` },
                model: 'ts-interop-model',
                stopReason: 'endTurn'
            };
        });
    }
    if (options.elicitation !== undefined) {
        client.setRequestHandler(ElicitRequestSchema, request => {
            serverRequests.push(request.method);
            return { action: 'accept', content: options.elicitation };
        });
    }
    if (options.roots !== undefined) {
        client.setRequestHandler(ListRootsRequestSchema, request => {
            serverRequests.push(request.method);
            return { roots: options.roots };
        });
    }
}

/** A fetch for the HTTP transport that records every exchange into `requests`: method,
 *  the MCP headers sent, and the answer's status and media type (when it arrives). */
function recordingFetch(requests) {
    return async (url, init) => {
        const headers = new Headers(init?.headers);
        const record = {
            method: init?.method ?? 'GET',
            sessionId: headers.get('mcp-session-id'),
            protocolVersion: headers.get('mcp-protocol-version'),
            lastEventId: headers.get('last-event-id'),
            status: null,
            contentType: null
        };
        requests.push(record);
        const response = await fetch(url, init);
        record.status = response.status;
        record.contentType = response.headers.get('content-type')?.split(';')[0].trim() ?? null;
        return response;
    };
}

/** After terminateSession(): the status of a ping POSTed with the ended session's id. */
async function statusWithSession(url, sessionId, protocolVersion) {
    const response = await fetch(url, {
        method: 'POST',
        headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': sessionId,
            'mcp-protocol-version': protocolVersion
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'after-terminate', method: 'ping' }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    });
    await response.body?.cancel();
    return response.status;
}

function describeError(error) {
    if (error instanceof McpError) {
        return { code: error.code, message: error.message, data: error.data ?? null };
    }
    return { code: null, message: String(error?.stack ?? error), data: null };
}

async function runStep(client, step) {
    const options = { timeout: REQUEST_TIMEOUT_MS };
    switch (step.op) {
        case 'callTool': {
            const progressUpdates = [];
            if (step.progress) {
                options.onprogress = update => progressUpdates.push(update);
            }
            const result = await client.callTool(
                { name: step.name, arguments: step.arguments ?? {} },
                undefined,
                options
            );
            return { result, progressUpdates };
        }
        case 'readResource':
            return { result: await client.readResource({ uri: step.uri }, options) };
        case 'getPrompt':
            return {
                result: await client.getPrompt({ name: step.name, arguments: step.arguments ?? {} }, options)
            };
        case 'complete':
            return { result: await client.complete({ ref: step.ref, argument: step.argument }, options) };
        case 'setLoggingLevel':
            return { result: await client.setLoggingLevel(step.level, options) };
        case 'ping':
            return { result: await client.ping(options) };
        default:
            throw new Error(`unknown step ${JSON.stringify(step)}`);
    }
}

async function main() {
    const [planText, command, ...args] = process.argv.slice(2);
    if (planText === undefined || command === undefined) {
        process.stderr.write('usage: node client.mjs PLAN_JSON (COMMAND [ARG...] | URL)\n');
        return 2;
    }
    const plan = JSON.parse(planText);
    const wire = [];
    const failures = [];
    let serverStderr = '';
    const overHttp = /^https?:\/\//.test(command);
    exitWhenFlushed = overHttp;

    let stdio;
    let http;
    const requests = [];
    if (overHttp) {
        http = new StreamableHTTPClientTransport(new URL(command), { fetch: recordingFetch(requests) });
    } else {
        stdio = new StdioClientTransport({ command, args, stderr: 'pipe', env: process.env });
        stdio.stderr.setEncoding('utf8');
        stdio.stderr.on('data', chunk => {
            serverStderr += chunk;
        });
    }
    const clientErrors = [];
    const logs = [];
    const serverRequests = [];
    const options = plan.client ?? {};
    const client = new Client(
        { name: 'ts-interop-client', version: '1.32.2' },
        { capabilities: clientCapabilities(options) }
    );
    answerServerRequests(client, options, serverRequests);
    client.setNotificationHandler(LoggingMessageNotificationSchema, notification => {
        logs.push(notification.params);
    });
    // What the SDK reports without failing a request (e.g. progress for a finished request).
    client.onerror = error => clientErrors.push(String(error?.message ?? error));
    await client.connect(new TappedTransport(http ?? stdio, wire), { timeout: REQUEST_TIMEOUT_MS });

    // The server process, to report how it ended: only its exit status proves a clean
    // shutdown. The transport exposes `pid` but not the ChildProcess, so this reads the
    // private `_process` field of the pinned SDK version.
    const exited = overHttp
        ? null
        : new Promise(resolve => {
              // 'close', not 'exit': by then the server's stderr has been read to its end.
              stdio._process.once('close', (code, signal) => resolve({ code, signal }));
          });

    const [, initialize] = wire.find(([direction, message]) => direction === 'out' && message.method === 'initialize');
    const initializeAnswer = wire.find(([direction, message]) => direction === 'in' && message.id === initialize.id);
    const capabilities = client.getServerCapabilities() ?? {};
    const summary = {
        serverInfo: client.getServerVersion(),
        protocolVersion: initializeAnswer?.[1]?.result?.protocolVersion ?? null,
        capabilities,
        instructions: client.getInstructions() ?? null,
        tools: capabilities.tools ? (await client.listTools({}, { timeout: REQUEST_TIMEOUT_MS })).tools : null,
        resources: capabilities.resources
            ? (await client.listResources({}, { timeout: REQUEST_TIMEOUT_MS })).resources
            : null,
        resourceTemplates: capabilities.resources
            ? (await client.listResourceTemplates({}, { timeout: REQUEST_TIMEOUT_MS })).resourceTemplates
            : null,
        prompts: capabilities.prompts ? (await client.listPrompts({}, { timeout: REQUEST_TIMEOUT_MS })).prompts : null,
        steps: [],
        wire,
        logs,
        serverRequests,
        clientErrors,
        serverStderr: null,
        serverExit: null,
        http: null,
        failures
    };

    for (const step of plan.steps ?? []) {
        const record = { ...step };
        try {
            Object.assign(record, await runStep(client, step));
            if (step.expectError !== undefined) {
                failures.push(`${JSON.stringify(step)}: expected error ${step.expectError}, got a result`);
            }
        } catch (error) {
            record.error = describeError(error);
            if (step.expectError === undefined || step.expectError !== record.error.code) {
                failures.push(`${JSON.stringify(step)}: ${record.error.message}`);
            }
        }
        summary.steps.push(record);
    }

    if (overHttp) {
        // End the session with DELETE, then check that the server forgot it.
        const sessionId = http.sessionId ?? null;
        summary.http = { sessionId, terminated: false, afterTerminate: null, requests };
        try {
            await http.terminateSession();
            summary.http.terminated = http.sessionId === undefined;
        } catch (error) {
            failures.push(`terminateSession: ${error?.message ?? error}`);
        }
        if (sessionId !== null) {
            summary.http.afterTerminate = await statusWithSession(command, sessionId, http.protocolVersion);
        }
        await client.close();
    } else {
        await client.close();
        let timer;
        summary.serverExit = await Promise.race([
            exited,
            new Promise(resolve => {
                timer = setTimeout(() => resolve({ code: null, signal: 'did not exit' }), EXIT_TIMEOUT_MS);
            })
        ]);
        clearTimeout(timer);
        summary.serverStderr = serverStderr;
        if (summary.serverExit.code !== 0) {
            failures.push(`server exit: ${JSON.stringify(summary.serverExit)}`);
        }
    }
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return failures.length === 0 ? 0 : 1;
}

// Over HTTP the SDK may still hold reconnection timers after close(): a request's SSE
// stream that ended with an error response (not a result) is "resumed" up to maxRetries
// times (typescript-sdk#2638). They only delay the exit, so once the summary is written
// the process ends.
let exitWhenFlushed = false;

main().then(
    status => {
        process.exitCode = status;
        if (exitWhenFlushed) {
            process.stdout.write('', () => process.exit(status));
        }
    },
    error => {
        process.stderr.write(`client.mjs: ${error?.stack ?? error}\n`);
        process.exitCode = 1;
    }
);
