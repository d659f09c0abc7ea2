// A Streamable HTTP MCP server written with the TypeScript SDK (`McpServer` over
// `StreamableHTTPServerTransport` on node's http module), for interop tests:
// tests/test_interop_typescript_http.py drives it with mcpkit's client.
//
//     node tests/interop_ts/http_server.mjs [--json-response] [--stateless] [--event-store]
//
// It listens on 127.0.0.1, port 0, endpoint /mcp, the way the SDK's examples do it: one
// transport and one McpServer per session (stateful), or per request (--stateless; GET
// and DELETE then answer 405). --json-response answers POSTs with JSON bodies;
// --event-store keeps events in the SDK's InMemoryEventStore, so SSE streams start with
// a priming event (2025-11-25 clients) and can be resumed.
//
// stdout carries one JSON object per line, for the test to follow:
//     {"event": "listening", "port": N}              first, once the port is bound
//     {"event": "session-initialized", "sessionId"}  onsessioninitialized
//     {"event": "session-closed", "sessionId"}       onsessionclosed (the client's DELETE)
//     {"event": "transport-closed", "sessionId"}     the session's transport closed
// Diagnostics go to stderr. The server exits (status 0) when stdin ends.
//
//   tools  echo   {text}          -> one text block equal to `text`
//          count  {steps}         -> progress 1..steps on the POST's stream, then text
//          log    {count}         -> `count` info log messages on the POST's stream
//          sample {prompt}        -> sampling/createMessage on the POST's stream (related
//                                    to the call), then "sampled: <the answer's text>"
//          elicit {message}       -> elicitation/create on the standalone GET stream (not
//                                    related to the call), then the answer as JSON
//          roots  {}              -> roots/list on the GET stream, then the roots as JSON
//          reconnect {delayMs}    -> with --event-store: ends the POST's SSE stream, waits,
//                                    answers "resumed" (the client must resume with GET and
//                                    Last-Event-ID); otherwise "not closed"

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CreateMessageResultSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

const SERVER_NAME = 'ts-http-interop';
const SERVER_VERSION = '1.32.2-interop';
const ENDPOINT = '/mcp';
// Bound on the requests this server sends to the client (the test bounds everything too).
const REQUEST_TIMEOUT_MS = 20_000;
const MAX_STEPS = 1000;

const flags = new Set(process.argv.slice(2));
const jsonResponse = flags.has('--json-response');
const stateless = flags.has('--stateless');
const withEventStore = flags.has('--event-store');

function report(event) {
    process.stdout.write(`${JSON.stringify(event)}\n`);
}

function text(value) {
    return { content: [{ type: 'text', text: value }] };
}

function buildServer() {
    const server = new McpServer(
        { name: SERVER_NAME, version: SERVER_VERSION },
        { capabilities: { logging: {} }, instructions: 'Echo, count, log, sample, elicit, roots.' }
    );
    server.registerTool(
        'echo',
        { description: 'Return the given text unchanged.', inputSchema: { text: z.string() } },
        async ({ text: value }) => text(value)
    );
    server.registerTool(
        'count',
        {
            description: 'Report progress 1..steps (total steps), then return.',
            inputSchema: { steps: z.number().int().min(0).max(MAX_STEPS) }
        },
        async ({ steps }, extra) => {
            const progressToken = extra._meta?.progressToken;
            for (let step = 1; step <= steps; step++) {
                if (progressToken !== undefined) {
                    await extra.sendNotification({
                        method: 'notifications/progress',
                        params: { progressToken, progress: step, total: steps, message: `step ${step}` }
                    });
                }
            }
            return text(`counted ${steps}`);
        }
    );
    server.registerTool(
        'log',
        { description: 'Send `count` log messages, then return.', inputSchema: { count: z.number().int().min(0).max(100) } },
        async ({ count }, extra) => {
            for (let index = 1; index <= count; index++) {
                await extra.sendNotification({
                    method: 'notifications/message',
                    params: { level: 'info', logger: 'ts-http', data: `log ${index}` }
                });
            }
            return text(`logged ${count}`);
        }
    );
    server.registerTool(
        'sample',
        { description: 'Ask the client to sample, on the POST stream.', inputSchema: { prompt: z.string() } },
        async ({ prompt }, extra) => {
            const result = await extra.sendRequest(
                {
                    method: 'sampling/createMessage',
                    params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 50 }
                },
                CreateMessageResultSchema,
                { timeout: REQUEST_TIMEOUT_MS }
            );
            return text(`sampled: ${result.content.text}`);
        }
    );
    server.registerTool(
        'elicit',
        { description: 'Ask the user, on the GET stream.', inputSchema: { message: z.string() } },
        async ({ message }) => {
            const result = await server.server.elicitInput(
                {
                    message,
                    requestedSchema: {
                        type: 'object',
                        properties: { name: { type: 'string' } },
                        required: ['name']
                    }
                },
                { timeout: REQUEST_TIMEOUT_MS }
            );
            return text(JSON.stringify(result));
        }
    );
    server.registerTool(
        'reconnect',
        {
            description: 'End the SSE stream of the call (SSE polling, SEP-1699), answer on the resumed one.',
            inputSchema: { delayMs: z.number().int().min(0).max(5000) }
        },
        async ({ delayMs }, extra) => {
            // Offered only with an event store to a 2025-11-25 client (the SDK decides).
            const closed = extra.closeSSEStream !== undefined;
            extra.closeSSEStream?.();
            await new Promise(resolve => setTimeout(resolve, delayMs));
            return text(closed ? 'resumed' : 'not closed');
        }
    );
    server.registerTool('roots', { description: 'List the client roots, on the GET stream.' }, async () => {
        const result = await server.server.listRoots(undefined, { timeout: REQUEST_TIMEOUT_MS });
        return text(JSON.stringify(result.roots));
    });
    return server;
}

