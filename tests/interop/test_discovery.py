"""Discovery through the official Python SDK: tool_search, execute_tool and search-first
exposure, in each cell of the matrix mode x transport.

The server is the `conformance` example with `DISCO_SEARCH=search-first`: tools/list shows only
the two meta-tools and the pinned `interop_add`; every other tool must be found with
`tool_search` and called directly or through `execute_tool`.

Tests marked `semantic` run the same server built with `--features semantic`
(`DISCO_SEMANTIC_BIN`) with the model in `DISCO_SEMANTIC_MODEL`; `.ci/test` runs them in a
second pass with both set, and deselects them in the first (`-m "not semantic"`).
"""
from __future__ import annotations

import asyncio
import os
import tempfile
from contextlib import asynccontextmanager
from typing import Any

import jsonschema
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conftest import MODES, PAGE_SIZE, TRANSPORTS, HttpServer, server_binary
from test_python_sdk import list_all, run, texts

INVALID_PARAMS = -32602
LISTED = {"tool_search", "execute_tool", "interop_add"}


def semantic_setup() -> tuple[str, str]:
    binary = os.environ.get("DISCO_SEMANTIC_BIN")
    model = os.environ.get("DISCO_SEMANTIC_MODEL")
    if not binary or not model:
        pytest.fail("semantic tests need DISCO_SEMANTIC_BIN and DISCO_SEMANTIC_MODEL "
                    "(run them with -m semantic; .ci/test sets both)")
    return binary, model


class Servers:
    """The HTTP servers of one configuration (with and without sessions), started lazily."""

    def __init__(self, binary: str, env: dict[str, str]) -> None:
        self.binary, self.env = binary, env
        self.http: dict[str, HttpServer] = {}

    def url(self, transport: str) -> str:
        if transport not in self.http:
            self.http[transport] = HttpServer(stateless=transport == "http-stateless",
                                              binary=self.binary, env=self.env)
        server = self.http[transport]
        if server.proc.poll() is not None:
            pytest.fail(f"{transport} server died:\n{server.stderr_text()}")
        return server.url

    def stop(self) -> None:
        for server in self.http.values():
            server.stop()


@pytest.fixture(scope="module")
def keyword_servers():
    servers = Servers(server_binary(), {"DISCO_SEARCH": "search-first"})
    yield servers
    servers.stop()


@pytest.fixture(scope="module")
def semantic_servers():
    binary, model = semantic_setup()
    with tempfile.TemporaryDirectory(prefix="disco-vectors-") as cache:
        servers = Servers(binary, {"DISCO_SEARCH": "search-first", "DISCO_SEMANTIC_MODEL": model,
                                   "DISCO_SEMANTIC_CACHE": cache})
        yield servers
        servers.stop()


# The server embeds its tools in the background and ranks by keywords until the vectors are
# ready: a query that only the model can answer is asked again until then, within this bound.
SEMANTIC_READY_SECONDS = 60


async def search_until(client: Client, query: str, found, **options: Any) -> dict[str, Any]:
    """tool_search's result for `query`, asked until `found(result)` holds (or the bound)."""
    deadline = asyncio.get_running_loop().time() + SEMANTIC_READY_SECONDS
    while True:
        result = await search(client, query, **options)
        if found(result) or asyncio.get_running_loop().time() > deadline:
            return result
        await asyncio.sleep(0.2)


MATRIX = [(m, t) for t in TRANSPORTS for m in MODES]


@asynccontextmanager
async def connect(servers: Servers, mode: str, transport: str, **options: Any):
    info = types.Implementation(name="disco-interop", version="1")
    if transport == "stdio":
        params = StdioServerParameters(command=servers.binary, args=["--stdio"],
                                       env={**servers.env, "RUST_LOG": "warn",
                                            "DISCO_PAGE_SIZE": str(PAGE_SIZE)})
        with tempfile.TemporaryFile(mode="w+") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode=mode, cache=None,
                              read_timeout_seconds=30, client_info=info, **options) as client:
                yield client
    else:
        async with Client(servers.url(transport), mode=mode, cache=None,
                          read_timeout_seconds=30, client_info=info, **options) as client:
            yield client


