"""A stdio MCP server on Python `mcp` 1.30.0 (tests/peers/requirements.txt) with its experimental
(2025-11-25, "legacy") tasks, for the interop tests of the `mcp-tasks` command (tests/interop.rs).

Tools (all `execution.taskSupport: required`, run with `ctx.experimental.run_task`):
  plan_trip {city}   status "looking up <city>" (held for 1 s), asks (elicitation, through the task's message
                     queue: delivered while the client waits on tasks/result) for `nights` (integer,
                     1..30) and `hotel` (boolean), then asks the client's model for a tip (sampling),
                     and answers "<nights> nights in <city>, hotel: <yes|no>; tip: <model text>".
  slow {seconds}     status "sleeping", sleeps; ends early when cancelled.

Run with the venv's python: target/peers/py/bin/python tests/peers/tasks_server.py [--http]
(`--http`: Streamable HTTP on a free loopback port, announced as `listening on <URL>` on stdout.)
"""

import anyio

import mcp.types as types
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server = Server("python-mcp-1.30-tasks-fixture")
server.experimental.enable_tasks()

TOOLS = [
    types.Tool(
        name="plan_trip",
        description="Plan a trip: asks how many nights and whether to book a hotel, then asks the model for a tip.",
        inputSchema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        execution=types.ToolExecution(taskSupport="required"),
    ),
    types.Tool(
        name="slow",
        description="Sleep for `seconds` (a task to cancel).",
        inputSchema={
            "type": "object",
            "properties": {"seconds": {"type": "number"}},
            "required": ["seconds"],
        },
        execution=types.ToolExecution(taskSupport="required"),
    ),
]


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return TOOLS


def text_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> types.CallToolResult | types.CreateTaskResult:
    ctx = server.request_context
    ctx.experimental.validate_task_mode("required")

    if name == "plan_trip":
        city = arguments["city"]

        async def work(task: ServerTaskContext) -> types.CallToolResult:
            await task.update_status(f"looking up {city}")
            # Hold the status for two of the client's polls (500 ms apart): asking at once would
            # leave whether any poll sees it to timing (the test checks that the client shows it).
            await anyio.sleep(1.0)
            answer = await task.elicit(
                message=f"How long will you stay in {city}?",
                requestedSchema={
                    "type": "object",
                    "properties": {
                        "nights": {"type": "integer", "minimum": 1, "maximum": 30, "description": "Nights"},
                        "hotel": {"type": "boolean", "description": "Book a hotel?", "default": False},
                    },
                    "required": ["nights"],
                },
            )
            if answer.action != "accept" or not answer.content:
                return text_result(f"trip to {city} called off ({answer.action})")
            nights = answer.content.get("nights")
            hotel = "yes" if answer.content.get("hotel") else "no"
            await task.update_status(f"{nights} nights booked, asking for a tip")
            tip = await task.create_message(
                messages=[
                    types.SamplingMessage(
                        role="user",
                        content=types.TextContent(type="text", text=f"One tip for a visit to {city}?"),
                    )
                ],
                max_tokens=50,
            )
            tip_text = tip.content.text if isinstance(tip.content, types.TextContent) else "?"
            return text_result(f"{nights} nights in {city}, hotel: {hotel}; tip: {tip_text}")

        return await ctx.experimental.run_task(work)

    if name == "slow":
        seconds = float(arguments["seconds"])

        async def slow(task: ServerTaskContext) -> types.CallToolResult:
            await task.update_status("sleeping")
            waited = 0.0
            while waited < seconds and not task.is_cancelled:
                await anyio.sleep(0.1)
                waited += 0.1
            return text_result(f"slept {waited:.1f}s")

        return await ctx.experimental.run_task(slow)

    raise ValueError(f"unknown tool {name}")


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def main_http() -> None:
    """Streamable HTTP (the SDK's stateful session manager, one task store for every session) on a
    free loopback port; prints `listening on <URL>` on stdout once it accepts connections."""
    import contextlib
    import socket
    import sys

    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Route

    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    manager = StreamableHTTPSessionManager(app=server)

    class Endpoint:
        async def __call__(self, scope, receive, send):
            await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with manager.run():
            yield

    app = Starlette(routes=[Route("/mcp", endpoint=Endpoint(), methods=["GET", "POST", "DELETE"])], lifespan=lifespan)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning")
    web = uvicorn.Server(config)

    async def announce() -> None:
        while not web.started:
            await anyio.sleep(0.05)
        print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await web.serve(sockets=[sock])


if __name__ == "__main__":
    import sys

    anyio.run(main_http if "--http" in sys.argv[1:] else main)
