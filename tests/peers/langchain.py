"""LangChain's MCP adapters (langchain-mcp-adapters 0.3.2) as an agent uses them by default:
`MultiServerMCPClient(...).get_tools()`, whose tools open a session of their own for every call,
against the example server. `research` runs only as a task; the fallback answers its call with a
task id, and `tasks_result`, called in later sessions, follows the task to its report.

Usage:
  python langchain.py http URL TOKEN       Streamable HTTP with a bearer token: the task belongs
                                           to the token's principal, which every session shares
  python langchain.py http-anonymous URL   the same without a token: the task belongs to the
                                           session that started it, and the answer says so
  python langchain.py stdio SERVER SQLITE  stdio (a server process per call) on one SQLite file
Prints one line per step, then `PASS <name>` or `FAIL <name>: <why>`; exit status 0 only on PASS.
"""

from __future__ import annotations

import re
import sys
import time
from typing import Any

import anyio
from langchain_mcp_adapters.client import MultiServerMCPClient

from common import check, ok, step, verdict

NAME = "LangChain langchain-mcp-adapters 0.3.2, default get_tools()"


def text_of(answer: Any) -> str:
    """A tool's answer as text: LangChain gives a string or a list of content blocks."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, (list, tuple)):
        return " ".join(text_of(part) for part in answer)
    if isinstance(answer, dict):
        return str(answer.get("text", ""))
    return str(getattr(answer, "text", answer))


async def call(tools: dict[str, Any], name: str, args: dict[str, Any]) -> tuple[str, bool]:
    """Calls tool `name`; returns its text and whether it raised (a tool error that LangChain
    raises as an exception carrying the text)."""
    try:
        return text_of(await tools[name].ainvoke(args)), False
    except Exception as e:  # noqa: BLE001 - a tool error, as LangChain reports it
        return str(e), True


async def run(mode: str, args: list[str]) -> None:
    if mode == "stdio":
        server, sqlite = args
        connection = {
            "transport": "stdio",
            "command": server,
            "args": ["--store", f"sqlite:{sqlite}"],
        }
    else:
        url = args[0]
        connection = {"transport": "streamable_http", "url": url}
        if mode == "http":
            connection["headers"] = {"Authorization": f"Bearer {args[1]}"}
    client = MultiServerMCPClient({"example": connection})

    step(f"[{mode}] get_tools(): research and the companion tools are listed")
    tools = {tool.name: tool for tool in await client.get_tools()}
    for name in ["research", "tasks_status", "tasks_result", "tasks_cancel"]:
        check(name in tools, f"{name} is not among {sorted(tools)}")
    ok(f"tools: {sorted(tools)}")

    step(f"[{mode}] research: a task id at once")
    started, failed = await call(tools, "research", {"topic": "tides"})
    check(not failed, f"research answered an error: {started}")
    found = re.search(r"as task ([A-Za-z0-9_-]+)", started)
    check(found is not None, f"research's answer names no task: {started}")
    task_id = found.group(1)
    ok(f"task {task_id}")

    step(f"[{mode}] tasks_result, each call in a session of its own, until the report")
    deadline = time.monotonic() + 20
    while True:
        said, failed = await call(tools, "tasks_result", {"taskId": task_id})
        if mode == "http-anonymous":
            # A tool error (LangChain 0.3.2 hands its text to the model as a result).
            check("There is no task" in said, f"another session read an anonymous session's task: {said}")
            check("client.session(" in said, f"the answer does not explain sessions: {said}")
            ok(f"explained: {said}")
            return
        check(not failed, f"tasks_result answered an error: {said}")
        if "has no result yet" not in said:
            break
        check(time.monotonic() < deadline, f"task {task_id} never ended: {said}")
        await anyio.sleep(0.1)
    check("tides" in said and "no summary" in said, f"not research's report: {said}")
    ok(f"report: {said}")


def main() -> None:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(verdict(f"{NAME} ({sys.argv[1]})", run, sys.argv[1], sys.argv[2:]))


if __name__ == "__main__":
    main()
