// The modern-era client wiring the HTTP scripts share: @modelcontextprotocol/client 2.4.0's
// `StreamableHTTPClientTransport` wrapped in an @modelcontextprotocol/ext-tasks 0.2.2 session
// (see modern_tasks.mjs for why the session needs a host-owned raw request path).

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';
import { MODERN_VERSION, REQUEST_TIMEOUT_MS, assert, assertEq } from '../common.mjs';
import { tracingFetch } from './trace.mjs';

const CLIENT_INFO = { name: 'mcp-tasks-peer-http-modern-tasks', version: '2.4.0' };
const CAPABILITIES = { elicitation: {}, sampling: {} };
export const TASKS_EXT = 'io.modelcontextprotocol/tasks';

/** A raw JSON-RPC request path on `transport`, sharing it with the Client connected to it. */
function rawCoordinator(transport) {
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
            // Aborting closes this request's POST, which is how the modern era cancels a request.
            transport.send({ jsonrpc: '2.0', id, ...request }, signal ? { requestSignal: signal } : undefined).catch((error) => {
                done();
                reject(error);
            });
        });
}

/**
 * Connects a 2.4.0 client in the modern era to `url` and wraps it in an ext-tasks session;
 * `headers` (e.g. `Authorization`) go on every request.
 */
export async function connect(url, label, onInputRequest, headers = {}) {
    const trace = tracingFetch(label);
    const transport = new StreamableHTTPClientTransport(url, { fetch: trace.fetch, requestInit: { headers } });
    const client = new Client(CLIENT_INFO, { capabilities: CAPABILITIES, versionNegotiation: { mode: 'auto' } });
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    assertEq(client.getProtocolEra(), 'modern', `${label}: getProtocolEra()`);
    assertEq(client.getNegotiatedProtocolVersion(), MODERN_VERSION, `${label}: negotiated protocol version`);
    const extension = client.getServerCapabilities()?.extensions?.[TASKS_EXT];
    assertEq(extension, {}, `${label}: server capabilities.extensions["${TASKS_EXT}"] (from server/discover)`);
    const discover = trace.exchanges.find((e) => e.body?.method === 'server/discover');
    assertEq([discover?.status, discover?.headers['mcp-method'], discover?.headers['mcp-protocol-version']], [200, 'server/discover', MODERN_VERSION], `${label}: server/discover [status, Mcp-Method, MCP-Protocol-Version]`);
    const session = createTaskSessionFromClient(client, {
        endpointId: `peers-http:${label}`,
        rawDispatch: rawCoordinator(transport),
        v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion(), clientInfo: CLIENT_INFO, clientCapabilities: CAPABILITIES },
        onInputRequest,
        onError: (error) => console.error(`    ext-tasks background error: ${error?.stack ?? error}`),
    });
    assertEq(session.capabilities.execution, true, 'session.capabilities.execution');
    assertEq(session.capabilities.cancellation, true, 'session.capabilities.cancellation');
    return { client, session, trace };
}
