"""The official Python SDK (`mcp`) against `examples/conformance`.

Every test runs in each cell of the matrix mode x transport (see `conftest.py`):
  mode      legacy = the `initialize` handshake; auto = the SDK's default, which tries
            `server/discover` (protocol 2026-07-28) first
  transport stdio | http (Streamable HTTP with sessions) | http-stateless

A stateless HTTP server keeps nothing between requests, so a client of the initialize era
(legacy) cannot have its log level remembered, cannot cancel a call (`notifications/cancelled`
arrives in another request) and cannot be asked for sampling or elicitation: those cells assert
that the server degrades cleanly instead. A 2026-07-28 client cancels by closing the request,
which works everywhere.
"""
from __future__ import annotations

import json
import tempfile
from contextlib import asynccontextmanager
from typing import Any

import anyio
import jsonschema
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conftest import PAGE_SIZE, server_binary

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
MODERN = "2026-07-28"

# The conformance suite's reference tools and ours: all must be listed.
EXPECTED_TOOLS = {
    "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
    "test_multiple_content_types", "test_tool_with_logging", "test_tool_with_progress",
    "test_error_handling", "test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums", "json_schema_2020_12_tool", "interop_add", "interop_forecast",
    "interop_primes", "interop_nothing", "interop_panic", "interop_sleep", "interop_sleep_stats",
}


@asynccontextmanager
async def connect(cell, **options: Any):
    mode, transport, url = cell
    if transport == "stdio":
        params = StdioServerParameters(
            command=server_binary(), args=["--stdio"],
            env={"DISCO_PAGE_SIZE": str(PAGE_SIZE), "RUST_LOG": "warn"},
        )
        with tempfile.TemporaryFile(mode="w+") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode=mode, cache=None,
                              read_timeout_seconds=30,
                              client_info=types.Implementation(name="disco-interop", version="1"),
                              **options) as client:
                yield client
    else:
        async with Client(url, mode=mode, cache=None, read_timeout_seconds=30,
                          client_info=types.Implementation(name="disco-interop", version="1"),
                          **options) as client:
            yield client


def run(body, limit: float = 60) -> None:
    async def main() -> None:
        with anyio.fail_after(limit):
            await body()
    anyio.run(main)


