// Shared helpers for the peer scripts: where the server is, step logging, assertions,
// a wire trace, and the tool checks both client generations run.
//
// Every script prints one line per step to stdout, and the raw JSON-RPC traffic (both
// directions, including the 2.x client's disposable server/discover probe) to stderr,
// so a failure in CI shows exactly what crossed the wire. MCP_PEERS_TRACE=0 silences
// the trace.

import { existsSync } from 'node:fs';
import { isDeepStrictEqual, inspect } from 'node:util';

export const SERVER_NAME = 'mcp-tasks-example';
export const SERVER_VERSION = '0.1.0';
export const LEGACY_VERSION = '2025-11-25';
export const MODERN_VERSION = '2026-07-28';

/** Per-request timeout handed to the clients (ms); the Rust harness kills us at 60 s. */
export const REQUEST_TIMEOUT_MS = 15_000;

class CheckFailed extends Error {}

/** The server binary: argv[2], else $MCP_SERVER_BIN. */
export function serverBin() {
    const bin = process.argv[2] ?? process.env.MCP_SERVER_BIN;
    if (!bin) fail('usage: node <script>.mjs <path to example_server>  (or set MCP_SERVER_BIN)');
    if (!existsSync(bin)) fail(`server binary ${bin} does not exist (build it: cargo build -p mcp-tasks-examples)`);
    return bin;
}

/**
 * The conformance fixture server (`conformance_server`: confirm_delete, slow_compute, ...):
 * argv[3], else $MCP_CONFORMANCE_BIN.
 */
export function conformanceBin() {
    const bin = process.argv[3] ?? process.env.MCP_CONFORMANCE_BIN;
    if (!bin) fail('usage: node <script>.mjs <example_server> <conformance_server>  (or set MCP_CONFORMANCE_BIN)');
    if (!existsSync(bin)) fail(`server binary ${bin} does not exist (build it: cargo build -p mcp-tasks-examples)`);
    return bin;
}

/**
 * The server's environment: all of ours (the clients' default passes only HOME, PATH and a
 * few others), so RUST_LOG, RUST_BACKTRACE and the like reach the server.
 */
export function serverEnv({ logTools = false } = {}) {
    const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => typeof v === 'string'));
    // Scripts that check what a tool logged (e.g. "slow_compute: saw cancellation") need the
    // example crate's info lines whatever RUST_LOG says.
    if (logTools) env.RUST_LOG = env.RUST_LOG ? `${env.RUST_LOG},mcp_tasks_examples=info` : 'info';
    return env;
}

export function fail(message) {
    throw new CheckFailed(message);
}

let stepNo = 0;
export function step(message) {
    stepNo += 1;
    console.log(`[${stepNo}] ${message}`);
}

export function ok(message) {
    console.log(`    ok: ${message}`);
}

export function show(value) {
    return inspect(value, { depth: 6, breakLength: Infinity, compact: true });
}

export function assert(condition, message) {
    if (!condition) fail(message);
}

export function assertEq(actual, expected, what) {
    if (!isDeepStrictEqual(actual, expected)) {
        fail(`${what}: expected ${show(expected)}, got ${show(actual)}`);
    }
    ok(`${what} = ${show(actual)}`);
}

/** Awaits `promise` and returns the error it rejects with; fails if it resolves. */
export async function rejection(promise, what) {
    try {
        const value = await promise;
        fail(`${what}: expected an error, got a result ${show(value)}`);
    } catch (error) {
        if (error instanceof CheckFailed) throw error;
        return error;
    }
}

/**
 * Runs `body` with a watchdog, prints a verdict and exits (0 on success). The exit is
 * explicit so that a child process or timer the client left behind cannot hang CI.
 */
