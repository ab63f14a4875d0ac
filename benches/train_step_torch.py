"""PyTorch's twin of `benches/benches/train_step.rs`: one training step of the spirals MLP.

The same model ([2, 64, 64, 2], ReLU; nn.Linear's default init, uniform in ±1/sqrt(fan_in),
which `switchyard_examples::mlp::Mlp::new` copies), the same data (the spirals of
`switchyard_examples::spirals`, ported below: SplitMix64 from seed 12, 2 × 2048 points, 2 turns,
noise 0.04; one fixed batch of the first 64 or 4096 points), the same optimizer (Adam, lr 0.01,
PyTorch's defaults otherwise) and the same step: zero_grad, forward, cross_entropy, backward,
step. Each step is timed with a clock read around it; the median over many steps after a
warm-up is reported, at 1 thread and at PyTorch's default thread count.

    python3 benches/train_step_torch.py            # prints a table; --json for machine output
    python3 benches/train_step_torch.py --autocast bf16   # the forward pass under torch.autocast
                                                          # ("cpu", bfloat16), as `train_step/bf16_autocast`
"""

import argparse
import json
import math
import statistics
import time

import torch
import torch.nn.functional as F

MASK = (1 << 64) - 1


class SplitMix64:
    """`switchyard_examples::spirals::SplitMix64`, bit for bit."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next_u64() >> 11) * 2.0**-53

    def normal(self):
        u1 = 1.0 - self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(math.tau * u2)


def spirals(per_class=2048, turns=2.0, noise=0.04, seed=12):
    """`Spirals::generate(SpiralsConfig::bench())`: points [N, 2] f32, labels [N] i64."""
    rng = SplitMix64(seed)
    points, labels = [], []
    for _ in range(per_class):
        for cls in range(2):
            r = math.sqrt(rng.uniform())
            angle = math.tau * turns * r + math.pi * cls
            x = r * math.cos(angle) + noise * rng.normal()
            y = r * math.sin(angle) + noise * rng.normal()
            points.append([x, y])
            labels.append(cls)
    return torch.tensor(points, dtype=torch.float32), torch.tensor(labels, dtype=torch.int64)


def mlp(widths=(2, 64, 64, 2)):
    layers = []
    for i, (n_in, n_out) in enumerate(zip(widths, widths[1:])):
        layers.append(torch.nn.Linear(n_in, n_out))
        if i + 2 < len(widths):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def time_steps(batch, threads, steps, warmup, autocast=None):
    torch.set_num_threads(threads)
    torch.manual_seed(7)
    x, y = spirals()
    x, y = x[:batch].contiguous(), y[:batch].contiguous()
    model = mlp()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        if autocast is None:
            loss = F.cross_entropy(model(x), y)
        else:
            # PyTorch's recipe, as `train_step_mixed`: forward and loss under autocast,
            # backward and step outside it.
            with torch.autocast("cpu", dtype=autocast):
                loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--steps", type=int, default=None, help="timed steps per case")
    parser.add_argument("--batch", type=int, action="append", help="a batch size (64 and 4096 by default)")
    parser.add_argument("--threads", type=int, action="append", help="a thread count (1 and the default by default)")
    parser.add_argument("--autocast", choices=["bf16", "f16"], help="the forward pass under torch.autocast to this dtype")
    args = parser.parse_args()
    autocast = {"bf16": torch.bfloat16, "f16": torch.float16, None: None}[args.autocast]

    default_threads = torch.get_num_threads()
    rows = []
    for threads in args.threads or sorted({1, default_threads}):
        for batch in args.batch or (64, 4096):
            steps = args.steps or (2000 if batch == 64 else 200)
            median = time_steps(batch, threads, steps, warmup=100, autocast=autocast)
            rows.append({"batch": batch, "threads": threads, "steps": steps, "median_ms": median * 1e3})
    torch.set_num_threads(default_threads)
    if args.json:
        print(json.dumps({"torch": torch.__version__, "rows": rows}))
        return
    print(f"PyTorch {torch.__version__}, default threads {default_threads}, autocast {args.autocast or 'off'}")
    print(f"{'batch':>6} {'threads':>8} {'median ms/step':>15}")
    for r in rows:
        print(f"{r['batch']:>6} {r['threads']:>8} {r['median_ms']:>15.3f}")


if __name__ == "__main__":
    main()
