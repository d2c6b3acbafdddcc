#!/usr/bin/env python3
"""Serves a tools/list JSON catalog from FastMCP with its BM25 search transform, over stdio:

    python fastmcp_server.py CATALOG

Like disco's catalog_server: every tool is hidden behind the transform's `search_tools` (5
results, FastMCP's default) and `call_tool`; calling a tool answers with its name and
arguments (the catalog's tools have no code).
"""
import json
import sys
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.transforms.search import BM25SearchTransform
from fastmcp.tools.base import Tool, ToolResult
from mcp.types import TextContent, ToolAnnotations


class CatalogTool(Tool):
    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(content=[TextContent(type="text", text=f"{self.name} called with {json.dumps(arguments)}")])


def load_tools(path):
    with open(path) as f:
        data = json.load(f)
    tools = data["tools"] if isinstance(data, dict) else data
    out = []
    for t in tools:
        ann = t.get("annotations")
        out.append(CatalogTool(
            name=t["name"],
            description=t.get("description") or "",
            parameters=t.get("inputSchema") or {"type": "object"},
            annotations=ToolAnnotations(**ann) if ann else None,
        ))
    return out


def build(path):
    mcp = FastMCP("fastmcp-catalog")
    for tool in load_tools(path):
        mcp.add_tool(tool)
    mcp.add_transform(BM25SearchTransform(max_results=5))
    return mcp


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fastmcp_server.py CATALOG")
    build(sys.argv[1]).run(transport="stdio", show_banner=False)