export async function main(name, body, { timeoutMs = 50_000 } = {}) {
    const watchdog = setTimeout(() => {
        console.error(`FAIL ${name}: no verdict after ${timeoutMs} ms (a request hung? see the wire trace above)`);
        process.exit(2);
    }, timeoutMs);
    watchdog.unref();
    try {
        await body();
        console.log(`PASS ${name}`);
        process.exit(0);
    } catch (error) {
        if (error instanceof CheckFailed) {
            console.error(`FAIL ${name}: ${error.message}`);
        } else {
            // One line first (zod errors are multi-line JSON), then where it came from.
            const message = String(error?.message ?? show(error)).replace(/\s*\n\s*/g, ' ');
            console.error(`FAIL ${name}: ${error?.name ?? 'error'} from the client: ${message}`);
            if (error?.code !== undefined) console.error(`    code: ${show(error.code)}  data: ${show(error.data)}`);
            const frames = String(error?.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l));
            if (frames.length > 0) console.error(frames.slice(0, 8).join('\n'));
        }
        process.exit(1);
    }
}

/**
 * Patches a stdio client transport class (same shape in sdk 1.x and client 2.x: `send`
 * and `processReadBuffer` on the prototype) so that every message is logged to stderr
 * and recorded in the returned array. Patching the prototype (not subclassing) keeps the
 * 2.x client's "exactly the base class" check, so it still probes on a disposable sibling
 * process, and the sibling's traffic is traced too.
 */
export function traceTransport(TransportClass, label) {
    const wire = [];
    const enabled = process.env.MCP_PEERS_TRACE !== '0';
    const proto = TransportClass.prototype;
    let nextConn = 0;
    const connOf = (transport) => (transport.__traceConn ??= ++nextConn);
    const log = (transport, dir, message) => {
        wire.push({ conn: connOf(transport), dir, message });
        if (!enabled) return;
        let text = JSON.stringify(message);
        if (text.length > 1500) text = `${text.slice(0, 1500)}... (${text.length} chars)`;
        process.stderr.write(`  wire ${label}#${connOf(transport)} ${dir} ${text}\n`);
    };
    const { send, processReadBuffer } = proto;
    if (typeof send !== 'function' || typeof processReadBuffer !== 'function') {
        fail(`cannot trace ${TransportClass.name}: send/processReadBuffer not on its prototype (client package changed?)`);
    }
    proto.send = function (message, ...rest) {
        log(this, '->', message);
        return send.call(this, message, ...rest);
    };
    proto.processReadBuffer = function (...args) {
        const onmessage = this.onmessage;
        if (typeof onmessage !== 'function') return processReadBuffer.apply(this, args);
        const traced = (message, ...more) => {
            log(this, '<-', message);
            return onmessage.call(this, message, ...more);
        };
        this.onmessage = traced;
        try {
            return processReadBuffer.apply(this, args);
        } finally {
            // A handler the client installed meanwhile stays; otherwise put the original back.
            if (this.onmessage === traced) this.onmessage = onmessage;
        }
    };
    return wire;
}

/** The raw result the server sent for the last request of `method` (from the trace). */
export function rawResult(wire, method) {
    for (let i = wire.length - 1; i >= 0; i--) {
        const out = wire[i];
        if (out.dir !== '->' || out.message.method !== method) continue;
        const reply = wire.find((w) => w.dir === '<-' && w.conn === out.conn && w.message.id === out.message.id);
        return reply?.message;
    }
    return undefined;
}

function textOf(result, what) {
    assert(Array.isArray(result?.content), `${what}: result has no content array: ${show(result)}`);
    const texts = result.content.filter((c) => c.type === 'text').map((c) => c.text);
    assert(texts.length > 0, `${what}: result has no text content: ${show(result)}`);
    return texts.join('\n');
}

/**
 * tools/list and tools/call checks from the example server's contract; the same for
 * both eras. `client` is an sdk 1.x or client 2.x Client; `callTool(params, options)`
 * adapts the one call whose signature differs (1.x takes a result schema in between).
 */
