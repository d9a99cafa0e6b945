// Hosts without tasks: the clients most hosts ship, calling task-required tools with nothing but
// their plain tool-call API, against servers run with `--task-fallback`:
//   sdk1   @modelcontextprotocol/sdk 1.32.2 `Client.callTool` (2025-11-25; no `tasks` capability).
//          Its `callTool` throws locally for a tool that `tools/list` marks `taskSupport:
//          "required"`, so this is also the proof that the fallback lists such tools as
//          callable to it.
//   aisdk  @ai-sdk/mcp 2.0.99 `createMCPClient`, its tools called the way the AI SDK calls them
//          for a model (`(await client.tools())[name].execute(args, ...)`), in both eras: its
//          default `server/discover` (2026-07-28, questions through MRTR) and
//          `protocolVersionDiscovery: false` (2025-11-25 `initialize`, questions as requests).
// Flow, over stdio or Streamable HTTP: `research` (example_server; required; asks the user, then
// the client's model) answers a task id at once; the question reaches the client's elicitation
// handler; `tasks_status` / `tasks_result` follow the task to its result (the AI SDK has no
// sampling, so there the task fails and `tasks_result` says so as a tool error with the task's
// message); on fallback_server `interview` is answered, `report` runs to its result, and a long
// `report` is cancelled with `tasks_cancel`. No model or API key: the tools are called directly.
//
// Usage: node hosts.mjs <sdk1|aisdk> <stdio|http> <example_server bin|URL> <fallback_server bin|URL>

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ElicitationRequestSchema, createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import {
    COMPANIONS,
    LEGACY_VERSION,
    MODERN_VERSION,
    REQUEST_TIMEOUT_MS,
    assert,
    assertEq,
    fail,
    main,
    ok,
    resultText,
    serverEnv,
    show,
    startedTask,
    step,
} from './common.mjs';

const [kind, transportKind, exampleTarget, fallbackTarget] = process.argv.slice(2);
if (!['sdk1', 'aisdk'].includes(kind) || !['stdio', 'http'].includes(transportKind) || !exampleTarget || !fallbackTarget) {
    fail('usage: node hosts.mjs <sdk1|aisdk> <stdio|http> <example_server bin|URL> <fallback_server bin|URL>');
}
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const SUMMARY = 'Tides follow the moon.';
const trace = process.env.MCP_PEERS_TRACE !== '0';

const textOf = resultText;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Every message we send (and, over stdio, receive), for checks on what crossed the wire. */
const wire = [];
function record(label, dir, message) {
    wire.push({ label, dir, message });
    if (!trace) return;
    let text = JSON.stringify(message);
    if (text.length > 1200) text = `${text.slice(0, 1200)}... (${text.length} chars)`;
    process.stderr.write(`  wire ${label} ${dir} ${text}\n`);
}

/** A fetch that records the JSON-RPC messages it POSTs. */
function tracingFetch(label) {
    return async (url, init) => {
        if (init?.method === 'POST' && typeof init.body === 'string') {
            try {
                const body = JSON.parse(init.body);
                for (const m of Array.isArray(body) ? body : [body]) record(label, '->', m);
            } catch {}
        }
        return fetch(url, init);
    };
}

/** Wraps an AI SDK transport object so that what it sends and receives is recorded. */
function tracedTransport(transport, label) {
    const send = transport.send.bind(transport);
    transport.send = (message, ...rest) => {
        record(label, '->', message);
        return send(message, ...rest);
    };
    let handler;
    Object.defineProperty(transport, 'onmessage', {
        configurable: true,
        get: () => handler && ((message, ...rest) => {
            record(label, '<-', message);
            return handler(message, ...rest);
        }),
        set: (h) => { handler = h; },
    });
    return transport;
}

/** What the user and the model answer. */
const asked = [];
function answerElicitation(params) {
    asked.push(params);
    if (params.message?.startsWith('How many sources')) return { action: 'accept', content: { sources: 3 } };
    if (params.message === 'What is your name?') return { action: 'accept', content: { name: 'Ada' } };
    return { action: 'decline' };
}

