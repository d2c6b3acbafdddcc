#!/usr/bin/env python3
"""Tool search, disco versus FastMCP's BM25 search transform, through the official Python
client (`mcp`): the same catalog, the same queries, over stdio.

    python compare.py --catalog CATALOG --queries QUERIES.jsonl [--stride 10] [--label NAME]

QUERIES: JSON Lines {"id", "query", "gold": [names]}; rows with an empty gold are skipped
(abstention is not part of this comparison: FastMCP never abstains). Every `stride`-th row is
used, in file order, so runs are deterministic. For each server: Hit@1, Hit@5, MRR over the
top 5, and the client-measured latency of each search call; then, in-process (no protocol),
the time each engine takes to answer one query (disco: bench/disco-tools `search_timing`;
FastMCP: the transform's own `_search`, which is what its `search_tools` runs).
"""
import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from scoring import load_queries, quality

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(HERE, "..", "..", "target"))


def names_of(result):
    """Tool names in a search result, best first (disco: {"tools": [...]}, FastMCP: [...])."""
    s = result.structured_content
    if s is None:
        try:
            s = json.loads(result.content[0].text)
        except Exception:
            return []
    if isinstance(s, dict):
        s = s.get("tools", s.get("result", []))
    return [t.get("name") for t in s if isinstance(t, dict)]


async def drive(command, args, search_tool, make_args, queries):
    params = StdioServerParameters(command=command, args=args, env={**os.environ, "RUST_LOG": "warn"})
    ranked, latencies = [], []
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            listed = [t.name for t in (await s.list_tools()).tools]
            if search_tool not in listed:
                raise SystemExit(f"{command}: no {search_tool} in {listed}")
            for q in queries[:20]:  # warm-up (FastMCP builds its index on the first search)
                await s.call_tool(search_tool, make_args(q["query"]))
            for q in queries:
                t0 = time.perf_counter()
                res = await s.call_tool(search_tool, make_args(q["query"]))
                latencies.append((time.perf_counter() - t0) * 1e6)
                ranked.append(names_of(res)[:5])
    return ranked, latencies


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "p90": sorted(values)[int(0.9 * (len(values) - 1))]}


def fastmcp_inprocess(catalog, queries):
    sys.path.insert(0, HERE)
    from fastmcp.server.transforms.search import BM25SearchTransform
    from fastmcp_server import load_tools
    tools = load_tools(catalog)
    transform = BM25SearchTransform(max_results=5)

    async def run():
        await transform._search(tools, "warm up")
        full, ranking = [], []
        for q in queries:
            t0 = time.perf_counter()
            await transform._search(tools, q["query"])
            full.append((time.perf_counter() - t0) * 1e6)
            t0 = time.perf_counter()
            transform._index.query(q["query"], 5)
            ranking.append((time.perf_counter() - t0) * 1e6)
        return full, ranking

    return asyncio.run(run())


def disco_inprocess(catalog, queries):
    path = os.path.join(TARGET, "release", "search_timing")
    data = "\n".join(q["query"] for q in queries)
    out = subprocess.run([path, catalog], input=data, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"search_timing failed: {out.stderr}")
    return [float(x) for x in out.stdout.split()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--catalog", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--stride", type=int, default=10)
    ap.add_argument("--label", default=None)
    ap.add_argument("--servers", default="disco,fastmcp", help="which servers to drive")
    ap.add_argument("--threshold", default=None, help="disco's abstention threshold (default: disco's default)")
    a = ap.parse_args()
    queries = load_queries(a.queries, a.stride)
    label = a.label or os.path.basename(a.catalog)
    disco_bin = os.path.join(TARGET, "release", "catalog_server")
    disco_args = [a.catalog, "--stdio"] + (["--threshold", a.threshold] if a.threshold else [])
    out = {"catalog": label, "queries": len(queries), "stride": a.stride}
    runs = {
        "disco": (disco_bin, disco_args, "tool_search", lambda q: {"query": q, "max_results": 5}),
        "fastmcp": (sys.executable, [os.path.join(HERE, "fastmcp_server.py"), a.catalog],
                    "search_tools", lambda q: {"query": q}),
    }
    runs = {k: v for k, v in runs.items() if k in a.servers.split(",")}
    for name, (cmd, args, tool, make) in runs.items():
        ranked, lat = asyncio.run(drive(cmd, args, tool, make, queries))
        out[name] = {**quality(queries, ranked), "client_latency_us": summary(lat)}
        print(f"{label} {name}: {out[name]}", file=sys.stderr, flush=True)
    if "fastmcp" in runs:
        full, ranking = fastmcp_inprocess(a.catalog, queries)
        out["fastmcp"]["inprocess_search_us"] = summary(full)
        out["fastmcp"]["inprocess_ranking_only_us"] = summary(ranking)
    if "disco" in runs:
        out["disco"]["inprocess_search_us"] = summary(disco_inprocess(a.catalog, queries))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
