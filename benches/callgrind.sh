#!/usr/bin/env bash
# Instructions per call of the trivial two-tensor op, direct and dispatched, counted by callgrind.
# Counts at two N are subtracted, so start-up and first-use table building cancel out.
# Usage: benches/callgrind.sh   (from the workspace root; needs valgrind)
set -euo pipefail
cargo build --release -q -p switchyard-benches --bin dispatch_calls
bin=target/release/dispatch_calls
count() { # mode calls -> total instructions
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
small=1000000
large=2000000
declare -A per_call
for mode in pick_direct pick_dispatched ranks_direct ranks_dispatched typed_ranks_direct typed_ranks_dispatched ranks_one_layer ranks_boxed_fallback; do
  a=$(count "$mode" "$small")
  b=$(count "$mode" "$large")
  per_call[$mode]=$(( (b - a) / (large - small) ))
  echo "$mode: $(( b - a )) instructions for $(( large - small )) calls = ${per_call[$mode]} per call"
done
echo "dispatch overhead, tensor-returning kernel: $(( per_call[pick_dispatched] - per_call[pick_direct] )) instructions per call"
echo "dispatch overhead, number-returning kernel: $(( per_call[ranks_dispatched] - per_call[ranks_direct] )) instructions per call"
echo "dispatch overhead, typed (f32 dtype bit) number-returning kernel: $(( per_call[typed_ranks_dispatched] - per_call[typed_ranks_direct] )) instructions per call"
echo "one redispatching layer: $(( per_call[ranks_one_layer] - per_call[ranks_dispatched] )) instructions per call over the plain dispatched call"
echo "typed call through a boxed fallback: $(( per_call[ranks_boxed_fallback] - per_call[ranks_dispatched] )) instructions per call over the plain dispatched call"