/** Open sessions by id (stateful mode). */
const sessions = new Map();

function newTransport() {
    const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: stateless ? undefined : () => randomUUID(),
        enableJsonResponse: jsonResponse,
        eventStore: withEventStore ? new InMemoryEventStore() : undefined,
        retryInterval: withEventStore ? 200 : undefined,
        onsessioninitialized: sessionId => {
            sessions.set(sessionId, transport);
            report({ event: 'session-initialized', sessionId });
        },
        onsessionclosed: sessionId => report({ event: 'session-closed', sessionId })
    });
    transport.onclose = () => {
        if (transport.sessionId !== undefined) {
            sessions.delete(transport.sessionId);
            report({ event: 'transport-closed', sessionId: transport.sessionId });
        }
    };
    return transport;
}

function jsonError(res, status, message) {
    res.writeHead(status, { 'content-type': 'application/json' }).end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null })
    );
}

async function handle(req, res) {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname !== ENDPOINT) {
        jsonError(res, 404, 'Not Found');
        return;
    }
    if (stateless) {
        if (req.method !== 'POST') {
            res.setHeader('allow', 'POST');
            jsonError(res, 405, 'Method not allowed: this server is stateless');
            return;
        }
        // A new transport and server for every request, closed with its response.
        const server = buildServer();
        const perRequest = newTransport();
        res.on('close', () => {
            perRequest.close();
            server.close();
        });
        await server.connect(perRequest);
        await perRequest.handleRequest(req, res);
        return;
    }
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing !== undefined) {
        await existing.handleRequest(req, res);
        return;
    }
    if (sessionId !== undefined) {
        jsonError(res, 404, 'Session not found');
        return;
    }
    if (req.method !== 'POST') {
        jsonError(res, 400, 'Bad Request: no valid session id');
        return;
    }
    // A POST without a session id: the transport accepts it only if it is `initialize`.
    const server = buildServer();
    const transport = newTransport();
    await server.connect(transport);
    await transport.handleRequest(req, res);
}

const httpServer = createServer((req, res) => {
    handle(req, res).catch(error => {
        process.stderr.write(`http_server.mjs: ${error?.stack ?? error}\n`);
        if (!res.headersSent) {
            jsonError(res, 500, 'Internal Server Error');
        }
    });
});

async function shutdown() {
    for (const open of sessions.values()) {
        await open.close();
    }
    httpServer.close();
    httpServer.closeAllConnections();
}

httpServer.listen(0, '127.0.0.1', () => {
    report({ event: 'listening', port: httpServer.address().port });
});
process.stdin.on('end', () => {
    shutdown().catch(error => {
        process.stderr.write(`http_server.mjs: shutdown: ${error?.stack ?? error}\n`);
        process.exitCode = 1;
    });
});
process.stdin.resume();
