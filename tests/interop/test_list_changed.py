"""The tool list changes under connected clients of the official Python SDK.

`interop_install_plugin` (examples/conformance.rs) adds a tool from a provider and reloads the
catalog. A client of the initialize era (legacy) hears of it as
`notifications/tools/list_changed`; a 2026-07-28 client (auto) on the `subscriptions/listen`
stream it opened. Either way its next tools/list shows the new tool, which it can call.

These tests start servers of their own: an install changes the list for every client of a
server. A stateless HTTP server has no session to notify, so the legacy cell of that transport
is not in the matrix (a 2026-07-28 client listens on a request of its own, which works there).
"""
from __future__ import annotations

import itertools

import anyio
import mcp_types as types
import pytest
from mcp.shared.subscriptions import ToolsListChanged

from conftest import TRANSPORTS, server_binary
from test_discovery import Servers, connect
from test_python_sdk import list_all, run, texts

CELLS = [(m, t) for t in TRANSPORTS for m in ("legacy", "auto")
         if not (m == "legacy" and t == "http-stateless")]
PLUGINS = itertools.count()


@pytest.fixture(scope="module")
def servers():
    servers = Servers(server_binary(), {})
    yield servers
    servers.stop()


async def install(client) -> str:
    """Installs a plugin of a new name; returns the new tool's name."""
    name = f"p{next(PLUGINS)}"
    r = await client.call_tool("interop_install_plugin", {"name": name})
    assert r.is_error is not True, texts(r)
    assert texts(r) == [f"installed plugin_{name}"]
    return f"plugin_{name}"


async def shows_and_runs(client, tool: str) -> None:
    names = {t.name for t in (await list_all(client))[0]}
    assert tool in names, sorted(names)
    assert texts(await client.call_tool(tool, {})) == [f"ran {tool}"]


@pytest.mark.parametrize("mode,transport", CELLS)
def test_clients_hear_that_the_tool_list_changed(servers, mode, transport):
    async def body():
        if mode == "legacy":
            changed = anyio.Event()

            async def on_message(message) -> None:
                if isinstance(message, types.ToolListChangedNotification):
                    changed.set()

            async with connect(servers, mode, transport, message_handler=on_message) as client:
                tool = await install(client)
                with anyio.fail_after(10):
                    await changed.wait()
                await shows_and_runs(client, tool)
        else:
            async with connect(servers, mode, transport) as client:
                async with client.listen(tools_list_changed=True) as sub:
                    assert sub.honored.tools_list_changed is True, sub.honored
                    tool = await install(client)
                    with anyio.fail_after(10):
                        event = await sub.__anext__()
                    assert isinstance(event, ToolsListChanged), event
                await shows_and_runs(client, tool)
    run(body)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_listener_that_asks_for_nothing_hears_nothing(servers, transport):
    """Only the tool list's changes are announced: a filter without them is honoured empty,
    and a change of the tool list then sends nothing on that stream."""
    async def body():
        async with connect(servers, "auto", transport) as client:
            async with client.listen(prompts_list_changed=True) as sub:
                assert not sub.honored.prompts_list_changed, sub.honored
                assert not sub.honored.tools_list_changed, sub.honored
                tool = await install(client)
                with anyio.move_on_after(1) as waited:
                    event = await sub.__anext__()
                    pytest.fail(f"an event on a stream that asked for none: {event}")
                assert waited.cancelled_caught
            await shows_and_runs(client, tool)
    run(body)


def test_bad_plugin_names_are_refused(servers):
    async def body():
        async with connect(servers, "auto", "stdio") as client:
            for bad in ("", "a b", "x" * 33, "ünï"):
                r = await client.call_tool("interop_install_plugin", {"name": bad})
                assert r.is_error is True, (bad, texts(r))
            tool = await install(client)
            r = await client.call_tool("interop_install_plugin", {"name": tool[len("plugin_"):]})
            assert r.is_error is True and "already" in "\n".join(texts(r)), texts(r)
    run(body)