export async function checkTools(client, wire, callTool) {
    const opts = { timeout: REQUEST_TIMEOUT_MS };

    step('tools/list');
    const { tools } = await client.listTools(undefined, opts);
    const byName = new Map(tools.map((t) => [t.name, t]));
    ok(`tools: ${tools.map((t) => t.name).join(', ')}`);
    for (const name of ['greet', 'add', 'always_fails', 'sleep']) {
        assert(byName.has(name), `tool '${name}' is missing from tools/list: ${show(tools)}`);
    }
    for (const tool of tools) {
        assert(tool.inputSchema?.type === 'object', `tool '${tool.name}': inputSchema.type must be "object", got ${show(tool.inputSchema)}`);
        assert(typeof tool.description === 'string' && tool.description.length > 0, `tool '${tool.name}' has no description`);
    }
    const greet = byName.get('greet');
    assertEq(greet.description, 'Say hello to someone.', 'greet.description');
    assertEq(greet.inputSchema.properties?.name?.type, 'string', 'greet.inputSchema.properties.name.type');
    assert(greet.inputSchema.required?.includes('name'), `greet: 'name' must be required: ${show(greet.inputSchema)}`);
    ok('greet requires name');
    const add = byName.get('add');
    for (const p of ['a', 'b']) {
        assertEq(add.inputSchema.properties?.[p]?.type, 'number', `add.inputSchema.properties.${p}.type`);
    }
    assertEq(add.outputSchema?.type, 'object', 'add.outputSchema.type');
    assertEq(byName.get('sleep').inputSchema.properties?.ms?.type, 'integer', 'sleep.inputSchema.properties.ms.type');

    step('tools/call greet {name: "Ada"}');
    const greeted = await callTool({ name: 'greet', arguments: { name: 'Ada' } }, opts);
    assert(!greeted.isError, `greet answered isError: ${show(greeted)}`);
    assertEq(textOf(greeted, 'greet'), 'Hello, Ada!', 'greet text');

    step('tools/call add {a: 2, b: 3.5}');
    const added = await callTool({ name: 'add', arguments: { a: 2, b: 3.5 } }, opts);
    assert(!added.isError, `add answered isError: ${show(added)}`);
    assertEq(added.structuredContent, { sum: 5.5 }, 'add structuredContent');
    let parsed;
    try {
        parsed = JSON.parse(textOf(added, 'add'));
    } catch {
        fail(`add: text content is not JSON: ${show(added.content)}`);
    }
    assertEq(parsed, { sum: 5.5 }, 'add text content (parsed)');

    step('tools/call always_fails {}');
    const failed = await callTool({ name: 'always_fails', arguments: {} }, opts);
    assertEq(failed.isError, true, 'always_fails isError');
    assertEq(textOf(failed, 'always_fails'), 'this tool always fails', 'always_fails text');

    step('tools/call sleep {ms: 20}');
    const slept = await callTool({ name: 'sleep', arguments: { ms: 20 } }, opts);
    assert(!slept.isError, `sleep answered isError: ${show(slept)}`);
    assertEq(textOf(slept, 'sleep'), 'slept 20 ms', 'sleep text');

    step('tools/call no_such_tool {} (expect JSON-RPC error -32602)');
    const unknown = await rejection(callTool({ name: 'no_such_tool', arguments: {} }, opts), 'unknown tool');
    assertEq(unknown.code, -32602, 'unknown tool error code');
    ok(`message: ${unknown.message}`);

    step('tools/call greet {} (missing argument; expect a tool error, isError: true, naming "name")');
    const bad = await callTool({ name: 'greet', arguments: {} }, opts);
    assertEq(bad.isError, true, 'bad arguments isError');
    assertEq(textOf(bad, 'greet without name'), 'missing required argument `name`', 'bad arguments text');
    ok(`text: ${textOf(bad, 'greet without name')}`);

    step('tools/call sleep {ms: 30000}, aborted after 200 ms (expect notifications/cancelled, server keeps serving)');
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('cancelled by the peer test')), 200);
    const started = Date.now();
    await rejection(callTool({ name: 'sleep', arguments: { ms: 30_000 } }, { ...opts, signal: abort.signal }), 'aborted sleep');
    const waited = Date.now() - started;
    assert(waited < 5_000, `the aborted call took ${waited} ms to settle`);
    ok(`the call settled ${waited} ms after it started`);
    const call = wire.filter((w) => w.dir === '->' && w.message.method === 'tools/call' && w.message.params?.arguments?.ms === 30_000).at(-1);
    const cancel = wire.find((w) => w.dir === '->' && w.message.method === 'notifications/cancelled' && w.message.params?.requestId === call?.message.id);
    assert(cancel, `the client sent no notifications/cancelled for request ${show(call?.message.id)}`);
    ok(`client sent ${show(cancel.message)}`);
    const after = await callTool({ name: 'greet', arguments: { name: 'again' } }, opts);
    assertEq(textOf(after, 'greet after cancel'), 'Hello, again!', 'greet after the cancelled call');
    const late = wire.find((w) => w.dir === '<-' && w.conn === call.conn && w.message.id === call.message.id);
    ok(late ? `server answered the cancelled request anyway (allowed, SHOULD NOT): ${show(late.message)}` : 'server sent no response for the cancelled request');
}