async def search(client: Client, query: str | None, **options: Any) -> dict[str, Any]:
    """tool_search's structured result, checked against its own output schema."""
    tools, _ = await list_all(client)
    [meta] = [t for t in tools if t.name == "tool_search"]
    arguments = {**({} if query is None else {"query": query}), **options}
    result = await client.call_tool("tool_search", arguments)
    assert result.is_error is not True, texts(result)
    assert isinstance(result.structured_content, dict), result
    jsonschema.validate(result.structured_content, meta.output_schema,
                        cls=jsonschema.Draft202012Validator)
    return result.structured_content


@pytest.mark.parametrize("mode,transport", MATRIX)
def test_search_first_lists_only_the_meta_tools_and_the_pinned_one(keyword_servers, mode, transport):
    async def body():
        async with connect(keyword_servers, mode, transport) as client:
            tools, _ = await list_all(client)
            assert {t.name for t in tools} == LISTED
            [search_tool] = [t for t in tools if t.name == "tool_search"]
            # `query` or `queries`, exactly one: the server says so when neither comes.
            props = search_tool.input_schema["properties"]
            assert {"query", "queries"} <= set(props), props
            assert props["queries"]["type"] == "array"
            assert "required" not in search_tool.input_schema
            assert search_tool.annotations.read_only_hint is True
    run(body)


@pytest.mark.parametrize("mode,transport", MATRIX)
def test_tool_search_finds_unlisted_tools_with_their_schemas(keyword_servers, mode, transport):
    async def body():
        async with connect(keyword_servers, mode, transport) as client:
            found = await search(client, "list the prime numbers below a limit")
            first = found["tools"][0]
            assert first["name"] == "interop_primes", found
            assert first["inputSchema"]["required"] == ["below"], first
            assert first["score"] > 0
            scores = [t["score"] for t in found["tools"]]
            assert scores == sorted(scores, reverse=True)

            compact = await search(client, "weather forecast for a city", compact=True,
                                   max_results=2)
            assert compact["tools"][0]["name"] == "interop_forecast", compact
            assert len(compact["tools"]) <= 2
            assert all("inputSchema" not in t for t in compact["tools"])

            # Nothing close: no tools, and a hint on how to search instead.
            nothing = await search(client, "zebrafish quarterly vault")
            assert nothing["tools"] == [] and nothing.get("hint"), nothing
    run(body)


@pytest.mark.parametrize("mode,transport", MATRIX)
def test_tool_search_by_steps_and_by_name(keyword_servers, mode, transport):
    async def body():
        async with connect(keyword_servers, mode, transport) as client:
            # One query per step: each step's best tool first, each result naming its step;
            # the result still validates against tool_search's output schema.
            found = await search(client, None, queries=["list the prime numbers below a limit",
                                                          "weather forecast for a city"],
                                 max_results=2)
            assert [(t["name"], t["step"]) for t in found["tools"]] == [
                ("interop_primes", 0), ("interop_forecast", 1)], found
            # Loaded by name, exact names in the order asked; unknown names bring nothing.
            found = await search(client, "select:interop_forecast,no_such_tool_zz,interop_primes")
            assert [t["name"] for t in found["tools"]] == ["interop_forecast", "interop_primes"]
            assert all("step" not in t for t in found["tools"])
            # Both fields, or an empty list of steps: an error the model can act on.
            for bad in ({"query": "primes", "queries": ["primes"]}, {"queries": []}):
                r = await client.call_tool("tool_search", bad)
                assert r.is_error is True, texts(r)
                assert "queries" in "\n".join(texts(r)), texts(r)
    run(body)


