"""disco's tools inside an rmcp server of one's own (`examples/embedded.rs`), through the
official Python SDK, over stdio and over rmcp's own Streamable HTTP service (not disco's): the
server's prompts and resources, and disco's name correction, `tool_search`, reload notices and
per-session log levels beside them.

The binary comes from `DISCO_EMBEDDED_BIN` (set by `.ci/test`), else the debug build under
`$CARGO_TARGET_DIR` (default `target/`).
"""
from __future__ import annotations

import itertools
from pathlib import Path

import anyio
import mcp_types as types
import pytest

from conftest import built_binary
from test_discovery import Servers, connect
from test_python_sdk import GROUPS_KEY, instruction_groups, list_all, run, texts

CELLS = [(m, t) for t in ("stdio", "http") for m in ("legacy", "auto")]
PLUGINS = itertools.count()


def embedded_binary() -> str:
    return built_binary("DISCO_EMBEDDED_BIN", "debug", "embedded")


@pytest.fixture(scope="module")
def servers():
    if not Path(embedded_binary()).is_file():
        pytest.fail(f"not found: {embedded_binary()} (cargo build --example embedded)")
    servers = Servers(embedded_binary(), {})
    yield servers
    servers.stop()


@pytest.mark.parametrize("mode,transport", CELLS)
def test_its_own_prompts_and_resources_beside_the_tools(servers, mode, transport):
    async def body():
        async with connect(servers, mode, transport) as client:
            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == ["plan_trip"]
            prompt = await client.get_prompt("plan_trip")
            assert "get_weather" in prompt.messages[0].content.text
            resources = await client.list_resources()
            assert [str(r.uri) for r in resources.resources] == ["notes://readme"]
            read = await client.read_resource("notes://readme")
            assert read.contents[0].text == "Plugins add tools at run time."
            names = {t.name for t in (await list_all(client))[0]}
            assert {"get_weather", "run_job", "install_plugin", "tool_search",
                    "execute_tool"} <= names, names
    run(body)


@pytest.mark.parametrize("mode,transport", CELLS)
def test_names_are_corrected_and_search_finds_tools(servers, mode, transport):
    async def body():
        async with connect(servers, mode, transport) as client:
            r = await client.call_tool("get_wether", {"city": "Lisbon"})
            assert r.is_error is not True, texts(r)
            assert texts(r) == ["Sunny in Lisbon, 21 °C"]
            corrections = (r.meta or {}).get("disco/corrections", {})
            assert corrections["tool"]["resolved"] == "get_weather", r.meta
            # A key in another style is repaired too.
            r = await client.call_tool("get_weather", {"City": "Porto"})
            assert texts(r) == ["Sunny in Porto, 21 °C"], texts(r)
            found = await client.call_tool("tool_search", {"query": "temperature forecast"})
            assert found.is_error is not True, texts(found)
            assert found.structured_content["tools"][0]["name"] == "get_weather", found
            # An unknown tool is a -32602 with suggestions, as on disco's own server.
            with pytest.raises(Exception) as raised:
                await client.call_tool("launch_rocket", {})
            assert "Unknown tool" in str(raised.value), raised.value
    run(body)


@pytest.mark.parametrize("mode,transport", CELLS)
def test_a_reload_is_heard_and_the_new_tool_runs(servers, mode, transport):
    async def body():
        name = f"p{chr(ord('a') + next(PLUGINS))}"
        if mode == "legacy":
            changed = anyio.Event()

            async def on_message(message) -> None:
                if isinstance(message, types.ToolListChangedNotification):
                    changed.set()

            async with connect(servers, mode, transport, message_handler=on_message) as client:
                r = await client.call_tool("install_plugin", {"name": name})
                assert texts(r) == [f"installed plugin_{name}"], texts(r)
                with anyio.fail_after(10):
                    await changed.wait()
                names = {t.name for t in (await list_all(client))[0]}
                assert f"plugin_{name}" in names, names
                assert texts(await client.call_tool(f"plugin_{name}", {})) == [f"plugin_{name} ran"]
        else:
            async with connect(servers, mode, transport) as client:
                async with client.listen(tools_list_changed=True) as sub:
                    assert sub.honored.tools_list_changed is True, sub.honored
                    r = await client.call_tool("install_plugin", {"name": name})
                    assert texts(r) == [f"installed plugin_{name}"], texts(r)
                    with anyio.fail_after(10):
                        await sub.__anext__()
                names = {t.name for t in (await list_all(client))[0]}
                assert f"plugin_{name}" in names, names
    run(body)


def test_each_http_session_keeps_its_own_log_level(servers):
    """Two sessions of one HTTP server set different levels: each hears what its own level
    lets through (rmcp's HTTP service clones the server per session; a clone of `Tools` has a
    level of its own)."""
    async def body():
        heard: dict[str, list[str]] = {"debug": [], "error": []}

        def collector(level: str):
            async def on_log(params: types.LoggingMessageNotificationParams) -> None:
                heard[level].append(params.data)
            return on_log

        async with connect(servers, "legacy", "http", logging_callback=collector("debug")) as a, \
                connect(servers, "legacy", "http", logging_callback=collector("error")) as b:
            await a.set_logging_level("debug")
            await b.set_logging_level("error")
            assert texts(await a.call_tool("run_job", {})) == ["done"]
            assert texts(await b.call_tool("run_job", {})) == ["done"]
            with anyio.move_on_after(3):
                while len(heard["debug"]) < 3:
                    await anyio.sleep(0.05)
            await anyio.sleep(0.2)
            assert heard["debug"] == ["job started", "job details", "job done"], heard
            assert heard["error"] == [], heard
            # The first session's level did not move when the second one set its own.
            heard["debug"].clear()
            await a.call_tool("run_job", {})
            with anyio.move_on_after(3):
                while len(heard["debug"]) < 3:
                    await anyio.sleep(0.05)
            assert heard["debug"] == ["job started", "job details", "job done"], heard
    run(body)


@pytest.mark.parametrize("mode,transport", CELLS)
def test_instructions_come_from_the_forwarded_initialize(servers, mode, transport):
    """The embedding server forwards `initialize` and `server/discover` to `Tools`: its
    instructions (it sets none of its own) name the groups of the tools this caller sees, with
    their counts as tools/list gives them, and say how to search, within 4 KiB."""
    async def body():
        async with connect(servers, mode, transport) as client:
            text = client.instructions
            assert text, "no instructions"
            assert len(text.encode()) <= 4096
            assert "tool_search" in text, text
            told = instruction_groups(text)
            assert told, text
            listed: dict[str, int] = {}
            for tool in (await list_all(client))[0]:
                for group in (tool.meta or {}).get(GROUPS_KEY) or []:
                    listed[group] = listed.get(group, 0) + 1
            assert told == listed, (told, listed)
    run(body)
