// The modern-era client wiring the HTTP scripts share: @modelcontextprotocol/client 2.4.0's
// `StreamableHTTPClientTransport` wrapped in an @modelcontextprotocol/ext-tasks 0.2.2 session
// (see modern_tasks.mjs for why the session needs a host-owned raw request path).

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';
import { MODERN_VERSION, REQUEST_TIMEOUT_MS, assertEq, rawCoordinator } from '../common.mjs';
import { tracingFetch } from './trace.mjs';

const CLIENT_INFO = { name: 'mcp-tasks-peer-http-modern-tasks', version: '2.4.0' };
const CAPABILITIES = { elicitation: {}, sampling: {} };
export const TASKS_EXT = 'io.modelcontextprotocol/tasks';

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
        rawDispatch: rawCoordinator(transport, { abortClosesRequest: true }),
        v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion(), clientInfo: CLIENT_INFO, clientCapabilities: CAPABILITIES },
        onInputRequest,
        onError: (error) => console.error(`    ext-tasks background error: ${error?.stack ?? error}`),
    });
    assertEq(session.capabilities.execution, true, 'session.capabilities.execution');
    assertEq(session.capabilities.cancellation, true, 'session.capabilities.cancellation');
    return { client, session, trace };
}
