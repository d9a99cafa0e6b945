"""fastmcp 4.1.4 + fastmcp-tasks 4.1.4 (the Python client of the tasks extension, SEP-2663)
against a 2026-07-28 server with `research` (a task only: elicits, then samples), `countdown`
(a task when the client can take one) and the plain tools `echo` and `add`: `rmcp_bridge_server`
(an rmcp server with mcp-tasks' tools). Over stdio (argument: the server binary) or Streamable
HTTP (argument: the endpoint URL). Run with the fastmcp venv's python (`install.sh fastmcp`).

What fastmcp-tasks 4.1.4 does with a task (read from fastmcp_tasks/client.py):
  - `Client.call_tool` on a tool the server runs as a task polls `tasks/get` to the end and
    answers an `input_required` task's elicitations through the client's `elicitation_handler`
    (`tasks/update`); any other input request (sampling, roots) ends the call with a `ToolError`
    ("only elicitation is supported on the modern protocol"). So `research`'s second question,
    a sampling request, cannot be answered by the library's own driver, against any server.
  - `call_tool_task` returns a `ToolTask` handle at once (`status`, `wait`, `result`, `cancel`).
The script checks that limit as the library states it, then runs `research` to completion with
the handle, answering both questions with the library's own `tasks/update` request model.

Three workarounds, each for a behaviour of fastmcp-tasks 4.1.4 (none hides a fault of the server
under test; each is checked against the library's source, named below):
  1. Sampling inside a task: `_answer_input_requests` (client.py) raises `ToolError` for any
     input request whose method is not `elicitation/create`, so `ToolTask.result()` and
     `Client.call_tool` cannot finish `research`. The script answers with `tasks/update` itself.
  2. No public `tasks/update`: `ToolTask` has no method that sends one (`_send_update` is
     private, and `wait(state="input_required")` only observes the question), so the script
     sends the library's own `UpdateTaskRequest` (client_models.py) through `client.session`.
  3. `Mcp-Name` over HTTP: `GetTaskRequest`, `UpdateTaskRequest` and `CancelTaskRequest`
     (client_models.py) declare no `name_param`, and mcp 2.x's `NAME_BEARING_METHODS`
     (mcp/shared/inbound.py) lists only `tools/call`, `prompts/get` and `resources/read`, so
     `tasks/*` go without the `Mcp-Name: <taskId>` header, which SEP-2663 requires of a client
     over Streamable HTTP. rmcp 3.11's HTTP server enforces it (HTTP 400, `-32020`, before any
     handler: `add_mcp_name` below); mcp-tasks' own HTTP transport checks the header only when
     sent, so only the bridge, on rmcp's transport, sees the difference. Over HTTP the script
     also shows what the library gets without the workaround: rmcp's `-32020` (documented in
     docs/src/rmcp.md, the client's fault by SEP-2663).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx2
import mcp_types
from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from fastmcp.exceptions import ToolError
from fastmcp_tasks.client import call_tool_task
from fastmcp_tasks.client_models import UpdateTaskRequest, UpdateTaskRequestParams
from mcp.shared.exceptions import MCPError

from common import check, check_eq, fail, ok, step, verdict

SUMMARY = "Tides follow the moon."


async def on_elicit(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
    return {"sources": 3}


async def on_sample(messages: Any, params: Any, context: Any) -> str:
    # Declares `sampling`; the library never calls it for a question inside a task.
    return SUMMARY


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one stored input request, by its method."""
    method = request.get("method")
    if method == "elicitation/create":
        return {"action": "accept", "content": {"sources": 3}}
    if method == "sampling/createMessage":
        return {"role": "assistant", "content": {"type": "text", "text": SUMMARY}, "model": "peer-test-model"}
    fail(f"unexpected input request {request!r}")
    return {}


async def until_settled(task) -> Any:
    """Polls the handle's `tasks/get` until the task is no longer `working` (10 s at most).
    Not a workaround: `ToolTask.wait` waits for one given state (or a terminal one), and here
    either `input_required` or a terminal state may come next."""
    with anyio.fail_after(10):
        while True:
            status = await task.status()
            if status.status != "working":
                return status
            await anyio.sleep(0.05)


# Whether `add_mcp_name` adds the header (off for the step that shows rmcp's refusal).
ADD_MCP_NAME = {"on": True}


