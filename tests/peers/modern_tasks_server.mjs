// A 2026-07-28 stdio MCP server built on @modelcontextprotocol/server 2.4.0, serving the tasks
// extension (`io.modelcontextprotocol/tasks`) with the wire schemas of
// @modelcontextprotocol/ext-tasks 0.2.2 (`core/v2`): every tasks/* request is parsed, and every
// task it returns is checked, with the package's own schemas. For the interop tests of the
// `mcp-tasks` command (tests/interop.rs).
//
// Tools (tasks when the request declares the extension; refused with -32021 otherwise):
//   book_table {restaurant}  status "checking <restaurant>", then `input_required` with a stored
//                            input request `party` (elicitation: size 1..12, outside: boolean),
//                            answered by tasks/update; completes with
//                            "table for <size> at <restaurant> (outside: <bool>)".
//   slow {seconds}           status "sleeping", sleeps; tasks/cancel makes it `cancelled`.
//
// Run: node tests/peers/modern_tasks_server.mjs (it logs to stderr).

import { Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import {
    TASKS_EXTENSION_ID_V2,
    GetTaskRequestV2Schema,
    UpdateTaskRequestV2Schema,
    CancelTaskRequestV2Schema,
    DetailedTaskV2Schema,
    CreateTaskResultV2Schema,
    hasTaskClientCapabilityV2,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { randomUUID } from 'node:crypto';

const log = (...a) => console.error('[modern_tasks_server]', ...a);

/** taskId -> { status, statusMessage, createdAt, lastUpdatedAt, inputRequests?, result?, waiters } */
const tasks = new Map();

function now() {
    return new Date().toISOString();
}

/** The task as `tasks/get` shows it, checked against ext-tasks' DetailedTask schema. */
function detailed(id) {
    const t = tasks.get(id);
    const out = {
        taskId: id,
        status: t.status,
        createdAt: t.createdAt,
        lastUpdatedAt: t.lastUpdatedAt,
        ttlMs: 600000,
        pollIntervalMs: 100,
    };
    if (t.statusMessage) out.statusMessage = t.statusMessage;
    if (t.status === 'input_required') out.inputRequests = t.inputRequests;
    if (t.status === 'completed') out.result = t.result;
    DetailedTaskV2Schema.parse(out);
    return out;
}

function set(id, status, statusMessage) {
    const t = tasks.get(id);
    t.status = status;
    t.statusMessage = statusMessage;
    t.lastUpdatedAt = now();
    log(`task ${id}: ${status}${statusMessage ? ` (${statusMessage})` : ''}`);
}

/** Waits for the answer to the stored input request `key` (delivered by tasks/update). */
function waitForInput(id, key) {
    return new Promise((resolve) => {
        tasks.get(id).waiters.set(key, resolve);
    });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function bookTable(id, restaurant) {
    set(id, 'working', `checking ${restaurant}`);
    await sleep(200);
    const t = tasks.get(id);
    t.inputRequests = {
        party: {
            method: 'elicitation/create',
            params: {
                mode: 'form',
                message: `How many people, and outside? (${restaurant})`,
                requestedSchema: {
                    type: 'object',
                    properties: {
                        size: { type: 'integer', minimum: 1, maximum: 12, description: 'People' },
                        outside: { type: 'boolean', description: 'Sit outside?', default: false },
                    },
                    required: ['size'],
                },
            },
        },
    };
    set(id, 'input_required', 'waiting for the party size');
    const answer = await waitForInput(id, 'party');
    if (tasks.get(id).status === 'cancelled') return;
    delete t.inputRequests;
    if (answer.action !== 'accept') {
        t.result = { content: [{ type: 'text', text: `no table (${answer.action})` }], isError: true };
        set(id, 'completed');
        return;
    }
    set(id, 'working', 'booking');
    await sleep(200);
    if (tasks.get(id).status === 'cancelled') return;
    const { size, outside = false } = answer.content;
    t.result = { content: [{ type: 'text', text: `table for ${size} at ${restaurant} (outside: ${outside})` }] };
    set(id, 'completed');
}

async function slow(id, seconds) {
    set(id, 'working', 'sleeping');
    const until = Date.now() + seconds * 1000;
    while (Date.now() < until) {
        if (tasks.get(id).status === 'cancelled') {
            log(`task ${id}: slow saw its cancellation`);
            return;
        }
        await sleep(50);
    }
    tasks.get(id).result = { content: [{ type: 'text', text: `slept ${seconds}s` }] };
    set(id, 'completed');
}

/** One server instance: serveStdio pins one per connection, in the era its opening selects. */
function makeServer() {
const server = new Server(
    { name: 'ext-tasks-0.2.2-fixture', version: '1.0.0' },
    {
        capabilities: { tools: {}, extensions: { [TASKS_EXTENSION_ID_V2]: {} } },
        // The 2026-07-28 revision (server/discover, per-request _meta) first.
        supportedProtocolVersions: ['2026-07-28', '2025-11-25'],
    },
);

server.setRequestHandler('tools/list', async () => ({
    tools: [
        {
            name: 'book_table',
            description: 'Book a table; asks the party size (a task).',
            inputSchema: { type: 'object', properties: { restaurant: { type: 'string' } }, required: ['restaurant'] },
        },
        {
            name: 'slow',
            description: 'Sleep for `seconds` (a task to cancel).',
            inputSchema: { type: 'object', properties: { seconds: { type: 'number' } }, required: ['seconds'] },
        },
    ],
}));

server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name, arguments: args = {} } = request.params;
    if (!['book_table', 'slow'].includes(name)) {
        return { content: [{ type: 'text', text: `unknown tool ${name}` }], isError: true };
    }
    // The SDK lifts the per-request `_meta` envelope off the params into ctx.mcpReq.envelope.
    if (!hasTaskClientCapabilityV2({ _meta: ctx.mcpReq.envelope })) {
        const error = new Error('Missing required client capability');
        error.code = -32021;
        error.data = { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } } };
        throw error;
    }
    const id = randomUUID();
    tasks.set(id, { status: 'working', createdAt: now(), lastUpdatedAt: now(), waiters: new Map() });
    if (name === 'book_table') bookTable(id, String(args.restaurant));
    else slow(id, Number(args.seconds));
    const created = { resultType: 'task', ...detailed(id) };
    CreateTaskResultV2Schema.parse(created);
    log(`tools/call ${name}: task ${id}`);
    return created;
});

