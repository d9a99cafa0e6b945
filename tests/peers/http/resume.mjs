// Resumable SSE (SEP-1699) with @modelcontextprotocol/sdk 1.32.2's `StreamableHTTPClientTransport`
// in a legacy (2025-11-25) session against the conformance fixture server (argv[3]):
//   1. `test_reconnection` ends its POST's SSE stream before it answers. The transport, having
//      seen the stream's priming event (an id, an empty `data:`, a `retry`), reconnects with
//      `GET` + `Last-Event-ID` after that `retry` and `callTool` resolves with the answer that
//      came on the resumed stream.
//   2. A plain call (`test_simple_text`) is still answered on its own POST.
// The trace shows where each message travelled.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REQUEST_TIMEOUT_MS, assert, assertEq, main, ok, step } from '../common.mjs';
import { describe, exchangeOf, serverUrl, tracingFetch } from './trace.mjs';

const opts = { timeout: REQUEST_TIMEOUT_MS };

await main('http/resume', async () => {
    const trace = tracingFetch('resume');
    const client = new Client({ name: 'mcp-tasks-peer-http-resume', version: '1.32.2' }, { capabilities: {} });
    const transport = new StreamableHTTPClientTransport(serverUrl('conformance'), { fetch: trace.fetch });
    await client.connect(transport, opts);
    assert(transport.sessionId, 'a legacy session');

    step('test_reconnection: the tool ends its stream, the client resumes it');
    const started = Date.now();
    const result = await client.callTool({ name: 'test_reconnection', arguments: {} }, undefined, opts);
    assertEq(result.content?.[0]?.text, 'Reconnection test completed successfully', 'the answer');
    const call = exchangeOf(trace, (m) => m.method === 'tools/call' && m.params?.name === 'test_reconnection');
    assertEq(call.kind, 'sse', `the call's response (${describe(call)})`);
    assert(
        !call.messages.some((m) => m.id === call.body.id),
        `the answer did not come on the POST's own stream (${describe(call)})`,
    );
    const resumed = trace.exchanges.find((e) => e.method === 'GET' && e.headers['last-event-id'] !== undefined);
    assert(resumed, 'a GET with Last-Event-ID');
    assertEq(resumed.status, 200, `the resume (${describe(resumed)})`);
    assert(
        resumed.messages.some((m) => m.id === call.body.id && m.result),
        `the answer came on the resumed stream (${describe(resumed)})`,
    );
    ok(`answered on ${describe(resumed)} (Last-Event-ID ${resumed.headers['last-event-id']}) after ${Date.now() - started} ms`);

    step('a plain call is answered on its own POST');
    const plain = await client.callTool({ name: 'test_simple_text', arguments: {} }, undefined, opts);
    assertEq(plain.content?.[0]?.text, 'This is a simple text response for testing.', 'the answer');
    ok('answered');
    await client.close();
});
