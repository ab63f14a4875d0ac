//! The GPU backend: each standard op at 64K, 1M and 16M elements (`wgpu_{op}`), and a loop of
//! 100 dependent elementwise ops (`wgpu_loop100`). Every timed iteration ends with
//! `synchronize()`, so the time is the GPU's work, not just its recording. Throughput is in bytes
//! moved to and from GPU memory per call, so criterion prints effective bandwidth.
//!
//! Without an adapter the groups are skipped with a message. On a software adapter (llvmpipe in
//! CI) the numbers measure the CPU running shaders; 16M-element matmul (137 GFLOP) runs only on
//! hardware adapters.

use std::hint::black_box;
use std::time::Duration;
use switchyard::DType;

use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, measurement::WallTime};
use switchyard::ops::{add, div, exp, full, matmul, mean, mul, neg, relu, sub, sum};
use switchyard::{Device, Tensor};
use switchyard_backends::wgpu::{adapter_info, synchronize};

const SIZES: [(&str, usize); 3] = [("64K", 1 << 16), ("1M", 1 << 20), ("16M", 1 << 24)];

fn gpu_tensor(len: usize, offset: f32) -> Tensor {
    Tensor::from_fn(&[len], |i| (i % 1000) as f32 * 0.001 + offset).to(Device::Wgpu)
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
}

/// Times `op` plus the wait for its result.
fn timed(group: &mut BenchmarkGroup<'_, WallTime>, name: &str, op: impl Fn() -> Tensor) {
    group.bench_function(name, |b| {
        b.iter(|| {
            let out = op();
            synchronize().expect("the GPU finished");
            black_box(out)
        })
    });
}

type Binary = fn(&Tensor, &Tensor) -> Tensor;
type Unary = fn(&Tensor) -> Tensor;

fn elementwise_and_reductions(c: &mut Criterion) {
    let binary: [(&str, Binary); 4] = [("add", add), ("sub", sub), ("mul", mul), ("div", div)];
    let unary: [(&str, Unary); 5] = [
        ("neg", neg),
        ("relu", relu),
        ("exp", exp),
        ("sum", sum),
        ("mean", mean),
    ];
    for (name, op) in binary {
        let mut group = c.benchmark_group(format!("wgpu_{name}"));
        configure(&mut group);
        for (label, len) in SIZES {
            let (x, y) = (gpu_tensor(len, -0.5), gpu_tensor(len, 1.0));
            group.throughput(Throughput::Bytes(3 * 4 * len as u64));
            timed(&mut group, label, || op(&x, &y));
        }
        group.finish();
    }
    for (name, op) in unary {
        let mut group = c.benchmark_group(format!("wgpu_{name}"));
        configure(&mut group);
        for (label, len) in SIZES {
            let x = gpu_tensor(len, -0.5);
            let written = if name == "sum" || name == "mean" {
                0
            } else {
                1
            };
            group.throughput(Throughput::Bytes((1 + written) * 4 * len as u64));
            timed(&mut group, label, || op(&x));
        }
        group.finish();
    }
    let mut group = c.benchmark_group("wgpu_full");
    configure(&mut group);
    for (label, len) in SIZES {
        group.throughput(Throughput::Bytes(4 * len as u64));
        timed(&mut group, label, || {
            full(&[len], 1.5, DType::F32, Device::Wgpu)
        });
    }
    group.finish();
}

/// Square matrices with 64K, 1M and 16M elements.
fn matmuls(c: &mut Criterion, hardware: bool) {
    let mut group = c.benchmark_group("wgpu_matmul");
    configure(&mut group);
    for (label, side) in [("64K", 256), ("1M", 1024), ("16M", 4096)] {
        if side == 4096 && !hardware {
            println!(
                "wgpu_matmul/16M skipped: 137 GFLOP per call is out of reach of a software adapter"
            );
            continue;
        }
        let x = Tensor::from_fn(&[side, side], |i| (i % 7) as f32 * 0.1).to(Device::Wgpu);
        let y = Tensor::from_fn(&[side, side], |i| (i % 5) as f32 * 0.1).to(Device::Wgpu);
        group.throughput(Throughput::Elements(2 * (side as u64).pow(3)));
        timed(&mut group, label, || matmul(&x, &y));
    }
    group.finish();
}

/// 100 dependent elementwise ops on 1M elements: recorded in batches and waited for once, against
/// the same loop waiting after every op. In the warm loop every output comes from the pool.
fn loop100(c: &mut Criterion) {
    let len = 1 << 20;
    let (x, y) = (gpu_tensor(len, -0.5), gpu_tensor(len, 0.25));
    let step = |t: &Tensor, i: usize| match i % 3 {
        0 => add(t, &y),
        1 => mul(t, &y),
        _ => relu(t),
    };
    let mut group = c.benchmark_group("wgpu_loop100");
    configure(&mut group);
    group.throughput(Throughput::Elements(100 * len as u64));
    group.bench_function("batched", |b| {
        b.iter(|| {
            let mut t = x.clone();
            for i in 0..100 {
                t = step(&t, i);
            }
            synchronize().expect("the GPU finished");
            black_box(t)
        })
    });
    group.bench_function("wait_each_op", |b| {
        b.iter(|| {
            let mut t = x.clone();
            for i in 0..100 {
                t = step(&t, i);
                synchronize().expect("the GPU finished");
            }
            black_box(t)
        })
    });
    group.finish();
    if let Some(stats) = switchyard_backends::wgpu::pool_stats() {
        println!("wgpu buffer pool after the benches: {stats:?}");
    }
}

fn wgpu(c: &mut Criterion) {
    let info = match adapter_info() {
        Ok(info) => info,
        Err(error) => {
            println!("wgpu benches skipped: {error}");
            return;
        }
    };
    println!(
        "wgpu benches on {} ({:?}, {:?})",
        info.name, info.backend, info.device_type
    );
    elementwise_and_reductions(c);
    matmuls(c, info.device_type != wgpu::DeviceType::Cpu);
    loop100(c);
}

criterion_group!(group, wgpu);