function known(id) {
    if (!tasks.has(id)) {
        const error = new Error(`unknown task ${id}`);
        error.code = -32602;
        throw error;
    }
}

const taskMethods = {
    'tasks/get': [GetTaskRequestV2Schema, (params) => ({ resultType: 'complete', ...detailed(params.taskId) })],
    'tasks/update': [UpdateTaskRequestV2Schema, (params) => {
        const t = tasks.get(params.taskId);
        for (const [key, response] of Object.entries(params.inputResponses)) {
            const waiter = t.waiters.get(key);
            if (waiter) {
                t.waiters.delete(key);
                log(`task ${params.taskId}: input ${key} = ${JSON.stringify(response)}`);
                waiter(response);
            }
        }
        return { resultType: 'complete' };
    }],
    'tasks/cancel': [CancelTaskRequestV2Schema, (params) => {
        const t = tasks.get(params.taskId);
        if (!['completed', 'failed', 'cancelled'].includes(t.status)) {
            set(params.taskId, 'cancelled', 'cancelled by the client');
            for (const waiter of t.waiters.values()) waiter({ action: 'cancel' });
            t.waiters.clear();
        }
        return { resultType: 'complete' };
    }],
};

for (const [method, [schema, handle]] of Object.entries(taskMethods)) {
    // Registered with a schema, as the SDK wants for methods an extension reuses; the whole
    // request (with `inputResponses`, which the SDK hands over in ctx) is then parsed with
    // ext-tasks' schema for it.
    server.setRequestHandler(method, { params: GetTaskRequestV2Schema.shape.params }, async (params, ctx) => {
        const inputResponses = ctx.mcpReq.inputResponses;
        const request = { jsonrpc: '2.0', id: ctx.mcpReq.id, method, params: { ...params, ...(inputResponses && { inputResponses }) } };
        const parsed = schema.safeParse(request);
        if (!parsed.success) {
            const error = new Error(`Invalid params for ${method}: ${parsed.error.message}`);
            error.code = -32602;
            throw error;
        }
        known(parsed.data.params.taskId);
        return handle(parsed.data.params);
    });
}

return server;
}

serveStdio(makeServer, { onerror: (e) => log('error:', e.message) });
log('ready on stdio');
