// The fallback for clients without tasks: @modelcontextprotocol/client 2.4.0 WITHOUT
// @modelcontextprotocol/ext-tasks, plain `client.callTool` only, against
// `fallback_server --task-fallback` over stdio, in both eras:
//   - versionNegotiation 'auto' (2026-07-28): the requests' clientCapabilities do not declare the
//     tasks extension (the client does not know it without ext-tasks);
//   - the default options (2025-11-25 `initialize`): no `task` param on `tools/call`.
// `report` runs only as a task (task_support "required"); each call answers at once with an
// ordinary CallToolResult naming the task id, and the client follows the task with the companion
// tools `tasks_status`, `tasks_result` and `tasks_cancel`, and cancels a second one.
// `interview` asks the user. On the modern era the client declared `elicitation` and has a
// handler: `tasks_status` answers an MRTR `input_required` result carrying the task's question,
// which the client's own multi-round-trip driver hands to that handler and retries with the
// answer; `tasks_result` then gives the tool's greeting. A second client that declared no
// elicitation gets a failed task, reported by `tasks_result` as a tool error (isError) with the
// task's message, never a JSON-RPC error.
//
// Usage: node fallback.mjs <fallback_server>

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
    COMPANIONS,
    LEGACY_VERSION,
    MODERN_VERSION,
    REQUEST_TIMEOUT_MS,
    assert,
    assertEq,
    main,
    ok,
    serverBin,
    serverEnv,
    resultText,
    show,
    startedTask,
    step,
    traceTransport,
} from './common.mjs';

const CLIENT_INFO = { name: 'mcp-tasks-peer-fallback', version: '2.4.0' };
const opts = { timeout: REQUEST_TIMEOUT_MS };

const textOf = resultText;


async function waitResult(client, taskId) {
    const deadline = Date.now() + 15_000;
    for (;;) {
        const result = await client.callTool({ name: 'tasks_result', arguments: { taskId } }, opts);
        if (!textOf(result).includes('has no result yet')) return result;
        assert(Date.now() < deadline, `task ${taskId} never ended`);
        await new Promise((r) => setTimeout(r, 100));
    }
}

async function follow(client, wire, era) {
    step(`[${era}] tools/list shows the companion tools`);
    const { tools } = await client.listTools({}, opts);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const companion of COMPANIONS) {
        assert(byName[companion], `${companion} not listed: ${show(Object.keys(byName))}`);
        assertEq(byName[companion].inputSchema.required, ['taskId'], `${companion} required arguments`);
    }
    assertEq(byName.report.outputSchema, undefined, "report's outputSchema for a client without tasks");

    step(`[${era}] callTool('report') answers a task id at once`);
    const started = Date.now();
    const id = startedTask(await client.callTool({ name: 'report', arguments: { steps: 20, step_ms: 100 } }, opts), 'report');
    assert(Date.now() - started < 1500, 'report did not answer at once');
    const sent = wire.filter((w) => w.dir === '->' && w.message.method === 'tools/call' && w.message.params?.name === 'report').at(-1);
    assert(sent && !('task' in sent.message.params), `the client sent a task param: ${show(sent)}`);
    const caps = sent.message.params?._meta?.['io.modelcontextprotocol/clientCapabilities'];
    assert(!caps?.extensions?.['io.modelcontextprotocol/tasks'], `the client declared the tasks extension: ${show(caps)}`);

    step(`[${era}] tasks_status while it runs, then tasks_result is report's own result`);
    const status = await client.callTool({ name: 'tasks_status', arguments: { taskId: id } }, opts);
    assertEq(status.structuredContent?.taskId, id, 'tasks_status taskId');
    assertEq(status.structuredContent?.status, 'working', 'tasks_status status');
    ok(`tasks_status text: ${show(textOf(status))}`);
    const result = await waitResult(client, id);
    assertEq(result.isError ?? false, false, 'report result isError');
    assertEq(result.structuredContent, { steps: 20, note: 'report of 20 steps' }, 'report structuredContent');
    const done = await client.callTool({ name: 'tasks_status', arguments: { taskId: id } }, opts);
    assertEq(done.structuredContent?.status, 'completed', 'tasks_status after the result');

    step(`[${era}] tasks_cancel on a long report`);
    const longId = startedTask(await client.callTool({ name: 'report', arguments: { steps: 1000, step_ms: 50 } }, opts), 'report');
    const cancelled = await client.callTool({ name: 'tasks_cancel', arguments: { taskId: longId } }, opts);
    assertEq(cancelled.structuredContent?.status, 'cancelled', 'tasks_cancel status');
    const after = await client.callTool({ name: 'tasks_status', arguments: { taskId: longId } }, opts);
    assertEq(after.structuredContent?.status, 'cancelled', 'tasks_status after the cancel');

    step(`[${era}] an unknown task id is a tool error the model can read`);
    const unknown = await client.callTool({ name: 'tasks_status', arguments: { taskId: 'no-such-task' } }, opts);
    assertEq(unknown.isError, true, 'tasks_status of an unknown id isError');
    assert(textOf(unknown).includes('There is no task no-such-task'), `unknown id text: ${textOf(unknown)}`);
    const notes = wire.filter((w) => w.dir === '<-' && w.message.method?.startsWith('notifications/tasks'));
    assertEq(notes.length, 0, 'task notifications received');
}

