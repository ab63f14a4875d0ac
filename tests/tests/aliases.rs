//! Alias keys: `CompositeExplicit`, the op body (`CompositeImplicit`), and `Autograd`
//! over the per-backend autograd keys; and the slot for calls with no dispatchable argument.

use std::sync::atomic::{AtomicUsize, Ordering};
use switchyard::ops::{add, mul};

use switchyard::{
    AliasKey, Device, DispatchKey, DispatchKeySet, SlotOrigin, Tensor, exclude, include, kernel, op,
};
use switchyard_backends as _;
use switchyard_example_downstream::to_toy;

fn tag(x: &Tensor, tag: f32) -> Tensor {
    add(x, &Tensor::from_fn(x.shape(), |_| tag))
}

/// `x * x`, with a body (its CompositeImplicit kernel).
#[op(name = "aliases::square")]
pub fn square(x: &Tensor) -> Tensor {
    mul(x, x)
}

/// Autograd for every backend: continues below autograd, with autograd excluded for the ops it
/// calls (as an autograd layer does), and marks the result `+1000` so the test sees it ran.
#[kernel(op = "square", key = Autograd)]
fn square_autograd(keys: DispatchKeySet, x: &Tensor) -> switchyard::Result<Tensor> {
    let _below = exclude(DispatchKeySet::AUTOGRAD);
    Ok(tag(
        &square::redispatch(keys.below(AliasKey::Autograd), x)?,
        1000.0,
    ))
}

static MUL_AUTOGRAD_CALLS: AtomicUsize = AtomicUsize::new(0);

/// An autograd layer for the standard `mul`, from outside the crate that declares it: counts,
/// then continues below autograd. It replaces the library's derivative of `mul` in this test
/// binary, so it says so (`overrides`).
#[kernel(op = "switchyard::ops::mul", key = Autograd, overrides)]
fn mul_autograd(keys: DispatchKeySet, x: &Tensor, y: &Tensor) -> switchyard::Result<Tensor> {
    MUL_AUTOGRAD_CALLS.fetch_add(1, Ordering::Relaxed);
    let _below = exclude(DispatchKeySet::AUTOGRAD);
    mul::redispatch(keys.below(AliasKey::Autograd), x, y)
}

/// A CPU kernel of its own.
#[kernel(op = "square", key = CpuNaive)]
fn square_naive(x: &Tensor) -> Tensor {
    tag(&mul(x, x), 1.0)
}

#[test]
fn autograd_alias_serves_backends_with_kernels_and_the_body_serves_the_rest() {
    let x = Tensor::vector(&[2.0]);
    let h = square::handle();
    // The CPU has a kernel: autograd there is the alias kernel, which then reaches the kernel.
    assert!(
        matches!(h.slot(DispatchKey::AutogradCpu).unwrap(), SlotOrigin::AutogradAlias(m) if m.name == "square_autograd")
    );
    {
        let _grad = include(DispatchKey::AutogradCpu);
        assert_eq!(square(&x).to_vec::<f32>(), [1005.0]);
    }
    // The toy device has none: its autograd key flows through the decomposition (the body),
    // whose `mul` is then differentiated by `mul`'s own autograd kernel and runs on the toy device.
    assert_eq!(
        h.slot(DispatchKey::AutogradPrivateUse1).unwrap(),
        SlotOrigin::Composite
    );
    let toy = to_toy(&x).unwrap();
    let before = MUL_AUTOGRAD_CALLS.load(Ordering::Relaxed);
    let _grad = include(DispatchKey::AutogradPrivateUse1);
    let out = square(&toy);
    assert_eq!(out.device(), Device::PrivateUse1);
    assert_eq!(out.to_vec::<f32>(), [4.0]);
    assert_eq!(MUL_AUTOGRAD_CALLS.load(Ordering::Relaxed) - before, 1);
    assert!(h.table_dump().contains("[autograd alias]"));
}

/// `x + x` with a CompositeExplicit kernel and no body.
#[op(name = "aliases::double")]
pub fn double(x: &Tensor) -> Tensor;

#[kernel(op = "double", key = CompositeExplicit)]
fn double_explicit(x: &Tensor) -> Tensor {
    add(x, x)
}

#[test]
fn composite_explicit_serves_backends_but_not_autograd() {
    let h = double::handle();
    assert!(
        matches!(h.slot(DispatchKey::CpuNaive).unwrap(), SlotOrigin::CompositeExplicit(m) if m.name == "double_explicit")
    );
    assert!(matches!(
        h.slot(DispatchKey::PrivateUse1).unwrap(),
        SlotOrigin::CompositeExplicit(_)
    ));
    assert_eq!(
        h.slot(DispatchKey::AutogradCpu).unwrap(),
        SlotOrigin::Missing
    );
    assert!(h.table_dump().contains("[composite explicit]"));
    assert_eq!(double(&Tensor::vector(&[1.5])).to_vec::<f32>(), [3.0]);
}

/// A factory with a body and no dispatchable argument.
#[op(name = "aliases::ones3")]
pub fn ones3() -> Tensor {
    Tensor::vector(&[1.0, 1.0, 1.0])
}

#[op(name = "aliases::nothing")]
pub fn nothing() -> Tensor;

#[test]
fn calls_with_no_dispatchable_argument_run_the_composite_or_say_so() {
    assert_eq!(ones3().to_vec::<f32>(), [1.0, 1.0, 1.0]);
    let err = try_nothing().unwrap_err();
    assert!(
        err.to_string().contains("no dispatchable arguments"),
        "{err}"
    );
    // Under a mode, the mode redispatches with no keys left: the same slot.
    let (ones, graph) = switchyard::trace(ones3);
    assert_eq!(ones.to_vec::<f32>(), [1.0, 1.0, 1.0]);
    assert_eq!(graph.op_names(), ["aliases::ones3"]);
}
