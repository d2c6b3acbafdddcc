"""The gateway's resident memory with scripted upstreams of ordinary tools (BENCHMARKS.md,
"disco-gateway: memory per upstream tool"):

    python3 bench/gateway/tool-memory.py GATEWAY_BIN UPSTREAM_PY TOOLS [SERVERS]

UPSTREAM_PY is disco-gateway/tests/hostile/upstream.py (its `count` scenario: TOOLS / SERVERS
tools per server, in pages of 1,000, each with a two-parameter schema). Prints VmRSS and VmHWM
after `initialize` and a first `tools/list`, then stops the gateway. Loopback only: the
gateway serves stdio and its upstreams are its own children.
"""
import json
import shutil
import subprocess
import sys
import tempfile
import time

gw, script, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
servers = int(sys.argv[4]) if len(sys.argv) > 4 else 1
cfg = {"mcpServers": {f"s{k}": {"command": "python3", "args": [script, "count", f"n{n // servers}"]}
                      for k in range(servers)},
       "disco": {"maxTools": 100000, "startupTimeoutMs": 120000,
                 # The tool pins of this run, removed with it: none of the user's state.
                 "dataDir": tempfile.mkdtemp(prefix="disco-gateway-bench-")}}
config = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
config.write(json.dumps(cfg))
config.close()
p = subprocess.Popen([gw, "--config", config.name], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def req(i, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i:
            return m


req(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "tool-memory", "version": "1"}})
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
p.stdin.flush()
req(2, "tools/list", {})
time.sleep(1)
status = open(f"/proc/{p.pid}/status").read()
print(n, servers, [l for l in status.splitlines() if l.startswith(("VmRSS", "VmHWM"))])
p.kill()
shutil.rmtree(cfg["disco"]["dataDir"], ignore_errors=True)
