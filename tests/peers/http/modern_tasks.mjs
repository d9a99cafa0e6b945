// Tasks in the modern era (2026-07-28 + `io.modelcontextprotocol/tasks`) over Streamable HTTP:
// @modelcontextprotocol/client 2.4.0's `StreamableHTTPClientTransport` + @modelcontextprotocol/
// ext-tasks 0.2.2 against the example server and the conformance fixture server, each started by
// the harness with `--http 127.0.0.1:0`; their URLs are argv[2] and argv[3].
//
// The ext-tasks wiring is the one of ../modern_tasks.mjs (read its header): a V2 session needs a
// host-owned raw request path (`rawDispatch`), because the 2.4.0 Client rejects
// `resultType: "task"` and era-gates `tasks/*`. Over HTTP that path is the same transport's
// `send`: each raw request is its own POST, and the 2.4.0 transport derives the routing headers
// from the body's `_meta` envelope (`MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` =
// `params.name` for tools/call, `params.taskId` for tasks/get|update|cancel); the answer comes
// back as that POST's JSON (or SSE) body, through the transport's `onmessage`, where the raw path
// takes its own ids (`raw-N`) before the Client sees them.
//
// What this checks beyond the stdio script: the HTTP shape of the modern era. No
// `Mcp-Session-Id` either way, no GET or DELETE, every POST answered on its own response, and no
// server-to-client request on any stream (input goes through tasks/get `inputRequests` and
// `tasks/update` only).

import { createApplicationInputHandler } from '@modelcontextprotocol/ext-tasks/client';
import { MODERN_VERSION, REQUEST_TIMEOUT_MS, assert, assertEq, fail, main, ok, show, step } from '../common.mjs';
import { TASKS_EXT, connect } from './modern_session.mjs';
import { describe, serverLogMark, serverUrl, waitForServerLog } from './trace.mjs';

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

/** The POSTs of `method` (with the exchange each went on), oldest first. */
function posts(trace, method) {
    return trace.exchanges.filter((e) => e.method === 'POST' && e.body?.method === method);
}
/** The answer to the request a POST carried: the message with its id on that POST's response. */
function answerOn(exchange) {
    return exchange.messages.find((m) => m.id === exchange.body.id && ('result' in m || 'error' in m));
}

/** What every modern exchange must look like: stateless POSTs, each answered on its own response. */
function checkHttpShape(trace, label) {
    const others = trace.exchanges.filter((e) => e.method !== 'POST');
    assertEq(others.map(describe), [], `${label}: non-POST exchanges (the modern era has no GET stream, no DELETE)`);
    const withSession = trace.exchanges.filter((e) => e.headers['mcp-session-id'] !== undefined || e.responseHeaders?.['mcp-session-id'] !== undefined);
    assertEq(withSession.map(describe), [], `${label}: exchanges with an Mcp-Session-Id header`);
    const requests = trace.exchanges.filter((e) => e.body?.method !== undefined && e.body.id !== undefined);
    const unanswered = requests.filter((e) => !answerOn(e));
    assertEq(unanswered.map(describe), [], `${label}: requests not answered on their own response`);
    const serverRequests = trace.messages.filter((m) => m.dir === '<-' && m.message.method !== undefined && m.message.id !== undefined);
    assertEq(serverRequests.map((m) => `${m.message.method} on ${describe(m.exchange)}`), [], `${label}: server-to-client requests on any stream`);
    for (const e of requests.filter((r) => ['tasks/get', 'tasks/update', 'tasks/cancel', 'tools/call'].includes(r.body.method))) {
        const name = e.body.method === 'tools/call' ? e.body.params.name : e.body.params.taskId;
        const want = [MODERN_VERSION, e.body.method, name, 200];
        const got = [e.headers['mcp-protocol-version'], e.headers['mcp-method'], e.headers['mcp-name'], e.status];
        if (!assertQuiet(got, want)) fail(`${label}: ${describe(e)}: [MCP-Protocol-Version, Mcp-Method, Mcp-Name, status] expected ${show(want)}, got ${show(got)}`);
    }
    ok(`${label}: ${requests.length} requests, each its own POST with MCP-Protocol-Version/Mcp-Method (and Mcp-Name where it applies), answered 200 on its own response; no session, no GET, no server requests`);
}

function assertQuiet(actual, expected) {
    return JSON.stringify(actual) === JSON.stringify(expected);
}

