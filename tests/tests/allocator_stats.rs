//! The CPU caching allocator's counters when a kernel's output buffer is dropped unused (a kernel
//! that fails after `host_buffer`): the block goes back to the cache, and `allocated` returns to
//! where it was. One test in its own binary, so that no other test's tensors move the counters.

use switchyard::{Device, host_buffer, memory_stats};

#[test]
fn an_output_buffer_dropped_unused_is_returned_to_the_allocator() {
    // Larger than a tensor header keeps inline, so it comes from the caching allocator.
    let len = 4096;
    let before = memory_stats(Device::Cpu).unwrap();
    let mut buffer = host_buffer::<f32>("allocator_stats", len).unwrap();
    buffer.push(1.0);
    let during = memory_stats(Device::Cpu).unwrap();
    assert!(
        during.allocated >= before.allocated + len * 4,
        "{before:?} -> {during:?}"
    );
    drop(buffer); // as a kernel's `?` would, before the buffer became a tensor
    let after = memory_stats(Device::Cpu).unwrap();
    assert_eq!(after.allocated, before.allocated, "{before:?} -> {after:?}");
    assert!(
        after.cached >= len * 4,
        "the block is cached for reuse: {after:?}"
    );
}
