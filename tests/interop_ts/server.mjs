// A stdio MCP server written with the TypeScript SDK (`McpServer`), for interop tests.
//
// tests/test_interop_typescript.py launches it with mcpkit's client:
//
//     node tests/interop_ts/server.mjs
//
// It is deliberately plain `McpServer` usage, nothing specific to mcpkit:
//
//   tools      echo  {text: string}    -> one text block equal to `text`
//              count {steps: integer}  -> progress 1..steps (total steps, "step i"), then text
//              add   {a: number, b: number} -> text and structuredContent {sum} (outputSchema)
//   resources  ts://readme               text/plain
//              ts://pixel.png            image/png (a blob: base64 on the wire)
//   template   ts://greeting/{name}      text/plain, with completion of `name`
//   prompt     review {code, language?}  one user message
//
// Diagnostics go to stderr only: stdout belongs to the protocol.

import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod';

const SERVER_NAME = 'ts-interop';
const SERVER_VERSION = '1.32.2-interop';
const MAX_STEPS = 1000;
// The smallest PNG there is: a 1x1 transparent pixel (67 bytes).
const PIXEL_PNG_BASE64 =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const NAMES = ['ada', 'alan', 'barbara', 'grace'];

const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    { instructions: 'Echo, count with progress, add; read the readme; greet by name.' }
);

server.registerTool(
    'echo',
    {
        description: 'Return the given text unchanged.',
        inputSchema: { text: z.string().describe('Text to echo back.') },
        annotations: { readOnlyHint: true }
    },
    async ({ text }) => ({ content: [{ type: 'text', text }] })
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
        return { content: [{ type: 'text', text: `counted ${steps}` }] };
    }
);

server.registerTool(
    'add',
    {
        description: 'Add two numbers.',
        inputSchema: { a: z.number(), b: z.number() },
        outputSchema: { sum: z.number() }
    },
    async ({ a, b }) => {
        const structuredContent = { sum: a + b };
        return {
            content: [{ type: 'text', text: JSON.stringify(structuredContent) }],
            structuredContent
        };
    }
);

server.registerResource(
    'readme',
    'ts://readme',
    { description: 'A short text.', mimeType: 'text/plain' },
    async uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Hello from TypeScript ✓' }] })
);

server.registerResource(
    'pixel',
    'ts://pixel.png',
    { description: 'A 1x1 PNG.', mimeType: 'image/png' },
    async uri => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: PIXEL_PNG_BASE64 }] })
);

server.registerResource(
    'greeting',
    new ResourceTemplate('ts://greeting/{name}', {
        list: undefined,
        complete: { name: value => NAMES.filter(name => name.startsWith(value)) }
    }),
    { description: 'A greeting for `name`.', mimeType: 'text/plain' },
    async (uri, { name }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `Hello, ${name}!` }] })
);

server.registerPrompt(
    'review',
    {
        description: 'Ask for a code review.',
        argsSchema: { code: z.string(), language: z.string().optional() }
    },
    ({ code, language }) => ({
        description: 'A code review request.',
        messages: [
            {
                role: 'user',
                content: { type: 'text', text: `Review this ${language ?? 'code'}:\n${code}` }
            }
        ]
    })
);

await server.connect(new StdioServerTransport());