@pytest.mark.parametrize("mode,transport", MATRIX)
def test_found_tools_are_called_directly_or_through_execute_tool(keyword_servers, mode, transport):
    async def body():
        async with connect(keyword_servers, mode, transport) as client:
            # Through execute_tool, with a parameter name the model got wrong.
            r = await client.call_tool("execute_tool",
                                       {"name": "interop_primes", "arguments": {"Below": 12}})
            assert r.is_error is not True, texts(r)
            assert r.structured_content == {"result": [2, 3, 5, 7, 11]}, r.structured_content

            # Directly by name though it is not listed, and by a misspelling of it.
            r = await client.call_tool("interop_primes", {"below": 8})
            assert r.structured_content == {"result": [2, 3, 5, 7]}, r.structured_content
            r = await client.call_tool("interop_prime", {"below": 4})
            assert r.structured_content == {"result": [2, 3]}, r.structured_content
            assert "disco/corrections" in (r.meta or {}), r.meta

            # execute_tool cannot call itself or tool_search, nor a tool that does not exist.
            r = await client.call_tool("execute_tool", {"name": "no_such_tool_zz", "arguments": {}})
            assert r.is_error is True
            assert "no_such_tool_zz" in "\n".join(texts(r)), texts(r)
            r = await client.call_tool("execute_tool", {"name": "execute_tool", "arguments": {}})
            assert r.is_error is True, texts(r)
    run(body)


@pytest.mark.parametrize("mode,transport", MATRIX)
def test_bad_search_arguments_are_refused(keyword_servers, mode, transport):
    async def body():
        async with connect(keyword_servers, mode, transport) as client:
            r = await client.call_tool("tool_search", {})
            assert r.is_error is True
            assert "`query`" in "\n".join(texts(r)), texts(r)
            r = await client.call_tool("tool_search", {"query": "primes", "max_results": 0})
            assert r.is_error is True, texts(r)
    run(body)


@pytest.mark.semantic
@pytest.mark.parametrize("mode,transport", MATRIX)
def test_semantic_search_finds_a_tool_that_shares_no_word_with_the_query(semantic_servers, mode,
                                                                          transport):
    async def body():
        async with connect(semantic_servers, mode, transport) as client:
            first = lambda r: r["tools"] and r["tools"][0]["name"] == "interop_forecast"
            found = await search_until(client, "will it rain in Paris tomorrow", first)
            assert found["tools"], found
            assert found["tools"][0]["name"] == "interop_forecast", found
    run(body)


@pytest.mark.semantic
def test_the_keyword_server_does_not_find_it(keyword_servers):
    """The query above shares no word with the forecast tool: keywords alone abstain."""
    async def body():
        async with connect(keyword_servers, "auto", "stdio") as client:
            found = await search(client, "will it rain in Paris tomorrow")
            assert "interop_forecast" not in [t["name"] for t in found["tools"]], found
    run(body)


@pytest.mark.parametrize("mode,transport", MATRIX)
def test_instructions_say_what_search_finds(keyword_servers, mode, transport):
    """With search-first exposure, tools/list holds three tools; the instructions name the
    groups of all of them and how to search, and tool_search's description names the groups."""
    async def body():
        async with connect(keyword_servers, mode, transport) as client:
            text = client.instructions
            assert text and len(text.encode()) <= 4096, text
            lines = text.splitlines()
            assert lines[0].split()[1:3] == ["tools", "in"], lines[0]
            groups = {line[2:].split(" (")[0]: int(line.split(" (")[1].split(")")[0])
                      for line in lines if line.startswith("- ")}
            assert set(groups) >= {"conformance", "interop"}, groups
            # Many more than the three listed: search finds the rest.
            assert sum(groups.values()) == int(lines[0].split()[0]) > len(LISTED), text
            assert "`tool_search`" in text and "`execute_tool`" in text, text
            tools, _ = await list_all(client)
            [search_tool] = [t for t in tools if t.name == "tool_search"]
            for group, count in groups.items():
                assert f"{group} ({count})" in search_tool.description, search_tool.description
            [add] = [t for t in tools if t.name == "interop_add"]
            assert add.meta["io.modelcontextprotocol/groups"] == ["interop"], add.meta
            # A word the instructions give for the interop group finds one of its tools.
            [interop_line] = [line for line in lines if line.startswith("- interop (")]
            word = interop_line.split(": ", 1)[1].split(", ")[0]
            found = await search(client, word)
            assert any(t["name"].startswith("interop_") for t in found["tools"]), (word, found)
    run(body)
