#!/usr/bin/env bash
# The rebuild of the root package's test binaries after a change to the runtime (BENCHMARKS.md,
# "Integration tests as one binary"), with CI's settings (.ci/test): RUNS times (default 3)
# touch disco-runtime/src/lib.rs and rebuild with `cargo test -p disco --no-run`, printing wall
# and CPU (user + sys) seconds; then the size of the test binaries cargo lists. Build once
# before, so that the dependencies are built. Run it on each commit to compare, alternating.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
export CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}
export CARGO_PROFILE_DEV_BUILD_OVERRIDE_DEBUG=${CARGO_PROFILE_DEV_BUILD_OVERRIDE_DEBUG:-0}
log=$(mktemp)
times=$(mktemp)
trap 'rm -f "$log" "$times"' EXIT
cargo test -p disco --no-run >"$log" 2>&1 || { cat "$log"; exit 1; }
for run in $(seq "${RUNS:-3}"); do
  touch disco-runtime/src/lib.rs
  /usr/bin/time -f "%e %U %S" -o "$times" cargo test -p disco --no-run >"$log" 2>&1
  read -r wall user sys <"$times"
  echo "run $run: $wall s wall, $(echo "$user + $sys" | bc) s CPU (load $(cut -d' ' -f1-3 /proc/loadavg))"
done
# `Executable tests/x.rs (target/debug/deps/x-hash)`: the paths in parentheses.
sed -n 's/.*Executable .*(\(.*\))$/\1/p' "$log" | while read -r bin; do
  [ -e "$bin" ] || bin="${CARGO_TARGET_DIR:-target}/${bin#target/}"
  echo "$bin"
done | xargs du -cb | awk '{ printf "%8.1f MB  %s\n", $1 / 1e6, $2 }'
