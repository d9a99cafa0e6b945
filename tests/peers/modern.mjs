// @modelcontextprotocol/client 2.4.0 (the 2026-07-28 TypeScript client) against the example
// server over stdio.
//
// How 2.4.0 picks the era (read from dist/public-*.mjs, `Client.connect`, `negotiateEra`,
// `negotiateStdioViaSibling`, `classifyProbeOutcome`):
//   - The default is versionNegotiation.mode 'legacy': a plain `initialize` handshake,
//     byte-identical to a 2025 client. A 2.4.0 client talks 2026-07-28 only if asked to.
//   - mode 'auto' (used here) first sends `server/discover` carrying the full per-request
//     `_meta` envelope (protocolVersion 2026-07-28, clientInfo, clientCapabilities) on a
//     DISPOSABLE SIBLING process spawned from the same StdioServerParameters (its stderr
//     discarded), then kills the sibling and starts the real server process once.
//     A DiscoverResult that passes its 2026 schema and lists 2026-07-28 in
//     supportedVersions => modern; -32022 with a mutual version => retry once with it;
//     anything else (other errors, a result that fails the schema, timeout, exit) =>
//     SILENTLY falls back to `initialize`. Hence the explicit era assertion below.
//   - On the modern era every request carries params._meta with the envelope; results
//     must carry `resultType` (else SdkError InvalidResult), and tools/list results must
//     carry `ttlMs` + `cacheScope` (CacheableResult).
//   - mode { pin: '2026-07-28' }: same probe, no fallback.

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
    LEGACY_VERSION,
    MODERN_VERSION,
    REQUEST_TIMEOUT_MS,
    SERVER_NAME,
    SERVER_VERSION,
    assert,
    assertEq,
    checkTools,
    fail,
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

const CLIENT_INFO = { name: 'mcp-tasks-peer-modern', version: '2.4.0' };

await main('modern (@modelcontextprotocol/client 2.4.0)', async () => {
    const bin = serverBin();
    const wire = traceTransport(StdioClientTransport, 'client2');

    step(`connect with versionNegotiation.mode "auto" to ${bin}`);
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StdioClientTransport({ command: bin, env: serverEnv(), stderr: 'inherit' }), { timeout: REQUEST_TIMEOUT_MS });

    const first = wire.find((w) => w.dir === '->');
    assert(first?.message.method === 'server/discover', `the client's first message was not server/discover: ${show(first)}`);
    ok(`first message on the wire: ${first.message.method} with _meta ${show(first.message.params?._meta)}`);
    const era = client.getProtocolEra();
    const version = client.getNegotiatedProtocolVersion();
    if (era !== 'modern' || version !== MODERN_VERSION) {
        const probe = rawResult(wire, 'server/discover');
        fail(
            `the client fell back to era ${show(era)} (protocol ${show(version)}) instead of modern ${MODERN_VERSION}. ` +
                `2.4.0 falls back when server/discover errors, times out, or its result fails the 2026 DiscoverResult ` +
                `schema (resultType, supportedVersions, capabilities, ttlMs, cacheScope). The server answered: ${show(probe)}`,
        );
    }
    assertEq(era, 'modern', 'getProtocolEra()');
    assertEq(version, MODERN_VERSION, 'getNegotiatedProtocolVersion()');
    const discover = client.getDiscoverResult();
    assert(discover?.supportedVersions?.includes(MODERN_VERSION), `server/discover supportedVersions lacks ${MODERN_VERSION}: ${show(discover)}`);
    ok(`server/discover supportedVersions = ${show(discover.supportedVersions)}`);
    const serverInfo = client.getServerVersion();
    assertEq({ name: serverInfo?.name, version: serverInfo?.version }, { name: SERVER_NAME, version: SERVER_VERSION }, 'serverInfo (from _meta io.modelcontextprotocol/serverInfo)');
    assert(client.getServerCapabilities()?.tools, `server capabilities lack tools: ${show(client.getServerCapabilities())}`);
    ok('capabilities.tools present');

    // 2.x: callTool(params, options).
    await checkTools(client, wire, (params, options) => client.callTool(params, options));
    await checkPrompts(client);

    step('modern wire shape of what the client accepted');
    const sessionConn = wire.filter((w) => w.dir === '->' && w.message.method === 'tools/list').at(-1)?.conn;
    const sent = wire.filter((w) => w.conn === sessionConn && w.dir === '->' && w.message.id !== undefined);
    for (const { message } of sent) {
        const meta = message.params?._meta ?? {};
        assert(meta['io.modelcontextprotocol/protocolVersion'] === MODERN_VERSION, `client sent ${message.method} without the modern _meta envelope: ${show(message)}`);
    }
    ok(`all ${sent.length} requests on the session carried _meta protocolVersion ${MODERN_VERSION}`);
    assert(!sent.some((w) => w.message.method === 'initialize'), 'the client sent initialize on a modern connection');
    const toolsList = rawResult(wire, 'tools/list')?.result;
    assertEq(toolsList?.resultType, 'complete', 'raw tools/list resultType');
    const withExecution = (toolsList?.tools ?? []).filter((t) => 'execution' in t).map((t) => t.name);
    assertEq(withExecution, [], 'tools carrying execution.taskSupport on the modern wire (must be none)');
    await client.close();

    step('a 2.4.0 client with default options (versionNegotiation "legacy") on the same server');
    const plain = new Client(CLIENT_INFO);
    await plain.connect(new StdioClientTransport({ command: bin, env: serverEnv(), stderr: 'inherit' }), { timeout: REQUEST_TIMEOUT_MS });
    assertEq(plain.getProtocolEra(), 'legacy', 'default-mode getProtocolEra()');
    assertEq(plain.getNegotiatedProtocolVersion(), LEGACY_VERSION, 'default-mode getNegotiatedProtocolVersion()');
    const greeted = await plain.callTool({ name: 'greet', arguments: { name: 'legacy 2.x' } }, { timeout: REQUEST_TIMEOUT_MS });
    assertEq(greeted.content?.[0]?.text, 'Hello, legacy 2.x!', 'default-mode greet text');
    await plain.close();
});
