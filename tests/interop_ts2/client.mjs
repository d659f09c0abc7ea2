// An MCP client written with the TypeScript SDK v2 (`@modelcontextprotocol/client`: `Client`
// over `StdioClientTransport` or `StreamableHTTPClientTransport`), for the interop tests of
// tests/test_interop_typescript_v2.py against mcpkit's servers.
//
//     node tests/interop_ts2/client.mjs PLAN_JSON COMMAND [ARG...]       (stdio)
//     node tests/interop_ts2/client.mjs PLAN_JSON http://HOST:PORT/PATH  (Streamable HTTP)
//
// It connects with the plan's version negotiation, runs the plan's steps in order, closes,
// and prints one JSON summary of what it saw to stdout:
//
//   PLAN_JSON  {"negotiation": MODE?, "probeInPlace": BOOL?, "client": CLIENT?,
//               "steps": [STEP...]}
//     MODE        "auto" (default), "legacy", or {"pin": VERSION}: the SDK's
//                 ClientOptions.versionNegotiation.mode.
//     probeInPlace  over stdio, probe with server/discover on the session's own process
//                 (a subclass of StdioClientTransport, which the SDK probes in place) so the
//                 probe is on the recorded wire; by default the SDK probes on a disposable
//                 sibling process whose messages are not recorded.
//     CLIENT      {"elicitation": CONTENT?, "sampling": TEXT?, "roots": [ROOT...]?}: declare
//                 the capability and answer its requests (elicitation accepts with CONTENT,
//                 sampling answers "TEXT: <the first message's text>", roots lists ROOTs),
//                 whether they come as server-to-client requests (handshake era) or inside
//                 an input_required result (2026-07-28, fulfilled by the SDK).
//     STEP        {"op": "listTools"} | {"op": "callTool", "name": N, "arguments": {...},
//                 "progress": true?, "meta": {...}?} | {"op": "readResource", "uri": U} |
//                 {"op": "getPrompt", "name": N, "arguments": {...}} | {"op": "discover"} |
//                 {"op": "listResourceTemplates"} | {"op": "listPrompts"} |
//                 {"op": "complete", "ref": {...}, "argument": {"name": A, "value": V}} |
//                 {"op": "setLoggingLevel", "level": L} | {"op": "ping"} |
//                 {"op": "listen", "filter": {...}}
//                 and optionally "abortOnProgress": true (a callTool aborted through its
//                 AbortSignal at its first progress update: the SDK cancels the request), "expectError": CODE (the JSON-RPC error the step must get)
//                 or "expectSdkError": true (the SDK must refuse it locally, no code).
//
//   summary    {era, protocolVersion, discover, serverInfo, capabilities, instructions,
//               steps: [{...STEP, result | error, progressUpdates}], wire, logs,
//               handled: [method...], clientErrors, serverStderr, serverExit, http,
//               failures}
//
// `era` and `protocolVersion` are what the SDK settled on (getProtocolEra(),
// getNegotiatedProtocolVersion()); `discover` is getDiscoverResult(). `wire` is every
// JSON-RPC message in the order it crossed the session's transport ("out": to the server,
// "in": from it). `handled` lists the client-side handlers the SDK ran (elicitation,
// sampling, roots), in order. Over HTTP `http` is {requests: [{method, headers, status,
// contentType}]}: every HTTP exchange, with the MCP headers sent (mcp-protocol-version,
// mcp-method, mcp-name, mcp-session-id) and the answer's status and media type.
//
// Exit status: 0 when every step went as planned, 1 otherwise (the summary is printed in
// both cases once connected; `failures` says what went wrong).

import { Client, ProtocolError, SdkError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

// Every request's bound; the Python test bounds the whole run as well.
const REQUEST_TIMEOUT_MS = 20_000;
// StdioClientTransport.close() escalates to SIGTERM after 2 s and SIGKILL after 4 s.
const EXIT_TIMEOUT_MS = 6_000;
const MCP_HEADERS = ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id'];

/** A subclass: the SDK negotiates on a sibling process only for the base class exactly. */
class InPlaceStdioClientTransport extends StdioClientTransport {}

/** Record every message crossing `transport` into `wire`, keeping its class (the SDK's
 *  negotiation looks at the transport's class and fields, so it cannot be wrapped). */
function tap(transport, wire) {
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
        wire.push(['out', message]);
        await send(message, options);
    };
    let handler;
    Object.defineProperty(transport, 'onmessage', {
        configurable: true,
        get: () => handler,
        set: value => {
            handler =
                value === undefined
                    ? undefined
                    : (message, extra) => {
                          wire.push(['in', message]);
                          value(message, extra);
                      };
        }
    });
}

