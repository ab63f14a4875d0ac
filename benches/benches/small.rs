//! Small tensors beside `ndarray` in one run, interleaved: a 1-element and a 16-element `add`
//! including its result (`add(&x, &y)` against `&a + &b` on `Array1<f32>`), and a tensor made
//! from a 1-element `Vec<f32>` (`Tensor::from_vec` against `Array1::from_vec`). The ratios are
//! what count: `small/switchyard_*` over `small/ndarray_*`. `small/six_atomic_rmw` times the
//! uncontended atomic read-modify-writes a 1-element `add` pays and `ndarray` does not (see below).
//!
//! `cargo bench -p switchyard-benches -- small/`

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use ndarray::Array1;
use switchyard::Tensor;
use switchyard::ops::add;

fn small(c: &mut Criterion) {
    let mut group = c.benchmark_group("small");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group.sample_size(50);
    for n in [1usize, 16] {
        let x = Tensor::from_fn(&[n], |i| i as f32);
        let y = Tensor::from_fn(&[n], |i| 2.0 * i as f32);
        let a = Array1::from_shape_fn(n, |i| i as f32);
        let b = Array1::from_shape_fn(n, |i| 2.0 * i as f32);
        group.bench_function(format!("switchyard_add_{n}"), |bench| {
            bench.iter(|| add(black_box(&x), black_box(&y)))
        });
        group.bench_function(format!("ndarray_add_{n}"), |bench| {
            bench.iter(|| black_box(&a) + black_box(&b))
        });
    }
    group.bench_function("switchyard_from_vec_1", |bench| {
        bench.iter(|| Tensor::from_vec::<f32>(black_box(vec![1.0]), &[1]))
    });
    group.bench_function("ndarray_from_vec_1", |bench| {
        bench.iter(|| Array1::from_vec(black_box(vec![1.0f32])))
    });
    // The floor the atomics set: a 1-element `add` takes and releases a read borrow of each
    // operand's storage (an atomic increment and decrement each), and dropping its result
    // decrements the header's strong and weak counts: six uncontended read-modify-writes that
    // `ndarray` (no sharing between threads, no borrow guards) does not pay.
    let counter = AtomicUsize::new(0);
    group.bench_function("six_atomic_rmw", |bench| {
        bench.iter(|| {
            for _ in 0..3 {
                black_box(&counter).fetch_add(1, Ordering::Acquire);
                black_box(&counter).fetch_sub(1, Ordering::Release);
            }
        })
    });
    group.finish();
}

criterion_group!(group, small);
