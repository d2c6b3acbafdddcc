#!/usr/bin/env python3
"""disco versus plain rmcp on the same ten tools: calls/s, latency and server CPU per call over
stdio and loopback HTTP at concurrency 1, 16 and 64, as same-run ratios disco/rmcp.

    CARGO_TARGET_DIR=/work/target-bench cargo build --release -p loadgen -p disco-tools -p rmcp-tools
    python3 bench/rmcp_compare.py [--rounds 9] [--pin-server 0 --pin-driver 1] [--out bench/results/rmcp.json]

Three servers: disco (bench/disco-tools), rmcp with its router built once and stored (the
baseline the 5% target is measured against) and rmcp as its README writes it
(`#[tool_router(server_handler)]`, which rebuilds the router on every call).

Each round runs the servers back to back (alternating which goes first) on the same
transport and concurrency, so a ratio compares two runs seconds apart on the same noisy
machine: the rounds are paired. Reported: the median over rounds, with min and max; for
disco/rmcp the median of the paired rounds' ratios with its 90% bootstrap lower bound (the
10th percentile of the medians of 10,000 resamples of the rounds, a fixed seed, so one-sided
90%); server CPU and context switches per call of each.

`--pin-server CPUS` and `--pin-driver CPUS` pin the server and loadgen with `taskset -c`
(the server as `taskset -c CPUS SERVER`, which execs it, so loadgen still measures the
server's own process). Unpinned by default.

`--calls-beside` adds a fourth series in the same rounds, `disco-beside`: disco-tools with
`HttpOptions::calls_beside` on (a session's calls beside rmcp's session loop; stdio and stateless
HTTP serve as without it), reported on its own lines against rmcp.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(os.path.dirname(__file__), "..", "target"))
BIN = os.path.join(TARGET, "release")
TRANSPORTS = [("stdio", []), ("http", []), ("http-stateless", ["--stateless"])]
CONCURRENCY = [1, 16, 64]


SERVERS = {
    "disco": ("disco-tools", []),
    "rmcp": ("rmcp-tools", []),
    "rmcp-readme": ("rmcp-tools", ["--server-arg", "--router-per-call"]),
}
# With --calls-beside: disco again with `HttpOptions::calls_beside` on, as a series of its own.
BESIDE = ("disco-beside", ("disco-tools", ["--server-arg", "--calls-beside"]))


def run(series, transport, extra, conc, requests, pin_server=None, pin_driver=None):
    binary, server_args = SERVERS[series]
    server = ["--server", os.path.join(BIN, binary)]
    if pin_server:
        server = ["--server", shutil.which("taskset") or "taskset", "--server-arg", "-c",
                  "--server-arg", pin_server, "--server-arg", os.path.join(BIN, binary)]
    driver = ["taskset", "-c", pin_driver] if pin_driver else []
    cmd = [*driver, os.path.join(BIN, "loadgen"), *server, *server_args,
           "--transport", transport.split("-")[0], *extra, "--concurrency", str(conc),
           "--requests", str(requests), "--warmup", str(max(500, requests // 10)),
           "--max-seconds", "60"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        sys.exit(f"loadgen failed: {' '.join(cmd)}\n{out.stderr}")
    return json.loads(out.stdout)


def lower_bound(values, level=0.90, resamples=10_000, seed=0):
    """One-sided bootstrap lower bound of the median of paired-round values: the (1 - level)
    quantile of the medians of `resamples` resamples with replacement."""
    if not values:
        return float("nan")
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples))
    return medians[int((1 - level) * (resamples - 1))]


def mmm(values, fmt="{:.0f}"):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--stdio-requests", type=int, default=20000)
    ap.add_argument("--http-requests", type=int, default=8000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--transports", default="stdio,http,http-stateless")
    ap.add_argument("--concurrency", default=",".join(map(str, CONCURRENCY)))
    ap.add_argument("--pin-server", default=None, help="CPU list for the server (taskset -c)")
    ap.add_argument("--pin-driver", default=None, help="CPU list for loadgen (taskset -c)")
    ap.add_argument("--calls-beside", action="store_true",
                    help="add the series disco-beside: disco with HttpOptions::calls_beside on")
    a = ap.parse_args()
    if a.calls_beside:
        SERVERS[BESIDE[0]] = BESIDE[1]
    if (a.pin_server or a.pin_driver) and not shutil.which("taskset"):
        sys.exit("taskset not found (util-linux)")
    results = []
    for transport, extra in [t for t in TRANSPORTS if t[0] in a.transports.split(",")]:
        for conc in [int(c) for c in a.concurrency.split(",")]:
            n = a.stdio_requests if transport == "stdio" else a.http_requests
            rows = {s: [] for s in SERVERS}
            for r in range(a.rounds):
                order = list(SERVERS) if r % 2 == 0 else list(reversed(SERVERS))
                for s in order:
                    rows[s].append(run(s, transport, extra, conc, n, a.pin_server, a.pin_driver))
            results.append({"transport": transport, "concurrency": conc, "runs": rows,
                            "pin_server": a.pin_server, "pin_driver": a.pin_driver})
            d, m = rows["disco"], rows["rmcp"]
            ratio = [x["calls_per_s"] / y["calls_per_s"] for x, y in zip(d, m)]
            print(f"{transport:15} c={conc:<3} disco {mmm([x['calls_per_s'] for x in d])}/s "
                  f"rmcp {mmm([x['calls_per_s'] for x in m])}/s ratio {mmm(ratio, '{:.3f}')} "
                  f"(90% lower bound {lower_bound(ratio):.3f})",
                  file=sys.stderr, flush=True)
            if BESIDE[0] in rows:
                b = rows[BESIDE[0]]
                ratio = [x["calls_per_s"] / y["calls_per_s"] for x, y in zip(b, m)]
                cpu = [x["server_cpu_us_per_call"] / y["server_cpu_us_per_call"]
                       for x, y in zip(b, m) if x["server_cpu_us_per_call"] and y["server_cpu_us_per_call"]]
                print(f"{transport:15} c={conc:<3} disco-beside {mmm([x['calls_per_s'] for x in b])}/s "
                      f"ratio to rmcp {mmm(ratio, '{:.3f}')} (90% lower bound {lower_bound(ratio):.3f}), "
                      f"server CPU {mmm(cpu, '{:.3f}')} of rmcp's",
                      file=sys.stderr, flush=True)
    if a.out:
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    print(table(results))


def table(results):
    lines = [
        "| transport | in flight | disco calls/s | rmcp calls/s | **disco/rmcp** | 90% lower bound | rmcp README form calls/s | disco/rmcp README | p50 us disco / rmcp | p99 us disco / rmcp | server CPU us/call disco / rmcp | CPU disco/rmcp | context switches/call disco / rmcp | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        d, m, rd = r["runs"]["disco"], r["runs"]["rmcp"], r["runs"]["rmcp-readme"]
        ratio = [x["calls_per_s"] / y["calls_per_s"] for x, y in zip(d, m)]
        ratio_rd = [x["calls_per_s"] / y["calls_per_s"] for x, y in zip(d, rd)]
        med = lambda rows, k: statistics.median(x[k] for x in rows)
        cpu = lambda rows: statistics.median(x["server_cpu_us_per_call"] or 0 for x in rows)
        switches = lambda rows: statistics.median(x.get("server_context_switches_per_call") or 0 for x in rows)
        cpu_ratios = [(x["server_cpu_us_per_call"] or 0) / y["server_cpu_us_per_call"]
                      for x, y in zip(d, m) if y["server_cpu_us_per_call"]]
        cpu_ratio = statistics.median(cpu_ratios) if cpu_ratios else float("nan")
        errors = sum(x["errors"] for x in d + m + rd)
        lines.append(
            f"| {r['transport']} | {r['concurrency']} | {mmm([x['calls_per_s'] for x in d])} | "
            f"{mmm([x['calls_per_s'] for x in m])} | **{mmm(ratio, '{:.3f}')}** | {lower_bound(ratio):.3f} | "
            f"{mmm([x['calls_per_s'] for x in rd])} | {mmm(ratio_rd, '{:.3f}')} | "
            f"{med(d, 'p50_us'):.0f} / {med(m, 'p50_us'):.0f} | {med(d, 'p99_us'):.0f} / {med(m, 'p99_us'):.0f} | "
            f"{cpu(d):.1f} / {cpu(m):.1f} | {cpu_ratio:.3f} | {switches(d):.2f} / {switches(m):.2f} | {errors} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
