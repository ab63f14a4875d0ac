"""PyTorch's column for the `peers` tables: the same ops, sizes, data and timing as `peers`.

The ops `add`, `mul`, `exp`, `relu`, `sum`, `mean` at 1K, 64K, 1M and 16M `f32` elements and
`matmul` at 64², 256², 1024², on the same inputs (uniform in [-1, 1) from SplitMix64, seeds 1 and
2: `src/data.rs`, ported below and checked against its first values), timed the same way: a
warm-up, then rounds of samples of at least 10 ms (2 ms with --quick), the median time per call.
Called from Python as PyTorch users call it, so each call includes Python's own overhead (about
a microsecond, which is most of a 1K op). Single-threaded (`torch.set_num_threads(1)`), then at
PyTorch's default thread count. PyTorch runs in this process alone, not interleaved with the
Rust libraries: its ratio in the tables is the less certain one.

    python3 torch_peers.py [--quick] [--only OP] [--json PATH]
    cargo run --release -- --torch PATH ...     # adds PyTorch's columns to the tables
"""

import argparse
import datetime
import json
import statistics
import sys
import time

import numpy as np
import torch

GAMMA = np.uint64(0x9E3779B97F4A7C15)
SEEDS = (1, 2)
# `src/data.rs`'s test `first_values_match_the_python_port`: the first values of seed 1, as bits.
FIRST_VALUES = [0x3E085168, 0x3EFBAE34, 0x3F712744, 0xBDE3E7A0]

OPS = {
    "add": (2, torch.add),
    "mul": (2, torch.mul),
    "exp": (1, torch.exp),
    "relu": (1, torch.relu),
    "sum": (1, torch.sum),
    "mean": (1, torch.mean),
    "matmul": (2, torch.matmul),
}
ELEMENTS = [1 << 10, 1 << 16, 1 << 20, 1 << 24]
MATMUL = [64, 256, 1024]


def uniform(seed, length):
    """`data::uniform`: SplitMix64 in its counter form, top 24 bits, 2u - 1, all in float32."""
    z = np.uint64(seed) + np.arange(1, length + 1, dtype=np.uint64) * GAMMA
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)
    return np.float32(2.0) * u - np.float32(1.0)


def cases(only):
    for op in OPS:
        if only is None or only == op:
            for size in MATMUL if op == "matmul" else ELEMENTS:
                yield op, size


def label(op, size):
    if op == "matmul":
        return f"{size}²"
    return f"{size >> 20}M" if size >= 1 << 20 else f"{size >> 10}K"


def work(op, size):
    """(amount, unit) per call: bytes read and written, or floating-point operations."""
    if op == "matmul":
        return 2.0 * size**3, "GFLOP/s"
    moved = {"add": 3, "mul": 3, "exp": 2, "relu": 2, "sum": 1, "mean": 1}[op]
    return 4.0 * moved * size, "GB/s"


def sample(call, calls):
    start = time.perf_counter_ns()
    for _ in range(calls):
        call()
    return (time.perf_counter_ns() - start) / calls


def measure(call, plan):
    """`measure.rs`: doubling warm-up batches (two at least), then `rounds` samples."""
    warmup_ns, sample_ns, rounds = plan
    start, batch = time.perf_counter_ns(), 1
    while True:
        per_call = sample(call, batch)
        if batch >= 2 and time.perf_counter_ns() - start >= warmup_ns:
            break
        batch *= 2
    calls = max(1, int(-(-sample_ns // max(per_call, 1.0))))
    return statistics.median(sample(call, calls) for _ in range(rounds))


def fmt_time(ns):
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= scale:
            return f"{significant(ns / scale)} {unit}"
    return f"{significant(ns)} ns"


def significant(value):
    decimals = 0 if value >= 100 else 1 if value >= 10 else 2 if value >= 1 else 3
    return f"{value:.{decimals}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 rounds of samples >= 2 ms")
    parser.add_argument("--only", choices=list(OPS), help="one op")
    parser.add_argument("--json", metavar="PATH", help="write the results for `peers --torch`")
    args = parser.parse_args()

    bits = uniform(SEEDS[0], 4).view(np.uint32).tolist()
    if bits != FIRST_VALUES:
        sys.exit(f"torch_peers.py: the data differs from src/data.rs: {bits} != {FIRST_VALUES}")
    plan = (20e6, 2e6, 5) if args.quick else (200e6, 10e6, 15)
    default_threads = torch.get_num_threads()
    settings = []
    for setting, threads in (("single", 1), ("default", default_threads)):
        torch.set_num_threads(threads)
        print(f"\n**{setting}**: PyTorch {torch.__version__}, {threads} thread(s)\n")
        print("| op | size | PyTorch |\n|---|---:|---:|")
        rows = []
        for op, size in cases(args.only):
            arity, fn = OPS[op]
            shape = (size, size) if op == "matmul" else (size,)
            length = size * size if op == "matmul" else size
            inputs = [torch.from_numpy(uniform(s, length).reshape(shape)) for s in SEEDS[:arity]]
            median_ns = measure(lambda: fn(*inputs), plan)
            amount, unit = work(op, size)
            rate = significant(amount / median_ns)
            print(f"| `{op}` | {label(op, size)} | {fmt_time(median_ns)} · {rate} {unit} |", flush=True)
            rows.append({"op": op, "size": size, "median_ns": median_ns})
        settings.append({"setting": setting, "threads": threads, "rows": rows})
    torch.set_num_threads(default_threads)

    if args.json:
        options = (["--quick"] if args.quick else []) + (["--only", args.only] if args.only else [])
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        report = {
            "library": f"PyTorch {torch.__version__}",
            "options": " ".join(options),
            "date": now,
            "settings": settings,
        }
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)
            out.write("\n")


if __name__ == "__main__":
    main()
