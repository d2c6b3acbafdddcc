#!/usr/bin/env python3
"""disco-gateway's cost: what it adds to a call over a direct connection to the same upstream,
and its start-up time and memory in front of many upstreams.

    cargo build --release -p loadgen -p disco-tools -p disco-gateway
    python3 bench/gateway_bench.py [--rounds 3] [--out bench/results/gateway.json]

Calls: bench/loadgen drives bench/disco-tools directly, and disco-gateway with disco-tools as
its one stdio upstream (`"namespace": "none"`, so loadgen's exact names stay exact), over stdio
and loopback HTTP (with sessions), 1 and 16 in flight; the two run back to back in alternating
order each round. Reported: median calls/s and p50 latency over rounds, the ratios gateway /
direct, and the gateway's own CPU per call (its upstream's is on top, the same as the direct
server's). Over stdio a third series runs beside them: bench/loadgen's pipe_relay, a
process that only copies lines to and from the same upstream, the floor of any gateway that
is a process of its own.

Start-up: 10 upstreams of 100 tools each (bench/disco-tools' catalog_server with synthetic
catalogs, `--list-all`); from spawning the gateway to the last page of its tools/list over
stdio (1,022 tools: each upstream's 100 and its two search meta-tools, and the gateway's two), and the gateway's resident memory then (VmRSS, VmHWM).
Every run is bounded and uses 127.0.0.1 only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BIN = os.path.join(TARGET, "release")
ONE_UPSTREAM = os.path.join(ROOT, "bench", "gateway", "one-upstream.json")


def loadgen(server, server_args, transport, conc, requests, env):
    cmd = [os.path.join(BIN, "loadgen"), "--server", server]
    for a in server_args:
        cmd += ["--server-arg", a]
    cmd += ["--transport", transport, "--concurrency", str(conc), "--requests", str(requests),
            "--warmup", str(max(500, requests // 10)), "--max-seconds", "60"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    if out.returncode != 0:
        sys.exit(f"loadgen failed: {' '.join(cmd)}\n{out.stderr}")
    return json.loads(out.stdout)


def calls(rounds, stdio_requests, http_requests):
    env = {**os.environ, "DISCO_BENCH_UPSTREAM": os.path.join(BIN, "disco-tools"), "RUST_LOG": "error"}
    series = {
        "direct": (os.path.join(BIN, "disco-tools"), []),
        "gateway": (os.path.join(BIN, "disco-gateway"), ["--config", ONE_UPSTREAM]),
        # The floor of any stdio gateway: a process that only copies lines to and from the
        # same upstream (bench/loadgen/src/bin/pipe_relay.rs).
        "relay": (os.path.join(BIN, "pipe_relay"), ["--", os.path.join(BIN, "disco-tools"), "--stdio"]),
    }
    results = []
    for transport in ("stdio", "http"):
        for conc in (1, 16):
            n = stdio_requests if transport == "stdio" else http_requests
            # The relay speaks stdio only.
            here = {s: v for s, v in series.items() if transport == "stdio" or s != "relay"}
            rows = {s: [] for s in here}
            for r in range(rounds):
                for s in (list(here) if r % 2 == 0 else list(reversed(here))):
                    server, args = here[s]
                    rows[s].append(loadgen(server, args, transport, conc, n, env))
            for s in here:
                errors = sum(x["errors"] for x in rows[s])
                if errors:
                    sys.exit(f"{s} {transport} c={conc}: {errors} failed calls")
            d, g = rows["direct"], rows["gateway"]
            med = lambda rs, k: statistics.median(x[k] for x in rs)
            row = {
                "transport": transport, "concurrency": conc,
                "direct_calls_per_s": med(d, "calls_per_s"), "gateway_calls_per_s": med(g, "calls_per_s"),
                "direct_p50_us": med(d, "p50_us"), "gateway_p50_us": med(g, "p50_us"),
                "direct_cpu_us_per_call": med(d, "server_cpu_us_per_call"),
                "gateway_cpu_us_per_call": med(g, "server_cpu_us_per_call"),
                "runs": rows,
            }
            row["p50_ratio"] = row["gateway_p50_us"] / row["direct_p50_us"]
            row["throughput_ratio"] = row["gateway_calls_per_s"] / row["direct_calls_per_s"]
            if "relay" in rows:
                r_ = rows["relay"]
                row["relay_calls_per_s"] = med(r_, "calls_per_s")
                row["relay_p50_us"] = med(r_, "p50_us")
                row["relay_cpu_us_per_call"] = med(r_, "server_cpu_us_per_call")
                row["relay_p50_ratio"] = row["relay_p50_us"] / row["direct_p50_us"]
                print(f"{transport:6} c={conc:<3} relay {row['relay_calls_per_s']:.0f}/s p50 {row['relay_p50_us']:.0f} us "
                      f"(x{row['relay_p50_ratio']:.2f} of direct), relay CPU/call {row['relay_cpu_us_per_call']:.0f} us",
                      file=sys.stderr, flush=True)
            print(f"{transport:6} c={conc:<3} direct {row['direct_calls_per_s']:.0f}/s p50 {row['direct_p50_us']:.0f} us | "
                  f"gateway {row['gateway_calls_per_s']:.0f}/s p50 {row['gateway_p50_us']:.0f} us | "
                  f"p50 x{row['p50_ratio']:.2f} throughput x{row['throughput_ratio']:.2f}", file=sys.stderr, flush=True)
            results.append(row)
    return results


def catalogs(directory, servers, tools):
    paths = []
    verbs = ["get", "list", "create", "update", "delete", "search", "export", "archive", "sync", "count"]
    nouns = ["invoice", "customer", "ticket", "order", "report", "repository", "calendar event",
             "message", "shipment", "document"]
    for s in range(servers):
        items = []
        for t in range(tools):
            verb, noun = verbs[t % 10], nouns[(t // 10) % 10]
            items.append({
                "name": f"{verb}_{noun.replace(' ', '_')}_{t // 100}_{t % 100}",
                "description": f"{verb.capitalize()} a {noun} of service {s}. Returns the {noun} "
                               f"with its id, or an error naming what is missing.",
                "inputSchema": {"type": "object", "properties": {
                    "id": {"type": "string", "description": f"the {noun}'s id"},
                    "limit": {"type": "integer", "description": "how many results at most"}},
                    "required": ["id"]},
                "annotations": {"readOnlyHint": verb in ("get", "list", "search", "count")},
            })
        path = os.path.join(directory, f"service{s}.json")
        with open(path, "w") as f:
            json.dump({"tools": items}, f)
        paths.append(path)
    return paths


def rpc(proc, message):
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def read_id(proc, want):
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the gateway closed its stdout")
        msg = json.loads(line)
        if msg.get("id") == want:
            return msg


def memory_kb(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields


def startup(rounds, servers, tools):
    with tempfile.TemporaryDirectory() as d:
        config = {"mcpServers": {
            f"service{i}": {"command": os.path.join(BIN, "catalog_server"), "args": [p, "--list-all"]}
            for i, p in enumerate(catalogs(d, servers, tools))},
            "disco": {"pageSize": 100}}
        path = os.path.join(d, "servers.json")
        with open(path, "w") as f:
            json.dump(config, f)
        results = []
        for _ in range(rounds):
            t0 = time.monotonic()
            proc = subprocess.Popen([os.path.join(BIN, "disco-gateway"), "--config", path],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True,
                                    env={**os.environ, "RUST_LOG": "error"})
            try:
                rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "gateway-bench", "version": "1"}}})
                read_id(proc, 1)
                t_init = time.monotonic() - t0
                rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
                listed, cursor, rid = 0, None, 2
                while True:
                    rpc(proc, {"jsonrpc": "2.0", "id": rid, "method": "tools/list",
                               "params": {"cursor": cursor} if cursor else {}})
                    result = read_id(proc, rid)["result"]
                    listed += len(result["tools"])
                    cursor = result.get("nextCursor")
                    rid += 1
                    if not cursor:
                        break
                t_list = time.monotonic() - t0
                mem = memory_kb(proc.pid)
            finally:
                proc.stdin.close()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            # Each catalog_server also lists its own two search meta-tools.
            expected = servers * (tools + 2) + 2
            if listed != expected:
                sys.exit(f"listed {listed} tools, expected {expected}")
            results.append({"initialized_s": t_init, "listed_s": t_list, "tools": listed,
                            "rss_kb": mem.get("VmRSS"), "hwm_kb": mem.get("VmHWM")})
            print(f"start-up: initialize answered {t_init * 1000:.0f} ms, {listed} tools listed "
                  f"{t_list * 1000:.0f} ms, RSS {mem.get('VmRSS', 0) / 1024:.1f} MiB "
                  f"(peak {mem.get('VmHWM', 0) / 1024:.1f})", file=sys.stderr, flush=True)
        return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stdio-requests", type=int, default=20000)
    ap.add_argument("--http-requests", type=int, default=8000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", choices=["calls", "startup"], default=None)
    a = ap.parse_args()
    out = {}
    if a.only in (None, "calls"):
        out["calls"] = calls(a.rounds, a.stdio_requests, a.http_requests)
    if a.only in (None, "startup"):
        out["startup"] = startup(max(a.rounds, 3), 10, 100)
    if a.out:
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
