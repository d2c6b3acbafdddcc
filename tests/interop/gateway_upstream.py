"""A small upstream server for the gateway tests, written with the official Python SDK's
`MCPServer`, the way a Python author would write one:

    python gateway_upstream.py                 # stdio
    python gateway_upstream.py --port PORT     # Streamable HTTP on 127.0.0.1:PORT/mcp

Its tools cover what the gateway must honour: a read-only tool and a destructive one (no
annotations: destructive by the spec), a parameter to misspell, a call that never returns, its
own process id (so a test can stop it), progress sent in a burst right before the answer, and
two schemas as other servers publish them: one in draft-04 form, one that no validator can
compile.
"""
from __future__ import annotations

import argparse
import asyncio
import os

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(readOnlyHint=True)
server = MCPServer("py-upstream")


@server.tool(annotations=READ_ONLY)
def lookup_weather(city: str) -> str:
    """Look up today's weather forecast for a city: the temperature and the sky."""
    return f"weather in {city}: sunny, 21 C"


@server.tool()
def delete_note(title: str) -> str:
    """Delete a saved note by its title. This cannot be undone."""
    return f"deleted {title}"


@server.tool(annotations=READ_ONLY)
def convert_temperature(celsius: float) -> str:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit."""
    return f"{celsius * 9 / 5 + 32:g} F"


@server.tool(annotations=READ_ONLY)
def server_pid() -> str:
    """The process id of this upstream server."""
    return str(os.getpid())


@server.tool(annotations=READ_ONLY)
async def wait_forever() -> str:
    """Waits for an hour before answering."""
    await asyncio.sleep(3600)
    return "late"


@server.tool(annotations=READ_ONLY)
async def burst_progress(count: int, ctx: Context) -> str:
    """Reports progress `count` times with no pause, then answers at once: the answer follows
    the last notification on the wire."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count)
    return f"{count} steps"


@server.tool(annotations=ToolAnnotations(destructiveHint=False))
def set_volume(level: float) -> str:
    """Set the speaker volume; the level must be above zero."""
    return f"volume {level:g}"


@server.tool(annotations=READ_ONLY)
def find_files(glob: str) -> str:
    """Find the files whose names match a glob pattern."""
    return f"no files match {glob}"


# The schemas as some servers publish them. MCPServer derives schemas from the signatures; its
# tool entries are replaced here so that tools/list carries these instead.
tools = server._tool_manager  # noqa: SLF001 (no public way to set a raw schema)
tools.get_tool("set_volume").parameters = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "type": "object",
    "properties": {"level": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
    "required": ["level"],
}
tools.get_tool("find_files").parameters = {
    "type": "object",
    "properties": {"glob": {"type": "string", "pattern": "(["}},
    "required": ["glob"],
}

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    if args.port is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
