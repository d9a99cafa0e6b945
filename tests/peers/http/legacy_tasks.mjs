// Tasks in the legacy era (2025-11-25) over Streamable HTTP: @modelcontextprotocol/sdk 1.32.2's
// `StreamableHTTPClientTransport` + `client.experimental.tasks` against the conformance fixture
// server (`conformance_server --http`), started by the harness; its URL is argv[3].
//
// Where sdk 1.32.2 takes server-to-client requests from (read from dist/esm/client/
// streamableHttp.js and shared/protocol.js):
//   - The transport opens the session's standalone GET stream right after
//     `notifications/initialized` is accepted (202); a 405 means "no GET stream" and is not an
//     error. Every message from every stream (the GET stream, any POST's SSE response) goes to the
//     same `onmessage`, so the client answers a request whichever stream brought it.
//   - `requestStream` (behind `callToolStream`) polls `tasks/get`; on `input_required` it calls
//     `tasks/result` "to deliver queued messages (elicitation, sampling) via SSE and block until
//     terminal" (its comment): the SDK's own server queues a task's requests and delivers them
//     only on that POST's SSE stream.
//   - The answer to `elicitation/create` is its own POST (with Mcp-Session-Id), 202.
//
// Our server routes an in-task request to the SSE stream of an open `tasks/result` POST for that
// task, else to the session's GET stream, else keeps it in a backlog that the next such stream
// takes. So this script checks both routes with the real SDK:
//   1. session A, as the SDK runs by default (GET stream open): the elicitation of
//      `confirm_delete` arrives on the GET stream (no `tasks/result` is open when the tool asks);
//   2. session B, whose fetch refuses the GET (a local 405, as the SDK sees from a server or
//      proxy without one): the elicitation waits in the backlog until the SDK, seeing
//      `input_required`, opens `tasks/result`, and it arrives on that POST's SSE stream, followed by
//      the task's result on the same stream.
// Then, on session A: `slow_compute {seconds: 60}` cancelled with `cancelTask`, `listTasks`,
// `getTask`, `-32602` for cancelling an ended task, and DELETE of the session.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { LEGACY_VERSION, REQUEST_TIMEOUT_MS, assert, assertEq, fail, main, ok, show, step } from '../common.mjs';
import { describe, exchangeOf, serverLogMark, serverUrl, tracingFetch, waitForServerLog } from './trace.mjs';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const opts = { timeout: REQUEST_TIMEOUT_MS };

/** Connects an sdk 1.32.2 client with an elicitation handler to `url` over Streamable HTTP. */
async function connect(url, label, fetchOptions = {}) {
    const trace = tracingFetch(label, fetchOptions);
    const client = new Client({ name: `mcp-tasks-peer-http-legacy-${label}`, version: '1.32.2' }, { capabilities: { elicitation: {} } });
    const elicitations = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
        elicitations.push(request.params);
        const props = request.params.requestedSchema?.properties ?? {};
        if ('confirm' in props) return { action: 'accept', content: { confirm: true } };
        return { action: 'decline' };
    });
    const errors = [];
    const transport = new StreamableHTTPClientTransport(url, { fetch: trace.fetch });
    await client.connect(transport, opts);
    // Transport errors (a stream that broke, a POST that failed) are reported, not thrown.
    const onerror = transport.onerror;
    transport.onerror = (error) => {
        errors.push(error);
        console.error(`    transport error (${label}): ${error?.message ?? error}`);
        onerror?.call(transport, error);
    };

    const init = exchangeOf(trace, (m) => m.method === 'initialize');
    assertEq(init?.body.params?.protocolVersion, LEGACY_VERSION, `${label}: initialize params.protocolVersion`);
    assertEq(init.status, 200, `${label}: initialize HTTP status`);
    const sessionId = init.responseHeaders?.['mcp-session-id'];
    assert(typeof sessionId === 'string' && sessionId.length > 0, `${label}: initialize answered without an Mcp-Session-Id header: ${show(init.responseHeaders)}`);
    assertEq(transport.sessionId, sessionId, `${label}: transport.sessionId (from the Mcp-Session-Id header)`);
    const initialized = exchangeOf(trace, (m) => m.method === 'notifications/initialized');
    assertEq([initialized?.status, initialized?.headers['mcp-session-id'], initialized?.headers['mcp-protocol-version']], [202, sessionId, LEGACY_VERSION], `${label}: notifications/initialized [status, Mcp-Session-Id, MCP-Protocol-Version]`);
    // No authentication here, so the server cannot tell requestors apart and does not declare
    // `tasks.list` (2025-11-25: SHOULD NOT); `tasks/list` still answers, scoped to the session.
    assertEq(client.getServerCapabilities()?.tasks, { cancel: {}, requests: { tools: { call: {} } } }, `${label}: server capabilities.tasks`);
    return { client, transport, trace, elicitations, errors, sessionId };
}

