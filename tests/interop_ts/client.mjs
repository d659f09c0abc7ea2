// A stdio MCP client written with the TypeScript SDK (`Client` + `StdioClientTransport`),
// for interop tests: tests/test_interop_typescript.py runs it against mcpkit's servers.
//
//     node tests/interop_ts/client.mjs PLAN_JSON COMMAND [ARG...]
//
// It launches COMMAND (the server) over stdio, initializes, lists whatever the server
// offers (tools, resources, resource templates, prompts), runs the steps of PLAN_JSON in
// order, closes, and prints one JSON summary of what it saw to stdout:
//
//   PLAN_JSON  {"steps": [STEP...]}, each STEP one of
//     {"op": "callTool", "name": N, "arguments": {...}, "progress": true?}
//     {"op": "readResource", "uri": U}
//     {"op": "getPrompt", "name": N, "arguments": {...}}
//     {"op": "complete", "ref": {...}, "argument": {"name": A, "value": V}}
//     {"op": "ping"}
//   and optionally "expectError": CODE when the server must answer with that JSON-RPC error.
//
//   summary    {serverInfo, protocolVersion, capabilities, instructions, tools, resources,
//               resourceTemplates, prompts, steps: [{...STEP, result | error, progressUpdates}],
//               wire: [["out" | "in", message]...], clientErrors: [text...], serverStderr,
//               serverExit: {code, signal}, failures: [text...]}
//
// `wire` is every JSON-RPC message in the order it crossed the pipe ("in": read from the
// server's stdout, "out": written to its stdin), so the order of progress notifications
// and responses can be checked from the bytes, not from callback timing.
//
// Exit status: 0 when every step went as planned, 1 otherwise (the summary is printed in
// both cases when the connection could be made; `failures` says what went wrong).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

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
        case 'ping':
            return { result: await client.ping(options) };
        default:
            throw new Error(`unknown step ${JSON.stringify(step)}`);
    }
}

async function main() {
    const [planText, command, ...args] = process.argv.slice(2);
    if (planText === undefined || command === undefined) {
        process.stderr.write('usage: node client.mjs PLAN_JSON COMMAND [ARG...]\n');
        return 2;
    }
    const plan = JSON.parse(planText);
    const wire = [];
    const failures = [];
    let serverStderr = '';

    const stdio = new StdioClientTransport({ command, args, stderr: 'pipe', env: process.env });
    stdio.stderr.setEncoding('utf8');
    stdio.stderr.on('data', chunk => {
        serverStderr += chunk;
    });
    const clientErrors = [];
    const client = new Client({ name: 'ts-interop-client', version: '1.32.2' }, { capabilities: {} });
    // What the SDK reports without failing a request (e.g. progress for a finished request).
    client.onerror = error => clientErrors.push(String(error?.message ?? error));
    await client.connect(new TappedTransport(stdio, wire), { timeout: REQUEST_TIMEOUT_MS });

    // The server process, to report how it ended: only its exit status proves a clean
    // shutdown. The transport exposes `pid` but not the ChildProcess, so this reads the
    // private `_process` field of the pinned SDK version.
    const child = stdio._process;
    const exited = new Promise(resolve => {
        // 'close', not 'exit': by then the server's stderr has been read to its end.
        child.once('close', (code, signal) => resolve({ code, signal }));
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
        clientErrors,
        serverStderr: '',
        serverExit: null,
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
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return failures.length === 0 ? 0 : 1;
}

main().then(
    status => {
        process.exitCode = status;
    },
    error => {
        process.stderr.write(`client.mjs: ${error?.stack ?? error}\n`);
        process.exitCode = 1;
    }
);
