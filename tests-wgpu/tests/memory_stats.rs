//! The GPU's buffer pool behind the tensor crate's allocator trait: `memory_stats`,
//! `empty_cache` and `set_cache_limit` of `Device::Wgpu`, as for the CPU. One test in its own
//! binary, so that no other test's buffers move the counters.

use switchyard::{Device, Tensor, empty_cache, memory_stats, set_cache_limit};
use switchyard_backends::wgpu::synchronize;
use switchyard_tests_wgpu::gpu_or_skip;

#[test]
fn memory_stats_and_empty_cache_reach_the_gpu_pool() {
    if !gpu_or_skip("memory_stats_and_empty_cache_reach_the_gpu_pool") {
        return;
    }
    let len = 1 << 20; // 4 MiB of f32: its own size class, well above anything else here
    let bytes = len * 4;
    let x = Tensor::from_fn::<f32>(&[len], |i| i as f32).to(Device::Wgpu);
    synchronize().unwrap();
    let held = memory_stats(Device::Wgpu).expect("the first GPU call registered the pool");
    assert!(held.allocated >= bytes, "{held:?}");
    assert!(held.peak >= held.allocated, "{held:?}");
    assert!(held.system_allocations >= 1 && held.allocations >= held.system_allocations);

    // Dropped, the buffer is cached, not freed: the next tensor of its size reuses it.
    drop(x);
    let idle = memory_stats(Device::Wgpu).unwrap();
    assert_eq!(
        idle.allocated + bytes,
        held.allocated,
        "{held:?} -> {idle:?}"
    );
    assert!(idle.cached >= bytes, "{idle:?}");
    let y = Tensor::from_fn::<f32>(&[len], |i| -(i as f32)).to(Device::Wgpu);
    let reused = memory_stats(Device::Wgpu).unwrap();
    assert_eq!(
        reused.system_allocations, idle.system_allocations,
        "{reused:?}"
    );
    assert_eq!(reused.cached + bytes, idle.cached, "{idle:?} -> {reused:?}");

    // `empty_cache` frees what is idle; live tensors keep theirs.
    assert!(empty_cache(Device::Wgpu));
    let emptied = memory_stats(Device::Wgpu).unwrap();
    assert_eq!(emptied.cached, 0, "{emptied:?}");
    assert_eq!(emptied.allocated, reused.allocated);
    assert_eq!(y.to_vec::<f32>()[1], -1.0);

    // A cache limit of 0: nothing dropped from now on is kept.
    assert!(set_cache_limit(Device::Wgpu, 0));
    drop(y);
    let after = memory_stats(Device::Wgpu).unwrap();
    assert_eq!(after.cached, 0, "{after:?}");
    assert_eq!(after.allocated + bytes, emptied.allocated, "{after:?}");
}
