"""Tasks in the legacy era (2025-11-25 experimental tasks): the Python SDK (`mcp` 1.30.0,
`session.experimental`) against the conformance fixture server, and the example server's
`research`, over stdio.

How mcp 1.30.0 does tasks (read from mcp/client/experimental/tasks.py, mcp/client/session.py):
  - `call_tool_as_task(name, args, ttl=60000)` sends `tools/call` with `task: {ttl}` and parses
    the nested `CreateTaskResult` (`result.task`).
  - `poll_task(id)` yields `tasks/get` results every `pollInterval` until a terminal status. It
    does NOT call `tasks/result` on `input_required`; an elicitation inside the task is an
    ordinary server->client `elicitation/create` (tagged with `related-task`) that the session
    hands to `elicitation_callback` whenever it arrives (likewise `sampling_callback`).
  - `get_task_result(id, CallToolResult)` sends the blocking `tasks/result`.
  - `list_tasks()`, `cancel_task(id)` are plain requests.

Usage: python legacy_tasks.py <example_server> <conformance_server>
Prints one line per step on stdout and every JSON-RPC message on stderr (MCP_PEERS_TRACE=0
turns that off), then `PASS <name>` or `FAIL <name>: <why>`; exit status 0 only on PASS.
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import asynccontextmanager
from typing import Any

import warnings

import anyio
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import McpError

# mcp 1.30.0 marks the whole experimental tasks API deprecated (tasks left the core spec in
# 2026-07-28); the legacy era still has them, and that era is what this script tests.
warnings.filterwarnings("ignore", message="The experimental tasks API is deprecated", category=DeprecationWarning)

NAME = "legacy tasks (Python mcp 1.30.0 session.experimental)"
LEGACY_VERSION = "2025-11-25"
RELATED_TASK = "io.modelcontextprotocol/related-task"
TIMEOUT_S = 15


from common import WIRE, check, check_eq, fail, ok, step, traced, verdict  # noqa: E402


def server_env() -> dict[str, str]:
    """All of our environment, with the example crate's info lines on whatever RUST_LOG says."""
    env = dict(os.environ)
    env["RUST_LOG"] = f"{env['RUST_LOG']},mcp_tasks_examples=info" if env.get("RUST_LOG") else "info"
    return env


@asynccontextmanager
async def connect(bin_path: str, **callbacks):
    """An initialized ClientSession on `bin_path`, plus a function returning its log so far."""
    errlog = tempfile.TemporaryFile("w+")
    params = StdioServerParameters(command=bin_path, env=server_env())
    try:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with traced(read, write) as (r, w):
                async with ClientSession(r, w, read_timeout_seconds=None, **callbacks) as session:
                    init = await session.initialize()

                    def log() -> str:
                        errlog.flush()
                        errlog.seek(0)
                        return errlog.read()

                    yield session, init, log
    finally:
        errlog.seek(0)
        sys.stderr.write(errlog.read())
        errlog.close()


async def wait_for_log(log, text: str) -> None:
    with anyio.fail_after(5):
        while text not in log():
            await anyio.sleep(0.05)
    ok(f"server log: {text}")


def server_requests(method: str, task_id: str) -> list[dict[str, Any]]:
    """Server-to-client requests of `method` tagged with the task `task_id`."""
    return [
        m
        for d, m in WIRE
        if d == "<-" and m.get("method") == method and "id" in m and m["params"]["_meta"][RELATED_TASK]["taskId"] == task_id
    ]


def answer_to(request: dict[str, Any]) -> dict[str, Any] | None:
    return next((m for d, m in WIRE if d == "->" and m.get("id") == request["id"] and "method" not in m), None)