function clientCapabilities(options) {
    const capabilities = {};
    if (options.sampling !== undefined) capabilities.sampling = {};
    if (options.elicitation !== undefined) capabilities.elicitation = { form: {} };
    if (options.roots !== undefined) capabilities.roots = { listChanged: true };
    return capabilities;
}

function answerServerRequests(client, options, handled) {
    if (options.sampling !== undefined) {
        client.setRequestHandler('sampling/createMessage', request => {
            handled.push('sampling/createMessage');
            const content = request.params.messages[0]?.content;
            return {
                role: 'assistant',
                content: { type: 'text', text: `${options.sampling}: ${content?.text ?? ''}` },
                model: 'ts2-interop-model',
                stopReason: 'endTurn'
            };
        });
    }
    if (options.elicitation !== undefined) {
        client.setRequestHandler('elicitation/create', () => {
            handled.push('elicitation/create');
            return { action: 'accept', content: options.elicitation };
        });
    }
    if (options.roots !== undefined) {
        client.setRequestHandler('roots/list', () => {
            handled.push('roots/list');
            return { roots: options.roots };
        });
    }
}

/** A fetch for the HTTP transport recording every exchange into `requests`. */
function recordingFetch(requests) {
    return async (url, init) => {
        const sent = new Headers(init?.headers);
        const headers = {};
        for (const name of MCP_HEADERS) {
            if (sent.has(name)) headers[name] = sent.get(name);
        }
        const record = { method: init?.method ?? 'GET', headers, status: null, contentType: null };
        requests.push(record);
        const response = await fetch(url, init);
        record.status = response.status;
        record.contentType = response.headers.get('content-type')?.split(';')[0].trim() ?? null;
        return response;
    };
}

function describeError(error) {
    if (error instanceof ProtocolError) {
        return { kind: 'protocol', code: error.code, message: error.message, data: error.data ?? null };
    }
    if (error instanceof SdkError) {
        return { kind: 'sdk', code: error.code ?? null, message: error.message, data: error.data ?? null };
    }
    return { kind: 'other', code: null, message: String(error?.stack ?? error), data: null };
}

async function runStep(client, step) {
    const options = { timeout: REQUEST_TIMEOUT_MS };
    switch (step.op) {
        case 'listTools':
            return { result: await client.listTools(undefined, { ...options, cacheMode: 'bypass' }) };
        case 'callTool': {
            const progressUpdates = [];
            const abort = new AbortController();
            if (step.progress || step.abortOnProgress) {
                options.onprogress = update => {
                    progressUpdates.push(update);
                    if (step.abortOnProgress) abort.abort('cancelled by the test');
                };
            }
            if (step.abortOnProgress) options.signal = abort.signal;
            const params = { name: step.name, arguments: step.arguments ?? {} };
            if (step.meta !== undefined) params._meta = step.meta;
            return { result: await client.callTool(params, options), progressUpdates };
        }
        case 'readResource':
            return { result: await client.readResource({ uri: step.uri }, { ...options, cacheMode: 'bypass' }) };
        case 'getPrompt':
            return { result: await client.getPrompt({ name: step.name, arguments: step.arguments ?? {} }, options) };
        case 'listResourceTemplates':
            return { result: await client.listResourceTemplates(undefined, { ...options, cacheMode: 'bypass' }) };
        case 'listPrompts':
            return { result: await client.listPrompts(undefined, { ...options, cacheMode: 'bypass' }) };
        case 'complete':
            return { result: await client.complete({ ref: step.ref, argument: step.argument }, options) };
        case 'discover':
            return { result: await client.discover(options) };
        case 'setLoggingLevel':
            return { result: await client.setLoggingLevel(step.level, options) };
        case 'ping':
            return { result: await client.ping(options) };
        case 'listen': {
            const subscription = await client.listen(step.filter ?? {}, options);
            const honoredFilter = subscription.honoredFilter;
            await subscription.close();
            return { result: { honoredFilter, closed: await subscription.closed } };
        }
        default:
            throw new Error(`unknown step ${JSON.stringify(step)}`);
    }
}