/**
 * A connected client behind one small interface: `list()`, `call(name, args)` (the client's plain
 * tool call; it resolves to the CallToolResult), `era`, `close()`.
 */
async function connect(target, label, era) {
    if (kind === 'sdk1') {
        const client = new Client({ name: 'mcp-tasks-hosts-sdk1', version: '1.32.2' }, { capabilities: { elicitation: {}, sampling: {} } });
        client.setRequestHandler(ElicitRequestSchema, (request) => answerElicitation(request.params));
        client.setRequestHandler(CreateMessageRequestSchema, () => ({
            role: 'assistant',
            content: { type: 'text', text: SUMMARY },
            model: 'no-model',
        }));
        let transport;
        if (transportKind === 'stdio') {
            transport = new StdioClientTransport({ command: target, args: ['--task-fallback'], env: serverEnv(), stderr: 'inherit' });
            const { send } = transport;
            transport.send = function (message, ...rest) {
                record(label, '->', message);
                return send.call(this, message, ...rest);
            };
        } else {
            transport = new StreamableHTTPClientTransport(new URL(target), { fetch: tracingFetch(label) });
        }
        await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
        assertEq(client.getServerVersion()?.name !== undefined, true, `${label}: connected`);
        return {
            era: 'legacy',
            list: async () => (await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS })).tools,
            call: (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS }),
            close: () => client.close(),
        };
    }
    const transport = transportKind === 'stdio'
        ? tracedTransport(new Experimental_StdioMCPTransport({ command: target, args: ['--task-fallback'], env: serverEnv(), stderr: 'inherit' }), label)
        : { type: 'http', url: target, fetch: tracingFetch(label) };
    const client = await createMCPClient({
        transport,
        clientName: 'mcp-tasks-hosts-aisdk',
        capabilities: { elicitation: {} },
        protocolVersionDiscovery: era === 'modern',
    });
    client.onElicitationRequest(ElicitationRequestSchema, (request) => answerElicitation(request.params));
    assertEq(client.initializeResult.protocolVersion, era === 'modern' ? MODERN_VERSION : LEGACY_VERSION, `${label}: protocol version`);
    let tools;
    let calls = 0;
    return {
        era,
        list: async () => (await client.listTools()).tools,
        call: async (name, args) => {
            // As the AI SDK runs a tool for a model: the tool set from `tools()`, then `execute`.
            tools ??= await client.tools();
            assert(tools[name], `${name} is not in the AI SDK tool set: ${show(Object.keys(tools))}`);
            calls += 1;
            return tools[name].execute(args, { toolCallId: `call-${calls}`, messages: [] });
        },
        close: () => client.close(),
    };
}


/** Calls `tasks_status` until `done()` says so (each call may carry a question through MRTR). */
async function statusUntil(client, id, done, what) {
    const deadline = Date.now() + 15_000;
    for (;;) {
        const status = await client.call('tasks_status', { taskId: id });
        assert(!status.isError, `tasks_status answered an error: ${show(status)}`);
        if (done(status)) return status;
        assert(Date.now() < deadline, `${what}: never happened; last status ${show(status)}`);
        await sleep(50);
    }
}

async function waitResult(client, id) {
    const deadline = Date.now() + 15_000;
    for (;;) {
        const result = await client.call('tasks_result', { taskId: id });
        if (!textOf(result).includes('has no result yet')) return result;
        assert(Date.now() < deadline, `task ${id} never ended`);
        await sleep(50);
    }
}

/**
 * Lists the tools (which arms the SDK 1.x guard: its `callTool` throws for a tool listed as
 * `required`), and returns a check to run after `name` was called: the listing a client without
 * tasks got.
 */
async function listed(client, name) {
    const tools = await client.list();
    const tool = tools.find((t) => t.name === name);
    assert(tool, `${name} is not listed: ${show(tools.map((t) => t.name))}`);
    for (const companion of COMPANIONS) assert(tools.some((t) => t.name === companion), `${companion} is not listed`);
    return () => {
        if (client.era === 'legacy') {
            assertEq(tool.execution?.taskSupport, 'optional', `${name} execution.taskSupport for a client without tasks`);
        } else {
            assertEq(tool.execution, undefined, `${name} execution in 2026-07-28`);
        }
    };
}