await main('modern tasks over Streamable HTTP (@modelcontextprotocol/client 2.4.0 + @modelcontextprotocol/ext-tasks 0.2.2)', async () => {
    const exampleUrl = serverUrl('server');
    const fixtureUrl = BRIDGE ? exampleUrl : serverUrl('conformance');

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

    step(`research {topic: "tides"} on ${exampleUrl}: a required task that elicits, then samples`);
    const example = await connect(exampleUrl, 'example', onInputRequest);
    const research = await example.session.callTool('research', { topic: 'tides' }, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    assertEq(research.kind, 'task', 'research execution kind');
    const researchId = research.handle.taskId;
    ok(`task ${researchId}`);
    const call = posts(example.trace, 'tools/call').at(-1);
    assertEq([call.headers['mcp-method'], call.headers['mcp-name']], ['tools/call', 'research'], 'tools/call [Mcp-Method, Mcp-Name] headers');
    assertEq(call.body.params._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS_EXT], {}, 'tools/call _meta clientCapabilities.extensions[tasks]');
    const created = answerOn(call)?.result;
    assertEq([created?.resultType, created?.status, created?.pollIntervalMs], ['task', 'working', 500], 'CreateTaskResult [resultType, status, pollIntervalMs]');

    const seen = [];
    const { outcome } = await research.settle({
        onEvent: (event) => {
            if (event.type === 'task') seen.push(event.task.status);
        },
    });
    ok(`statuses observed: ${seen.join(' -> ')}`);
    if (outcome.status !== 'completed') fail(`research ended ${outcome.status}: ${show(outcome.error ?? outcome)}`);
    assertEq(outcome.result.structuredContent, { topic: 'tides', sources: 3, summary: 'Tides follow the moon.' }, 'research structuredContent');
    assert(seen.includes('input_required'), `never saw input_required: ${show(seen)}`);
    const researchAsks = asked.filter((a) => a.context.taskId === researchId);
    assertEq(researchAsks.map((a) => [a.kind, a.context.delivery]), [['elicitation', 'task-update'], ['sampling', 'task-update']], 'input requests handed to the application [kind, delivery]');
    const updates = posts(example.trace, 'tasks/update').filter((e) => e.body.params.taskId === researchId);
    assertEq(updates.length, 2, 'tasks/update POSTs for research (one per answer)');
    assertEq(updates[0].body.params.inputResponses[researchAsks[0].context.inputId], { action: 'accept', content: { sources: 3 } }, 'first tasks/update inputResponses value');
    for (const u of updates) {
        assertEq([u.status, u.kind, answerOn(u)?.result?.resultType], [200, 'json', 'complete'], `tasks/update ${describe(u)} [status, body, ack resultType]`);
    }
    const final = await example.session.task(researchId).snapshot();
    assertEq(final.status, 'completed', 'tasks/get after completion: status');
    if (BRIDGE) {
        step(`countdown {seconds: 30} cancelled, then echo and add inline, on ${exampleUrl}`);
        await bridgeSteps(example);
    }
    checkHttpShape(example.trace, 'example');
    await example.session.close();
    await example.client.close();
    if (BRIDGE) return;

    step(`confirm_delete {filename: "a.txt"} then slow_compute {seconds: 60} cancelled, on ${fixtureUrl}`);
    const fixture = await connect(fixtureUrl, 'fixture', onInputRequest);
    const confirm = await fixture.session.callTool('confirm_delete', { filename: 'a.txt' }, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    assertEq(confirm.kind, 'task', 'confirm_delete execution kind');
    const confirmed = await confirm.result();
    if (confirmed.status !== 'completed') fail(`confirm_delete ended ${confirmed.status}: ${show(confirmed.error ?? confirmed)}`);
    assertEq(confirmed.result.content?.[0]?.text, 'Deleted a.txt', 'confirm_delete result text');
    const confirmAsk = asked.find((a) => a.context.taskId === confirm.handle.taskId);
    assertEq(confirmAsk?.params?.requestedSchema?.properties?.confirm?.type, 'boolean', 'confirm_delete elicitation requestedSchema.properties.confirm.type');

    const logMark = serverLogMark('conformance');
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
    const cancel = posts(fixture.trace, 'tasks/cancel').at(-1);
    assertEq([cancel?.body.params.taskId, cancel?.headers['mcp-name'], cancel?.status, answerOn(cancel)?.result?.resultType], [slowId, slowId, 200, 'complete'], 'tasks/cancel [params.taskId, Mcp-Name, status, ack resultType]');
    await waitForServerLog('conformance', 'slow_compute: saw cancellation', ok, logMark);
    const after = await fixture.session.task(slowId).snapshot();
    assertEq(after.status, 'cancelled', 'tasks/get after the cancel: status');
    assert(!('result' in after.raw) && !('error' in after.raw), `a cancelled task carries no result or error: ${show(after.raw)}`);
    checkHttpShape(fixture.trace, 'fixture');
    await fixture.session.close();
    await fixture.client.close();
});
