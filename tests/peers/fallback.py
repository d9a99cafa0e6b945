"""The fallback for clients without tasks: the Python SDK (`mcp` 1.30.0) with plain
`session.call_tool` only (NOT its experimental task API) against `fallback_server --task-fallback`
over stdio (2025-11-25, `initialize`).

`report` and `interview` run only as tasks (`task_support = "required"`). The client sends no
`task` param, so the server answers each call at once with an ordinary CallToolResult naming the
task id, and the client follows the task with the companion tools `tasks_status`, `tasks_result`
and `tasks_cancel`. `interview`'s question arrives as an ordinary `elicitation/create` request,
answered by the session's callback.

Usage: python fallback.py <fallback_server>
Prints one line per step on stdout and every JSON-RPC message on stderr (MCP_PEERS_TRACE=0
turns that off), then `PASS <name>` or `FAIL <name>: <why>`; exit status 0 only on PASS.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Any

import anyio
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

NAME = "task fallback (Python mcp 1.30.0, plain call_tool)"
LEGACY_VERSION = "2025-11-25"
RELATED_TASK = "io.modelcontextprotocol/related-task"
COMPANIONS = ["tasks_status", "tasks_result", "tasks_cancel"]


from common import WIRE, check, check_eq, ok, step, traced, verdict  # noqa: E402


def text_of(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def started_task(result: types.CallToolResult, tool: str) -> str:
    """The task id a fallback answer names (in `_meta` and in its text)."""
    check(not result.isError, f"{tool} answered an error: {result!r}")
    task_id = (result.meta or {}).get(RELATED_TASK, {}).get("taskId")
    check(isinstance(task_id, str), f"{tool}'s answer names no task in _meta: {result!r}")
    text = text_of(result)
    check(task_id in text, f"{tool}'s text does not name task {task_id}: {text!r}")
    for companion in COMPANIONS:
        check(companion in text, f"{tool}'s text does not mention {companion}: {text!r}")
    ok(f"{tool} answered at once: {text!r}")
    return task_id


async def wait_result(session: ClientSession, task_id: str) -> types.CallToolResult:
    """`tasks_result` until it is the task's result (not the note that it still runs)."""
    with anyio.fail_after(15):
        while True:
            result = await session.call_tool("tasks_result", {"taskId": task_id})
            if "has no result yet" not in text_of(result):
                return result
            await anyio.sleep(0.1)


async def run(server: str) -> None:
    asked: list[types.ElicitRequestParams] = []

    async def on_elicit(context, params: types.ElicitRequestParams):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    errlog = tempfile.TemporaryFile("w+")
    env = dict(os.environ)
    env["RUST_LOG"] = f"{env['RUST_LOG']},fallback_server=info" if env.get("RUST_LOG") else "info"
    params = StdioServerParameters(command=server, args=["--task-fallback"], env=env)

    def log() -> str:
        errlog.flush()
        errlog.seek(0)
        return errlog.read()

    step(f"connect (initialize, elicitation callback, no task API) to {server} --task-fallback")
    try:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with traced(read, write) as (r, w):
                async with ClientSession(r, w, elicitation_callback=on_elicit) as session:
                    init = await session.initialize()
                    check_eq(init.protocolVersion, LEGACY_VERSION, "negotiated protocolVersion")

                    step("tools/list shows the companion tools")
                    tools = {t.name: t for t in (await session.list_tools()).tools}
                    for companion in COMPANIONS:
                        check(companion in tools, f"{companion} not listed: {sorted(tools)}")
                        check_eq(tools[companion].inputSchema.get("required"), ["taskId"], f"{companion} required arguments")
                    check_eq(tools["report"].outputSchema, None, "report's outputSchema for a client without tasks")

                    step("call_tool('report') answers a task id at once")
                    started = time.monotonic()
                    task_id = started_task(await session.call_tool("report", {"steps": 20, "step_ms": 100}), "report")
                    check(time.monotonic() - started < 1.5, "report did not answer at once")

                    step("tasks_status while it runs")
                    status = await session.call_tool("tasks_status", {"taskId": task_id})
                    check_eq(status.structuredContent["taskId"], task_id, "tasks_status taskId")
                    check_eq(status.structuredContent["status"], "working", "tasks_status status")
                    ok(f"tasks_status text: {text_of(status)!r}")
                    early = await session.call_tool("tasks_result", {"taskId": task_id})
                    check("has no result yet" in text_of(early), f"tasks_result while running: {early!r}")
                    ok(f"tasks_result while running: {text_of(early)!r}")

                    step("tasks_result once done is report's own result")
                    result = await wait_result(session, task_id)
                    check_eq(result.isError, False, "report result isError")
                    check_eq(result.structuredContent, {"steps": 20, "note": "report of 20 steps"}, "report structuredContent")
                    status = await session.call_tool("tasks_status", {"taskId": task_id})
                    check_eq(status.structuredContent["status"], "completed", "tasks_status after the result")

                    step("interview: its question is an ordinary elicitation/create, answered by the callback")
                    interview = started_task(await session.call_tool("interview", {}), "interview")
                    result = await wait_result(session, interview)
                    check_eq(text_of(result), "Nice to meet you, Ada.", "interview result text")
                    check_eq([a.message for a in asked], ["What is your name?"], "questions the callback got")

                    step("tasks_cancel on a long report")
                    long_id = started_task(await session.call_tool("report", {"steps": 1000, "step_ms": 50}), "report")
                    cancelled = await session.call_tool("tasks_cancel", {"taskId": long_id})
                    check_eq(cancelled.structuredContent["status"], "cancelled", "tasks_cancel status")
                    status = await session.call_tool("tasks_status", {"taskId": long_id})
                    check_eq(status.structuredContent["status"], "cancelled", "tasks_status after the cancel")
                    with anyio.fail_after(5):
                        while "report: cancelled" not in log():
                            await anyio.sleep(0.05)
                    ok("server log: report: cancelled")

                    step("nothing task-specific reached this client")
                    notes = [m.get("method") for d, m in WIRE if d == "<-" and "id" not in m and "method" in m]
                    check(
                        not any(n.startswith("notifications/tasks") for n in notes),
                        f"task notifications reached a client without tasks: {notes}",
                    )
                    ok(f"notifications received: {sorted(set(notes))}")
    finally:
        errlog.seek(0)
        sys.stderr.write(errlog.read())
        errlog.close()


def main() -> int:
    if len(sys.argv) != 2:
        print(f"FAIL {NAME}: usage: python fallback.py <fallback_server>", flush=True)
        return 1
    if not os.path.exists(sys.argv[1]):
        print(f"FAIL {NAME}: server binary {sys.argv[1]} does not exist (cargo build -p mcp-tasks-examples)", flush=True)
        return 1
    return verdict(NAME, _with_deadline, sys.argv[1])


async def _with_deadline(server: str) -> None:
    with anyio.fail_after(50):
        await run(server)


if __name__ == "__main__":
    sys.exit(main())
