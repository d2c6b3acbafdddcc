"""The gateway's resident memory with scripted upstreams of ordinary tools (BENCHMARKS.md,
"disco-gateway: memory per upstream tool"):

    python3 bench/gateway/tool-memory.py GATEWAY_BIN UPSTREAM_PY TOOLS [SERVERS] [--catalog FILE]...

UPSTREAM_PY is disco-gateway/tests/hostile/upstream.py (its `count` scenario: TOOLS / SERVERS
tools per server, in pages of 1,000, each with a two-parameter schema; with `--catalog`, its
`catalog` scenario: as many tools cycled from the real tools of the FILEs). Prints VmRSS, once it
has settled after `initialize` and a first `tools/list`, and the peak VmHWM, then stops the
gateway. Loopback only: the
gateway serves stdio and its upstreams are its own children.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from procmem import settled

catalogs = [sys.argv[k + 1] for k, a in enumerate(sys.argv[:-1]) if a == "--catalog"]
args = [a for k, a in enumerate(sys.argv)
        if a != "--catalog" and (k == 0 or sys.argv[k - 1] != "--catalog")]
gw, script, n = args[1], args[2], int(args[3])
servers = int(args[4]) if len(args) > 4 else 1
scenario = (["catalog", f"n{n // servers}"] + catalogs if catalogs
            else ["count", f"n{n // servers}"])
cfg = {"mcpServers": {f"s{k}": {"command": "python3", "args": [script] + scenario}
                      for k in range(servers)},
       "disco": {"maxTools": 100000, "startupTimeoutMs": 120000,
                 # The tool pins of this run, removed with it: none of the user's state.
                 "dataDir": tempfile.mkdtemp(prefix="disco-gateway-bench-")}}
config = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
config.write(json.dumps(cfg))
config.close()
# WRAP: a profiler's command put before the gateway's (`heaptrack`, `valgrind
# --tool=massif`); the gateway is then stopped by the end of its stdin, so that the profiler
# writes its record, and the memory printed is the profiler's process's, not to be compared.
wrap = os.environ.get("WRAP", "").split()
p = subprocess.Popen(wrap + [gw, "--config", config.name], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def req(i, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    p.stdin.flush()
    while True:
        line = p.stdout.readline()
        if not line.startswith("{"):
            continue  # a profiler's own lines
        m = json.loads(line)
        if m.get("id") == i:
            return m


req(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "tool-memory", "version": "1"}})
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
p.stdin.flush()
req(2, "tools/list", {})


# The catalog may be rebuilt once more after the first answer (an upstream's arrival is a
# change): the memory is read once it has settled.
m = settled(p.pid)
print(f"tools={n} servers={servers} VmRSS={m['VmRSS']} kB VmHWM={m['VmHWM']} kB")
if wrap:
    # The profiler's process is not the gateway: its memory does not tell when the catalog
    # settled, so the gateway is given WRAP_WAIT seconds (default 60) before it is stopped.
    time.sleep(float(os.environ.get("WRAP_WAIT", "60")))
    p.stdin.close()
    p.wait(timeout=600)
else:
    p.kill()
shutil.rmtree(cfg["disco"]["dataDir"], ignore_errors=True)
