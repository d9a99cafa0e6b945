// @modelcontextprotocol/sdk 1.32.2 (the 2025-11-25 TypeScript SDK, the client most hosts ship
// today) against the example server over stdio: `initialize` handshake, then plain requests
// with no per-request `_meta` envelope.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
    LEGACY_VERSION,
    REQUEST_TIMEOUT_MS,
    SERVER_NAME,
    SERVER_VERSION,
    assert,
    assertEq,
    checkTools,
    main,
    ok,
    rawResult,
    serverBin,
    serverEnv,
    show,
    step,
    traceTransport,
} from './common.mjs';
import { checkPrompts } from './prompts.mjs';

await main('legacy (@modelcontextprotocol/sdk 1.32.2)', async () => {
    const bin = serverBin();
    const wire = traceTransport(StdioClientTransport, 'sdk1');

    step(`connect (initialize) to ${bin}`);
    const client = new Client({ name: 'mcp-tasks-peer-legacy', version: '1.32.2' });
    const transport = new StdioClientTransport({ command: bin, env: serverEnv(), stderr: 'inherit' });
    // sdk 1.x has no getter for the negotiated version; it hands it to the transport.
    let negotiated;
    transport.setProtocolVersion = (version) => {
        negotiated = version;
    };
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });

    const first = wire.find((w) => w.dir === '->');
    assertEq(first?.message.method, 'initialize', "the client's first message");
    assertEq(first.message.params?.protocolVersion, LEGACY_VERSION, 'initialize params.protocolVersion (offered)');
    assertEq(negotiated, LEGACY_VERSION, 'negotiated protocol version (initialize result)');
    const serverInfo = client.getServerVersion();
    assertEq({ name: serverInfo?.name, version: serverInfo?.version }, { name: SERVER_NAME, version: SERVER_VERSION }, 'getServerVersion()');
    assert(client.getServerCapabilities()?.tools, `server capabilities lack tools: ${show(client.getServerCapabilities())}`);
    ok('capabilities.tools present');
    const init = rawResult(wire, 'initialize')?.result ?? {};
    assert(!('resultType' in init), `initialize result carries resultType, which does not exist in ${LEGACY_VERSION}: ${show(init)}`);
    ok('initialize result has no resultType');

    // 1.x: callTool(params, resultSchema, options).
    await checkTools(client, wire, (params, options) => client.callTool(params, undefined, options));
    await checkPrompts(client);

    step('ping');
    await client.ping({ timeout: REQUEST_TIMEOUT_MS });
    ok('pong');

    step('legacy wire shape of what the client accepted');
    const toolsList = rawResult(wire, 'tools/list')?.result ?? {};
    assert(!('resultType' in toolsList), `tools/list result carries resultType on a ${LEGACY_VERSION} session: ${show(toolsList)}`);
    ok('tools/list result has no resultType');
    const sessions = new Set(wire.map((w) => w.conn));
    assertEq(sessions.size, 1, 'server processes spawned by the 1.x client');
    await client.close();
});