function checkStep(step, record, failures) {
    if (record.error === undefined) {
        if (step.expectError !== undefined || step.expectSdkError) {
            failures.push(`${JSON.stringify(step)}: expected an error, got a result`);
        }
    } else if (step.expectSdkError) {
        if (record.error.kind !== 'sdk') failures.push(`${JSON.stringify(step)}: ${record.error.message}`);
    } else if (step.expectError === undefined || step.expectError !== record.error.code) {
        failures.push(`${JSON.stringify(step)}: ${record.error.message}`);
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
    const requests = [];
    const overHttp = /^https?:\/\//.test(command);
    exitWhenFlushed = overHttp;

    let transport;
    let serverStderr = '';
    if (overHttp) {
        transport = new StreamableHTTPClientTransport(new URL(command), { fetch: recordingFetch(requests) });
    } else {
        const Transport = plan.probeInPlace ? InPlaceStdioClientTransport : StdioClientTransport;
        transport = new Transport({ command, args, stderr: 'pipe', env: process.env });
        transport.stderr.setEncoding('utf8');
        transport.stderr.on('data', chunk => {
            serverStderr += chunk;
        });
    }
    tap(transport, wire);

    const options = plan.client ?? {};
    const handled = [];
    const clientErrors = [];
    const logs = [];
    const client = new Client(
        { name: 'ts2-interop-client', version: '2.4.0' },
        {
            capabilities: clientCapabilities(options),
            versionNegotiation: { mode: plan.negotiation ?? 'auto' }
        }
    );
    answerServerRequests(client, options, handled);
    client.setNotificationHandler('notifications/message', notification => {
        logs.push(notification.params);
    });
    client.onerror = error => clientErrors.push(String(error?.message ?? error));
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });

    // The server process, to report how it ended (only its exit status proves a clean
    // shutdown); the transport does not expose its ChildProcess, so this reads the
    // private `_process` field of the pinned SDK version.
    const exited = overHttp
        ? null
        : new Promise(resolve => {
              transport._process.once('close', (code, signal) => resolve({ code, signal }));
          });

    const summary = {
        era: client.getProtocolEra() ?? null,
        protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
        discover: client.getDiscoverResult() ?? null,
        serverInfo: client.getServerVersion() ?? null,
        capabilities: client.getServerCapabilities() ?? null,
        instructions: client.getInstructions() ?? null,
        steps: [],
        wire,
        logs,
        handled,
        clientErrors,
        serverStderr: null,
        serverExit: null,
        http: overHttp ? { requests } : null,
        failures
    };
    for (const step of plan.steps ?? []) {
        const record = { ...step };
        try {
            Object.assign(record, await runStep(client, step));
        } catch (error) {
            record.error = describeError(error);
        }
        checkStep(step, record, failures);
        summary.steps.push(record);
    }

    await client.close();
    if (!overHttp) {
        let timer;
        summary.serverExit = await Promise.race([
            exited,
            new Promise(resolve => {
                timer = setTimeout(() => resolve({ code: null, signal: 'did not exit' }), EXIT_TIMEOUT_MS);
            })
        ]);
        clearTimeout(timer);
        summary.serverStderr = serverStderr;
        if (summary.serverExit.code !== 0) failures.push(`server exit: ${JSON.stringify(summary.serverExit)}`);
    }
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return failures.length === 0 ? 0 : 1;
}

// Over HTTP the SDK may hold reconnection timers after close(); they only delay the exit,
// so once the summary is written the process ends.
let exitWhenFlushed = false;

main().then(
    status => {
        process.exitCode = status;
        if (exitWhenFlushed) process.stdout.write('', () => process.exit(status));
    },
    error => {
        process.stderr.write(`client.mjs: ${error?.stack ?? error}\n`);
        process.exitCode = 1;
    }
);
