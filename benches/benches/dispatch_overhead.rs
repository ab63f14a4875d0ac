//! Typed dispatch overhead: the same trivial kernel called directly and through a two-tensor op,
//! side by side in one run. The difference of the medians is the dispatcher's cost per call.
//!
//! `pick` returns a tensor (an atomic reference-count increment and, when dropped, decrement);
//! `ranks` returns a number, so no atomic latency hides the dispatcher's instructions.

use std::hint::black_box;

use criterion::{Criterion, criterion_group};
use switchyard::Tensor;
use switchyard_benches::{pick, pick_direct, ranks, ranks_direct, try_pick};

fn dispatch_overhead(c: &mut Criterion) {
    let x = Tensor::vector(&[1.0, 2.0]);
    let y = Tensor::vector(&[3.0, 4.0]);
    let (x, y) = (&x, &y);
    let mut group = c.benchmark_group("dispatch_overhead");
    group.bench_function("pick_direct", |b| {
        b.iter(|| pick_direct(black_box(x), black_box(y)))
    });
    group.bench_function("pick_dispatched", |b| {
        b.iter(|| pick(black_box(x), black_box(y)))
    });
    group.bench_function("pick_dispatched_try", |b| {
        b.iter(|| try_pick(black_box(x), black_box(y)))
    });
    group.bench_function("ranks_direct", |b| {
        b.iter(|| ranks_direct(black_box(x), black_box(y)))
    });
    group.bench_function("ranks_dispatched", |b| {
        b.iter(|| ranks(black_box(x), black_box(y)))
    });
    group.finish();
}

criterion_group!(group, dispatch_overhead);