/** Waits (up to 5 s) until `read()` is truthy; returns it. */
async function until(read, what) {
    const deadline = Date.now() + 5_000;
    for (;;) {
        const value = read();
        if (value) return value;
        if (Date.now() > deadline) fail(`gave up waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

/** Runs `callToolStream(confirm_delete {filename})` to its end; checks what every run shares. */
async function confirmDelete(session, filename) {
    const { client, trace, sessionId } = session;
    const events = [];
    let taskId;
    for await (const message of client.experimental.tasks.callToolStream({ name: 'confirm_delete', arguments: { filename } }, CallToolResultSchema, opts)) {
        events.push(message);
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        if (message.type === 'error') fail(`callToolStream yielded an error: ${message.error?.message} ${show(message.error)}`);
    }
    ok(`stream: ${events.map((e) => (e.type === 'taskStatus' ? `taskStatus(${e.task.status})` : e.type)).join(', ')}`);
    assertEq(events[0]?.type, 'taskCreated', 'first stream message');
    assertEq(events.at(-1)?.type, 'result', 'last stream message');
    const result = events.at(-1).result;
    assertEq(result.content?.[0]?.text, `Deleted ${filename}`, 'confirm_delete result text');
    assertEq(result._meta?.[RELATED_TASK]?.taskId, taskId, 'result _meta related-task.taskId');
    const call = exchangeOf(trace, (m) => m.method === 'tools/call' && m.params?.arguments?.filename === filename);
    assertEq(call?.body.params?.task, {}, 'tools/call params.task (added by the SDK for a required tool)');
    assertEq([call.headers['mcp-session-id'], call.headers['mcp-protocol-version']], [sessionId, LEGACY_VERSION], 'tools/call [Mcp-Session-Id, MCP-Protocol-Version] headers');

    // The elicitation: which HTTP exchange brought it, and how the answer went back.
    const inbound = trace.messages.find((m) => m.dir === '<-' && m.message.method === 'elicitation/create' && m.message.params?._meta?.[RELATED_TASK]?.taskId === taskId);
    assert(inbound, `no elicitation/create for task ${taskId} reached the client on any stream`);
    assertEq(inbound.message.params.message, `Delete ${filename}?`, 'elicitation message');
    assertEq(inbound.message.params.requestedSchema?.properties?.confirm?.type, 'boolean', 'elicitation requestedSchema.properties.confirm.type');
    ok(`elicitation/create (id ${show(inbound.message.id)}) arrived on exchange ${describe(inbound.exchange)}`);
    const answer = trace.exchanges.find((e) => e.method === 'POST' && e.body?.id === inbound.message.id && 'result' in (e.body ?? {}));
    assert(answer, `the client never POSTed its answer to elicitation/create ${show(inbound.message.id)}`);
    assertEq(answer.body.result, { action: 'accept', content: { confirm: true } }, 'the answer the client POSTed');
    // The task may end, and the stream with it, before the answer POST's own reply is read.
    await until(() => answer.status !== undefined, 'the reply to the answer POST');
    assertEq([answer.status, answer.headers['mcp-session-id']], [202, sessionId], 'the answer POST [status, Mcp-Session-Id]');
    return { taskId, events, inbound, result };
}

await main('legacy tasks over Streamable HTTP (@modelcontextprotocol/sdk 1.32.2 StreamableHTTPClientTransport)', async () => {
    const url = serverUrl('conformance');

    step(`session A: connect to ${url} (initialize, then the SDK opens the GET stream)`);
    const a = await connect(url, 'A');
    const get = await until(() => a.trace.exchanges.find((e) => e.method === 'GET' && e.status !== undefined), 'the SDK to open its GET stream');
    assertEq([get.status, get.kind, get.headers['mcp-session-id']], [200, 'sse', a.sessionId], 'GET [status, body, Mcp-Session-Id]');

    step('tools/list (the SDK caches execution.taskSupport from it)');
    const { tools } = await a.client.listTools(undefined, opts);
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    assertEq([support.confirm_delete, support.slow_compute], ['required', 'optional'], 'execution.taskSupport of confirm_delete, slow_compute');

    step('session A: callToolStream confirm_delete {filename: "a.txt"}; the elicitation comes on the GET stream');
    const first = await confirmDelete(a, 'a.txt');
    assertEq(a.elicitations.length, 1, 'elicitations the handler answered');
    assertEq(describe(first.inbound.exchange), describe(get), 'the exchange the elicitation arrived on: the GET stream (no tasks/result was open when the tool asked)');

    step('session B: a client without a GET stream (its fetch answers the GET 405); the elicitation comes on tasks/result');
    const b = await connect(url, 'B', { refuseGet: true });
    await until(() => b.trace.exchanges.find((e) => e.method === 'GET'), 'the SDK to try its GET stream');
    ok('the SDK took the 405 as "no GET stream" and went on');
    await b.client.listTools(undefined, opts);
    const second = await confirmDelete(b, 'b.txt');
    assertEq(b.elicitations.length, 1, 'elicitations the handler answered');
    const statuses = second.events.filter((e) => e.type === 'taskStatus').map((e) => e.task.status);
    assertEq(statuses.at(-1), 'input_required', 'the last status the SDK polled before it called tasks/result');
    const result = exchangeOf(b.trace, (m) => m.method === 'tasks/result' && m.params?.taskId === second.taskId);
    assert(result, `the SDK never called tasks/result for ${second.taskId}`);
    assertEq(describe(second.inbound.exchange), describe(result), 'the exchange the elicitation arrived on: the tasks/result POST');
    assertEq(result.kind, 'sse', 'tasks/result response body');
    const last = result.messages.at(-1);
    assertEq([last?.id, last?.result?.content?.[0]?.text], [result.body.id, 'Deleted b.txt'], 'last message on the tasks/result stream: [id, result text]');
    assertEq(result.messages.map((m) => m.method ?? 'response'), ['elicitation/create', 'response'], 'messages on the tasks/result stream');
    await b.transport.terminateSession();
    await b.client.close();

    step('session A: callToolStream slow_compute {seconds: 60}, cancelled with cancelTask once running');
    const logMark = serverLogMark('conformance');
    const slowEvents = [];
    let slowId;
    let cancelled;
    for await (const message of a.client.experimental.tasks.callToolStream({ name: 'slow_compute', arguments: { seconds: 60 } }, CallToolResultSchema, opts)) {
        slowEvents.push(message);
        if (message.type === 'taskCreated') {
            slowId = message.task.taskId;
            // Cancel once the tool runs (its status says so), so that it can see the cancel.
            const deadline = Date.now() + 5_000;
            while ((await a.client.experimental.tasks.getTask(slowId, opts)).statusMessage !== 'computing for 60s') {
                if (Date.now() > deadline) fail('slow_compute never reported "computing for 60s"');
                await new Promise((resolve) => setTimeout(resolve, 50));
            }
            cancelled = await a.client.experimental.tasks.cancelTask(slowId, opts);
        }
    }
    ok(`stream: ${slowEvents.map((e) => (e.type === 'taskStatus' ? `taskStatus(${e.task.status})` : e.type)).join(', ')}`);
    assertEq([cancelled?.taskId, cancelled?.status], [slowId, 'cancelled'], 'cancelTask result [taskId, status]');
    assertEq(slowEvents.at(-1)?.type, 'error', 'last message of the cancelled stream');
    assert(/cancelled/.test(slowEvents.at(-1).error?.message ?? ''), `the stream's error does not say cancelled: ${show(slowEvents.at(-1).error)}`);
    const cancel = exchangeOf(a.trace, (m) => m.method === 'tasks/cancel' && m.params?.taskId === slowId);
    assertEq([cancel?.status, cancel?.kind, cancel?.headers['mcp-session-id']], [200, 'json', a.sessionId], 'tasks/cancel [status, body, Mcp-Session-Id]');
    await waitForServerLog('conformance', 'slow_compute: saw cancellation', ok, logMark);

    step('session A: listTasks, getTask, cancelTask on ended tasks (-32602 in 2025-11-25)');
    const listed = await a.client.experimental.tasks.listTasks(undefined, opts);
    const byId = new Map(listed.tasks.map((t) => [t.taskId, t.status]));
    ok(`listTasks: ${show(listed.tasks.map((t) => [t.taskId, t.status]))}`);
    assertEq([byId.get(first.taskId), byId.get(slowId)], ['completed', 'cancelled'], "listTasks: this session's tasks [confirm_delete, slow_compute]");
    assertEq((await a.client.experimental.tasks.getTask(slowId, opts)).status, 'cancelled', 'getTask(slow_compute) status');
    for (const [id, status] of [[first.taskId, 'completed'], [slowId, 'cancelled']]) {
        let error;
        try {
            const value = await a.client.experimental.tasks.cancelTask(id, opts);
            fail(`cancelTask on a ${status} task succeeded: ${show(value)}`);
        } catch (e) {
            if (e?.code === undefined) throw e;
            error = e;
        }
        assertEq(error.code, -32602, `cancelTask on a ${status} task: error code`);
        ok(`message: ${error.message}`);
    }

    step('session A: DELETE ends the session; the GET stream ends with it');
    await a.transport.terminateSession();
    const del = a.trace.exchanges.find((e) => e.method === 'DELETE');
    assertEq([del?.status, del?.headers['mcp-session-id']], [200, a.sessionId], 'DELETE [status, Mcp-Session-Id]');
    await until(() => get.ended, 'the GET stream to end after DELETE');
    ok('the GET stream ended');
    assertEq([...a.errors, ...b.errors].map((e) => e?.message ?? String(e)), [], 'transport errors reported by the SDK');
    await a.client.close();
});