async function researchFlow(client, era) {
    step(`[${era}] research through the fallback, its question answered by the elicitation handler`);
    const checkListing = await listed(client, 'research');
    asked.length = 0;
    const id = startedTask(await client.call('research', { topic: 'tides' }), 'research');
    checkListing();
    await statusUntil(client, id, () => asked.length > 0, 'the research question reaching the handler');
    assertEq(asked[0].message, 'How many sources should I read about "tides"?', 'the question the handler got');
    const result = await waitResult(client, id);
    assertEq(result._meta?.[RELATED_TASK]?.taskId, id, 'tasks_result related-task');
    if (kind === 'sdk1') {
        assertEq(result.isError ?? false, false, 'research result isError');
        assertEq(result.structuredContent, { topic: 'tides', sources: 3, summary: SUMMARY }, 'research structuredContent');
    } else {
        // The AI SDK client has no sampling: the research goes on without the model's summary
        // (it matches the tool's `NotSupported` error) and completes.
        assertEq(result.isError ?? false, false, 'research result isError without sampling');
        assertEq(result.structuredContent?.sources, 3, 'research sources without sampling');
        const summary = result.structuredContent?.summary ?? '';
        assert(summary.includes('no summary'), `research summary without sampling: ${summary}`);
        ok(`tasks_result: ${show(summary)}`);
        const status = await client.call('tasks_status', { taskId: id });
        assertEq(status.structuredContent?.status, 'completed', 'tasks_status of the completed task');
    }
}

async function fallbackServerFlow(client, era) {
    step(`[${era}] interview: the question answered, then the greeting through tasks_result`);
    const checkListing = await listed(client, 'interview');
    asked.length = 0;
    const id = startedTask(await client.call('interview', {}), 'interview');
    checkListing();
    await statusUntil(client, id, () => asked.length > 0, 'the interview question reaching the handler');
    const greeting = await waitResult(client, id);
    assertEq(greeting.isError ?? false, false, 'interview result isError');
    assertEq(textOf(greeting), 'Nice to meet you, Ada.', 'interview result');
    if (era === 'modern') {
        const retries = wire.filter((w) => w.label === `fallback/${era}` && w.dir === '->' && w.message.params?.name === 'tasks_status' && w.message.params?.inputResponses);
        assertEq(retries.length, 1, 'tasks_status retries carrying the answer (MRTR)');
    }

    step(`[${era}] report runs to its result; a long one is cancelled`);
    const reportId = startedTask(await client.call('report', { steps: 5, step_ms: 50 }), 'report');
    const report = await waitResult(client, reportId);
    assertEq(report.structuredContent, { steps: 5, note: 'report of 5 steps' }, 'report structuredContent');
    const longId = startedTask(await client.call('report', { steps: 1000, step_ms: 50 }), 'report');
    const cancelled = await client.call('tasks_cancel', { taskId: longId });
    assertEq(cancelled.structuredContent?.status, 'cancelled', 'tasks_cancel status');
    const after = await client.call('tasks_result', { taskId: longId });
    assertEq(after.isError, true, 'tasks_result of a cancelled task isError');
    assertEq(textOf(after), `Task ${longId} was cancelled before it produced a result.`, 'tasks_result of a cancelled task');
}

await main(`hosts without tasks (${kind}, ${transportKind})`, async () => {
    const eras = kind === 'sdk1' ? ['legacy'] : ['modern', 'legacy'];
    for (const era of eras) {
        step(`[${era}] connect ${kind} over ${transportKind} to example_server --task-fallback`);
        const example = await connect(exampleTarget, `example/${era}`, era);
        await researchFlow(example, era);
        await example.close();
        step(`[${era}] connect ${kind} over ${transportKind} to fallback_server --task-fallback`);
        const fallback = await connect(fallbackTarget, `fallback/${era}`, era);
        await fallbackServerFlow(fallback, era);
        await fallback.close();
    }
}, { timeoutMs: 55_000 });
