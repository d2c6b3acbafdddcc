#!/usr/bin/env python3
"""The Rust `mcp-proxy` 0.6.0 (crates.io) in front of one stdio upstream, served over
Streamable HTTP at `/`: a peer of disco-gateway for bench/gateway_bench.py, driven by
bench/loadgen.

    mcp_proxy.py --bin PATH [--name NAME] -- COMMAND [ARGS...] --http 127.0.0.1:0

loadgen appends `--http 127.0.0.1:0`; mcp-proxy takes its address from a TOML file, so this
picks a free loopback port, writes the configuration (one stdio backend, audit and metrics
off, log level `error`) into a pipe the proxy reads as `/dev/fd/N`, prints
`LISTENING http://127.0.0.1:PORT/` and `exec`s mcp-proxy, so the process loadgen measures is
the proxy's own. loadgen retries connecting while the proxy starts.

mcp-proxy names each tool `NAME/TOOL` (its separator `/`, NAME the backend's name, `up`
unless given): the calls must use those names (gateway_bench.py passes `--call up/echo=...`).

Install, pinned, outside the workspace:

    cargo install --locked mcp-proxy --version 0.6.0 --root target/bench-tools/mcp-proxy
"""
import argparse
import json
import os
import sys

from launch import exec_listening, free_port, loadgen_tail


def toml_string(s):
    # JSON string escapes are valid TOML basic-string escapes for what appears here.
    return json.dumps(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the mcp-proxy binary")
    ap.add_argument("--name", default="up", help="the backend's name, its tools' namespace")
    ap.add_argument("command", nargs="+", help="the upstream, after --")
    argv, _, stateless = loadgen_tail(sys.argv[1:])
    a = ap.parse_args(argv)
    if stateless:
        sys.exit("mcp_proxy.py: this peer serves sessions only")
    port = free_port()
    command, args = a.command[0], a.command[1:]
    config = "\n".join([
        "[proxy]",
        'name = "mcp-proxy-bench"',
        'separator = "/"',
        "[proxy.listen]",
        'host = "127.0.0.1"',
        f"port = {port}",
        "[[backends]]",
        f"name = {toml_string(a.name)}",
        'transport = "stdio"',
        f"command = {toml_string(command)}",
        "args = [" + ", ".join(toml_string(x) for x in args) + "]",
        "[observability]",
        "audit = false",
        'log_level = "error"',
        "[observability.metrics]",
        "enabled = false",
        "",
    ])
    read_end, write_end = os.pipe()
    os.write(write_end, config.encode())
    os.close(write_end)
    exec_listening(f"http://127.0.0.1:{port}/", [a.bin, "--config", f"/dev/fd/{read_end}"],
                   keep_fds=[read_end])


if __name__ == "__main__":
    main()
