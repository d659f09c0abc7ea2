// An MCP server written with the TypeScript SDK v2 (`@modelcontextprotocol/server`), for
// tests/test_interop_typescript_v2.py, which speaks raw 2026-07-28 JSON-RPC to it:
//
//     node tests/interop_ts2/server.mjs           stdio: `serveStdio`, which picks the era
//                                                 from the opening message; one JSON
//                                                 message per line on stdin/stdout
//     node tests/interop_ts2/server.mjs --http    Streamable HTTP: `createMcpHandler` (its
//                                                 web-standard fetch handler) on node's http
//                                                 module, 127.0.0.1, port 0, endpoint /mcp;
//                                                 prints {"event": "listening", "port": N}
//
// It offers, in both eras:
//   tools      echo {text}            the text back
//              progress {steps}       `steps` progress notifications (when the request has a
//                                     progressToken), then "done"
//              log {message}          one log message at level info, then "logged"
//              fail                   a tool error (isError: true)
//              confirm {env}          multi round trip: an input_required result asking for
//                                     a confirmation (elicitation, key "confirm") with a
//                                     requestState, then "deployed to ENV" once accepted
//   resource   test://greeting        text/plain "hello from ts2"
//   prompt     greet {name}           one user message "Hello, NAME!"
//
// It exits when its stdin ends (over HTTP too).

import { createServer as createHttpServer } from 'node:http';
import { Readable } from 'node:stream';

import { McpServer, acceptedContent, createMcpHandler, inputRequired } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

const CONFIRMATION = z.object({ confirm: z.boolean() });

function createServer() {
    const server = new McpServer(
        { name: 'ts2-interop-server', version: '2.4.0' },
        { capabilities: { tools: {}, resources: {}, prompts: {}, logging: {} } }
    );
    server.registerTool(
        'echo',
        { description: 'Echoes its text', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    server.registerTool(
        'progress',
        { description: 'Reports progress', inputSchema: z.object({ steps: z.number().int() }) },
        async ({ steps }, ctx) => {
            const progressToken = ctx.mcpReq._meta?.progressToken;
            if (progressToken !== undefined) {
                for (let step = 1; step <= steps; step++) {
                    await ctx.mcpReq.notify({
                        method: 'notifications/progress',
                        params: { progressToken, progress: step, total: steps }
                    });
                }
            }
            return { content: [{ type: 'text', text: 'done' }] };
        }
    );
    server.registerTool(
        'log',
        { description: 'Logs a message', inputSchema: z.object({ message: z.string() }) },
        async ({ message }, ctx) => {
            await ctx.mcpReq.log('info', message);
            return { content: [{ type: 'text', text: 'logged' }] };
        }
    );
    server.registerTool('fail', { description: 'Fails' }, async () => ({
        content: [{ type: 'text', text: 'it failed' }],
        isError: true
    }));
    server.registerTool(
        'confirm',
        { description: 'Asks for a confirmation first', inputSchema: z.object({ env: z.string() }) },
        async ({ env }, ctx) => {
            const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', CONFIRMATION);
            if (answer?.confirm !== true) {
                return inputRequired({
                    inputRequests: {
                        confirm: inputRequired.elicit({ message: `Deploy to ${env}?`, requestedSchema: CONFIRMATION })
                    },
                    requestState: `deploy:${env}`
                });
            }
            return { content: [{ type: 'text', text: `deployed to ${env}` }] };
        }
    );
    server.registerResource(
        'greeting',
        'test://greeting',
        { mimeType: 'text/plain', description: 'A greeting' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello from ts2' }] })
    );
    server.registerPrompt(
        'greet',
        { description: 'Greets someone', argsSchema: z.object({ name: z.string() }) },
        async ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}!` } }] })
    );
    return server;
}

function reportError(error) {
    process.stderr.write(`server.mjs: ${error?.stack ?? error}\n`);
}

/** Serve `handler.fetch` (web-standard Request -> Response) on node's http module. */
function serveHttp(handler) {
    const server = createHttpServer(async (req, res) => {
        // The client going away aborts the exchange (2026-07-28: that cancels the request).
        const gone = new AbortController();
        res.on('close', () => gone.abort());
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) {
            for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
        }
        const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
        try {
            const response = await handler.fetch(
                new Request(`http://${req.headers.host}${req.url}`, {
                    method: req.method,
                    headers,
                    body: hasBody ? Readable.toWeb(req) : undefined,
                    duplex: 'half',
                    signal: gone.signal
                })
            );
            res.writeHead(response.status, [...response.headers]);
            if (response.body) {
                for await (const chunk of response.body) res.write(chunk);
            }
            res.end();
        } catch (error) {
            reportError(error);
            res.destroy();
        }
    });
    server.listen(0, '127.0.0.1', () => {
        process.stdout.write(`${JSON.stringify({ event: 'listening', port: server.address().port })}\n`);
    });
    process.stdin.on('end', () => {
        server.close();
        server.closeAllConnections();
        handler.close?.();
    });
    process.stdin.resume();
}

if (process.argv.includes('--http')) {
    serveHttp(createMcpHandler(createServer, { onerror: reportError }));
} else {
    serveStdio(createServer, { onerror: reportError });
}