await main('task fallback (@modelcontextprotocol/client 2.4.0 without ext-tasks)', async () => {
    const bin = serverBin();
    const wire = traceTransport(StdioClientTransport, 'fallback');
    const transport = () => new StdioClientTransport({ command: bin, args: ['--task-fallback'], env: serverEnv(), stderr: 'inherit' });

    step(`connect with versionNegotiation "auto" to ${bin} --task-fallback`);
    const modern = new Client(CLIENT_INFO, { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } });
    const asked = [];
    modern.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params);
        return { action: 'accept', content: { name: 'Ada' } };
    });
    await modern.connect(transport(), opts);
    assertEq(modern.getNegotiatedProtocolVersion(), MODERN_VERSION, 'negotiated protocol version');
    await follow(modern, wire, 'modern');

    step('[modern] interview asks the user: the companion tools carry the question through MRTR');
    const id = startedTask(await modern.callTool({ name: 'interview', arguments: {} }, opts), 'interview');
    const deadline = Date.now() + 15_000;
    while (asked.length === 0) {
        const status = await modern.callTool({ name: 'tasks_status', arguments: { taskId: id } }, opts);
        assert(!status.isError, `tasks_status answered an error: ${show(status)}`);
        assert(Date.now() < deadline, 'the question never reached the elicitation handler');
        if (asked.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    assertEq(asked.map((p) => p.message), ['What is your name?'], 'questions handed to the elicitation handler');
    const inputRequired = wire.filter((w) => w.dir === '<-' && w.message.result?.resultType === 'input_required');
    assert(inputRequired.length >= 1, 'no input_required result on the wire');
    const retry = wire.filter((w) => w.dir === '->' && w.message.params?.name === 'tasks_status' && w.message.params?.inputResponses);
    assertEq(retry.length, 1, 'tasks_status retries carrying inputResponses');
    const greeting = await waitResult(modern, id);
    assertEq(greeting.isError ?? false, false, 'interview result isError');
    assertEq(textOf(greeting), 'Nice to meet you, Ada.', 'interview result');
    ok(`interview answered through the elicitation handler: ${show(textOf(greeting))}`);
    await modern.close();

    step('[modern] a client that declared no elicitation: the task fails, tasks_result says so as a tool error');
    const mute = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } });
    await mute.connect(transport(), opts);
    const muteId = startedTask(await mute.callTool({ name: 'interview', arguments: {} }, opts), 'interview');
    const failed = await waitResult(mute, muteId);
    assertEq(failed.isError, true, 'tasks_result of the failed task isError');
    const said = textOf(failed);
    assert(said.startsWith(`Task ${muteId} failed: `) && said.includes('`elicitation`'), `failed task text: ${said}`);
    ok(`tasks_result: ${show(said)}`);
    await mute.close();

    step(`connect with the default options (initialize) to ${bin} --task-fallback`);
    const legacy = new Client(CLIENT_INFO);
    await legacy.connect(transport(), opts);
    assertEq(legacy.getNegotiatedProtocolVersion(), LEGACY_VERSION, 'negotiated protocol version');
    await follow(legacy, wire, 'legacy');
    await legacy.close();
});
