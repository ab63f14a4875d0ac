//! What the dispatcher's semantics cost, beside the plain typed call in the same run: one
//! redispatching layer, a typed call served by a boxed fallback, a boxed call by name, and a
//! first-use table build.

use std::hint::black_box;

use criterion::{Criterion, criterion_group};
use switchyard::{DispatchKey, Stack, Tensor, Value, find_op, include};
use switchyard_benches::{ranks, ranks_direct};

fn dispatch_layers(c: &mut Criterion) {
    let x = Tensor::vector(&[1.0, 2.0]);
    let y = Tensor::vector(&[3.0, 4.0]);
    let (x, y) = (&x, &y);
    let mut group = c.benchmark_group("dispatch_layers");
    group.bench_function("ranks_direct", |b| {
        b.iter(|| ranks_direct(black_box(x), black_box(y)))
    });
    group.bench_function("ranks_dispatched", |b| {
        b.iter(|| ranks(black_box(x), black_box(y)))
    });
    group.bench_function("ranks_one_layer", |b| {
        let _layer = include(DispatchKey::Custom1);
        b.iter(|| ranks(black_box(x), black_box(y)))
    });
    group.bench_function("ranks_boxed_fallback", |b| {
        let _boxed = include(DispatchKey::Custom2);
        b.iter(|| ranks(black_box(x), black_box(y)))
    });
    group.bench_function("ranks_boxed_by_name", |b| {
        b.iter(|| {
            let mut stack: Stack = [Value::from(x), Value::from(y)].into_iter().collect();
            switchyard::call_boxed(black_box("bench::ranks"), &mut stack).unwrap();
            stack
        })
    });
    group.finish();
}

fn table_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("table_build");
    // `mul`: two linked kernels plus the linked fallbacks; `bench::ranks`: two kernels.
    for name in ["mul", "bench::ranks"] {
        let op = find_op(name).unwrap();
        group.bench_function(name, |b| b.iter(|| op.compute_table_uncached()));
    }
    group.finish();
}

criterion_group!(group, dispatch_layers, table_build);
