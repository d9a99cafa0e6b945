// Every schema a server lists, through ajv 8 in strict mode, as strict JSON Schema clients see it:
// `Ajv2020` (the draft MCP schemas default to), `strict: true`, ajv-formats for the formats
// JSON Schema 2020-12 defines, and a logger that records every warning. A schema that does not
// compile, or makes ajv say anything at all (an unknown format such as `uint32` is a warning in
// ajv's default mode and an error in strict mode), fails the run.
//
// Three settings relax `strict: true`, each for something JSON Schema itself allows and a server
// may mean: union types (`"type": ["integer", "null"]`, how an optional value is written) are
// allowed (`allowUnionTypes`); `required` may name a property that only the enclosing schema
// defines (`strictRequired: false`, ajv's own default: `anyOf: [{required: [phone]}, {required:
// [email]}]` is how "one of these" is said, as the conformance suite's 2020-12 tool does); and
// MCP's own keyword `x-mcp-header` (2026-07-28, tools: "x-mcp-header") is registered, as a client
// that follows MCP knows it. So is `$anchor`, a core 2020-12 keyword that ajv resolves but its
// strict mode calls unknown (ajv-validator/ajv#1854, open). Formats, other unknown keywords, and
// everything else strict stay strict.
//
// Usage: node schemas.mjs <listings.json>, where the file holds
//   [{ "label": "example_server --task-fallback, 2026-07-28 ...", "tools": [<tool>, ...] }, ...]
// (tests/peers.rs collects it from every example server in both eras).

import { readFileSync } from 'node:fs';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { fail, main, ok, show, step } from './common.mjs';

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const addFormats = addFormatsModule.default ?? addFormatsModule;

/** A strict validator whose every word lands in `said`. */
function strictAjv(said) {
    const record = (level) => (...args) => said.push(`${level}: ${args.map((a) => (typeof a === 'string' ? a : show(a))).join(' ')}`);
    const ajv = new Ajv2020({
        strict: true,
        strictRequired: false,
        allowUnionTypes: true,
        logger: { log: record('log'), warn: record('warn'), error: record('error') },
    });
    addFormats(ajv);
    ajv.addKeyword({ keyword: 'x-mcp-header', schemaType: 'string' });
    ajv.addKeyword({ keyword: '$anchor', schemaType: 'string' });
    return ajv;
}

await main('schemas', async () => {
    const file = process.argv[2];
    if (!file) fail('usage: node schemas.mjs <listings.json>');
    const listings = JSON.parse(readFileSync(file, 'utf8'));
    if (!Array.isArray(listings) || listings.length === 0) fail(`no listings in ${file}`);
    const problems = [];
    let compiled = 0;
    for (const { label, tools } of listings) {
        step(`${label}: ${tools.length} tools`);
        if (tools.length === 0) problems.push(`${label}: lists no tools`);
        for (const tool of tools) {
            for (const which of ['inputSchema', 'outputSchema']) {
                const schema = tool[which];
                if (schema === undefined) continue;
                const said = [];
                try {
                    strictAjv(said).compile(schema);
                    compiled += 1;
                } catch (error) {
                    said.push(`does not compile: ${error.message}`);
                }
                for (const line of said) problems.push(`${label}: ${tool.name}.${which}: ${line}`);
            }
        }
    }
    if (problems.length > 0) {
        fail(`${problems.length} problem(s) in ${compiled} compiled schemas:\n${problems.map((p) => `    - ${p}`).join('\n')}`);
    }
    ok(`${compiled} schemas of ${listings.length} listings compile in strict mode with no warning`);
});