def texts(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def kinds(result: types.CallToolResult) -> list[str]:
    return [c.type for c in result.content]


async def list_all(client: Client) -> tuple[list[types.Tool], int]:
    tools: list[types.Tool] = []
    cursors: set[str] = set()
    cursor = None
    pages = 0
    while True:
        page = await client.list_tools(cursor=cursor)
        pages += 1
        assert len(page.tools) <= PAGE_SIZE, f"page {pages} has {len(page.tools)} tools"
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools, pages
        assert cursor not in cursors, f"cursor {cursor!r} repeated"
        cursors.add(cursor)
        assert pages < 100


def test_negotiation(cell):
    mode, transport, _ = cell

    async def body():
        async with connect(cell) as client:
            # The SDK's default mode must get the stateless protocol from `server/discover`;
            # legacy mode an initialize-era version.
            if mode == "auto":
                assert client.protocol_version == MODERN
            else:
                assert client.protocol_version != MODERN
            assert client.server_info.name == "disco-conformance"
            assert client.server_capabilities.tools is not None
            if mode == "legacy":  # ping is gone from 2026-07-28
                await client.send_ping()
    run(body)


def test_list_every_page(cell):
    async def body():
        async with connect(cell) as client:
            tools, pages = await list_all(client)
            names = [t.name for t in tools]
            assert len(names) == len(set(names)), f"duplicates: {names}"
            assert EXPECTED_TOOLS <= set(names), f"missing: {EXPECTED_TOOLS - set(names)}"
            assert pages == -(-len(tools) // PAGE_SIZE)
            for tool in tools:
                assert tool.description, tool.name
                assert tool.input_schema.get("type") == "object", tool.name
                jsonschema.Draft202012Validator.check_schema(tool.input_schema)
                if tool.output_schema is not None:
                    assert tool.output_schema.get("type") == "object", tool.name
                    jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            # The order is deterministic: a second walk gives the same list.
            again, _ = await list_all(client)
            assert [t.name for t in again] == names
            by_name = {t.name: t for t in tools}
            full = by_name["json_schema_2020_12_tool"].input_schema
            assert full["$schema"] == "https://json-schema.org/draft/2020-12/schema"
            assert "address" in full["$defs"] and full["additionalProperties"] is False
            # Portable schemas elsewhere: no $ref, no $schema.
            assert "$schema" not in by_name["interop_forecast"].input_schema
            with pytest.raises(MCPError) as err:
                await client.list_tools(cursor="not-a-cursor")
            assert err.value.code == INVALID_PARAMS
    run(body)


def check_structured(tool: types.Tool, result: types.CallToolResult) -> Any:
    """structuredContent is present, valid against the tool's own outputSchema, and mirrored
    as JSON text."""
    assert result.is_error is not True, texts(result)
    assert tool.output_schema is not None
    assert isinstance(result.structured_content, dict)
    jsonschema.validate(result.structured_content, tool.output_schema,
                        cls=jsonschema.Draft202012Validator)
    assert json.loads(texts(result)[0]) in (result.structured_content,
                                            result.structured_content.get("result"))
    return result.structured_content


def test_tools_of_every_shape(cell):
    async def body():
        async with connect(cell) as client:
            tools = {t.name: t for t in (await list_all(client))[0]}

            r = await client.call_tool("test_simple_text")  # no `arguments` at all
            assert r.is_error is not True
            assert texts(r) == ["This is a simple text response for testing."]

            r = await client.call_tool("test_error_handling", {})
            assert r.is_error is True
            assert texts(r) == ["This tool intentionally returns an error for testing"]

            r = await client.call_tool("test_image_content", {})
            assert kinds(r) == ["image"] and r.content[0].mime_type == "image/png"
            assert r.content[0].data.startswith("iVBORw0KGgo")

            r = await client.call_tool("test_audio_content", {})
            assert kinds(r) == ["audio"] and r.content[0].mime_type == "audio/wav"

            r = await client.call_tool("test_embedded_resource", {})
            assert kinds(r) == ["resource"]
            res = r.content[0].resource
            assert str(res.uri) == "test://embedded-resource" and res.mime_type == "text/plain"
            assert res.text == "This is an embedded resource content."

            r = await client.call_tool("test_multiple_content_types", {})
            assert kinds(r) == ["text", "image", "resource"]
            assert json.loads(r.content[2].resource.text) == {"test": "data", "value": 123}

            r = await client.call_tool("interop_add", {"a": 1.5, "b": 2})
            assert texts(r) == ["3.5"]

            r = await client.call_tool("interop_nothing", {})
            assert r.is_error is not True and r.content == []

            # Structured output, with a default parameter and null fields.
            s = check_structured(tools["interop_forecast"],
                                 await client.call_tool("interop_forecast", {"city": "Oslo"}))
            assert s["city"] == "Oslo" and len(s["days"]) == 3 and s["note"] is None
            s = check_structured(tools["interop_forecast"],
                                 await client.call_tool("interop_forecast", {"city": "", "days": 5}))
            assert [d["rain_mm"] is None for d in s["days"]] == [False] * 3 + [True] * 2
            # A non-object value is wrapped as {"result": ...}, as its schema says.
            s = check_structured(tools["interop_primes"],
                                 await client.call_tool("interop_primes", {"below": 20}))
            assert s == {"result": [2, 3, 5, 7, 11, 13, 17, 19]}
            s = check_structured(tools["interop_sleep_stats"],
                                 await client.call_tool("interop_sleep_stats", {}))
            assert set(s) == {"started", "finished", "stopped"}

            r = await client.call_tool("json_schema_2020_12_tool",
                                       {"name": "Ada", "address": {"city": "London"}})
            assert texts(r) == ["name=Ada, city=London"]
    run(body)


def test_unknown_tool(cell):
    async def body():
        async with connect(cell) as client:
            for name in ("no_such_tool", "zz_unrelated_thing"):
                with pytest.raises(MCPError) as err:
                    await client.call_tool(name, {})
                assert err.value.code != METHOD_NOT_FOUND
                assert err.value.code == INVALID_PARAMS
                assert err.value.message.startswith("Unknown tool:"), err.value.message
                assert name in err.value.message
            # The connection is still good.
            assert texts(await client.call_tool("interop_add", {"a": 1, "b": 1})) == ["2"]
            # A spelling variant of a real name is corrected, and the correction is visible.
            r = await client.call_tool("Test-Simple-Text", {})
            assert texts(r) == ["This is a simple text response for testing."]
            assert "disco/corrections" in (r.meta or {}), r.meta
    run(body)


def test_bad_arguments(cell):
    async def body():
        async with connect(cell) as client:
            # A required parameter missing: the error names every expected parameter.
            r = await client.call_tool("interop_add", {"a": 1})
            assert r.is_error is True
            text = "\n".join(texts(r))
            assert "`b`" in text and "`a`" in text and "Expected parameters" in text, text

            # An unknown key that is no near-miss of a parameter.
            r = await client.call_tool("interop_add", {"a": 1, "b": 2, "zzz_unrelated": 3})
            assert r.is_error is True
            text = "\n".join(texts(r))
            assert "zzz_unrelated" in text and "`a`" in text and "`b`" in text, text

            # A value of the wrong type names the parameter.
            r = await client.call_tool("interop_add", {"a": "not a number", "b": 2})
            assert r.is_error is True
            assert "`a`" in "\n".join(texts(r)), texts(r)

            # A required parameter of a tool with context and state extractors.
            r = await client.call_tool("interop_sleep", {})
            assert r.is_error is True and "`seconds`" in "\n".join(texts(r))
    run(body)


def test_progress(cell):
    async def body():
        async with connect(cell) as client:
            seen: list[tuple[float, float | None]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total))

            r = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            assert texts(r) == ["Tool with progress executed successfully"]
            assert seen == [(0, 100), (50, 100), (100, 100)]

            seen.clear()
            r = await client.call_tool("interop_sleep", {"seconds": 0.5}, progress_callback=on_progress)
            assert texts(r) == ["slept 0.5 s"]
            assert [p for p, _ in seen] == [1, 2, 3, 4, 5] and {t for _, t in seen} == {5}
    run(body)


def sessionless(cell) -> bool:
    """A legacy client on a stateless server: nothing links one request to the next."""
    mode, transport, _ = cell
    return mode == "legacy" and transport == "http-stateless"


def test_logging(cell):
    mode, _, _ = cell

    async def body():
        messages: list[types.LoggingMessageNotificationParams] = []

        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            messages.append(params)

        # 2026-07-28 has no logging/setLevel: each request opts in through `_meta`.
        options: dict[str, Any] = {"logging_callback": on_log}
        if mode == "auto":
            options["log_level"] = "info"
        async with connect(cell, **options) as client:
            if mode == "legacy":
                await client.set_logging_level("info")
            r = await client.call_tool("test_tool_with_logging", {})
            assert texts(r) == ["Tool with logging executed successfully"]
            with anyio.move_on_after(2):
                while len(messages) < 3:
                    await anyio.sleep(0.05)
            assert [m.data for m in messages] == [
                "Tool execution started", "Tool processing data", "Tool execution completed"]
            assert {m.level for m in messages} == {"info"}
            if mode == "legacy" and not sessionless(cell):
                # A level above info filters them all out.
                messages.clear()
                await client.set_logging_level("error")
                await client.call_tool("test_tool_with_logging", {})
                await anyio.sleep(0.2)
                assert messages == []
    run(body)


def test_cancellation(cell):
    async def body():
        async with connect(cell) as client:
            async def stats() -> dict[str, int]:
                return (await client.call_tool("interop_sleep_stats", {})).structured_content

            before = await stats()
            ticks: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                ticks.append(progress)

            # Without a session the call cannot be cancelled: keep it short, it runs to its end.
            seconds = 2 if sessionless(cell) else 30
            with anyio.move_on_after(1.0) as scope:
                await client.call_tool("interop_sleep", {"seconds": seconds}, progress_callback=on_progress)
            assert scope.cancelled_caught, "the long call was not cancelled"
            assert ticks, "no progress before the cancellation"
            if sessionless(cell):
                now = before
                with anyio.move_on_after(10):
                    while now["finished"] == before["finished"]:
                        await anyio.sleep(0.1)
                        now = await stats()
                assert now["finished"] == before["finished"] + 1, (before, now)
                assert now["stopped"] == before["stopped"]
                assert texts(await client.call_tool("interop_add", {"a": 2, "b": 3})) == ["5"]
                return
            # The server stops the tool (its future is dropped) soon after the cancellation.
            now = before
            with anyio.move_on_after(5):
                while now["stopped"] == before["stopped"]:
                    await anyio.sleep(0.1)
                    now = await stats()
            assert now["stopped"] == before["stopped"] + 1, (before, now)
            assert now["finished"] == before["finished"]
            # And keeps serving.
            assert texts(await client.call_tool("interop_add", {"a": 2, "b": 3})) == ["5"]
    run(body)


def test_panic_keeps_serving(cell):
    async def body():
        async with connect(cell) as client:
            r = await client.call_tool("interop_panic", {})
            assert r.is_error is True
            text = "\n".join(texts(r))
            assert "interop_panic" in text and "interop_panic was called" not in text, text
            assert texts(await client.call_tool("test_simple_text", {})) == [
                "This is a simple text response for testing."]
    run(body)


def test_sampling_and_elicitation(cell):
    mode, _, _ = cell

    async def body():
        prompts: list[str] = []
        forms: list[dict[str, Any]] = []

        async def sampling(ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
            prompts.append(params.messages[0].content.text)
            return types.CreateMessageResult(role="assistant", model="canned",
                                             content=types.TextContent(text="forty-two"),
                                             stop_reason="endTurn")

        async def elicitation(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            forms.append(params.requested_schema)
            return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

        async with connect(cell, sampling_callback=sampling, elicitation_callback=elicitation) as client:
            r = await client.call_tool("test_sampling", {"prompt": "What is six times seven?"})
            r2 = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            if mode == "legacy" and not sessionless(cell):
                assert texts(r) == ["LLM response: forty-two"]
                assert prompts == ["What is six times seven?"]
                assert texts(r2) == [
                    'User response: action=accept, content={"email":"ada@example.com","username":"ada"}']
                assert forms[0]["required"] == ["username", "email"]
            else:
                # 2026-07-28 forbids server-to-client requests, and without a session there is
                # no way to send one: the tool fails cleanly instead of hanging, and the server
                # keeps serving.
                assert r.is_error is True and r2.is_error is True, (texts(r), texts(r2))
                assert prompts == [] and forms == []
            assert texts(await client.call_tool("interop_add", {"a": 1, "b": 2})) == ["3"]
    run(body)


def test_clean_disconnect(cell, caplog):
    """Closing the client ends the session without the SDK complaining (over HTTP it sends a
    DELETE and accepts only 200 or 204)."""
    caplog.set_level("WARNING", logger="mcp")

    async def body():
        async with connect(cell) as client:
            assert texts(await client.call_tool("test_simple_text", {}))
    run(body)
    complaints = [r.getMessage() for r in caplog.records
                  if r.name.startswith("mcp") and r.levelno >= 30]
    assert complaints == []


GROUPS_KEY = "io.modelcontextprotocol/groups"


def instruction_groups(text: str) -> dict[str, int]:
    """The `- name (count): words` lines of the server's instructions, as name -> count."""
    groups = {}
    for line in text.splitlines():
        if line.startswith("- ") and not line.startswith("- and "):
            name, _, rest = line[2:].partition(" (")
            groups[name] = int(rest.split(")")[0])
    return groups


def test_instructions_list_the_groups_of_the_listed_tools(cell):
    """Without search: `initialize` (or `server/discover`) answers instructions that count the
    tools of each group as tools/list gives them in `_meta`, within 4 KiB, and say nothing of a
    search tool the server does not have."""
    async def body():
        async with connect(cell) as client:
            text = client.instructions
            assert text, "no instructions"
            assert len(text.encode()) <= 4096
            assert "tool_search" not in text, text
            told = instruction_groups(text)
            tools, _ = await list_all(client)
            listed: dict[str, int] = {}
            for tool in tools:
                groups = (tool.meta or {}).get(GROUPS_KEY)
                assert isinstance(groups, list) and len(groups) == 1, (tool.name, tool.meta)
                listed[groups[0]] = listed.get(groups[0], 0) + 1
            # Plugins come and go as other tests install them: the two fixed groups must match.
            for group in ("conformance", "interop"):
                assert told.get(group) == listed.get(group), (group, told, listed)
            assert all(t.meta[GROUPS_KEY] == ["interop"] for t in tools
                       if t.name.startswith("interop_")), "interop tools"
    run(body)
