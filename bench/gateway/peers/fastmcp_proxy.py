#!/usr/bin/env python3
"""FastMCP's proxy in front of one stdio upstream, served over stdio: a peer of disco-gateway
for bench/gateway_bench.py, driven by bench/loadgen.

    FM/bin/python fastmcp_proxy.py -- COMMAND [ARGS...] [--stdio]

`create_proxy` over a `StdioTransport` of the upstream, as FastMCP's documentation builds a
proxy: the upstream's tools under their own names. loadgen appends `--stdio` to the server's
arguments; one trailing `--stdio` is dropped, since this peer serves stdio only.

FastMCP 4.2.3 with mcp 2.3.0, in a virtual environment of its own (pinned in
requirements-fastmcp.txt next to this file):

    python3 -m venv target/bench-tools/fm
    target/bench-tools/fm/bin/pip install -r bench/gateway/peers/requirements-fastmcp.txt
"""
import os
import sys


def main():
    args = sys.argv[1:]
    if args and args[-1] == "--stdio":
        args = args[:-1]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        sys.exit("usage: fastmcp_proxy.py -- COMMAND [ARGS...]")
    # Quiet and without the banner: the proxy's stdout is the protocol, and its logs cost time.
    os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")
    from fastmcp.client.transports import StdioTransport
    from fastmcp.server import create_proxy

    proxy = create_proxy(StdioTransport(command=args[0], args=args[1:]), name="fastmcp-proxy")
    proxy.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
