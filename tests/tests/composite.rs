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
    assert_eq!(square_plus(&x).to_vec::<f32>(), [2.0, 6.0, 6.0]);
    // On the toy device too: the decomposition reaches the toy kernels of `mul` and `add`.
    let toy = square_plus(&to_toy(&x).unwrap());
    assert_eq!(toy.device(), switchyard::Device::PrivateUse1);
    assert_eq!(toy.to_vec::<f32>(), [2.0, 6.0, 6.0]);
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
    2.0 * x.as_slice::<f32>().unwrap()[0]
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

// ---- bodies that propagate errors ----

use switchyard::DispatchError;
use switchyard::ops::{try_mean, try_sub};

/// Mean squared error, decomposed with the `try_` forms: a failing inner op is this op's error.
#[op(name = "composite::mse")]
pub fn mse(a: &Tensor, b: &Tensor) -> Tensor {
    let diff = try_sub(a, b)?;
    let squared = mul(&diff, &diff);
    try_mean(&squared)
}

/// Declared with no kernel anywhere: every call of it is a dispatch error.
#[op(name = "composite::nowhere")]
pub fn nowhere(x: &Tensor) -> Tensor;

/// Ends in `Ok(…)` and returns early with `return Ok(…)`: both forms a body may take.
#[op(name = "composite::guarded")]
pub fn guarded(x: &Tensor, skip: bool) -> Tensor {
    if skip {
        return Ok(x.clone());
    }
    Ok(add(&try_nowhere(x)?, x))
}

fn panic_message(run: impl FnOnce() -> Tensor) -> String {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
        .expect_err("the plain form panics");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map_or_else(|| "<not a string>".to_owned(), |s| (*s).to_owned()),
    }
}

#[test]
fn a_body_propagates_an_inner_error_through_try() {
    let a = Tensor::vector(&[1.0, 2.0, 3.0]);
    let b = Tensor::vector(&[1.0, 0.0, 1.0]);
    assert_eq!(mse(&a, &b).to_vec::<f32>(), [(0.0 + 4.0 + 4.0) / 3.0]);

    let short = Tensor::vector(&[1.0, 2.0]);
    let inner: DispatchError = try_sub(&a, &short).unwrap_err();
    let err = try_mse(&a, &short).expect_err("mismatched shapes");
    assert_eq!(err.kind(), inner.kind());
    assert_eq!(err.to_string(), inner.to_string());
    assert!(err.to_string().contains("sub"), "{err}");
    // The plain form panics with the inner error's message.
    assert_eq!(panic_message(|| mse(&a, &short)), inner.to_string());
}

#[test]
fn a_body_propagates_a_missing_kernel_and_may_return_early() {
    let x = Tensor::vector(&[1.0]);
    assert_eq!(guarded(&x, true).to_vec::<f32>(), [1.0]);
    let inner = try_nowhere(&x).unwrap_err();
    assert!(inner.to_string().contains("composite::nowhere"), "{inner}");
    let err = try_guarded(&x, false).expect_err("`nowhere` has no kernel");
    assert_eq!(err.to_string(), inner.to_string());
    assert_eq!(panic_message(|| guarded(&x, false)), inner.to_string());
}
