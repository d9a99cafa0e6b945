// Tasks in the legacy era (2025-11-25 experimental tasks): @modelcontextprotocol/sdk 1.32.2's
// `client.experimental.tasks` against the conformance fixture server over stdio.
//
// How sdk 1.32.2 drives a task (read from dist/esm/experimental/tasks/client.js and
// shared/protocol.js `requestStream`):
//   - `callToolStream(params)` adds `task: {}` on its own when the tool is known to be a task
//     tool: server capability `tasks.requests.tools.call` plus `execution.taskSupport`
//     "required"/"optional" cached from the last `tools/list` (so list the tools first).
//   - It yields `taskCreated`, then polls `tasks/get` (yielding `taskStatus`) every
//     `pollInterval`. On `input_required` it calls the blocking `tasks/result` and yields its
//     answer as `result`; on `completed` it calls `tasks/result` too; on `failed`/`cancelled`
//     it yields an `error` (McpError InternalError "Task <id> was cancelled"/"failed").
//   - The elicitation inside the task is an ordinary server->client `elicitation/create`
//     tagged with `_meta["io.modelcontextprotocol/related-task"]`, answered by the handler
//     registered with `setRequestHandler(ElicitRequestSchema, ...)`.
//   - `listTasks`, `cancelTask`, `getTask` are plain requests.
//   - Quirk: inside callToolStream the SDK hands its request options, `task` included, to the
//     `tasks/get` and `tasks/result` it sends, so those carry `params.task: {}` too. The spec
//     gives `task` no meaning there; the server ignores it, and the script lets it pass.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
    LEGACY_VERSION,
    REQUEST_TIMEOUT_MS,
    assert,
    assertEq,
    conformanceBin,
    fail,
    main,
    ok,
    serverEnv,
    show,
    step,
    traceTransport,
} from './common.mjs';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

