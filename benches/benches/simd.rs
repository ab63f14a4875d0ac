//! The CPU backends side by side: `naive_{op}` (the scalar oracle, through `redispatch` at
//! `CpuNaive`) and `simd_{op}` (the variant dispatch installs on this CPU) at 1K, 64K, 1M and 16M
//! elements, with `copy` (a STREAM-style copy into a preallocated buffer) and `copy_alloc` (a copy
//! into a new `Vec`, which allocates and faults in its output like every op does) of the same
//! byte count. Throughput is in bytes read + written, so ratios to `copy` are bandwidth ratios.
//! `exp`, `log`, `tanh` and `sigmoid` take values in [-4, 4) (`log` their magnitudes, plus 0.001).
//! `avx2_exp` calls the AVX2 `exp` directly at the in-cache sizes, beside the AVX-512 `simd_exp`.
//! `matmul` at 256² and 1024², throughput in FLOP (2·n³).
//!
//! `cargo bench -p switchyard-benches -- 'simd_|naive_|avx2_|copy'`

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use switchyard::ops::{
    add, div, exp, log, matmul, mean, mul, neg, relu, sigmoid, sub, sum, tanh, try_add, try_div,
    try_exp, try_log, try_matmul, try_mean, try_mul, try_neg, try_relu, try_sigmoid, try_sub,
    try_sum, try_tanh,
};
use switchyard::{DispatchKeySet, Result, Tensor};

type Binary = fn(&Tensor, &Tensor) -> Result<Tensor>;
type Unary = fn(&Tensor) -> Result<Tensor>;
type NaiveBinary = fn(DispatchKeySet, &Tensor, &Tensor) -> Result<Tensor>;
type NaiveUnary = fn(DispatchKeySet, &Tensor) -> Result<Tensor>;

const SIZES: [(usize, &str); 4] = [
    (1 << 10, "1K"),
    (1 << 16, "64K"),
    (1 << 20, "1M"),
    (1 << 24, "16M"),
];
const NAIVE: DispatchKeySet = DispatchKeySet::CPU_NAIVE;
const F32: u64 = 4;

fn input(n: usize, seed: u32) -> Tensor {
    // Values in [-4, 4): `exp` stays finite, `div` never divides by zero.
    Tensor::from_fn(&[n], |i| {
        let h = (i as u32 ^ seed).wrapping_mul(0x9E37_79B9) >> 8;
        (h % 8000) as f32 / 1000.0 - 3.999
    })
}

/// The input of a unary op: [`input`], made positive for `log` (values in (0, 4]).
fn unary_input(op: &str, n: usize) -> Tensor {
    let x = input(n, 3);
    if op == "log" {
        let positive: Vec<f32> = x.to_vec::<f32>().iter().map(|v| v.abs() + 0.001).collect();
        Tensor::from_vec(positive, &[n]).unwrap()
    } else {
        x
    }
}

/// Shorter runs for the big sizes: a 16M-element op takes tens of milliseconds.
fn timing(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, n: usize) {
    let big = n >= 1 << 20;
    group.sample_size(if big { 10 } else { 30 });
    group.warm_up_time(Duration::from_millis(if big { 200 } else { 300 }));
    group.measurement_time(Duration::from_millis(if big { 1500 } else { 800 }));
}

fn copies(c: &mut Criterion) {
    for (n, label) in SIZES {
        let src = vec![1.0f32; n];
        let mut dst = vec![0.0f32; n];
        let mut group = c.benchmark_group("copy");
        timing(&mut group, n);
        group.throughput(Throughput::Bytes(2 * F32 * n as u64));
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| dst.copy_from_slice(black_box(&src)))
        });
        group.finish();
        let mut group = c.benchmark_group("copy_alloc");
        timing(&mut group, n);
        group.throughput(Throughput::Bytes(2 * F32 * n as u64));
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| black_box(&src).to_vec())
        });
        group.finish();
    }
}

fn bench_binary(c: &mut Criterion, op: &str, naive: NaiveBinary, simd: Binary) {
    for (n, label) in SIZES {
        let (x, y) = (input(n, 1), input(n, 2));
        for (backend, run) in [("naive", None), ("simd", Some(simd))] {
            let mut group = c.benchmark_group(format!("{backend}_{op}"));
            timing(&mut group, n);
            group.throughput(Throughput::Bytes(3 * F32 * n as u64));
            group.bench_function(BenchmarkId::from_parameter(label), |b| match run {
                Some(run) => b.iter(|| run(black_box(&x), black_box(&y))),
                None => b.iter(|| naive(NAIVE, black_box(&x), black_box(&y))),
            });
            group.finish();
        }
    }
}

