// Tasks in the modern era: @modelcontextprotocol/client 2.4.0 + @modelcontextprotocol/ext-tasks
// 0.2.2 (the official requester library for the `io.modelcontextprotocol/tasks` extension)
// against our servers over stdio.
//
// How ext-tasks 0.2.2 drives a V2 task (read from dist/client/{session,sdk-client-adapter,
// task-protocol-v2,port,execution}.js):
//   - `createTaskSessionFromClient(client, opts)` reads the generation from the connected
//     client: era 'modern' and `capabilities.extensions["io.modelcontextprotocol/tasks"]` equal
//     to `{}` (from server/discover) => 'v2'. For v2 it REQUIRES `rawDispatch` +
//     `v2RequestFraming`: the 2.4.0 Client's own request path rejects `resultType: "task"`
//     (SdkError UnsupportedResultType) and era-gates `tasks/*`, so `tools/call` and every
//     `tasks/*` go through a host-owned raw JSON-RPC path. The adapter frames each of those
//     requests itself: `_meta` protocolVersion, clientInfo and clientCapabilities from
//     `v2RequestFraming`, plus `extensions["io.modelcontextprotocol/tasks"] = {}` (per request,
//     as SEP-2663 wants). Other requests (tools/list) use `client.request`.
//   - `session.callTool` sends `tools/call`; a `CreateTaskResult` (`resultType: "task"`) makes
//     a task execution that polls `tasks/get` at `pollIntervalMs`. Each `input_required`
//     snapshot's `inputRequests` go, key by key, to the session's `onInputRequest` handler
//     (context `{scope: "task", delivery: "task-update", taskId, inputId}`); the answers are
//     sent in one `tasks/update {taskId, inputResponses}`, and a key is answered only once.
//   - `execution.cancel()` sends `tasks/cancel`; the ack alone ends the local execution with
//     outcome `cancelled` (V2 cancellation is cooperative), so the script reads the server's
//     final state with its own `tasks/get` (`session.task(id).snapshot()`).
//
// The raw path (`rawCoordinator`, in common.mjs) is what the library calls "the host request
// coordinator that owns request IDs and response matching": it writes to the same stdio
// transport as the Client, with string ids (`raw-N`) that cannot collide with the Client's
// numeric ones, and takes those responses before the Client sees them.

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createApplicationInputHandler, createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';
import {
    MODERN_VERSION,
    REQUEST_TIMEOUT_MS,
    assert,
    assertEq,
    conformanceBin,
    fail,
    main,
    ok,
    rawCoordinator,
    serverBin,
    serverEnv,
    show,
    step,
    traceTransport,
} from './common.mjs';

const CLIENT_INFO = { name: 'mcp-tasks-peer-modern-tasks', version: '2.4.0' };
const CAPABILITIES = { elicitation: {}, sampling: {} };
const TASKS_EXT = 'io.modelcontextprotocol/tasks';

/** Connects a 2.4.0 client in the modern era to `bin` and wraps it in an ext-tasks session. */
async function connect(bin, onInputRequest) {
    // The server's stderr (its log) is echoed, and kept so that tool-side effects can be checked.
    const transport = new StdioClientTransport({ command: bin, env: serverEnv({ logTools: true }), stderr: 'pipe' });
    const log = [];
    transport.stderr?.on('data', (chunk) => {
        log.push(String(chunk));
        process.stderr.write(chunk);
    });
    const client = new Client(CLIENT_INFO, { capabilities: CAPABILITIES, versionNegotiation: { mode: 'auto' } });
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    assertEq(client.getProtocolEra(), 'modern', `${bin}: getProtocolEra()`);
    const extension = client.getServerCapabilities()?.extensions?.[TASKS_EXT];
    assertEq(extension, {}, `${bin}: server capabilities.extensions["${TASKS_EXT}"] (from server/discover)`);
    const session = createTaskSessionFromClient(client, {
        endpointId: `peers:${bin}`,
        rawDispatch: rawCoordinator(transport),
        v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion(), clientInfo: CLIENT_INFO, clientCapabilities: CAPABILITIES },
        onInputRequest,
        onError: (error) => console.error(`    ext-tasks background error: ${error?.stack ?? error}`),
    });
    assertEq(session.capabilities.execution, true, 'session.capabilities.execution');
    assertEq(session.capabilities.inputResponses, true, 'session.capabilities.inputResponses');
    assertEq(session.capabilities.cancellation, true, 'session.capabilities.cancellation');
    assertEq(session.capabilities.inventory, 'known-handles', 'session.capabilities.inventory (no tasks/list in V2)');
    return { client, session, log };
}

