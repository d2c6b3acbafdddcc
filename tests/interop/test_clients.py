"""Real MCP clients with disco in them: Claude Code, the MCP Inspector's CLI and Gemini CLI,
installed pinned from npm by .ci/run into `$DISCO_CI_TOOLS/clients`.

Each client is given the `conformance` example (a disco server) and `disco-gateway` in front
of the official server-memory, each over stdio and over Streamable HTTP on 127.0.0.1:
- Claude Code: `claude mcp add` for the four, then `claude mcp list` shows each connected;
- Gemini CLI: `gemini mcp add` in a trusted folder, then `gemini mcp list` shows each connected;
- the Inspector's CLI lists the tools and calls one with a misspelled name and a misspelled
  argument key, and the result is the corrected call's, with the corrections in `_meta`.

None of them needs a model or a network beyond the loopback. Each runs with a home directory
of its own (no user's configuration is read or written), its auto-update and telemetry off, and
under a 60 s limit. Its proxy variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and their
lower-case forms) name http://127.0.0.1:9, where nothing listens, with NO_PROXY for 127.0.0.1
and localhost, and NODE_USE_ENV_PROXY=1 makes Node's own http, https and fetch follow them: a
request beyond the loopback made through them is refused at once. The Inspector's CLI and
Claude Code are shown to follow them (a server at a `.invalid` name fails with ECONNREFUSED,
not ENOTFOUND); Gemini CLI's `mcp list` does not say why a server failed. That is all that
holds: code that opens its connections itself, ignoring the variables, is not stopped (there
is no network sandbox).
Each list also holds a server that cannot start, which must be shown as failed: the status is
read, not assumed.

Binaries: `DISCO_CONFORMANCE_BIN` and `DISCO_GATEWAY_BIN` (set by .ci/test), as in the other
interop tests.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import HttpServer, server_binary
from test_gateway import NODE, TOOLS, Gateway, gateway_binary, node_server, write_config

pytestmark = pytest.mark.clients

CLIENTS = TOOLS / "clients" / "node_modules"
CLAUDE = CLIENTS / ".bin" / "claude"
GEMINI = CLIENTS / ".bin" / "gemini"
INSPECTOR = CLIENTS / ".bin" / "mcp-inspector"
# The most any one client command may take: enough for a client that starts its servers, far
# less than a network timeout.
LIMIT_S = 60
# A server entry that can never connect: each list must show it failed.
BROKEN = "broken"
# The proxy of every request beyond the loopback: the discard port, on which nothing listens,
# so the connection is refused at once.
NO_NETWORK = "http://127.0.0.1:9"
LOOPBACK = "127.0.0.1,localhost"
# A server beyond the loopback, under a name that never resolves (`.invalid`, RFC 6761): a
# client that looked it up itself would fail with ENOTFOUND; through the proxy, the connection
# is refused (ECONNREFUSED).
FAR = "http://example.invalid/mcp"


def client_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment in `home`: no variable of the user's reaches the client, and every
    file a client writes (configuration, caches, logs) lands under `home`. Node 22 comes first
    on the PATH: the clients run on it, and so do the stdio servers they start. Every proxy
    variable names NO_NETWORK, except for the loopback."""
    env = {
        "PATH": f"{NODE.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "CI": "1",
        **{name: NO_NETWORK for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
           for name in (proxy, proxy.lower())},
        "NO_PROXY": LOOPBACK,
        "no_proxy": LOOPBACK,
        # Node 22 (>= 22.21) follows the variables in http, https and fetch only when asked.
        "NODE_USE_ENV_PROXY": "1",
    }
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {**env, **extra}


