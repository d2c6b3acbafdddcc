#!/usr/bin/env python3
"""Serves an HTTP MCP server that takes its port from an environment variable (as
`@modelcontextprotocol/server-everything streamableHttp` takes `PORT`) the way bench/loadgen
starts servers: it is given `--http 127.0.0.1:0` and expects `LISTENING http://...` first.

    listen_env.py --port-env PORT --path /mcp -- COMMAND [ARGS...] --http 127.0.0.1:0

Picks a free loopback port, sets the variable, prints the LISTENING line and `exec`s the
command, so the process loadgen measures is the server's own. loadgen retries connecting
while the server starts.
"""
import argparse
import os
import sys

from launch import exec_listening, free_port, loadgen_tail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-env", required=True)
    ap.add_argument("--path", default="/mcp")
    ap.add_argument("command", nargs="+", help="the server, after --")
    argv, _, stateless = loadgen_tail(sys.argv[1:])
    a = ap.parse_args(argv)
    if stateless:
        sys.exit("listen_env.py: sessions only")
    port = free_port()
    os.environ[a.port_env] = str(port)
    exec_listening(f"http://127.0.0.1:{port}{a.path}", a.command)


if __name__ == "__main__":
    main()
