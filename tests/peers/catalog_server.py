"""A 2026-07-28 MCP server over stdio, at the wire level (Python standard library only), for the
client's resource and prompt paths that no third-party server here offers in that era:

- `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list` each list 1,000
  items in pages of 100 (`nextCursor` is the next offset; the first prompt is `greet`);
- `resources/read` of `secret://note` and `prompts/get` of `greet` first answer with an
  `InputRequiredResult` (an elicitation and a `requestState`), and answer with the contents once
  the retry carries the user's answer and the same state;
- `resources/read` of `bin://bytes` gives a blob; any other URI is `-32602` with `data.uri`
  (SEP-2164); an unknown prompt, or `greet` without `name`, is `-32602`;
- `completion/complete` on `greet`'s `name` suggests names starting with the value;
- `subscriptions/listen` with `notifications.resourceSubscriptions` is acknowledged and held open
  until `notifications/cancelled` names it (a `refuse://` URI is left out of the acknowledgement,
  a listen for a `silent://` one is never acknowledged); the tool `touch` (argument `uri`) sends
  `notifications/resources/updated` on every listen that watches `uri`, and says how many.

With `--bare` it declares no capabilities and knows only `server/discover` and `tools/list`
(every other method is `-32601`), as a server that offers tools only.

Used by tests/catalog.rs.
"""

import base64
import json
import sys

PAGE = 100
TOTAL = 1000
STATE = "state-1"


def items(kind, i):
    if kind == "tools":
        return {"name": f"tool-{i:04}", "inputSchema": {"type": "object"}}
    if kind == "resources":
        return {"uri": f"item://{i:04}", "name": f"item {i}", "mimeType": "text/plain"}
    if kind == "resourceTemplates":
        return {"uriTemplate": f"family{i:04}://{{id}}", "name": f"family {i}"}
    if i == 0:
        return {"name": "greet", "description": "A greeting", "arguments": [{"name": "name", "required": True}]}
    return {"name": f"prompt-{i:04}", "arguments": [{"name": "x", "required": i % 2 == 0}]}


LISTS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}


def ask(message):
    return {
        "resultType": "input_required",
        "inputRequests": {
            "who": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": message,
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                    },
                },
            }
        },
        "requestState": STATE,
    }


def answered(params):
    """The name the user gave on this retry, or None when it is the first round."""
    responses = params.get("inputResponses")
    if not responses:
        return None
    if params.get("requestState") != STATE:
        raise ValueError("the retry lost the requestState")
    answer = responses["who"]
    if answer.get("action") != "accept":
        return ""
    return answer["content"]["name"]


class Invalid(Exception):
    def __init__(self, message, data=None):
        super().__init__(message)
        self.data = data


# listen request id -> the URIs it watches
LISTENS = {}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


BARE = "--bare" in sys.argv[1:]


def handle(method, params, request_id=None):
    if BARE and method not in ("server/discover", "tools/list"):
        return None
    if method == "subscriptions/listen":
        uris = params.get("notifications", {}).get("resourceSubscriptions", [])
        if any(u.startswith("silent://") for u in uris):
            return "open"
        # `refuse://` URIs are left out of the acknowledgement.
        uris = [u for u in uris if not u.startswith("refuse://")]
        LISTENS[json.dumps(request_id)] = (request_id, uris)
        send({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": request_id},
                "notifications": {"resourceSubscriptions": uris},
            },
        })
        return "open"
    if method == "tools/call" and params.get("name") == "touch":
        uri = params["arguments"]["uri"]
        told = 0
        for listen_id, uris in LISTENS.values():
            if uri in uris:
                told += 1
                send({
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen_id}, "uri": uri},
                })
        return {"content": [{"type": "text", "text": f"notified {told}"}]}
    if method == "server/discover":
        return {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {} if BARE else {"tools": {}, "resources": {}, "prompts": {}, "completions": {}},
            "serverInfo": {"name": "catalog", "version": "1.0.0"},
        }
    if method in LISTS:
        kind = LISTS[method]
        start = int(params.get("cursor") or 0)
        end = min(start + PAGE, TOTAL)
        page = {kind: [items(kind, i) for i in range(start, end)]}
        if end < TOTAL:
            page["nextCursor"] = str(end)
        return page
    if method == "resources/read":
        uri = params.get("uri")
        if uri == "secret://note":
            name = answered(params)
            if name is None:
                return ask("Who is reading the note?")
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"for {name} only"}]}
        if uri == "bin://bytes":
            blob = base64.b64encode(bytes([0, 159, 146, 150, 255])).decode()
            return {"contents": [{"uri": uri, "mimeType": "application/octet-stream", "blob": blob}]}
        raise Invalid(f"Resource not found: {uri}", {"uri": uri})
    if method == "prompts/get":
        if params.get("name") != "greet":
            raise Invalid(f"Unknown prompt: {params.get('name')}")
        args = params.get("arguments") or {}
        if "name" not in args:
            raise Invalid("Missing required argument: name")
        mood = answered(params)
        if mood is None:
            return ask("How should the greeting sound?")
        return {
            "description": "A greeting",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": f"Greet {args['name']} ({mood})."}},
                {"role": "assistant", "content": {"type": "resource_link", "uri": "item://0001", "name": "item 1"}},
            ],
        }
    if method == "completion/complete":
        value = params["argument"]["value"]
        names = [n for n in ["Ada", "Alan", "Barbara"] if n.startswith(value)]
        return {"completion": {"values": names, "total": len(names), "hasMore": False}}
    if method == "ping":
        return {}
    return None


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        if message.get("method") == "notifications/cancelled":
            LISTENS.pop(json.dumps(message["params"]["requestId"]), None)
            continue
        if "id" not in message or "method" not in message:
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            result = handle(message["method"], message.get("params") or {}, message["id"])
            if result == "open":
                continue
            if result is None:
                reply["error"] = {"code": -32601, "message": f"Method not found: {message['method']}"}
            else:
                result.setdefault("resultType", "complete")
                reply["result"] = result
        except Invalid as e:
            reply["error"] = {"code": -32602, "message": str(e)}
            if e.data is not None:
                reply["error"]["data"] = e.data
        send(reply)


if __name__ == "__main__":
    main()
