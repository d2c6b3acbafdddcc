#!/usr/bin/env bash
# The official MCP conformance suite against `examples/conformance` over Streamable HTTP.
#
#   tests/interop/conformance.sh SERVER_BINARY NODE22 CONFORMANCE_INDEX_JS PYTHON
#
# Starts the server on 127.0.0.1 (a port the kernel picks), runs the suite's active server
# scenarios plus json-schema-2020-12, stops the server by its PID, and lets
# conformance_summary.py judge the results: it prints one line per scenario and
# `conformance: N passed, M failed, K not applicable`, and exits non-zero when a scenario
# that applies to a tools-only server failed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
server=$1 node=$2 conf=$3 python=$4

work=$(mktemp -d "${TMPDIR:-/tmp}/disco-conformance.XXXXXX")
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

RUST_LOG=warn "$server" --port 0 >"$work/server.out" 2>"$work/server.err" &
SERVER_PID=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/^DISCO_LISTENING //p' "$work/server.out")
  [ -n "$url" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "conformance: the server did not start" >&2
  cat "$work/server.err" >&2
  exit 1
fi
echo "conformance: server pid $SERVER_PID at $url"

# The suite exits 1 when any scenario fails, and the active suite includes resources, prompts
# and completions, which a tools-only server does not offer: the summary decides instead.
"$node" "$conf" server --url "$url" -o "$work/results" >"$work/suite.log" 2>&1 || true
for scenario in json-schema-2020-12 server-sse-polling; do
  "$node" "$conf" server --url "$url" --scenario "$scenario" -o "$work/results" >>"$work/suite.log" 2>&1 || true
done
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  echo "conformance: the server died during the suite" >&2
  cat "$work/server.err" >&2
  exit 1
fi
if ! "$python" "$HERE/conformance_summary.py" "$work/results"; then
  echo "--- suite log (tail) ---" >&2
  tail -n 60 "$work/suite.log" >&2
  exit 1
fi
