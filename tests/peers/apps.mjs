// MCP Apps (@modelcontextprotocol/ext-apps 2.0.4, extension `io.modelcontextprotocol/ui`), as a
// host that renders apps finds them: `tools/list` names each app tool's UI resource
// (`getToolUiResourceUri`, the package's own host helper, which reads `_meta.ui.resourceUri` and
// the older `_meta["ui/resourceUri"]`), the tool's `_meta.ui` parses with the package's
// `McpUiToolMetaSchema`, `resources/read` of that URI gives HTML of the package's
// `RESOURCE_MIME_TYPE` (`text/html;profile=mcp-app`) whose `_meta.ui` parses with
// `McpUiResourceMetaSchema`, and an app-only tool is one to the package's
// `isToolVisibilityAppOnly`. With @modelcontextprotocol/client 2.4.0 in both eras
// (`versionNegotiation` auto: 2026-07-28; the default: 2025-11-25 `initialize`).
//
// Usage: node apps.mjs <stdio|http> <example_server bin|URL>

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { McpUiResourceMetaSchema, McpUiToolMetaSchema, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps';
import { getToolUiResourceUri, isToolVisibilityAppOnly } from '@modelcontextprotocol/ext-apps/app-bridge';
import { REQUEST_TIMEOUT_MS, assert, assertEq, fail, main, ok, serverEnv, show, step } from './common.mjs';

const [transportKind, target] = process.argv.slice(2);
if (!['stdio', 'http'].includes(transportKind) || !target) fail('usage: node apps.mjs <stdio|http> <example_server bin|URL>');

/** The app tool, its UI resource, and the tool only the app calls, in example_server. */
const APP_TOOL = 'show_forecast';
const APP_ONLY_TOOL = 'refresh_forecast';
const UI_URI = 'ui://forecast/view.html';

const opts = { timeout: REQUEST_TIMEOUT_MS };

function transport() {
    return transportKind === 'http'
        ? new StreamableHTTPClientTransport(new URL(target))
        : new StdioClientTransport({ command: target, env: serverEnv(), stderr: 'inherit' });
}

async function check(mode) {
    step(`connect (${mode}, ${transportKind})`);
    const c = new Client({ name: 'apps-host', version: '0' }, mode === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {});
    await c.connect(transport(), opts);

    step('tools/list names the UI resource of the app tool');
    const { tools } = await c.listTools({}, opts);
    const tool = tools.find((t) => t.name === APP_TOOL) ?? fail(`${APP_TOOL} not listed: ${show(tools.map((t) => t.name))}`);
    assertEq(getToolUiResourceUri(tool), UI_URI, 'getToolUiResourceUri');
    assertEq(tool._meta['ui/resourceUri'], UI_URI, 'the older flat key too');
    McpUiToolMetaSchema.parse(tool._meta.ui);
    ok('its _meta.ui parses with McpUiToolMetaSchema');
    assert(!isToolVisibilityAppOnly(tool), 'the app tool is visible to the model');
    const appOnly = tools.find((t) => t.name === APP_ONLY_TOOL) ?? fail(`${APP_ONLY_TOOL} not listed`);
    assert(isToolVisibilityAppOnly(appOnly), `${APP_ONLY_TOOL} is app-only: ${show(appOnly._meta)}`);
    ok(`${APP_ONLY_TOOL} is app-only`);
    const plain = tools.filter((t) => t._meta?.ui === undefined && getToolUiResourceUri(t) === undefined);
    assert(plain.length > 0, 'tools without a UI carry no ui meta');

    step('resources/read of the UI resource gives an MCP App');
    const listed = (await c.listResources({}, opts)).resources.find((r) => r.uri === UI_URI) ?? fail(`${UI_URI} not in resources/list`);
    assertEq(listed.mimeType, RESOURCE_MIME_TYPE, 'the listed mimeType');
    const read = await c.readResource({ uri: UI_URI }, opts);
    const html = read.contents[0];
    assertEq(html.mimeType, RESOURCE_MIME_TYPE, 'the read mimeType');
    assert(typeof html.text === 'string' && /<html[\s>]/i.test(html.text), `HTML text: ${show(html.text?.slice(0, 80))}`);
    assert(html._meta?.ui !== undefined, `the view's contents carry _meta.ui: ${show(html._meta)}`);
    McpUiResourceMetaSchema.parse(html._meta.ui);
    assertEq(html._meta.ui.prefersBorder, true, 'prefersBorder');
    ok(`its _meta.ui parses with McpUiResourceMetaSchema: ${show(html._meta?.ui)}`);

    step('the tools run');
    const result = await c.callTool({ name: APP_TOOL, arguments: { city: 'Lisbon' } }, opts);
    assert(!result.isError && JSON.stringify(result.content).includes('Lisbon'), `a forecast for Lisbon: ${show(result)}`);
    const refreshed = await c.callTool({ name: APP_ONLY_TOOL, arguments: { city: 'Porto' } }, opts);
    assert(!refreshed.isError, `refreshed: ${show(refreshed)}`);
    ok('both answered');
    await c.close();
}

main(`apps ${transportKind}`, async () => {
    await check('auto');
    await check('legacy');
});
