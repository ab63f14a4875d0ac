//! Where a training step of the spirals MLP spends its time: the step timed as
//! `benches/train_step_torch.py` times PyTorch's (a clock read around each step, the median over
//! many after a warm-up), split into its phases (forward with the loss, backward, optimizer),
//! then `switchyard::profile()` of the same steps: per op, the calls per step and the *self*
//! time (its call's time minus the op calls inside it), so the rows add up to the time spent in
//! ops.
//!
//! ```text
//! cargo run --release -p switchyard-benches --example train_profile -- [batch] [steps]
//! ```

use std::time::{Duration, Instant};

use switchyard::modes::{Profile, profile};
use switchyard::ops::{narrow, try_cross_entropy};
use switchyard::optim::{Adam, Optimizer};
use switchyard_backends as _; // the kernels: named, so that the linker keeps them
use switchyard_examples::mlp::{Mlp, SPIRALS_WIDTHS, train_step};
use switchyard_examples::spirals::{Spirals, SpiralsConfig};

fn main() {
    let mut args = std::env::args().skip(1);
    let batch: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(64);
    let steps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let (x, y) = Spirals::generate(SpiralsConfig::bench())
        .tensors()
        .expect("the spirals fit in memory");
    let (x, y) = (narrow(&x, 0, 0, batch), narrow(&y, 0, 0, batch));
    let model = Mlp::new(&SPIRALS_WIDTHS, 7).expect("the model's parameters");
    let mut adam = Adam::new(model.parameters(), 0.01);
    let step = |adam: &mut Adam| train_step(&model, adam, &x, &y).expect("a training step");

    for _ in 0..steps.min(100) {
        step(&mut adam);
    }
    let mut times: Vec<Duration> = (0..steps)
        .map(|_| {
            let start = Instant::now();
            step(&mut adam);
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    println!(
        "batch {batch}: median step {:.1} µs over {steps} steps (after 100 warm-up steps)",
        micros(times[steps / 2])
    );

    // The phases, each timed around its own calls.
    let mut phases = [Duration::ZERO; 3];
    for _ in 0..steps {
        let t0 = Instant::now();
        adam.zero_grad();
        let loss = try_cross_entropy(&model.forward(&x).unwrap(), &y).unwrap();
        let t1 = Instant::now();
        loss.backward();
        let t2 = Instant::now();
        adam.step().unwrap();
        let t3 = Instant::now();
        for (phase, d) in phases.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2]) {
            *phase += d;
        }
    }
    let total: Duration = phases.iter().sum();
    for (name, d) in ["forward + loss", "backward", "Adam step"]
        .iter()
        .zip(phases)
    {
        println!(
            "  {name:<15} {:>8.1} µs/step  {:>4.1}%",
            micros(d) / steps as f64,
            100.0 * d.as_secs_f64() / total.as_secs_f64()
        );
    }

    let start = Instant::now();
    let ((), p) = profile(|| {
        for _ in 0..steps {
            step(&mut adam);
        }
    });
    let wall = start.elapsed();
    print_self_times(&p, steps, wall);
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Per op: calls per step, self time per step, share of the profiled wall time.
fn print_self_times(p: &Profile, steps: usize, wall: Duration) {
    // A call's self time: its duration less that of the calls one level inside it. Slices are
    // in start order, so a call's children follow it until a slice at its depth or above.
    let mut own: Vec<(&str, u64, Duration)> = Vec::new();
    for (i, s) in p.slices.iter().enumerate() {
        let inner: Duration = p.slices[i + 1..]
            .iter()
            .take_while(|c| c.depth > s.depth)
            .filter(|c| c.depth == s.depth + 1)
            .map(|c| c.duration)
            .sum();
        let self_time = s.duration.saturating_sub(inner);
        match own.iter_mut().find(|(op, _, _)| *op == s.op) {
            Some(row) => {
                row.1 += 1;
                row.2 += self_time;
            }
            None => own.push((s.op, 1, self_time)),
        }
    }
    own.sort_by_key(|row| std::cmp::Reverse(row.2));
    let in_ops: Duration = own.iter().map(|r| r.2).sum();
    println!(
        "profile(): {:.1} µs/step with the profiler on, {:.1} µs/step of it inside ops; the rest \
         is the autograd engine, the optimizer's loop and the profiler",
        micros(wall) / steps as f64,
        micros(in_ops) / steps as f64
    );
    println!(
        "  {:<14} {:>10} {:>12} {:>7}",
        "op", "calls/step", "self µs/step", "share"
    );
    for (op, calls, time) in own.iter().take(16) {
        println!(
            "  {op:<14} {:>10.1} {:>12.1} {:>6.1}%",
            *calls as f64 / steps as f64,
            micros(*time) / steps as f64,
            100.0 * time.as_secs_f64() / wall.as_secs_f64()
        );
    }
}
