#!/usr/bin/env bash
# Compile time and binary size of the three 100-tool crates made by gen.py (disco, rmcp, plain).
#   python3 bench/compile/gen.py /tmp/tools100 && bash bench/compile/measure.sh /tmp/tools100
# Per crate, in release mode with its own target dir: a clean build (dependencies included),
# then a rebuild after touching src/main.rs (the crate alone: what the macros cost on every
# edit), then the binary's size as built and stripped. Prints one Markdown row per crate.
set -euo pipefail
OUT=${1:?usage: measure.sh OUT_DIR}
echo "| crate | clean release build s | rebuild after touching main.rs s | binary bytes | stripped bytes |"
echo "|---|---|---|---|---|"
for kind in plain rmcp disco; do
  dir=$OUT/$kind
  export CARGO_TARGET_DIR=$dir/target
  rm -rf "$CARGO_TARGET_DIR"
  (cd "$dir" && cargo fetch -q)
  t0=$(date +%s.%N)
  (cd "$dir" && cargo build --release -q)
  t1=$(date +%s.%N)
  touch "$dir/src/main.rs"
  (cd "$dir" && cargo build --release -q)
  t2=$(date +%s.%N)
  bin=$(find "$CARGO_TARGET_DIR/release" -maxdepth 1 -type f -name "tools100-$kind")
  size=$(stat -c %s "$bin")
  strip -o "$bin.stripped" "$bin"
  ssize=$(stat -c %s "$bin.stripped")
  printf "| %s | %.1f | %.1f | %s | %s |\n" "$kind" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$size" "$ssize"
done
