"""Resident memory per upstream tool, disco-gateway beside two peers, in front of the same
scripted upstream (BENCHMARKS.md, "disco-gateway: memory per upstream tool"):

    python3 bench/gateway/peer-tool-memory.py KIND BIN TOOLS [--rounds R] [--catalog FILE]...
                                              [--unlisted SECONDS]

KIND and BIN:
  disco      the disco-gateway binary (stdio downstream);
  fastmcp    a Python with fastmcp installed (FastMCP's `create_proxy`, stdio downstream);
  mcp-proxy  the Rust `mcp-proxy` binary (Streamable HTTP downstream at `/`, 127.0.0.1 only);
  upstream   no proxy (BIN is not read): the upstream itself is asked for its whole
             `tools/list`, and the size of its answers as sent is printed, in bytes a tool.

Each proxy is started with one stdio upstream, disco-gateway/tests/hostile/upstream.py's
`count` scenario (TOOLS tools in pages of 1,000, a two-parameter schema each), or with
`--catalog` its `catalog` scenario (TOOLS tools cycled from the real tools of the FILEs, each
copy renamed with a numeric suffix), is initialized,
and walks the whole `tools/list` (every page) twice, as a client does that lists and lists
again; then its resident memory is read once it has settled (three readings half a second
apart within 1%), with its peak (VmHWM). The proxy's own process only: the upstream is its
child, a process of its own, the same for every KIND. Prints one JSON line per round.
With `--unlisted`, the memory is also read before any `tools/list`: SECONDS after
`initialize` (time for a proxy that fetches its upstream's tools at start to hold them), once
settled, as `unlisted_VmRSS_kB`.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from procmem import settled

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
UPSTREAM = os.path.join(ROOT, "disco-gateway", "tests", "hostile", "upstream.py")

FASTMCP_PROXY = """
import sys
from fastmcp.server import create_proxy
config = {"mcpServers": {"up": {"command": sys.argv[1], "args": sys.argv[2:]}}}
create_proxy(config, name="bench").run(show_banner=False)
"""


class Stdio:
    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.pid = self.p.pid

    def send(self, message):
        self.p.stdin.write(json.dumps(message) + "\n")
        self.p.stdin.flush()

    def request(self, i, method, params):
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit(f"the proxy closed its output during {method}")
            if not line.startswith("{"):
                continue
            m = json.loads(line)
            if m.get("id") == i:
                return m

    def stop(self):
        self.p.kill()
        self.p.wait()


class Http:
    def __init__(self, cmd, port):
        self.p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        self.pid = self.p.pid
        self.url = f"http://127.0.0.1:{port}/"
        self.session = None
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        sys.exit("mcp-proxy did not listen within a minute")

    def post(self, message):
        headers = {"content-type": "application/json",
                   "accept": "application/json, text/event-stream",
                   "mcp-protocol-version": "2025-06-18"}
        if self.session:
            headers["mcp-session-id"] = self.session
        req = urllib.request.Request(self.url, data=json.dumps(message).encode(),
                                     headers=headers, method="POST")
        with urllib.request.urlopen(req, timeout=300) as r:
            self.session = r.headers.get("mcp-session-id") or self.session
            body = r.read().decode()
        if not body.strip():
            return None
        if body.lstrip().startswith("{"):
            return json.loads(body)
        # An event stream: the last `data:` line that holds the answer.
        answers = [json.loads(l[5:]) for l in body.splitlines() if l.startswith("data:")
                   and l[5:].strip().startswith("{")]
        return answers[-1] if answers else None

    def send(self, message):
        self.post(message)

    def request(self, i, method, params):
        return self.post({"jsonrpc": "2.0", "id": i, "method": method, "params": params})

    def stop(self):
        self.p.kill()
        self.p.wait()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(kind, binary, upstream, scratch):
    if kind == "disco":
        cfg = {"mcpServers": {"up": {"command": upstream[0], "args": upstream[1:]}},
               "disco": {"maxTools": 100000, "startupTimeoutMs": 120000,
                         "dataDir": os.path.join(scratch, "state")}}
        path = os.path.join(scratch, "gateway.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        return Stdio([binary, "--config", path])
    if kind == "upstream":
        return Stdio(upstream)
    if kind == "fastmcp":
        return Stdio([binary, "-c", FASTMCP_PROXY] + upstream)
    if kind == "mcp-proxy":
        port = free_port()
        path = os.path.join(scratch, "proxy.toml")
        with open(path, "w") as f:
            f.write("[proxy]\nname = \"bench\"\nseparator = \"/\"\n\n[proxy.listen]\n"
                    f"host = \"127.0.0.1\"\nport = {port}\n\n[[backends]]\nname = \"up\"\n"
                    f"transport = \"stdio\"\ncommand = {json.dumps(upstream[0])}\n"
                    f"args = {json.dumps(upstream[1:])}\n")
        return Http([binary, "--config", path], port)
    sys.exit(f"unknown kind {kind}")


def walk(proxy, first_id):
    """Every page of tools/list; returns the number of tools and the next free id."""
    count, cursor, i = 0, None, first_id
    while True:
        r = proxy.request(i, "tools/list", {"cursor": cursor} if cursor else {})
        i += 1
        if r is None or "result" not in r:
            sys.exit(f"tools/list failed: {str(r)[:300]}")
        count += len(r["result"].get("tools", []))
        cursor = r["result"].get("nextCursor")
        if not cursor:
            return count, i


def json_size(upstream):
    """The upstream's whole `tools/list` as it sends it: the bytes of its answers' lines, and
    of its tools alone written compactly, each over the number of tools."""
    proxy = Stdio(upstream)
    try:
        proxy.request(1, "initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "peer-tool-memory", "version": "1"}})
        sent, compact, count, cursor, i = 0, 0, 0, None, 2
        while True:
            proxy.send({"jsonrpc": "2.0", "id": i, "method": "tools/list",
                        "params": {"cursor": cursor} if cursor else {}})
            line = proxy.p.stdout.readline()
            sent += len(line.encode())
            result = json.loads(line)["result"]
            for t in result["tools"]:
                compact += len(json.dumps(t, separators=(",", ":"), ensure_ascii=False).encode())
            count += len(result["tools"])
            cursor, i = result.get("nextCursor"), i + 1
            if not cursor:
                break
    finally:
        proxy.stop()
    print(json.dumps({"kind": "upstream", "tools": count, "sent_bytes": sent,
                      "sent_bytes_per_tool": round(sent / max(count, 1), 1),
                      "compact_bytes_per_tool": round(compact / max(count, 1), 1)}), flush=True)


def main():
    kind, binary, tools = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1
    catalogs = [sys.argv[k + 1] for k, a in enumerate(sys.argv[:-1]) if a == "--catalog"]
    unlisted = (float(sys.argv[sys.argv.index("--unlisted") + 1])
                if "--unlisted" in sys.argv else None)
    upstream = ([sys.executable, UPSTREAM, "catalog", f"n{tools}"] + catalogs if catalogs
                else [sys.executable, UPSTREAM, "count", f"n{tools}"])
    if kind == "upstream":
        json_size(upstream)
        return
    for _ in range(rounds):
        scratch = tempfile.mkdtemp(prefix="peer-tool-memory-")
        proxy = start(kind, binary, upstream, scratch)
        try:
            r = proxy.request(1, "initialize", {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "peer-tool-memory", "version": "1"}})
            if r is None or "result" not in r:
                sys.exit(f"initialize failed: {str(r)[:300]}")
            proxy.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            before = {}
            if unlisted is not None:
                time.sleep(unlisted)
                before = {"unlisted_VmRSS_kB": settled(proxy.pid)["VmRSS"]}
            # The gateway lists its upstream's tools in the background after `initialize`;
            # a peer may list them at the first request. Either way, the count is waited for.
            # `walks` counts the lists walked, those before the count was reached included.
            listed, i, walks = 0, 2, 1
            t0 = time.monotonic()
            while time.monotonic() - t0 < 120:
                listed, i = walk(proxy, i)
                if listed >= tools:
                    break
                time.sleep(0.5)
                walks += 1
            listed, i = walk(proxy, i)
            m = settled(proxy.pid)
            print(json.dumps({"kind": kind, "tools": tools, "listed": listed, "walks": walks + 1,
                              "VmRSS_kB": m["VmRSS"], "VmHWM_kB": m["VmHWM"], **before}),
                  flush=True)
        finally:
            proxy.stop()
            shutil.rmtree(scratch, ignore_errors=True)


main()
