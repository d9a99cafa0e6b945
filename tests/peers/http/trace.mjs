// HTTP-level helpers for the Streamable HTTP peer scripts: where the server is, and a tracing
// `fetch` that the clients' own Streamable HTTP transports are given (both 1.32.2 and 2.4.0 take
// a `fetch` option), so the trace shows every HTTP exchange (method, headers, status) and every
// JSON-RPC message with the exchange it travelled on.
//
// That exchange is the point: "which stream did the server put this on" (a POST's SSE response,
// the session's GET stream) is only visible at this level; the clients hand every message from
// every stream to the same `onmessage`.

import { readFileSync } from 'node:fs';
import { fail, show } from '../common.mjs';

/** The endpoint of the server under test: argv[2], else $MCP_SERVER_URL. */
export function serverUrl(which = 'server') {
    const index = which === 'server' ? 2 : 3;
    const env = which === 'server' ? 'MCP_SERVER_URL' : 'MCP_CONFORMANCE_URL';
    const url = process.argv[index] ?? process.env[env];
    if (!url) fail(`usage: node <script>.mjs <example_server URL> <conformance_server URL>  (or set ${env})`);
    return new URL(url);
}

/**
 * The log of the server at `url` so far, when the harness captured it into a file
 * ($MCP_SERVER_LOG / $MCP_CONFORMANCE_LOG); `undefined` when it did not.
 */
export function serverLog(which = 'server') {
    const path = process.env[which === 'server' ? 'MCP_SERVER_LOG' : 'MCP_CONFORMANCE_LOG'];
    if (!path) return undefined;
    try {
        return readFileSync(path, 'utf8');
    } catch {
        return '';
    }
}

/** Where a server's captured log ends now (pass it to `waitForServerLog` to look only after it). */
export function serverLogMark(which) {
    return serverLog(which)?.length ?? 0;
}

/**
 * Waits (up to 5 s) for `text` in a server's captured log after `since` (a `serverLogMark`);
 * skipped, with a note, when the harness captured no log.
 */
export async function waitForServerLog(which, text, ok, since = 0) {
    if (serverLog(which) === undefined) {
        ok(`(no server log captured; not checking for "${text}")`);
        return;
    }
    const deadline = Date.now() + 5_000;
    while (!serverLog(which).slice(since).includes(text)) {
        if (Date.now() > deadline) fail(`the server never logged "${text}"`);
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    ok(`server log: ${text}`);
}

const SHOWN_HEADERS = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'last-event-id'];

function pickHeaders(headers) {
    const out = {};
    for (const name of SHOWN_HEADERS) {
        const value = headers.get(name);
        if (value !== null) out[name] = value;
    }
    return out;
}

/**
 * A `fetch` that records and logs (stderr, unless MCP_PEERS_TRACE=0) every exchange:
 *   exchanges: [{ n, method, headers, body, status, responseHeaders, kind: 'json'|'sse'|'empty',
 *                 messages: [JSON-RPC messages of the response, in order], ended }]
 *   messages:  [{ n, dir: '->'|'<-', message, exchange }] in arrival order
 * `options.refuseGet`: answer a GET with a local 405 instead of sending it (a client that holds
 * no standalone stream, as behind a proxy that does not pass GET); the exchange is recorded with
 * `refused: true`.
 */
