// Resources, prompts and completions, as the official TypeScript clients use them: a server's
// fixed resources and templates listed (following `nextCursor`) and read (text and blob), its
// prompts listed and got (with and without arguments), an argument completed, and the precise
// errors for an unknown URI, an unknown prompt and a missing required argument.
//   sdk1     @modelcontextprotocol/sdk 1.32.2 `Client` (2025-11-25, `initialize`)
//   client2  @modelcontextprotocol/client 2.4.0 `Client` with `versionNegotiation: { mode: 'auto' }`
//            (2026-07-28 where the server speaks it, else `initialize`)
// over stdio (the target is a server command line, split on spaces) or Streamable HTTP (a URL).
// What to expect of each server is a profile below: `example` (our example_server) and
// `everything` (@modelcontextprotocol/server-everything, which nobody here wrote).
//
// Usage: node features.mjs <sdk1|client2> <stdio|http> <server command|URL> <example|everything>

import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as Stdio1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as Http1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as Client2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as Stdio2 } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport as Http2 } from '@modelcontextprotocol/client';
import { REQUEST_TIMEOUT_MS, assert, assertEq, fail, main, ok, rejection, serverEnv, show, step } from './common.mjs';

const [kind, transportKind, target, profileName] = process.argv.slice(2);
if (!['sdk1', 'client2'].includes(kind) || !['stdio', 'http'].includes(transportKind) || !target || !profileName) {
    fail('usage: node features.mjs <sdk1|client2> <stdio|http> <server command|URL> <example|everything>');
}

const PROFILES = {
    example: {
        resource: { uri: 'notes://index', includes: 'welcome' },
        template: { uriTemplate: 'notes://{title}', read: 'notes://welcome', includes: 'Read me' },
        prompt: { name: 'review_code', arguments: { code: 'fn main() {}', language: 'rust' }, includes: 'rust', required: 'code' },
        complete: {
            ref: { type: 'ref/prompt', name: 'review_code' },
            argument: { name: 'focus', value: 'o' },
            context: { arguments: { language: 'rust' } },
            includes: 'ownership',
        },
        // SEP-2164: -32602 with data.uri from 2026-07-28 on; a 2025-11-25 session gets -32002,
        // the code that version names.
        unknownUriCode: kind === 'sdk1' ? -32002 : -32602,
    },
    everything: {
        resource: { uri: 'demo://resource/static/document/architecture.md', mimeType: 'text/markdown' },
        template: { uriTemplate: 'demo://resource/dynamic/text/{resourceId}', read: 'demo://resource/dynamic/text/7' },
        blobTemplate: { uriTemplate: 'demo://resource/dynamic/blob/{resourceId}', read: 'demo://resource/dynamic/blob/7' },
        prompt: { name: 'args-prompt', arguments: { city: 'Lisbon' }, includes: 'Lisbon', required: 'city' },
        complete: {
            ref: { type: 'ref/prompt', name: 'completable-prompt' },
            argument: { name: 'department', value: 'E' },
            includes: 'Engineering',
        },
        // server-everything answers an unknown URI with its own error; only that it is one.
        unknownUriCode: undefined,
    },
};

const profile = PROFILES[profileName] ?? fail(`no profile ${profileName}: one of ${Object.keys(PROFILES).join(', ')}`);

function transport() {
    if (transportKind === 'http') {
        const url = new URL(target);
        return kind === 'sdk1' ? new Http1(url) : new Http2(url);
    }
    const [command, ...args] = target.split(' ');
    const options = { command, args, env: serverEnv(), stderr: 'inherit' };
    return kind === 'sdk1' ? new Stdio1(options) : new Stdio2(options);
}

function client() {
    const info = { name: `features-${kind}`, version: '0' };
    return kind === 'sdk1'
        ? new Client1(info, { capabilities: {} })
        : new Client2(info, { versionNegotiation: { mode: 'auto' } });
}

/** Every item of a paginated list, following `nextCursor`. */
async function all(list, key) {
    const items = [];
    let cursor;
    for (let pages = 0; pages < 1000; pages += 1) {
        const page = await list(cursor === undefined ? {} : { cursor });
        items.push(...page[key]);
        cursor = page.nextCursor;
        if (cursor === undefined) return items;
    }
    fail(`${key}: the pages never end`);
}

const opts = { timeout: REQUEST_TIMEOUT_MS };

