//! The sync model: ops record dispatches without submitting or waiting; a full batch is submitted
//! by itself; reading a value submits the rest and waits. One test in its own binary, so that no
//! other test's ops move the batch (`devices.rs` has many threads recording at once).

use switchyard::ops::{add, sum};
use switchyard::{Device, Tensor};
use switchyard_backends::wgpu::{recorded_dispatches, synchronize};
use switchyard_tests_wgpu::gpu_or_skip;

#[test]
fn ops_record_and_reads_submit() {
    if !gpu_or_skip("ops_record_and_reads_submit") {
        return;
    }
    let x = Tensor::from_fn(&[1000], |i| i as f32).to(Device::Wgpu);
    synchronize().unwrap();
    assert_eq!(recorded_dispatches(), 0);
    let mut t = x.clone();
    for _ in 0..5 {
        t = add(&t, &x);
    }
    assert_eq!(
        recorded_dispatches(),
        5,
        "five ops, recorded and not submitted"
    );
    let total = sum(&t); // 1000 elements: one reduction pass
    assert_eq!(recorded_dispatches(), 6);
    // Reading the value submits the batch and waits: 6 · (0 + 1 + … + 999) = 2997000.
    assert_eq!(total.to_vec::<f32>(), [2_997_000.0]);
    assert_eq!(recorded_dispatches(), 0);
    // A long chain is submitted in batches as it is recorded, never more than a batch pending.
    for _ in 0..100 {
        t = add(&t, &x);
        assert!(recorded_dispatches() <= 32);
    }
    assert_eq!(t.to_vec::<f32>()[999], 106.0 * 999.0);
}
