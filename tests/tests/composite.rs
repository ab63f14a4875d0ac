//! An op with a body: the body is the op's composite kernel, used at backend keys that have no
//! kernel of their own, and written in terms of other ops.

use switchyard::ops::{add, mul};
use switchyard::{DispatchKey, SlotOrigin, Tensor, find_op, kernel, op};
use switchyard_backends as _;
use switchyard_example_downstream::to_toy;

/// `x * x + x`, decomposed into standard ops: runs wherever `mul` and `add` run.
#[op]
pub fn square_plus(x: &Tensor) -> Tensor {
    add(&mul(x, x), x)
}

#[test]
fn body_runs_where_no_kernel_exists() {
    let x = Tensor::vector(&[1.0, 2.0, -3.0]);
    assert_eq!(square_plus(&x).to_vec(), [2.0, 6.0, 6.0]);
    // On the toy device too: the decomposition reaches the toy kernels of `mul` and `add`.
    let toy = square_plus(&to_toy(&x).unwrap());
    assert_eq!(toy.device(), switchyard::Device::PrivateUse1);
    assert_eq!(toy.to_vec(), [2.0, 6.0, 6.0]);
    let handle = find_op("square_plus").unwrap();
    assert!(handle.has_composite());
    assert_eq!(
        handle.slot(DispatchKey::CpuNaive).unwrap(),
        SlotOrigin::Composite
    );
    assert_eq!(
        handle.slot(DispatchKey::CpuSimd).unwrap(),
        SlotOrigin::Composite
    );
    // Composites serve backend keys (and autograd keys) only; a functionality key with nothing
    // registered stays missing, and a mode key gets the mode's fallback.
    assert_eq!(
        handle.slot(DispatchKey::Custom1).unwrap(),
        SlotOrigin::Missing
    );
    assert!(matches!(
        handle.slot(DispatchKey::BuiltinTrace).unwrap(),
        SlotOrigin::Fallback(meta) if meta.name == "record_call"
    ));
    assert_eq!(
        handle.slot(DispatchKey::Tracing).unwrap(),
        SlotOrigin::Missing,
        "`Tracing` is the users' key: the library registers nothing there"
    );
    assert!(handle.table_dump().contains("[composite]"));
}

/// Has a body and a naive kernel: the kernel wins at its key.
#[op]
pub fn twice(x: &Tensor) -> f32 {
    let _ = x;
    -1.0 // the composite's answer, distinguishable from the kernel's
}

#[kernel(op = "twice", key = CpuNaive)]
fn twice_naive(x: &Tensor) -> f32 {
    2.0 * x.cpu_data().unwrap()[0]
}

#[test]
fn a_kernel_beats_the_body_and_simd_falls_through_to_it() {
    let x = Tensor::scalar(4.0);
    // CpuSimd has no kernel, but the CPU does: the call falls through to the naive kernel rather
    // than being shadowed by the decomposition.
    assert_eq!(twice(&x), 8.0);
    let handle = twice::handle();
    assert_eq!(
        handle.slot(DispatchKey::CpuSimd).unwrap(),
        SlotOrigin::Fallthrough
    );
    assert!(
        matches!(handle.slot(DispatchKey::CpuNaive).unwrap(), SlotOrigin::Kernel(m) if m.name == "twice_naive")
    );
    // A device without a kernel of its own gets the body.
    assert_eq!(
        handle.slot(DispatchKey::PrivateUse1).unwrap(),
        SlotOrigin::Composite
    );
    assert_eq!(twice(&to_toy(&x).unwrap()), -1.0);
}