/** Calls `read` every 50 ms until `done(value)` (up to 5 s); returns that value. */
async function until(read, done) {
    const deadline = Date.now() + 5_000;
    for (;;) {
        const value = await read();
        if (done(value)) return value;
        if (Date.now() > deadline) fail(`gave up waiting; last value ${show(value)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
}

/**
 * `MCP_PEERS_BRIDGE=1`: the server is `rmcp_bridge_server` (an rmcp server with `research` and
 * `countdown` of mcp-tasks beside its own `echo` and `add`), which has no fixture tools: after
 * `research`, a `countdown {seconds: 30}` task is cancelled and the rmcp tools are called inline.
 */
const BRIDGE = Boolean(process.env.MCP_PEERS_BRIDGE);

async function bridgeSteps(bridge) {
    const countdown = await bridge.session.callTool('countdown', { seconds: 30 }, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    assertEq(countdown.kind, 'task', 'countdown execution kind (optional, the client declares tasks)');
    const id = countdown.handle.taskId;
    await until(() => bridge.session.task(id).snapshot(), (t) => t.statusMessage !== undefined || t.status !== 'working');
    await countdown.cancel();
    assertEq((await countdown.result()).status, 'cancelled', 'countdown outcome after execution.cancel()');
    const after = await until(() => bridge.session.task(id).snapshot(), (t) => t.status !== 'working');
    assertEq(after.status, 'cancelled', 'tasks/get after the cancel: status');
    ok(`countdown ${id} cancelled`);
    for (const [name, args, text] of [['echo', { text: 'hi' }, 'hi'], ['add', { a: 2, b: 3 }, '5']]) {
        const result = await bridge.client.callTool({ name, arguments: args });
        assertEq(result.content?.[0]?.text, text, `${name} (an rmcp tool) inline result text`);
    }
    ok('echo and add (the rmcp tools) answered inline');
}

/** Waits (up to 5 s) for `text` in a server's log. */
async function waitForLog(log, text) {
    const deadline = Date.now() + 5_000;
    while (!log.join('').includes(text)) {
        if (Date.now() > deadline) fail(`the server never logged "${text}"`);
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    ok(`server log: ${text}`);
}

/** Messages of the last connection (the session, not the discover probe) that used `method`. */
function sent(wire, method) {
    return wire.filter((w) => w.dir === '->' && w.message.method === method);
}
function replyTo(wire, out) {
    return wire.find((w) => w.dir === '<-' && w.conn === out.conn && w.message.id === out.message.id)?.message;
}

/**
 * Server deviations found on the way; reported together at the end so one run shows all of
 * them (the script goes on with the server's raw answer meanwhile).
 */
const deviations = [];

/**
 * The CallToolResult of a completed task execution. ext-tasks decodes the inlined `result` of
 * a completed `tasks/get` with its default V2 codec, `CallToolResultV2Schema`, which requires
 * `resultType: "complete"` in it (the result is "exactly what the underlying request would
 * have returned", and a 2026-07-28 CallToolResult carries resultType; tasks-wire.md (i).14).
 * When the server leaves it out the library fails the execution with ProtocolDecodeError;
 * that is recorded as a server deviation, and the raw result from the wire is used instead.
 */
function completedResult(wire, taskId, outcome, what) {
    if (outcome.status === 'completed') return outcome.result;
    const raw = wire
        .filter((w) => w.dir === '<-' && w.message.result?.taskId === taskId && w.message.result?.status === 'completed')
        .at(-1)?.message.result;
    const decodeFailure = outcome.status === 'failed' && outcome.error?.cause?.name === 'ProtocolDecodeError';
    if (decodeFailure && raw?.result && !('resultType' in raw.result)) {
        deviations.push(
            `${what}: the completed task's inlined tasks/get \`result\` has no \`resultType\`, and ext-tasks 0.2.2 ` +
                `rejects it (CallToolResultV2Schema: resultType "complete" required; the execution ends failed with ` +
                `ProtocolDecodeError). Wire: tasks/get -> ${show(raw)}`,
        );
        ok(`(deviation recorded; continuing with the raw result) ${what} result: ${show(raw.result)}`);
        return raw.result;
    }
    fail(`${what} ended ${outcome.status}: ${show(outcome.error ?? outcome)}`);
}

