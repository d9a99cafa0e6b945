// Keepalive with the client most hosts ship: @modelcontextprotocol/sdk 1.32.2's `Client`, its
// request timeout at 15 s, against `example_server` at its DEFAULT keepalive (10 s), over stdio
// (argv[2] is the server binary) or over Streamable HTTP (argv[2] is the server's URL; the harness
// started it).
//
// Two calls of `sleep {ms: 40000}` run side by side on one connection, both with an `onprogress`
// callback (so the client sends `_meta.progressToken`):
//   - with `resetTimeoutOnProgress: true`, as hosts that wait on long tools set it: the server's
//     keepalive progress (every 10 s, with nothing else to say) resets the 15 s timeout, and the
//     call completes after 40 s with the tool's result;
//   - without it, the same client gives up after 15 s with `-32001 Request timed out`, although the
//     keepalive progress reached it: the check above can fail.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { LEGACY_VERSION, assert, assertEq, main, ok, rejection, serverEnv, show, step, traceTransport } from './common.mjs';
import { tracingFetch } from './http/trace.mjs';

/** The request timeout a host gives the call (ms). */
const TIMEOUT_MS = 15_000;
/** The server's default keepalive interval (ms): `ServerConfig::keepalive_interval`. */
const KEEPALIVE_MS = 10_000;
const SLEEP_MS = 40_000;

const target = process.argv[2] ?? process.env.MCP_SERVER_URL ?? process.env.MCP_SERVER_BIN;
const overHttp = /^https?:\/\//.test(target ?? '');

await main(`keepalive over ${overHttp ? 'Streamable HTTP' : 'stdio'} (@modelcontextprotocol/sdk 1.32.2)`, async () => {
    assert(target, 'usage: node keepalive.mjs <example_server binary or URL>');
    let transport;
    let trace;
    if (overHttp) {
        trace = tracingFetch('keepalive');
        transport = new StreamableHTTPClientTransport(new URL(target), { fetch: trace.fetch });
    } else {
        traceTransport(StdioClientTransport, 'keepalive');
        transport = new StdioClientTransport({ command: target, env: serverEnv(), stderr: 'inherit' });
    }
    step(`connect (initialize) to ${target}`);
    const client = new Client({ name: 'mcp-tasks-peer-keepalive', version: '1.32.2' });
    await client.connect(transport, { timeout: TIMEOUT_MS });

    step(`two calls of sleep {ms: ${SLEEP_MS}} side by side, request timeout ${TIMEOUT_MS} ms, one with resetTimeoutOnProgress`);
    const started = Date.now();
    const since = () => Date.now() - started;
    const kept = [];
    const plain = [];
    const keptCall = client.callTool({ name: 'sleep', arguments: { ms: SLEEP_MS } }, undefined, {
        timeout: TIMEOUT_MS,
        resetTimeoutOnProgress: true,
        onprogress: (progress) => {
            kept.push({ at: since(), ...progress });
            ok(`progress (reset) at ${since()} ms: ${show(progress)}`);
        },
    });
    const plainCall = client.callTool({ name: 'sleep', arguments: { ms: SLEEP_MS } }, undefined, {
        timeout: TIMEOUT_MS,
        onprogress: (progress) => {
            plain.push({ at: since(), ...progress });
            ok(`progress (no reset) at ${since()} ms: ${show(progress)}`);
        },
    });

    const timedOut = await rejection(plainCall, 'the call without resetTimeoutOnProgress');
    const gaveUp = since();
    assertEq(timedOut.code, ErrorCode.RequestTimeout, 'without resetTimeoutOnProgress: the error code');
    assert(gaveUp >= TIMEOUT_MS - 500 && gaveUp < TIMEOUT_MS + 5_000, `the call without reset gave up after ${gaveUp} ms, expected about ${TIMEOUT_MS}`);
    ok(`it timed out after ${gaveUp} ms: ${timedOut.message}`);
    assert(plain.length >= 1, `the call without reset saw no keepalive before its timeout: ${show(plain)}`);
    ok(`${plain.length} keepalive(s) reached it first, and did not help`);

    const result = await keptCall;
    const took = since();
    assertEq(result.content, [{ type: 'text', text: `slept ${SLEEP_MS} ms` }], 'with resetTimeoutOnProgress: the result');
    assert(took >= SLEEP_MS, `the call ended after ${took} ms, before the tool's ${SLEEP_MS}`);
    ok(`completed after ${took} ms`);

    step('the keepalive progress: every 10 s, values increasing');
    assert(kept.length >= 3, `expected a progress at least every ${KEEPALIVE_MS} ms over ${SLEEP_MS} ms, got ${kept.length}: ${show(kept)}`);
    let before = 0;
    for (const [i, p] of kept.entries()) {
        assert(p.at - before <= KEEPALIVE_MS + 3_000, `${p.at - before} ms passed without progress before #${i + 1}: ${show(kept)}`);
        assert(i === 0 || p.progress > kept[i - 1].progress, `progress #${i + 1} does not increase: ${show(kept)}`);
        before = p.at;
    }
    ok(`${kept.length} notifications, at ${kept.map((p) => p.at).join(', ')} ms`);

    if (overHttp) {
        const call = trace.exchanges.find((e) => e.body?.method === 'tools/call' && e.status === 200 && e.kind === 'sse');
        assert(call, `no tools/call of sleep was answered with an SSE stream: ${show(trace.exchanges.map((e) => [e.body?.method, e.status, e.kind]))}`);
        ok('the long call was answered as an SSE stream');
    } else {
        assertEq(client.getServerVersion()?.name, 'mcp-tasks-example', 'server name');
    }
    ok(`protocol ${LEGACY_VERSION}`);
    await client.close();
}, { timeoutMs: 55_000 });
