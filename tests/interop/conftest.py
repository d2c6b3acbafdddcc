"""Fixtures for the client tests: the `conformance` example server, started per transport.

The server binary comes from `DISCO_CONFORMANCE_BIN` (set by `.ci/test`), else the release build
under `$CARGO_TARGET_DIR` (default `target/`). Every server binds 127.0.0.1 on a port the
kernel picks (`--port 0`; the server prints its URL as its first stdout line) and is stopped
by its PID when the session ends.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Small enough that tools/list takes several pages.
PAGE_SIZE = 4
MODES = ("legacy", "auto")
TRANSPORTS = ("stdio", "http", "http-stateless")


def built_binary(variable: str, profile: str, name: str) -> str:
    """The binary `variable` names, else `<target>/<profile>/examples/<name>`."""
    explicit = os.environ.get(variable)
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return str(target / profile / "examples" / name)


def server_binary() -> str:
    return built_binary("DISCO_CONFORMANCE_BIN", "release", "conformance")


# Variables that configure the server: a server gets only those its test sets.
SERVER_SETTINGS = ("DISCO_SEARCH", "DISCO_SEMANTIC_MODEL", "DISCO_SEMANTIC_CACHE")


class HttpServer:
    """One `conformance --port 0` process; its URL is read from the first stdout line.

    `binary` defaults to `server_binary()`; `env` adds to the page size and log level.
    """

    def __init__(self, stateless: bool, binary: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        args = [binary or server_binary(), "--port", "0"] + (["--stateless"] if stateless else [])
        env = {**{k: v for k, v in os.environ.items() if k not in SERVER_SETTINGS},
               "DISCO_PAGE_SIZE": str(PAGE_SIZE), "RUST_LOG": "warn", **(env or {})}
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.stderr, env=env, text=True)
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=30)
        if not line or not line[0].startswith("DISCO_LISTENING "):
            self.stop()
            raise RuntimeError(f"server did not start: {line!r}\n{self.stderr_text()}")
        self.url = line[0].split()[1]

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def http_servers():
    if not Path(server_binary()).is_file():
        pytest.fail(f"server binary not found: {server_binary()} (cargo build --release --example conformance)")
    servers: dict[str, HttpServer] = {}
    try:
        servers["http"] = HttpServer(stateless=False)
        servers["http-stateless"] = HttpServer(stateless=True)
        yield servers
    finally:
        for server in servers.values():
            server.stop()
            if server.proc.returncode not in (0, -15):
                sys.stderr.write(f"server exited with {server.proc.returncode}:\n{server.stderr_text()}\n")


@pytest.fixture(params=[(m, t) for t in TRANSPORTS for m in MODES], ids=lambda p: f"{p[0]}-{p[1]}")
def cell(request, http_servers):
    """One cell of the matrix: (mode, transport, target)."""
    mode, transport = request.param
    if transport == "stdio":
        target = None
    else:
        server = http_servers[transport]
        if server.proc.poll() is not None:
            pytest.fail(f"{transport} server died:\n{server.stderr_text()}")
        target = server.url
    return mode, transport, target
