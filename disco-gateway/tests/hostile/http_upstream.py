"""A scripted MCP upstream over Streamable HTTP for the gateway's hostile suite (tests/hostile.rs):
raw JSON-RPC in POST bodies, no SDK, stateless (no session ids, no GET stream).

    python3 http_upstream.py LABEL

It binds 127.0.0.1 on a free port and prints `PORT <n>`; it stops when its stdin closes.
Its tools: `small` answers a short text; `huge_json` answers 2 MiB as one JSON body with its
`Content-Length`, `huge_chunked` as one chunked JSON body (no length said), and `huge_sse` as
one event of an SSE stream; `endless_sse` starts an SSE event and never ends it (it writes until
the gateway hangs up); `huge_error` answers a JSON-RPC error of 300 KB.
LABEL is put in every answer, so that a test knows which upstream answered.
"""
from __future__ import annotations

import itertools
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LABEL = sys.argv[1] if len(sys.argv) > 1 else "http"
BIG = "x" * (2 * 1024 * 1024)
TOOLS = [{"name": name, "description": f"A tool of {LABEL}.",
          "inputSchema": {"type": "object"}}
         for name in ["small", "huge_json", "huge_chunked", "huge_sse", "endless_sse",
                      "huge_error"]]


def result(rid, value) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "result": value}


def text(rid, body: str) -> dict:
    return result(rid, {"content": [{"type": "text", "text": body}]})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def reply(self, status: int, body: bytes = b"", kind: str = "application/json") -> None:
        self.send_response(status)
        if body:
            self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the gateway stopped reading an answer over its limit

    def stream(self, kind: str, chunks) -> None:
        """Answers 200 with a chunked body of `chunks`, until they end or the gateway hangs up."""
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for chunk in chunks:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the gateway stopped reading an answer over its limit
        self.close_connection = True

    def do_GET(self) -> None:
        self.reply(405)

    def do_DELETE(self) -> None:
        self.reply(405)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        message = json.loads(self.rfile.read(length) or b"{}")
        rid = message.get("id")
        method = message.get("method")
        if rid is None:
            self.reply(202)
            return
        if method == "initialize":
            answer = result(rid, {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": f"hostile-http-{LABEL}", "version": "1"}})
        elif method == "tools/list":
            answer = result(rid, {"tools": TOOLS})
        elif method == "tools/call":
            name = (message.get("params") or {}).get("name")
            if name == "huge_sse":
                data = json.dumps(text(rid, BIG)).encode()
                self.reply(200, b"event: message\ndata: " + data + b"\n\n", "text/event-stream")
                return
            if name == "huge_chunked":
                data = json.dumps(text(rid, BIG)).encode()
                self.stream("application/json",
                            (data[i:i + 65536] for i in range(0, len(data), 65536)))
                return
            if name == "endless_sse":
                head = b'event: message\ndata: {"jsonrpc": "2.0", "id": ' + json.dumps(rid).encode()
                self.stream("text/event-stream",
                            itertools.chain([head], itertools.repeat(b"x" * 65536)))
                return
            if name == "huge_json":
                answer = text(rid, BIG)
            elif name == "huge_error":
                answer = {"jsonrpc": "2.0", "id": rid,
                          "error": {"code": -32000, "message": "e" * 300_000}}
            else:
                answer = text(rid, f"{LABEL}:{name}")
        elif method == "ping":
            answer = result(rid, {})
        else:
            answer = {"jsonrpc": "2.0", "id": rid,
                      "error": {"code": -32601, "message": "no such method"}}
        self.reply(200, json.dumps(answer).encode())


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"PORT {server.server_address[1]}", flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
