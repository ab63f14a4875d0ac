//! The buffer pool: a loop of dependent ops reuses its buffers instead of creating one per op.
//! One test in its own binary, so that no other test's buffers move the counters.

use switchyard::ops::{add, mul, relu};
use switchyard::{Device, Tensor};
use switchyard_backends::wgpu::{empty_cache, pool_stats, synchronize};
use switchyard_tests_wgpu::gpu_or_skip;

/// 100 dependent elementwise ops over `len` elements, with `x`'s buffer reused each step.
fn hundred_ops(x: &Tensor, y: &Tensor) -> Tensor {
    let mut t = x.clone();
    for step in 0..100 {
        t = match step % 3 {
            0 => add(&t, y),
            1 => mul(&t, y),
            _ => relu(&t),
        };
    }
    t
}

#[test]
fn a_loop_of_ops_reuses_pooled_buffers() {
    if !gpu_or_skip("a_loop_of_ops_reuses_pooled_buffers") {
        return;
    }
    let len = 100_003;
    let x = Tensor::from_fn(&[len], |i| (i % 7) as f32 - 3.0).to(Device::Wgpu);
    let y = Tensor::from_fn(&[len], |i| (i % 5) as f32 * 0.25).to(Device::Wgpu);
    // Warm up: the first loop fills the pool.
    drop(hundred_ops(&x, &y));
    synchronize().unwrap();
    let before = pool_stats().expect("the context exists");
    let result = hundred_ops(&x, &y);
    let after = pool_stats().unwrap();
    assert_eq!(
        after.created, before.created,
        "no buffer created in a warm loop: {before:?} -> {after:?}"
    );
    assert_eq!(after.reused - before.reused, 100, "{before:?} -> {after:?}");
    // The results are right all the same (the CPU computes the same loop).
    let expected = hundred_ops(&x.to(Device::Cpu), &y.to(Device::Cpu));
    assert_eq!(result.to_vec::<f32>(), expected.to_vec::<f32>());
    // At most the loop's two live tensors' worth of buffers of that size sit idle, plus staging.
    drop(result);
    let idle = pool_stats().unwrap();
    assert!(idle.idle_buffers <= 4, "{idle:?}");
    empty_cache();
    assert_eq!(pool_stats().unwrap().idle_bytes, 0);
}
