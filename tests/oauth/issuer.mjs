// The authorization server of the OAuth tests: oauth2-mock-server (pinned in package.json), a
// third-party OAuth 2 / OpenID Connect server that publishes discovery metadata, a JWKS and a token
// endpoint with the client credentials grant, served on a free loopback port.
//
// Configured as a real issuer would be for an MCP server:
// - a token from the client credentials grant has `sub` = the client id and `aud` = the `resource`
//   the client asked for (RFC 8707), as Keycloak, Auth0 and Entra ID do with audience settings;
// - `/introspect` (RFC 7662) answers about the opaque tokens registered with `opaque`.
//
// With ISSUER_TLS_CERT and ISSUER_TLS_KEY (paths of PEM files: a certificate for `localhost`, and
// its key) it serves HTTPS, and its issuer URL is `https://localhost:PORT`; else HTTP, and
// `http://127.0.0.1:PORT`.
//
// Prints `{"issuer": URL}` on its first line, then answers one JSON command per stdin line with one
// JSON line:
//   {"cmd":"token", "claims":{...}, "drop":["exp"], "kid":K, "foreign":true, "expiresIn":S, "typ":T}
//       -> {"token"}: a JWT signed with the current key (or, `foreign`, with a key of the same kid
//          that the issuer never published); `claims` are set over the defaults, `drop` removed;
//          `typ` replaces the header's "JWT" (null: no `typ`)
//   {"cmd":"forge","alg":"none"|"HS256", "claims":{...}} -> {"token"}: what an attacker sends: an
//          unsigned token, or one "signed" with HMAC using the issuer's public key (PEM) as secret
//   {"cmd":"rotate"}        -> {"kid"}: a new key, published beside the old, signs from now on
//   {"cmd":"jwks","mode":"up"|"down"|"hang"}  -> {}: the JWKS answers, answers 503, or never answers
//   {"cmd":"opaque","token":T,"answer":{...}} -> {}: what /introspect says about T
//   {"cmd":"lifetime","seconds":S,"reported":R} -> {}: client credentials tokens expire S seconds
//          after they are issued; the token endpoint says `expires_in` R (default S; null: not said)
//   {"cmd":"stats"}         -> {"jwks": N, "metadata": N, "introspect": N, "token": N} requests served
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { createInterface } from "node:readline";
import { SignJWT, exportSPKI, importJWK } from "jose";
import { OAuth2Issuer, OAuth2Service } from "oauth2-mock-server";

const issuer = new OAuth2Issuer();
const service = new OAuth2Service(issuer);
let currentKid = (await issuer.keys.generate("RS256")).kid;

// A key of the same kid that the issuer never publishes: a forger's key.
const forger = new OAuth2Issuer();
await forger.keys.generate("RS256", { kid: currentKid });

// Set by `lifetime`: how long client credentials tokens live, and the `expires_in` reported.
let lifetime = null;

service.on("beforeTokenSigning", (token, req) => {
  const body = req.body ?? {};
  let client = body.client_id;
  const auth = req.headers.authorization ?? "";
  if (auth.toLowerCase().startsWith("basic ")) {
    client = decodeURIComponent(Buffer.from(auth.slice(6), "base64").toString().split(":")[0]);
  }
  if (body.grant_type === "client_credentials") {
    token.payload.sub = client ?? "anonymous-client";
    token.payload.client_id = client;
    if (body.resource) token.payload.aud = body.resource;
    if (lifetime) token.payload.exp = token.payload.iat + lifetime.seconds;
  }
});

service.on("beforeResponse", (response) => {
  if (!lifetime || response.statusCode !== 200) return;
  if (lifetime.reported === null) delete response.body.expires_in;
  else response.body.expires_in = lifetime.reported ?? lifetime.seconds;
});

const stats = { jwks: 0, metadata: 0, introspect: 0, token: 0 };
let jwksMode = "up";
const opaque = new Map();