async def add_mcp_name(request) -> None:
    """Workaround 3 (module docstring): fastmcp-tasks 4.1.4 sends `tasks/get|update|cancel`
    without `Mcp-Name: <taskId>`, which SEP-2663 requires of a client over Streamable HTTP
    (rmcp 3.11 answers `-32020`): added here, from the request's own body, so that the rest of
    the library can be checked over HTTP."""
    if not ADD_MCP_NAME["on"]:
        return
    body = json.loads(request.content or b"{}")
    task_id = (body.get("params") or {}).get("taskId") if isinstance(body, dict) else None
    if str(body.get("method", "")).startswith("tasks/") and task_id and "mcp-name" not in request.headers:
        request.headers["mcp-name"] = task_id


def http_client(**kwargs: Any) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(event_hooks={"request": [add_mcp_name]}, **kwargs)


async def body(target: str) -> None:
    if target.startswith("http"):
        transport = StreamableHttpTransport(target, httpx_client_factory=http_client)
    else:
        transport = StdioTransport(command=target, args=[])
    async with Client(transport, elicitation_handler=on_elicit, sampling_handler=on_sample) as client:
        step(f"tools of {target}")
        names = sorted(t.name for t in await client.list_tools())
        check_eq(names, ["add", "countdown", "echo", "research"], "tools/list names")

        step("echo and add (the server's own rmcp tools) inline")
        check_eq((await client.call_tool("echo", {"text": "hi"})).content[0].text, "hi", "echo text")
        check_eq((await client.call_tool("add", {"a": 2, "b": 3})).content[0].text, "5", "add text")

        step("research with the library's own driver: the elicitation through elicitation_handler, then its sampling limit")
        try:
            await client.call_tool("research", {"topic": "tides"})
            fail("fastmcp-tasks 4.1.4 answered a sampling request, which it says it cannot")
        except ToolError as e:
            check("sampling/createMessage" in str(e), f"the library's ToolError names the sampling request: {e}")
            ok(f"after answering the elicitation: {e}")

        # Workarounds 1 and 2 (module docstring): the handle cannot answer the sampling request,
        # and has no tasks/update of its own.
        step("research to completion with a ToolTask handle, both questions answered with tasks/update")
        task = await call_tool_task(client, "research", {"topic": "tides"})
        ok(f"task {task.task_id}")
        asked = []
        while True:
            status = await until_settled(task)
            if status.status != "input_required":
                break
            requests = status.input_requests or {}
            asked.extend(r.get("method") for r in requests.values())
            responses = {key: answer(request) for key, request in requests.items()}
            update = UpdateTaskRequest(params=UpdateTaskRequestParams(task_id=task.task_id, input_responses=responses))
            await client.session.send_request(update, mcp_types.Result)
        check_eq(status.status, "completed", "research status")
        check_eq(asked, ["elicitation/create", "sampling/createMessage"], "the questions, in order")
        result = await task.result()
        check_eq(result.structured_content, {"topic": "tides", "sources": 3, "summary": SUMMARY}, "research structuredContent")

        step("countdown {seconds: 1} as a task, to completion")
        countdown = await call_tool_task(client, "countdown", {"seconds": 1})
        with anyio.fail_after(10):
            result = await countdown.result()
        check_eq(result.content[0].text, "liftoff", "countdown result")

        if target.startswith("http"):
            # What the library does without workaround 3: rmcp's transport refuses `tasks/get`
            # before the bridge sees it (docs/src/rmcp.md, "Over HTTP: who owns a task").
            step("tasks/get without Mcp-Name over HTTP: rmcp's -32020, HTTP 400")
            countdown = await call_tool_task(client, "countdown", {"seconds": 30})
            ADD_MCP_NAME["on"] = False
            try:
                await countdown.status()
                fail("tasks/get without Mcp-Name was answered")
            except MCPError as e:
                check_eq(e.code, -32020, "the refusal's code")
                check_eq(e.message, "missing required Mcp-Name header for `tasks/get`", "the refusal's message")
            finally:
                ADD_MCP_NAME["on"] = True
            await countdown.cancel()

        step("countdown {seconds: 30} as a task, cancelled")
        countdown = await call_tool_task(client, "countdown", {"seconds": 30})
        await countdown.cancel()
        check_eq((await until_settled(countdown)).status, "cancelled", "countdown status after tasks/cancel")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python tasks_fastmcp.py <server binary | http://HOST:PORT/mcp>", file=sys.stderr)
        sys.exit(2)
    sys.exit(verdict("fastmcp-tasks 4.1.4 against an rmcp server with mcp-tasks tools", body, sys.argv[1]))
