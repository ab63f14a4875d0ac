#!/usr/bin/env bash
# Instructions per call, counted by callgrind. Counts at two N are subtracted, so start-up and
# first-use table building cancel out.
#   benches/callgrind.sh         the trivial two-tensor op, direct and dispatched
#   benches/callgrind.sh small   small tensors beside ndarray: 1-, 16- and 1024-element `add` and
#                                1024-element `relu` with their results, a tensor from a 1-element
#                                `Vec`; instructions and heap allocations (`malloc`s, from
#                                memcheck's heap summary) per call
# Run from the workspace root; needs valgrind.
set -euo pipefail
if [[ "${1:-}" == small ]]; then
  cargo build --release -q -p switchyard-benches --example small_calls
  bin=target/release/examples/small_calls
  instructions() { # mode calls -> total instructions
    "$bin" "$1" 1 # fails loudly (a panic) before counting
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 |
      sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
  }
  allocations() { # mode calls -> total heap allocations
    valgrind --tool=memcheck --leak-check=no "$bin" "$1" "$2" 2>&1 |
      sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,
  }
  small=100000
  large=200000
  for mode in switchyard_add_1 ndarray_add_1 switchyard_add_16 ndarray_add_16 switchyard_add_1024 ndarray_add_1024 \
    switchyard_relu_1024 ndarray_relu_1024 switchyard_from_vec_1 ndarray_from_vec_1 switchyard_from_slice_1 \
    ndarray_from_slice_1; do
    i=$(( $(instructions "$mode" "$large") - $(instructions "$mode" "$small") ))
    m=$(( $(allocations "$mode" "$large") - $(allocations "$mode" "$small") ))
    echo "$mode: $(( i / (large - small) )) instructions, $(( m / (large - small) )) mallocs per call (over $(( large - small )) calls: $i instructions, $m mallocs)"
  done
  exit 0
fi
cargo build --release -q -p switchyard-benches --bin dispatch_calls
bin=target/release/dispatch_calls
count() { # mode calls -> total instructions
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
small=1000000
large=2000000
declare -A per_call
for mode in pick_direct pick_dispatched ranks_direct ranks_dispatched typed_ranks_direct typed_ranks_dispatched ranks_one_layer ranks_boxed_fallback pick_boxed_fallback; do
  a=$(count "$mode" "$small")
  b=$(count "$mode" "$large")
  # Rounded: the counts differ from a whole number by a few instructions per million calls.
  per_call[$mode]=$(( (b - a + (large - small) / 2) / (large - small) ))
  echo "$mode: $(( b - a )) instructions for $(( large - small )) calls = ${per_call[$mode]} per call"
done
echo "dispatch overhead, tensor-returning kernel: $(( per_call[pick_dispatched] - per_call[pick_direct] )) instructions per call"
echo "dispatch overhead, number-returning kernel: $(( per_call[ranks_dispatched] - per_call[ranks_direct] )) instructions per call"
echo "dispatch overhead, typed (f32 dtype bit) number-returning kernel: $(( per_call[typed_ranks_dispatched] - per_call[typed_ranks_direct] )) instructions per call"
echo "one redispatching layer: $(( per_call[ranks_one_layer] - per_call[ranks_dispatched] )) instructions per call over the plain dispatched call"
echo "typed call through a boxed fallback: $(( per_call[ranks_boxed_fallback] - per_call[ranks_dispatched] )) instructions per call over the plain dispatched call"
echo "typed call through a boxed fallback, tensor-returning kernel: $(( per_call[pick_boxed_fallback] - per_call[pick_dispatched] )) instructions per call over the plain dispatched call"