const tls = process.env.ISSUER_TLS_CERT && process.env.ISSUER_TLS_KEY
  ? { cert: readFileSync(process.env.ISSUER_TLS_CERT), key: readFileSync(process.env.ISSUER_TLS_KEY) }
  : null;

const handler = (req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (path === "/jwks") {
    stats.jwks += 1;
    if (jwksMode === "hang") return; // never answers
    if (jwksMode === "down") {
      res.writeHead(503, { "content-type": "application/json" });
      return res.end('{"error":"temporarily_unavailable"}');
    }
  }
  if (path.startsWith("/.well-known/")) stats.metadata += 1;
  if (path === "/token") stats.token += 1;
  if (path === "/introspect" && req.method === "POST") {
    stats.introspect += 1;
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const token = new URLSearchParams(body).get("token");
      const answer = opaque.get(token) ?? { active: false };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(answer));
    });
    return;
  }
  service.requestHandler(req, res);
};
const server = tls ? createTlsServer(tls, handler) : createServer(handler);
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
issuer.url = tls
  ? `https://localhost:${server.address().port}`
  : `http://127.0.0.1:${server.address().port}`;
forger.url = issuer.url;
console.log(JSON.stringify({ issuer: issuer.url }));

async function sign(cmd) {
  const signer = cmd.foreign ? forger : issuer;
  if (cmd.foreign && cmd.kid && !forger.keys.toJSON().some((k) => k.kid === cmd.kid)) {
    await forger.keys.generate("RS256", { kid: cmd.kid });
  }
  return signer.buildToken({
    kid: cmd.kid ?? currentKid,
    expiresIn: cmd.expiresIn ?? 600,
    scopesOrTransform: (header, payload) => {
      // `typ`: the header's type (oauth2-mock-server writes "JWT"); null leaves it out.
      if ("typ" in cmd) header.typ = cmd.typ ?? undefined;
      Object.assign(payload, { sub: "alice" }, cmd.claims ?? {});
      for (const claim of cmd.drop ?? []) delete payload[claim];
    },
  });
}

function payload(cmd) {
  const now = Math.floor(Date.now() / 1000);
  return { iss: issuer.url, iat: now, nbf: now - 10, exp: now + 600, sub: "alice", ...(cmd.claims ?? {}) };
}

async function forge(cmd) {
  const b64 = (v) => Buffer.from(JSON.stringify(v)).toString("base64url");
  if (cmd.alg === "none") {
    return `${b64({ alg: "none", typ: "JWT", kid: currentKid })}.${b64(payload(cmd))}.`;
  }
  // The classic key-confusion attack: HMAC keyed with the public key a verifier already holds.
  const jwk = issuer.keys.toJSON().find((k) => k.kid === currentKid);
  const pem = await exportSPKI(await importJWK(jwk, "RS256", { extractable: true }));
  return new SignJWT(payload(cmd))
    .setProtectedHeader({ alg: cmd.alg, typ: "JWT", kid: currentKid })
    .sign(new TextEncoder().encode(pem));
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let reply;
  try {
    const cmd = JSON.parse(line);
    switch (cmd.cmd) {
      case "token":
        reply = { token: await sign(cmd) };
        break;
      case "forge":
        reply = { token: await forge(cmd) };
        break;
      case "rotate":
        currentKid = (await issuer.keys.generate("RS256")).kid;
        reply = { kid: currentKid };
        break;
      case "jwks":
        jwksMode = cmd.mode;
        reply = {};
        break;
      case "opaque":
        opaque.set(cmd.token, cmd.answer);
        reply = {};
        break;
      case "lifetime":
        lifetime = { seconds: cmd.seconds, reported: cmd.reported };
        reply = {};
        break;
      case "stats":
        reply = { ...stats };
        break;
      default:
        reply = { error: `unknown command ${cmd.cmd}` };
    }
  } catch (e) {
    reply = { error: String(e) };
  }
  console.log(JSON.stringify(reply));
}
server.close();
process.exit(0);
