//! One training step of the spirals MLP (`examples/train.rs`'s model, `[2, 64, 64, 2]` with ReLU):
//! forward, `cross_entropy`, backward, an `Adam` step, on the CPU, at batch 64 and 4096 (one fixed
//! batch of the spirals, so every step does the same work). `benches/train_step_torch.py` times
//! the same model, init scheme, data and optimizer in PyTorch; `examples/train_profile.rs` shows
//! where the time goes.
//!
//! `train_step/bf16_autocast` and `train_step/f16_autocast` time the same step in mixed precision
//! (`train --autocast`): the forward pass under autocast, `f16` with a gradient scaler.
//!
//! `cargo bench -p switchyard-benches -- train_step/`

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group};
use switchyard::DType;
use switchyard::autocast::GradScaler;
use switchyard::ops::narrow;
use switchyard::optim::Adam;
use switchyard_examples::mlp::{Mlp, SPIRALS_WIDTHS, train_step, train_step_mixed};
use switchyard_examples::spirals::{Spirals, SpiralsConfig};

/// The batch sizes timed; the data holds the largest.
const BATCHES: [usize; 2] = [64, 4096];

fn train_steps(c: &mut Criterion) {
    let (x, y) = Spirals::generate(SpiralsConfig::bench())
        .tensors()
        .expect("the spirals fit in memory");
    let mut group = c.benchmark_group("train_step");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group.sample_size(30);
    for batch in BATCHES {
        let (xb, yb) = (narrow(&x, 0, 0, batch), narrow(&y, 0, 0, batch));
        let model = Mlp::new(&SPIRALS_WIDTHS, 7).expect("the model's parameters");
        let mut adam = Adam::new(model.parameters(), 0.01);
        group.bench_function(BenchmarkId::new("batch", batch), |b| {
            b.iter(|| train_step(&model, &mut adam, &xb, &yb).expect("a training step"))
        });
        for (name, dtype) in [("bf16_autocast", DType::BF16), ("f16_autocast", DType::F16)] {
            let model = Mlp::new(&SPIRALS_WIDTHS, 7).expect("the model's parameters");
            let mut adam = Adam::new(model.parameters(), 0.01);
            let mut scaler = (dtype == DType::F16).then(GradScaler::new);
            group.bench_function(BenchmarkId::new(name, batch), |b| {
                b.iter(|| {
                    train_step_mixed(&model, &mut adam, &xb, &yb, Some(dtype), scaler.as_mut())
                        .expect("a mixed-precision training step")
                })
            });
        }
    }
    group.finish();
}

criterion_group!(group, train_steps);