/**
 * A raw JSON-RPC request path on `transport`, sharing it with the Client connected to it (the
 * host request path ext-tasks sessions need; see modern_tasks.mjs). With `abortClosesRequest`
 * (Streamable HTTP), aborting also closes the request's POST, which is how the modern era cancels
 * a request.
 */
export function rawCoordinator(transport, { abortClosesRequest = false } = {}) {
    const pending = new Map();
    let next = 0;
    const clientOnMessage = transport.onmessage;
    assert(typeof clientOnMessage === 'function', 'the transport has no onmessage after connect');
    transport.onmessage = function (message, ...rest) {
        const isResponse = message && typeof message === 'object' && !('method' in message) && ('result' in message || 'error' in message);
        if (isResponse && pending.has(message.id)) {
            const settle = pending.get(message.id);
            pending.delete(message.id);
            settle(message);
            return;
        }
        return clientOnMessage.call(this, message, ...rest);
    };
    return (request, options = {}) =>
        new Promise((resolve, reject) => {
            const id = `raw-${++next}`;
            const { signal } = options;
            const timeoutMs = options.context?.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
            const done = () => {
                pending.delete(id);
                clearTimeout(timer);
                signal?.removeEventListener('abort', onAbort);
            };
            const onAbort = () => {
                done();
                reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
            };
            const timer = setTimeout(() => {
                done();
                reject(new Error(`raw ${request.method} (${id}) got no response in ${timeoutMs} ms`));
            }, timeoutMs);
            if (signal?.aborted) return onAbort();
            signal?.addEventListener('abort', onAbort, { once: true });
            pending.set(id, (message) => {
                done();
                resolve('error' in message ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result });
            });
            const sendOptions = abortClosesRequest && signal ? { requestSignal: signal } : undefined;
            transport.send({ jsonrpc: '2.0', id, ...request }, sendOptions).catch((error) => {
                done();
                reject(error);
            });
        });
}

/** The fallback's companion tools, as `tools/list` names them. */
export const COMPANIONS = ['tasks_status', 'tasks_result', 'tasks_cancel'];

/** The text of a tool result, its text blocks joined. */
export const resultText = (result) => (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ');

/**
 * The task id of the fallback's answer to a call of `tool` (a client without tasks calling a tool
 * that runs as a task): named in `_meta` (related-task) and in the text, which also names the
 * companion tools.
 */
export function startedTask(result, tool) {
    assert(!result.isError, `${tool} answered an error: ${show(result)}`);
    const id = result._meta?.['io.modelcontextprotocol/related-task']?.taskId;
    assert(typeof id === 'string', `${tool}'s answer names no task in _meta: ${show(result)}`);
    const text = resultText(result);
    assert(text.includes(id), `${tool}'s text does not name task ${id}: ${text}`);
    for (const companion of COMPANIONS) assert(text.includes(companion), `${tool}'s text does not mention ${companion}: ${text}`);
    ok(`${tool} answered at once with task ${id}: ${show(text)}`);
    return id;
}