export function tracingFetch(label, options = {}) {
    const exchanges = [];
    const messages = [];
    const enabled = process.env.MCP_PEERS_TRACE !== '0';
    const log = (line) => {
        if (!enabled) return;
        if (line.length > 1500) line = `${line.slice(0, 1500)}... (${line.length} chars)`;
        process.stderr.write(`  http ${label} ${line}\n`);
    };
    const record = (exchange, dir, message) => {
        messages.push({ n: messages.length + 1, dir, message, exchange });
        if (dir === '<-') exchange.messages.push(message);
        log(`#${exchange.n} ${dir} ${JSON.stringify(message)}`);
    };

    async function traced(input, init = {}) {
        const method = (init.method ?? 'GET').toUpperCase();
        const headers = new Headers(init.headers);
        let body;
        if (typeof init.body === 'string') {
            try {
                body = JSON.parse(init.body);
            } catch {
                body = init.body;
            }
        }
        const exchange = { n: exchanges.length + 1, method, headers: pickHeaders(headers), body, messages: [], ended: false };
        exchanges.push(exchange);
        log(`#${exchange.n} ${method} ${show(exchange.headers)}`);
        if (body !== undefined) record(exchange, '->', body);
        if (method === 'GET' && options.refuseGet) {
            exchange.refused = true;
            exchange.status = 405;
            exchange.kind = 'empty';
            exchange.ended = true;
            log(`#${exchange.n} <- 405 (refused locally: this client holds no GET stream)`);
            return new Response(null, { status: 405, statusText: 'Method Not Allowed (refused by the test client)' });
        }
        const response = await fetch(input, init);
        exchange.status = response.status;
        exchange.responseHeaders = pickHeaders(response.headers);
        const type = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
        exchange.kind = response.body === null ? 'empty' : type === 'text/event-stream' ? 'sse' : type === 'application/json' ? 'json' : type || 'empty';
        log(`#${exchange.n} <- ${response.status} ${show(exchange.responseHeaders)}`);
        if (response.body === null) {
            exchange.ended = true;
            return response;
        }
        const [mine, theirs] = response.body.tee();
        void consume(mine, exchange);
        const copy = new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
        Object.defineProperty(copy, 'url', { value: response.url });
        return copy;
    }

    async function consume(stream, exchange) {
        const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        const event = (block) => {
            const data = block
                .split('\n')
                .filter((l) => l.startsWith('data:'))
                .map((l) => l.slice(5).replace(/^ /, ''))
                .join('\n');
            if (data === '') return;
            try {
                record(exchange, '<-', JSON.parse(data));
            } catch {
                log(`#${exchange.n} <- (not JSON) ${data}`);
            }
        };
        try {
            for (;;) {
                const { value, done } = await reader.read();
                if (done) break;
                buffer += value;
                if (exchange.kind !== 'sse') continue;
                buffer = buffer.replace(/\r\n?/g, '\n');
                let at;
                while ((at = buffer.indexOf('\n\n')) >= 0) {
                    event(buffer.slice(0, at));
                    buffer = buffer.slice(at + 2);
                }
            }
            if (exchange.kind === 'json' && buffer.trim() !== '') {
                try {
                    record(exchange, '<-', JSON.parse(buffer));
                } catch {
                    log(`#${exchange.n} <- (not JSON) ${buffer}`);
                }
            } else if (exchange.kind !== 'sse' && buffer.trim() !== '') {
                log(`#${exchange.n} <- body ${buffer}`);
            }
            log(`#${exchange.n} (${exchange.kind} body ended)`);
        } catch (error) {
            log(`#${exchange.n} (body aborted: ${error?.name ?? error})`);
        } finally {
            exchange.ended = true;
        }
    }

    return { fetch: traced, exchanges, messages };
}

/** The exchange whose request body is the JSON-RPC request `predicate` picks (the last one). */
export function exchangeOf(trace, predicate) {
    return trace.exchanges.filter((e) => e.body && !Array.isArray(e.body) && e.body.method !== undefined && predicate(e.body)).at(-1);
}

/** A one-line description of an exchange, for messages and the report. */
export function describe(exchange) {
    if (!exchange) return '(none)';
    const what = exchange.method === 'POST' ? `POST ${exchange.body?.method ?? (exchange.body?.id !== undefined ? `response to ${exchange.body.id}` : '?')}` : exchange.method;
    return `#${exchange.n} ${what} -> ${exchange.status} ${exchange.kind}`;
}