async def run(example_bin: str, conformance_bin: str) -> None:
    elicitations: list[types.ElicitRequestParams] = []
    samplings: list[types.CreateMessageRequestParams] = []

    async def on_elicit(context, params: types.ElicitRequestParams):
        elicitations.append(params)
        properties = (params.requestedSchema or {}).get("properties", {})
        if "confirm" in properties:
            return types.ElicitResult(action="accept", content={"confirm": True})
        if "sources" in properties:
            return types.ElicitResult(action="accept", content={"sources": 2})
        return types.ElicitResult(action="decline")

    async def on_sample(context, params: types.CreateMessageRequestParams):
        samplings.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="The moon pulls the sea."),
            model="peer-test-model",
            stopReason="endTurn",
        )

    step(f"connect (initialize, elicitation callback) to {conformance_bin}")
    async with connect(conformance_bin, elicitation_callback=on_elicit) as (session, init, log):
        check_eq(init.protocolVersion, LEGACY_VERSION, "negotiated protocolVersion")
        tasks_cap = init.capabilities.tasks
        check(tasks_cap is not None, f"server capabilities lack tasks: {init.capabilities!r}")
        check_eq(
            tasks_cap.model_dump(exclude_none=True),
            {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
            "server capabilities.tasks",
        )
        init_request = next(m for d, m in WIRE if d == "->" and m.get("method") == "initialize")
        check("elicitation" in init_request["params"]["capabilities"], "the client did not declare elicitation")

        step('call_tool_as_task confirm_delete {filename: "b.txt"}, poll_task, get_task_result')
        created = await session.experimental.call_tool_as_task("confirm_delete", {"filename": "b.txt"}, ttl=30_000)
        task_id = created.task.taskId
        check_eq(created.task.status, "working", "CreateTaskResult task.status")
        check_eq(created.task.ttl, 30_000, "CreateTaskResult task.ttl (the requested ttl)")
        check_eq(created.task.pollInterval, 200, "CreateTaskResult task.pollInterval")
        call = next(m for d, m in WIRE if d == "->" and m.get("method") == "tools/call")
        check_eq(call["params"].get("task"), {"ttl": 30_000}, "tools/call params.task")

        statuses = []
        with anyio.fail_after(TIMEOUT_S):
            async for status in session.experimental.poll_task(task_id):
                statuses.append(status.status)
        ok(f"poll_task statuses: {' -> '.join(statuses)}")
        check_eq(statuses[-1], "completed", "last polled status")
        check_eq(len(elicitations), 1, "elicitations the callback answered")
        check_eq(elicitations[0].message, "Delete b.txt?", "elicitation message")
        check_eq(
            elicitations[0].requestedSchema["properties"]["confirm"]["type"],
            "boolean",
            "elicitation requestedSchema.properties.confirm.type",
        )
        untagged = [m for d, m in WIRE if d == "<-" and m.get("method") == "elicitation/create" and RELATED_TASK not in m["params"].get("_meta", {})]
        check_eq(untagged, [], "elicitation/create requests without related-task")
        [request] = server_requests("elicitation/create", task_id)
        ok(f"elicitation/create carries _meta related-task.taskId = {task_id}")
        check_eq((answer_to(request) or {}).get("result"), {"action": "accept", "content": {"confirm": True}}, "the client's answer on the wire")

        with anyio.fail_after(TIMEOUT_S):
            result = await session.experimental.get_task_result(task_id, types.CallToolResult)
        check_eq([c.text for c in result.content if c.type == "text"], ["Deleted b.txt"], "get_task_result text")
        check_eq(result.isError, False, "get_task_result isError")
        check_eq((result.meta or {}).get(RELATED_TASK, {}).get("taskId"), task_id, "tasks/result _meta related-task.taskId")

        step("call_tool_as_task slow_compute {seconds: 60}, then cancel_task")
        slow = await session.experimental.call_tool_as_task("slow_compute", {"seconds": 60})
        slow_id = slow.task.taskId
        check_eq(slow.task.ttl, 60_000, "CreateTaskResult task.ttl (the SDK's default ttl)")
        # Cancel once the tool runs (its status says so), so that it can see the cancel.
        with anyio.fail_after(5):
            while (before := await session.experimental.get_task(slow_id)).statusMessage != "computing for 60s":
                await anyio.sleep(0.05)
        check_eq(before.status, "working", "get_task before the cancel")
        cancelled = await session.experimental.cancel_task(slow_id)
        check_eq((cancelled.taskId, cancelled.status), (slow_id, "cancelled"), "cancel_task result (taskId, status)")
        await wait_for_log(log, "slow_compute: saw cancellation")
        statuses = [s.status async for s in session.experimental.poll_task(slow_id)]
        check_eq(statuses, ["cancelled"], "poll_task after the cancel")

        step("list_tasks")
        listed = await session.experimental.list_tasks()
        check_eq([(t.taskId, t.status) for t in listed.tasks], [(task_id, "completed"), (slow_id, "cancelled")], "list_tasks (taskId, status), oldest first")
        check_eq(listed.nextCursor, None, "list_tasks nextCursor")

        step("cancel_task on ended tasks: -32602 in 2025-11-25")
        for tid, status in ((task_id, "completed"), (slow_id, "cancelled")):
            try:
                value = await session.experimental.cancel_task(tid)
            except McpError as e:
                check_eq(e.error.code, -32602, f"cancel_task on a {status} task: error code")
                check(status in e.error.message, f"the error does not name {status}: {e.error.message}")
            else:
                fail(f"cancel_task on a {status} task succeeded: {value!r}")

    step(f"research {{topic: \"tides\"}} on {example_bin}: elicitation and sampling inside one task")
    elicitations.clear()
    async with connect(example_bin, elicitation_callback=on_elicit, sampling_callback=on_sample) as (session, init, log):
        created = await session.experimental.call_tool_as_task("research", {"topic": "tides"})
        task_id = created.task.taskId
        statuses = []
        with anyio.fail_after(TIMEOUT_S):
            async for status in session.experimental.poll_task(task_id):
                statuses.append(status.status if not status.statusMessage else f"{status.status} ({status.statusMessage})")
        ok(f"poll_task statuses: {' -> '.join(dict.fromkeys(statuses))}")
        check(statuses[-1].startswith("completed"), f"research did not complete: {statuses!r}")
        check_eq([e.requestedSchema["properties"]["sources"]["type"] for e in elicitations], ["integer"], "research elicitation schema (sources)")
        check_eq([s.maxTokens for s in samplings], [200], "research sampling maxTokens")
        for method in ("elicitation/create", "sampling/createMessage"):
            requests = server_requests(method, task_id)
            check_eq(len(requests), 1, f"{method} requests tagged with related-task {task_id}")
        result = await session.experimental.get_task_result(task_id, types.CallToolResult)
        check_eq(
            result.structuredContent,
            {"topic": "tides", "sources": 2, "summary": "The moon pulls the sea."},
            "research structuredContent",
        )


def main() -> int:
    if len(sys.argv) != 3:
        print(f"FAIL {NAME}: usage: python legacy_tasks.py <example_server> <conformance_server>", flush=True)
        return 1
    for path in sys.argv[1:]:
        if not os.path.exists(path):
            print(f"FAIL {NAME}: server binary {path} does not exist (cargo build -p mcp-tasks-examples)", flush=True)
            return 1
    return verdict(NAME, _with_deadline, *sys.argv[1:])


async def _with_deadline(example_bin: str, conformance_bin: str) -> None:
    with anyio.fail_after(50):
        await run(example_bin, conformance_bin)


if __name__ == "__main__":
    sys.exit(main())