await main('legacy tasks (@modelcontextprotocol/sdk 1.32.2 experimental tasks)', async () => {
    const bin = conformanceBin();
    const wire = traceTransport(StdioClientTransport, 'sdk1tasks');
    const opts = { timeout: REQUEST_TIMEOUT_MS };

    step(`connect (initialize, capabilities.elicitation) to ${bin}`);
    const client = new Client({ name: 'mcp-tasks-peer-legacy-tasks', version: '1.32.2' }, { capabilities: { elicitation: {} } });
    const elicitations = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
        elicitations.push(request.params);
        const props = request.params.requestedSchema?.properties ?? {};
        if ('confirm' in props) return { action: 'accept', content: { confirm: true } };
        return { action: 'decline' };
    });
    const transport = new StdioClientTransport({ command: bin, env: serverEnv({ logTools: true }), stderr: 'pipe' });
    const log = [];
    transport.stderr?.on('data', (chunk) => {
        log.push(String(chunk));
        process.stderr.write(chunk);
    });
    await client.connect(transport, opts);
    assertEq(wire.find((w) => w.dir === '->')?.message.params?.protocolVersion, LEGACY_VERSION, 'initialize params.protocolVersion');
    assertEq(client.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } }, 'server capabilities.tasks');

    step('tools/list (sdk 1.x caches execution.taskSupport from it)');
    const { tools } = await client.listTools(undefined, opts);
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    assertEq([support.confirm_delete, support.slow_compute, support.greet], ['required', 'optional', 'forbidden'], 'execution.taskSupport of confirm_delete, slow_compute, greet');

    step('callToolStream confirm_delete {filename: "a.txt"}: a required task that elicits on the session');
    const events = [];
    let confirmId;
    for await (const message of client.experimental.tasks.callToolStream({ name: 'confirm_delete', arguments: { filename: 'a.txt' } }, CallToolResultSchema, opts)) {
        events.push(message);
        if (message.type === 'taskCreated') confirmId = message.task.taskId;
        if (message.type === 'error') fail(`callToolStream yielded an error: ${message.error?.message} ${show(message.error)}`);
    }
    ok(`stream: ${events.map((e) => (e.type === 'taskStatus' ? `taskStatus(${e.task.status})` : e.type)).join(', ')}`);
    assertEq(events[0]?.type, 'taskCreated', 'first stream message');
    assertEq(events[0].task.status, 'working', 'taskCreated task.status');
    assertEq(events[0].task.pollInterval, 200, 'taskCreated task.pollInterval');
    assertEq(events.at(-1)?.type, 'result', 'last stream message');
    const result = events.at(-1).result;
    assertEq(result.content?.[0]?.text, 'Deleted a.txt', 'confirm_delete result text');
    assertEq(result._meta?.[RELATED_TASK]?.taskId, confirmId, 'tasks/result _meta related-task.taskId');
    const call = wire.find((w) => w.dir === '->' && w.message.method === 'tools/call');
    assertEq(call?.message.params?.task, {}, 'tools/call params.task (added by the SDK for a required tool)');

    assertEq(elicitations.length, 1, 'elicitation requests the handler answered');
    assertEq(elicitations[0].message, 'Delete a.txt?', 'elicitation message');
    assertEq(elicitations[0].requestedSchema?.properties?.confirm?.type, 'boolean', 'elicitation requestedSchema.properties.confirm.type');
    const elicitOnWire = wire.find((w) => w.dir === '<-' && w.message.method === 'elicitation/create');
    assertEq(elicitOnWire?.message.params?._meta?.[RELATED_TASK]?.taskId, confirmId, 'elicitation/create _meta related-task.taskId');
    const answer = wire.find((w) => w.dir === '->' && w.message.id === elicitOnWire.message.id && 'result' in w.message);
    assertEq(answer?.message.result, { action: 'accept', content: { confirm: true } }, 'the client answer on the wire');

    const done = await client.experimental.tasks.getTask(confirmId, opts);
    assertEq(done.status, 'completed', 'getTask after the stream: status');
    const statuses = wire
        .filter((w) => w.dir === '<-' && w.message.method === 'notifications/tasks/status' && w.message.params?.taskId === confirmId)
        .map((w) => w.message.params.status);
    ok(`notifications/tasks/status for the task: ${statuses.join(', ')}`);

    step('callToolStream slow_compute {seconds: 60}, cancelled with cancelTask once created');
    const slowEvents = [];
    let slowId;
    let cancelled;
    const cancelStarted = Date.now();
    for await (const message of client.experimental.tasks.callToolStream({ name: 'slow_compute', arguments: { seconds: 60 } }, CallToolResultSchema, opts)) {
        slowEvents.push(message);
        if (message.type === 'taskCreated') {
            slowId = message.task.taskId;
            // Cancel once the tool runs (its status says so), so that it can see the cancel.
            // The stream keeps polling tasks/get and ends once it sees the cancelled status.
            const deadline = Date.now() + 5_000;
            while ((await client.experimental.tasks.getTask(slowId, opts)).statusMessage !== 'computing for 60s') {
                if (Date.now() > deadline) fail('slow_compute never reported "computing for 60s"');
                await new Promise((resolve) => setTimeout(resolve, 50));
            }
            cancelled = await client.experimental.tasks.cancelTask(slowId, opts);
        }
    }
    ok(`stream: ${slowEvents.map((e) => (e.type === 'taskStatus' ? `taskStatus(${e.task.status})` : e.type)).join(', ')} in ${Date.now() - cancelStarted} ms`);
    assertEq(cancelled?.taskId, slowId, 'cancelTask result taskId');
    assertEq(cancelled.status, 'cancelled', 'cancelTask result status (the task, now cancelled)');
    const slowLast = slowEvents.at(-1);
    assertEq(slowLast?.type, 'error', 'last message of the cancelled stream');
    assert(/cancelled/.test(slowLast.error?.message ?? ''), `the stream's error does not say cancelled: ${show(slowLast.error)}`);
    ok(`stream error: ${slowLast.error.message}`);
    const lastStatus = slowEvents.filter((e) => e.type === 'taskStatus').at(-1);
    assertEq(lastStatus?.task.status, 'cancelled', 'last taskStatus of the cancelled stream');
    await waitForLog(log, 'slow_compute: saw cancellation');

    step('listTasks');
    const listed = await client.experimental.tasks.listTasks(undefined, opts);
    const byId = new Map(listed.tasks.map((t) => [t.taskId, t]));
    assertEq(listed.tasks.map((t) => t.taskId), [confirmId, slowId], 'listTasks taskIds (oldest first)');
    assertEq([byId.get(confirmId).status, byId.get(slowId).status], ['completed', 'cancelled'], 'listTasks statuses');
    assert(listed.nextCursor === undefined, `unexpected nextCursor: ${show(listed)}`);
    for (const task of listed.tasks) {
        assert(typeof task.createdAt === 'string' && typeof task.lastUpdatedAt === 'string' && 'ttl' in task, `listed task lacks createdAt/lastUpdatedAt/ttl: ${show(task)}`);
    }
    ok('each listed task has createdAt, lastUpdatedAt, ttl');

    step('getTask and cancelTask on ended tasks (cancel of a terminal task is -32602 in 2025-11-25)');
    assertEq((await client.experimental.tasks.getTask(slowId, opts)).status, 'cancelled', 'getTask(slow_compute) status');
    for (const [id, status] of [[confirmId, 'completed'], [slowId, 'cancelled']]) {
        let error;
        try {
            const value = await client.experimental.tasks.cancelTask(id, opts);
            fail(`cancelTask on a ${status} task succeeded: ${show(value)}`);
        } catch (e) {
            if (e?.code === undefined) throw e;
            error = e;
        }
        assertEq(error.code, -32602, `cancelTask on a ${status} task: error code`);
        assert(error.message.includes(status), `the error does not name the status ${status}: ${error.message}`);
        ok(`message: ${error.message}`);
    }
    await client.close();
});

/** Waits (up to 5 s) for `text` in the server's log. */
async function waitForLog(log, text) {
    const deadline = Date.now() + 5_000;
    while (!log.join('').includes(text)) {
        if (Date.now() > deadline) fail(`the server never logged "${text}"`);
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    ok(`server log: ${text}`);
}
