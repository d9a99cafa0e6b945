// One task, two server instances: two example servers share their tasks through one Redis
// (`--store redis://...`, the same `--token` on both). @modelcontextprotocol/client 2.4.0 +
// @modelcontextprotocol/ext-tasks 0.2.2 start `research` through instance A (argv[2]) and drive
// it to completion through instance B (argv[3]): B's tasks/get shows A's task waiting, B's
// tasks/update carries both answers, and the result (built by the tool on A from those answers)
// is read through B. Then `countdown {seconds: 60}` starts on A and is cancelled through B; A's
// log shows its tool being stopped. The bearer token is $MCP_BEARER_TOKEN.

import { createApplicationInputHandler } from '@modelcontextprotocol/ext-tasks/client';
import { REQUEST_TIMEOUT_MS, assertEq, fail, main, ok, show, step } from '../common.mjs';
import { connect } from './modern_session.mjs';
import { serverLogMark, serverUrl, waitForServerLog } from './trace.mjs';

const token = process.env.MCP_BEARER_TOKEN ?? fail('MCP_BEARER_TOKEN is not set');
const headers = { Authorization: `Bearer ${token}` };

/** Calls `read` every 50 ms until `done(value)` (up to 10 s); returns that value. */
async function until(read, done) {
    const deadline = Date.now() + 10_000;
    for (;;) {
        const value = await read();
        if (done(value)) return value;
        if (Date.now() > deadline) fail(`gave up waiting; last value ${show(value)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
}

await main('one task across two instances on one Redis (@modelcontextprotocol/client 2.4.0 + ext-tasks 0.2.2)', async () => {
    const urlA = serverUrl('server');
    const urlB = serverUrl('conformance');
    const onInputRequest = createApplicationInputHandler({
        elicitation: async () => fail('no input request may reach the client connected to A'),
        sampling: async () => fail('no input request may reach the client connected to A'),
        roots: async () => fail('no tool here needs roots'),
    });
    const a = await connect(urlA, 'A', onInputRequest, headers);
    const b = await connect(urlB, 'B', onInputRequest, headers);

    step(`research {topic: "tides"} started through A (${urlA})`);
    const research = await a.session.callTool('research', { topic: 'tides' }, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    assertEq(research.kind, 'task', 'research execution kind');
    const id = research.handle.taskId;
    ok(`task ${id}`);

    step(`the same task driven through B (${urlB})`);
    const onB = b.session.task(id);
    const asked = await until(() => onB.snapshot(), (t) => t.status === 'input_required');
    const [[elicitKey, elicit]] = Object.entries(asked.raw.inputRequests ?? {});
    assertEq(elicit?.method, 'elicitation/create', 'B sees the input request of the tool running on A');
    await onB.update({ [elicitKey]: { action: 'accept', content: { sources: 4 } } });
    ok(`answered ${elicitKey} through B`);
    const sampling = await until(() => onB.snapshot(), (t) => Object.values(t.raw.inputRequests ?? {}).some((r) => r.method === 'sampling/createMessage'));
    assertEq(sampling.statusMessage, 'reading 4 sources', 'the tool on A read the answer given through B');
    const [[sampleKey]] = Object.entries(sampling.raw.inputRequests);
    await onB.update({ [sampleKey]: { role: 'assistant', content: { type: 'text', text: 'Tides follow the moon.' }, model: 'peer-test-model' } });
    const outcome = await onB.result();
    if (outcome.status !== 'completed') fail(`research ended ${outcome.status}: ${show(outcome.error ?? outcome)}`);
    assertEq(outcome.result.structuredContent, { topic: 'tides', sources: 4, summary: 'Tides follow the moon.' }, 'result read through B');
    const seenOnA = await a.session.task(id).snapshot();
    assertEq(seenOnA.status, 'completed', 'A agrees');

    step('countdown {seconds: 60} started through A, cancelled through B');
    const mark = serverLogMark('server');
    const countdown = await a.session.callTool('countdown', { seconds: 60 }, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    assertEq(countdown.kind, 'task', 'countdown execution kind');
    const countdownId = countdown.handle.taskId;
    await until(() => b.session.task(countdownId).snapshot(), (t) => (t.statusMessage ?? '').endsWith('s left'));
    await b.session.task(countdownId).cancel();
    const cancelled = await countdown.result();
    assertEq(cancelled.status, 'cancelled', 'the execution on A ends cancelled');
    await waitForServerLog('server', `task=${countdownId} status=cancelled`, ok, mark);

    for (const side of [a, b]) {
        await side.session.close();
        await side.client.close();
    }
});