fn bench_unary(c: &mut Criterion, op: &str, naive: NaiveUnary, simd: Unary, bytes_per: u64) {
    for (n, label) in SIZES {
        let x = unary_input(op, n);
        for (backend, run) in [("naive", None), ("simd", Some(simd))] {
            let mut group = c.benchmark_group(format!("{backend}_{op}"));
            timing(&mut group, n);
            group.throughput(Throughput::Bytes(bytes_per * n as u64));
            group.bench_function(BenchmarkId::from_parameter(label), |b| match run {
                Some(run) => b.iter(|| run(black_box(&x))),
                None => b.iter(|| naive(NAIVE, black_box(&x))),
            });
            group.finish();
        }
    }
}

fn elementwise_and_reductions(c: &mut Criterion) {
    let binary: [(&str, NaiveBinary, Binary); 4] = [
        ("add", add::redispatch, try_add),
        ("sub", sub::redispatch, try_sub),
        ("mul", mul::redispatch, try_mul),
        ("div", div::redispatch, try_div),
    ];
    for (op, naive, simd) in binary {
        bench_binary(c, op, naive, simd);
    }
    let unary: [(&str, NaiveUnary, Unary, u64); 8] = [
        ("neg", neg::redispatch, try_neg, 2 * F32),
        ("relu", relu::redispatch, try_relu, 2 * F32),
        ("exp", exp::redispatch, try_exp, 2 * F32),
        ("log", log::redispatch, try_log, 2 * F32),
        ("tanh", tanh::redispatch, try_tanh, 2 * F32),
        ("sigmoid", sigmoid::redispatch, try_sigmoid, 2 * F32),
        ("sum", sum::redispatch, try_sum, F32),
        ("mean", mean::redispatch, try_mean, F32),
    ];
    for (op, naive, simd, bytes) in unary {
        bench_unary(c, op, naive, simd, bytes);
    }
}

/// The AVX2 `exp` called directly at the in-cache sizes, beside the AVX-512 one that dispatch
/// installs on an AVX-512 CPU. (Only `exp` kept an AVX-512 variant: for `add`, `div`, `relu` and
/// `sum` the AVX-512 variants measured 0.8–0.93× of AVX2 and were removed.)
#[cfg(target_arch = "x86_64")]
fn avx2_direct(c: &mut Criterion) {
    use switchyard_backends::cpu::simd::avx2;
    if !std::arch::is_x86_feature_detected!("avx2") || !std::arch::is_x86_feature_detected!("fma") {
        return;
    }
    // SAFETY: AVX2 and FMA were detected just above.
    let run: Unary = |x| unsafe { avx2::exp_avx2(x) };
    for (n, label) in &SIZES[..2] {
        let x = input(*n, 3);
        let mut group = c.benchmark_group("avx2_exp");
        timing(&mut group, *n);
        group.throughput(Throughput::Bytes(2 * F32 * *n as u64));
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| run(black_box(&x)))
        });
        group.finish();
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn avx2_direct(_: &mut Criterion) {}

fn matmuls(c: &mut Criterion) {
    for n in [256usize, 1024] {
        let x = Tensor::from_fn(&[n, n], |i| (i % 7) as f32 - 3.0);
        let y = Tensor::from_fn(&[n, n], |i| (i % 5) as f32 - 2.0);
        for backend in ["naive", "simd"] {
            let mut group = c.benchmark_group(format!("{backend}_matmul"));
            group.sample_size(10);
            group.warm_up_time(Duration::from_millis(300));
            group.measurement_time(Duration::from_secs(if n > 256 { 4 } else { 1 }));
            group.throughput(Throughput::Elements(2 * (n * n * n) as u64));
            group.bench_function(BenchmarkId::from_parameter(n), |b| {
                if backend == "naive" {
                    b.iter(|| matmul::redispatch(NAIVE, black_box(&x), black_box(&y)))
                } else {
                    b.iter(|| try_matmul(black_box(&x), black_box(&y)))
                }
            });
            group.finish();
        }
    }
}

criterion_group!(
    group,
    copies,
    elementwise_and_reductions,
    avx2_direct,
    matmuls
);
