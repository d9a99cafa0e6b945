// OAuth (issue 28): @modelcontextprotocol/sdk 1.32.2's `StreamableHTTPClientTransport`, given an
// access token from the issuer ($MCP_BEARER_TOKEN: minted by the test from oauth2-mock-server, with
// the scope `research`), against `example_server --oauth-issuer ... --oauth-audience URL` (argv[2]
// or $MCP_SERVER_URL). Without a token the connection is refused with 401; with it the client
// lists the tools and runs `research` (task-required, scope `research`) as a 2025-11-25 task,
// answering its elicitation and its sampling request, to the report the tool builds from both.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { REQUEST_TIMEOUT_MS, assert, assertEq, fail, main, ok, rejection, show, step } from '../common.mjs';
import { serverUrl } from './trace.mjs';

const opts = { timeout: REQUEST_TIMEOUT_MS };
const token = process.env.MCP_BEARER_TOKEN ?? fail('MCP_BEARER_TOKEN is not set');

function newClient() {
    return new Client({ name: 'mcp-tasks-peer-oauth', version: '1.32.2' }, { capabilities: { elicitation: {}, sampling: {} } });
}

await main('OAuth: sdk 1.32.2 with a token from the issuer', async () => {
    const url = serverUrl('server');

    step('without a token');
    const refused = await rejection(newClient().connect(new StreamableHTTPClientTransport(url), opts), 'connect without a token');
    // The SDK's StreamableHTTPError carries the HTTP status as `code`.
    assertEq(refused?.code, 401, `the HTTP status of the refusal (${refused?.message ?? refused})`);
    ok(`refused with 401: ${refused.message}`);

    step('with the token');
    const client = newClient();
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { sources: 3 } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
        role: 'assistant',
        content: { type: 'text', text: 'Tokens open doors.' },
        model: 'peer-test-model',
    }));
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await client.connect(transport, opts);
    const { tools } = await client.listTools(undefined, opts);
    const names = tools.map((t) => t.name);
    assert(names.includes('research') && names.includes('countdown'), `tools/list: ${show(names)}`);
    ok(`tools: ${names.join(', ')}`);

    step('research as a task');
    const events = [];
    let taskId;
    for await (const message of client.experimental.tasks.callToolStream({ name: 'research', arguments: { topic: 'keys' } }, CallToolResultSchema, opts)) {
        events.push(message.type);
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        if (message.type === 'error') fail(`callToolStream yielded an error: ${message.error?.message} ${show(message.error)}`);
        if (message.type === 'result') {
            assertEq(message.result.structuredContent, { topic: 'keys', sources: 3, summary: 'Tokens open doors.' }, 'research report');
        }
    }
    assertEq(events[0], 'taskCreated', 'first stream message');
    assertEq(events.at(-1), 'result', 'last stream message');
    assertEq(asked, ['How many sources should I read about "keys"?'], 'the elicitation the client answered');
    ok(`task ${taskId}: ${events.join(', ')}`);
    const task = await client.experimental.tasks.getTask(taskId, opts);
    assertEq(task.status, 'completed', 'tasks/get status');
    await transport.terminateSession?.();
    await client.close();
});