def run_client(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """Runs one client command in a process group of its own, which is killed whole once the
    command is done: the servers a client started and left running die with it, and so does a
    command that outlives LIMIT_S (then the test fails)."""
    proc = subprocess.Popen([str(a) for a in args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        try:
            out, err = proc.communicate(timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            out, err = proc.communicate()
            pytest.fail(f"{args[0]} {args[1:3]} did not finish within {LIMIT_S} s\n"
                        f"stdout:\n{out[-4000:]}\nstderr:\n{err[-4000:]}")
    finally:
        kill_group(proc.pid)
        proc.wait()
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def kill_group(pgid: int) -> None:
    """SIGKILL to the process group `pgid`, which may be gone already."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def must(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, (result.args, result.returncode, result.stdout[-4000:],
                                    result.stderr[-4000:])
    return result


def installed(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"missing {path}: run .ci/run (it installs the clients)")
    return path


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """The four servers every client is given: the stdio ones as their command, the HTTP ones
    (running for the module) as their URL, by the name each client gets them under."""
    for binary in (server_binary(), gateway_binary()):
        if not Path(binary).is_file():
            pytest.fail(f"binary not found: {binary} (cargo build --example conformance; "
                        "cargo build -p disco-gateway)")
    d = tmp_path_factory.mktemp("clients")
    # The memory server's store, with one entity for the corrected search to find.
    memory = d / "memory.jsonl"
    memory.write_text(json.dumps({"type": "entity", "name": "Oslo", "entityType": "city",
                                  "observations": ["capital of Norway"]}) + "\n")
    config = write_config(d, "gateway",
                          {"memory": node_server("server-memory",
                                                 env={"MEMORY_FILE_PATH": str(memory)})},
                          {"startupTimeoutMs": 30000})
    # The example lists tool_search and execute_tool beside its tools.
    example_http = HttpServer(stateless=False, env={"DISCO_SEARCH": "all"})
    gateway_http = Gateway(config)
    try:
        yield {
            "stdio": {
                "disco-stdio": [server_binary(), "--stdio"],
                "gateway-stdio": [gateway_binary(), "--config", str(config)],
            },
            "http": {"disco-http": example_http.url, "gateway-http": gateway_http.url},
        }
    finally:
        example_http.stop()
        gateway_http.stop()


def statuses(listing: str) -> dict[str, str]:
    """`name: ... - status` lines, as both `mcp list` commands print them, by name."""
    found = {}
    for line in listing.splitlines():
        m = re.match(r"^\W*([\w-]+): .* - (.+?)\s*$", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def claude_env(home: Path) -> dict[str, str]:
    """Claude Code keeps its settings in $CLAUDE_CONFIG_DIR (else ~/.claude.json) and its logs
    in the XDG cache; its auto-update, telemetry and error reports are off."""
    return client_env(home, CLAUDE_CONFIG_DIR=str(home / ".claude"), DISABLE_AUTOUPDATER="1",
                      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
                      DISABLE_ERROR_REPORTING="1")


def test_claude_code_connects_to_each_server(servers, tmp_path):
    claude = installed(CLAUDE)
    # `claude mcp add` writes the project's entry (scope `local`).
    env = claude_env(tmp_path / "home")
    project = tmp_path / "project"
    project.mkdir()
    for name, command in servers["stdio"].items():
        must(run_client([claude, "mcp", "add", name, "--", *command], env, project))
    for name, url in servers["http"].items():
        must(run_client([claude, "mcp", "add", "--transport", "http", name, url], env, project))
    must(run_client([claude, "mcp", "add", BROKEN, "--", "false"], env, project))

    listing = must(run_client([claude, "mcp", "list"], env, project)).stdout
    got = statuses(listing)
    assert set(got) == {*servers["stdio"], *servers["http"], BROKEN}, listing
    for name, status in got.items():
        # The failed one says why after a dash: `✘ Failed to connect — CONNECTION_CLOSED: ...`.
        assert status.startswith("✘ Failed to connect" if name == BROKEN else "✔ Connected"), \
            listing


def test_gemini_cli_connects_to_each_server_in_a_trusted_folder(servers, tmp_path):
    gemini = installed(GEMINI)
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    # $GEMINI_CLI_HOME/.gemini holds the user's settings and the trusted folders. In a folder
    # not trusted, Gemini CLI starts no server and `mcp list` shows each "Disabled".
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
    }))
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(project): "TRUST_FOLDER"}))
    env = client_env(home, GEMINI_CLI_HOME=str(home), GEMINI_TELEMETRY_ENABLED="false")
    # `gemini mcp add` writes the project's .gemini/settings.json (scope `project`).
    for name, command in servers["stdio"].items():
        must(run_client([gemini, "mcp", "add", name, *command], env, project))
    for name, url in servers["http"].items():
        must(run_client([gemini, "mcp", "add", "--transport", "http", name, url], env, project))
    must(run_client([gemini, "mcp", "add", BROKEN, "false"], env, project))

    # The list is written to stderr.
    listing = must(run_client([gemini, "mcp", "list"], env, project)).stderr
    got = statuses(listing)
    expected = {**{n: "Connected" for n in [*servers["stdio"], *servers["http"]]},
                BROKEN: "Disconnected"}
    assert got == expected, listing


def inspector(target: list[str], env: dict[str, str], cwd: Path, *args: str) -> dict[str, Any]:
    # After `--`, the server's own options are not taken for the Inspector's (`--config`). A
    # URL's transport is said, not guessed from its path.
    transport = ["--transport", "http"] if target[0].startswith("http") else []
    out = must(run_client([installed(INSPECTOR), "--cli", "--format", "json", *transport, *args,
                           "--", *target], env, cwd))
    return json.loads(out.stdout)


@pytest.mark.parametrize("server", ["disco-stdio", "disco-http", "gateway-stdio", "gateway-http"])
def test_inspector_lists_and_calls_with_misspellings(servers, tmp_path, server):
    """A misspelled tool name and a misspelled argument key, corrected by the server. The
    Inspector looks a name up in tools/list before it calls (and exits 5 without calling if it
    is not there), so the misspelled name goes through `execute_tool`, which both servers list;
    the misspelled key goes in a direct call as well."""
    env = client_env(tmp_path / "home")
    example = server.startswith("disco")
    transport = "stdio" if server.endswith("stdio") else "http"
    target = servers["stdio"][server] if transport == "stdio" else [servers["http"][server]]
    # The Inspector starts a stdio server with the variables it is given (the HTTP example
    # has its own).
    options = ["-e", "DISCO_SEARCH=all"] if example and transport == "stdio" else []
    if example:
        tool, misspelled = "interop_forecast", "interop_forcast"
        wrong_key, right_key = "cty", "city"
    else:
        tool, misspelled = "memory.search_nodes", "memory.serch_nodes"
        wrong_key, right_key = "qurey", "query"
    arguments = {wrong_key: "Oslo"}

    listed = inspector(target, env, tmp_path, *options, "--method", "tools/list")
    names = {t["name"] for t in listed["result"]["tools"]}
    assert {tool, "tool_search", "execute_tool"} <= names, sorted(names)
    assert misspelled not in names

    def check(result: dict[str, Any], name_fixed: bool) -> None:
        assert result.get("isError") is not True, result
        fixes = result["_meta"]["disco/corrections"]
        assert [(f["from"], f["to"]) for f in fixes["arguments"]] == [(wrong_key, right_key)], \
            fixes
        if name_fixed:
            assert (fixes["tool"]["requested"], fixes["tool"]["resolved"]) == (misspelled, tool)
        else:
            assert "tool" not in fixes, fixes
        if example:
            assert result["structuredContent"]["city"] == "Oslo", result
        else:
            # server-memory's answer to the corrected search: the entity its store holds.
            [content] = result["content"]
            assert [e["name"] for e in json.loads(content["text"])["entities"]] == ["Oslo"], \
                content

    call = [*options, "--method", "tools/call", "--tool-name"]
    direct = inspector(target, env, tmp_path, *call, tool,
                       "--tool-args-json", json.dumps(arguments))["result"]
    check(direct, name_fixed=False)
    through = inspector(target, env, tmp_path, *call, "execute_tool", "--tool-args-json",
                        json.dumps({"name": misspelled, "arguments": arguments}))["result"]
    check(through, name_fixed=True)


def test_a_request_beyond_the_loopback_is_refused_at_once(tmp_path):
    """The proxy variables hold for the clients whose answer says why a server failed: the
    Inspector's CLI and Claude Code (a native binary) each connect to NO_NETWORK for FAR, and
    are refused, instead of looking its name up. (Gemini CLI's `mcp list` says only
    `Disconnected`.)"""
    inspector_cli = installed(INSPECTOR)
    result = run_client([inspector_cli, "--cli", "--format", "json", "--transport", "http",
                         "--method", "tools/list", "--", FAR],
                        client_env(tmp_path / "inspector"), tmp_path)
    # The error is written to stderr, as JSON.
    assert result.returncode != 0, result.stdout
    assert "ECONNREFUSED 127.0.0.1:9" in result.stderr, (result.stdout, result.stderr[-4000:])

    claude = installed(CLAUDE)
    env = claude_env(tmp_path / "claude")
    must(run_client([claude, "mcp", "add", "--transport", "http", "far", FAR], env, tmp_path))
    listing = must(run_client([claude, "mcp", "list"], env, tmp_path)).stdout
    assert statuses(listing)["far"].startswith("✘ Failed to connect — ECONNREFUSED"), listing