main(`features ${kind} ${transportKind} ${profileName}`, async () => {
    const c = client();
    step(`connect (${kind}, ${transportKind})`);
    await c.connect(transport(), opts);
    const caps = c.getServerCapabilities();
    assert(caps?.resources && caps?.prompts && caps?.completions, `resources, prompts, completions advertised: ${show(caps)}`);
    ok(`capabilities ${show(Object.keys(caps))}`);

    step('resources/list and resources/read (a fixed resource)');
    const resources = await all((p) => c.listResources(p, opts), 'resources');
    const fixed = resources.find((r) => r.uri === profile.resource.uri) ?? fail(`${profile.resource.uri} not in ${show(resources.map((r) => r.uri))}`);
    if (profile.resource.mimeType) assertEq(fixed.mimeType, profile.resource.mimeType, 'its mimeType');
    const read = await c.readResource({ uri: fixed.uri }, opts);
    assertEq(read.contents[0].uri, fixed.uri, 'the contents name the URI read');
    assert(typeof read.contents[0].text === 'string' && read.contents[0].text.length > 0, `text contents: ${show(read.contents)}`);
    if (profile.resource.includes) assert(read.contents[0].text.includes(profile.resource.includes), `text includes ${profile.resource.includes}`);
    ok(`read ${read.contents[0].text.length} chars`);

    step('resources/templates/list and a read through a template (text, and blob where the server has one)');
    const templates = await all((p) => c.listResourceTemplates(p, opts), 'resourceTemplates');
    for (const t of [profile.template, profile.blobTemplate].filter(Boolean)) {
        assert(templates.some((x) => x.uriTemplate === t.uriTemplate), `${t.uriTemplate} in ${show(templates.map((x) => x.uriTemplate))}`);
        const r = await c.readResource({ uri: t.read }, opts);
        assertEq(r.contents[0].uri, t.read, 'the contents name the URI read');
        if (t === profile.blobTemplate) {
            const bytes = Buffer.from(r.contents[0].blob ?? fail(`a blob: ${show(r.contents)}`), 'base64');
            assert(bytes.length > 0, 'the blob decodes to bytes');
            ok(`blob of ${bytes.length} bytes`);
        } else {
            assert(typeof r.contents[0].text === 'string', `text: ${show(r.contents)}`);
            if (t.includes) assert(r.contents[0].text.includes(t.includes), `text includes ${t.includes}: ${r.contents[0].text}`);
            ok(`text ${show(r.contents[0].text.slice(0, 80))}`);
        }
    }

    step('an unknown URI is an error');
    const unknown = await rejection(c.readResource({ uri: 'nothing://here/at/all' }, opts), 'reading an unknown URI');
    if (profile.unknownUriCode !== undefined) {
        assertEq(unknown.code, profile.unknownUriCode, 'its code');
        assertEq(unknown.data?.uri, 'nothing://here/at/all', 'its data.uri (SEP-2164)');
    }

    step('prompts/list and prompts/get');
    const prompts = await all((p) => c.listPrompts(p, opts), 'prompts');
    const p = prompts.find((x) => x.name === profile.prompt.name) ?? fail(`${profile.prompt.name} not in ${show(prompts.map((x) => x.name))}`);
    assert(p.arguments?.some((a) => a.name === profile.prompt.required && a.required), `${profile.prompt.required} is a required argument: ${show(p.arguments)}`);
    const got = await c.getPrompt({ name: p.name, arguments: profile.prompt.arguments }, opts);
    const texts = got.messages.map((m) => m.content?.text ?? '').join(' ');
    assert(got.messages.length > 0 && texts.includes(profile.prompt.includes), `the messages say ${profile.prompt.includes}: ${show(got.messages)}`);
    ok(`${got.messages.length} message(s)`);

    step('an unknown prompt and a missing required argument are -32602');
    const noPrompt = await rejection(c.getPrompt({ name: 'no-such-prompt', arguments: {} }, opts), 'an unknown prompt');
    assertEq(noPrompt.code, -32602, 'its code');
    const missing = await rejection(c.getPrompt({ name: p.name, arguments: {} }, opts), 'a missing required argument');
    assertEq(missing.code, -32602, 'its code');

    step('completion/complete');
    const done = await c.complete({ ref: profile.complete.ref, argument: profile.complete.argument, context: profile.complete.context }, opts);
    assert(done.completion.values.includes(profile.complete.includes), `${profile.complete.includes} among ${show(done.completion.values)}`);
    ok(`values ${show(done.completion.values)}`);

    await c.close();
});
