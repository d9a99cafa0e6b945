"""What the Python peer scripts share: step output, checks, and the wire trace (every JSON-RPC
message both ways, recorded in `WIRE` and printed on stderr unless MCP_PEERS_TRACE=0)."""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from contextlib import asynccontextmanager
from typing import Any

import anyio


class CheckFailed(Exception):
    pass


_step = 0


def step(message: str) -> None:
    global _step
    _step += 1
    print(f"[{_step}] {message}", flush=True)


def ok(message: str) -> None:
    print(f"    ok: {message}", flush=True)


def fail(message: str) -> None:
    raise CheckFailed(message)


def check(condition: bool, message: str) -> None:
    if not condition:
        fail(message)


def check_eq(actual: Any, expected: Any, what: str) -> None:
    if actual != expected:
        fail(f"{what}: expected {expected!r}, got {actual!r}")
    ok(f"{what} = {actual!r}")


# The wire: every JSON-RPC message both ways, as the node scripts record it.
WIRE: list[tuple[str, dict[str, Any]]] = []
TRACE = os.environ.get("MCP_PEERS_TRACE") != "0"


def record(direction: str, message: Any) -> None:
    if isinstance(message, Exception):
        print(f"  wire py {direction} (exception) {message!r}", file=sys.stderr, flush=True)
        return
    data = message.message.model_dump(by_alias=True, mode="json", exclude_none=True)
    WIRE.append((direction, data))
    if TRACE:
        text = json.dumps(data)
        if len(text) > 1500:
            text = f"{text[:1500]}... ({len(text)} chars)"
        print(f"  wire py {direction} {text}", file=sys.stderr, flush=True)


@asynccontextmanager
async def traced(read_stream, write_stream):
    """Streams between the session and the stdio transport that log what passes."""
    to_session_send, to_session_recv = anyio.create_memory_object_stream(100)
    from_session_send, from_session_recv = anyio.create_memory_object_stream(100)

    async def inbound():
        async with to_session_send:
            async for message in read_stream:
                record("<-", message)
                await to_session_send.send(message)

    async def outbound():
        async for message in from_session_recv:
            record("->", message)
            await write_stream.send(message)

    async with anyio.create_task_group() as tg:
        tg.start_soon(inbound)
        tg.start_soon(outbound)
        yield to_session_recv, from_session_send
        tg.cancel_scope.cancel()


def verdict(name: str, body, *args) -> int:
    """Runs `anyio.run(body, *args)` and prints the script's verdict, `PASS <name> (N s)` or
    `FAIL <name>: <why>`; returns the exit status (0 only on PASS)."""
    started = time.monotonic()
    try:
        anyio.run(body, *args)
    except CheckFailed as e:
        print(f"FAIL {name}: {e}", flush=True)
        return 1
    except BaseException as e:  # noqa: BLE001 - anything the client raised is a verdict too
        inner = e
        # anyio wraps task-group failures in ExceptionGroups; show the first leaf.
        while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
            inner = inner.exceptions[0]
        if isinstance(inner, CheckFailed):
            print(f"FAIL {name}: {inner}", flush=True)
        else:
            message = " ".join(str(inner).split())
            print(f"FAIL {name}: {type(inner).__name__} from the client: {message}", flush=True)
            traceback.print_exception(inner, file=sys.stderr)
        return 1
    print(f"PASS {name} ({time.monotonic() - started:.1f} s)", flush=True)
    return 0