await main('modern tasks (@modelcontextprotocol/client 2.4.0 + @modelcontextprotocol/ext-tasks 0.2.2)', async () => {
    const exampleBin = serverBin();
    const fixtureBin = BRIDGE ? exampleBin : conformanceBin();
    const wire = traceTransport(StdioClientTransport, 'tasks2');

    // Every input request the library hands the application, with its context.
    const asked = [];
    const onInputRequest = createApplicationInputHandler({
        elicitation: async (request, context) => {
            asked.push({ kind: 'elicitation', params: request.params, context });
            const props = request.params.requestedSchema?.properties ?? {};
            if ('sources' in props) return { action: 'accept', content: { sources: 3 } };
            if ('confirm' in props) return { action: 'accept', content: { confirm: true } };
            return { action: 'decline' };
        },
        sampling: async (request, context) => {
            asked.push({ kind: 'sampling', params: request.params, context });
            return { role: 'assistant', content: { type: 'text', text: 'Tides follow the moon.' }, model: 'peer-test-model', stopReason: 'endTurn' };
        },
        roots: async () => fail('the server asked for roots, which no tool here needs'),
    });

    step(`research {topic: "tides"} on ${exampleBin}: a required task that elicits, then samples`);
    const example = await connect(exampleBin, onInputRequest);
    const research = await example.session.callTool('research', { topic: 'tides' }, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    assertEq(research.kind, 'task', 'research execution kind');
    const researchId = research.handle.taskId;
    ok(`task ${researchId}`);
    const call = sent(wire, 'tools/call').at(-1);
    assertEq(call.message.params._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS_EXT], {}, 'tools/call _meta clientCapabilities.extensions[tasks]');
    assertEq(call.message.params._meta?.['io.modelcontextprotocol/protocolVersion'], MODERN_VERSION, 'tools/call _meta protocolVersion');
    const created = replyTo(wire, call)?.result;
    assertEq(created?.resultType, 'task', 'raw CreateTaskResult resultType');
    assertEq(created?.status, 'working', 'raw CreateTaskResult status');
    assertEq(created?.pollIntervalMs, 500, 'raw CreateTaskResult pollIntervalMs (research: poll_interval = "500ms")');

    const seen = [];
    const { outcome, lastTask } = await research.settle({
        onEvent: (event) => {
            if (event.type === 'task') seen.push(`${event.task.status}${event.task.statusMessage ? ` (${event.task.statusMessage})` : ''}`);
        },
    });
    ok(`statuses observed: ${seen.join(' -> ')}`);
    const researchResult = completedResult(wire, researchId, outcome, 'research');
    assertEq(researchResult.structuredContent, { topic: 'tides', sources: 3, summary: 'Tides follow the moon.' }, 'research structuredContent');
    assert(!researchResult.isError, `research result isError: ${show(researchResult)}`);
    assertEq(lastTask?.status, 'completed', 'last task snapshot status');
    assert(seen.some((s) => s.startsWith('input_required')), `never saw input_required: ${show(seen)}`);

    const researchAsks = asked.filter((a) => a.context.taskId === researchId);
    assertEq(researchAsks.map((a) => a.kind), ['elicitation', 'sampling'], 'input requests handed to the application, in order');
    const [elicit, sample] = researchAsks;
    assertEq(elicit.params.requestedSchema?.properties?.sources?.type, 'integer', 'elicitation requestedSchema.properties.sources.type');
    assertEq(elicit.params.message, 'How many sources should I read about "tides"?', 'elicitation message');
    assertEq({ scope: elicit.context.scope, delivery: elicit.context.delivery }, { scope: 'task', delivery: 'task-update' }, 'elicitation context');
    assertEq(sample.params.maxTokens, 200, 'sampling maxTokens');
    assert(elicit.context.inputId !== sample.context.inputId, `input keys are unique over the task: ${elicit.context.inputId}, ${sample.context.inputId}`);
    ok(`input keys ${elicit.context.inputId}, ${sample.context.inputId}`);

    const updates = sent(wire, 'tasks/update').filter((w) => w.message.params.taskId === researchId);
    assertEq(updates.length, 2, 'tasks/update requests for research (one per answer)');
    assertEq(Object.keys(updates[0].message.params.inputResponses), [elicit.context.inputId], 'first tasks/update answers the elicitation key');
    assertEq(updates[0].message.params.inputResponses[elicit.context.inputId], { action: 'accept', content: { sources: 3 } }, 'first tasks/update inputResponses value');
    assertEq(Object.keys(updates[1].message.params.inputResponses), [sample.context.inputId], 'second tasks/update answers the sampling key');
    for (const u of updates) {
        assertEq(u.message.params._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS_EXT], {}, 'tasks/update declares the extension');
        assertEq(replyTo(wire, u)?.result, { resultType: 'complete', ...pick(replyTo(wire, u)?.result, '_meta') }, 'tasks/update ack (empty, resultType complete)');
    }
    const serverRequests = wire.filter((w) => w.dir === '<-' && w.message.method !== undefined && w.message.id !== undefined);
    assertEq(serverRequests.map((w) => w.message.method), [], 'server-to-client requests on the modern wire (input goes through tasks/get only)');

    const final = await example.session.task(researchId).snapshot();
    assertEq(final.status, 'completed', 'tasks/get after completion: status');
    assertEq(final.raw.result?.structuredContent?.sources, 3, 'tasks/get after completion: result.structuredContent.sources');
    if (BRIDGE) {
        step(`countdown {seconds: 30} cancelled, then echo and add inline, on ${exampleBin}`);
        await bridgeSteps(example);
    }
    await example.session.close();
    await example.client.close();
    if (BRIDGE) {
        if (deviations.length > 0) fail(`the server deviates from what this client requires:\n    - ${deviations.join('\n    - ')}`);
        return;
    }

    step(`confirm_delete {filename: "a.txt"} then slow_compute {seconds: 60} cancelled, on ${fixtureBin}`);
    const fixture = await connect(fixtureBin, onInputRequest);
    const confirm = await fixture.session.callTool('confirm_delete', { filename: 'a.txt' }, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    assertEq(confirm.kind, 'task', 'confirm_delete execution kind');
    const confirmed = completedResult(wire, confirm.handle.taskId, await confirm.result(), 'confirm_delete');
    assertEq(confirmed.content?.[0]?.text, 'Deleted a.txt', 'confirm_delete result text');
    const confirmAsk = asked.find((a) => a.context.taskId === confirm.handle.taskId);
    assertEq(confirmAsk?.params?.requestedSchema?.properties?.confirm?.type, 'boolean', 'confirm_delete elicitation requestedSchema.properties.confirm.type');

    const slow = await fixture.session.callTool('slow_compute', { seconds: 60 }, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    assertEq(slow.kind, 'task', 'slow_compute execution kind');
    const slowId = slow.handle.taskId;
    // Cancel only once the tool is running (its status says so), so that it can see the cancel.
    const before = await until(() => fixture.session.task(slowId).snapshot(), (t) => t.statusMessage === 'computing for 60s' || t.status !== 'working');
    assertEq([before.status, before.statusMessage], ['working', 'computing for 60s'], 'slow_compute [status, statusMessage] before the cancel');
    const cancelStarted = Date.now();
    await slow.cancel();
    const cancelled = await slow.result();
    assertEq(cancelled.status, 'cancelled', 'slow_compute outcome after execution.cancel()');
    ok(`cancel settled in ${Date.now() - cancelStarted} ms`);
    const cancel = sent(wire, 'tasks/cancel').at(-1);
    assertEq(cancel?.message.params.taskId, slowId, 'tasks/cancel params.taskId');
    assertEq(cancel.message.params._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS_EXT], {}, 'tasks/cancel declares the extension');
    assertEq(replyTo(wire, cancel)?.result?.resultType, 'complete', 'tasks/cancel ack resultType');
    await waitForLog(fixture.log, 'slow_compute: saw cancellation');
    const after = await fixture.session.task(slowId).snapshot();
    assertEq(after.status, 'cancelled', 'tasks/get after the cancel: status');
    assert(!('result' in after.raw) && !('error' in after.raw), `a cancelled task carries no result or error: ${show(after.raw)}`);
    // Cancelling an ended task is acknowledged in this era (SEP-2663; conformance requires it).
    await fixture.session.cancelTask(slowId);
    ok('a second tasks/cancel on the cancelled task is acknowledged');
    assertEq((await fixture.session.task(slowId).snapshot()).status, 'cancelled', 'status after the second cancel');
    await fixture.session.close();
    await fixture.client.close();

    if (deviations.length > 0) {
        fail(`the rest passed, but the server deviates from what this client requires:\n    - ${deviations.join('\n    - ')}`);
    }
});

function pick(object, key) {
    return object && key in object ? { [key]: object[key] } : {};
}
