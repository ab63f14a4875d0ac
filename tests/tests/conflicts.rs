//! Conflicts fail locally: two fallbacks at one key, or two kernels at one (op, key, CPU
//! variant), fail only the calls that reach that slot, naming both sites; unrelated ops and the
//! op's other keys keep working, and `dump()` lists every conflict.

use switchyard::ops::{add, mul, neg, relu, sub};
use switchyard::{
    DispatchError, DispatchKey, DispatchKeySet, OpHandle, SlotOrigin, Stack, Tensor, fallback,
    kernel, op,
};
use switchyard_backends as _;

// ---- two fallbacks at one key ----

#[fallback(key = Custom2)]
fn first_fallback(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    op.redispatch_boxed(keys.below(DispatchKey::Custom2), stack)
}

#[fallback(key = CUSTOM2)]
fn second_fallback(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    op.redispatch_boxed(keys.below(DispatchKey::Custom2), stack)
}

#[test]
fn two_fallbacks_fail_only_calls_that_reach_their_key() {
    let x = Tensor::vector(&[1.0, -2.0]);
    assert_eq!(
        mul(&x, &x).to_vec::<f32>(),
        [1.0, 4.0],
        "the key is not active: no effect"
    );
    let _on = switchyard::include(DispatchKey::Custom2);
    let err = switchyard::ops::try_add(&x, &x).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("two fallbacks registered for dispatch key `Custom2`"),
        "{text}"
    );
    assert!(
        text.contains("first_fallback") && text.contains("second_fallback"),
        "{text}"
    );
    assert!(text.contains("conflicts.rs"), "{text}");
}

// ---- two kernels at one (op, key) ----

/// An op with a conflict at one key and a good kernel at another.
#[op(name = "conflicts::half_broken")]
pub fn half_broken(x: &Tensor) -> Tensor;

#[kernel(op = half_broken, key = CpuNaive)]
fn half_broken_naive(x: &Tensor) -> Tensor {
    x.clone()
}

#[kernel(op = half_broken, key = PrivateUse2)]
fn half_broken_one(x: &Tensor) -> Tensor {
    x.clone()
}

#[kernel(op = half_broken, key = PrivateUse2)]
fn half_broken_two(x: &Tensor) -> Tensor {
    x.clone()
}

#[test]
fn two_kernels_fail_only_their_slot() {
    let x = Tensor::vector(&[3.0]);
    assert_eq!(
        half_broken(&x).to_vec::<f32>(),
        [3.0],
        "the CPU slot is fine"
    );
    assert_eq!(
        add(&x, &x).to_vec::<f32>(),
        [6.0],
        "other ops are untouched"
    );
    let _device = switchyard::include(DispatchKey::PrivateUse2);
    let text = try_half_broken(&x).unwrap_err().to_string();
    assert!(
        text.contains("two kernels registered for dispatch key `PrivateUse2`"),
        "{text}"
    );
    assert!(
        text.contains("half_broken_one") && text.contains("half_broken_two"),
        "{text}"
    );
}

#[test]
fn the_table_dump_shows_the_conflicting_slot() {
    let slot = half_broken::handle()
        .slot(DispatchKey::PrivateUse2)
        .unwrap();
    assert!(matches!(slot, SlotOrigin::Conflict(_)), "{slot:?}");
    assert!(matches!(
        half_broken::handle().slot(DispatchKey::CpuNaive).unwrap(),
        SlotOrigin::Kernel(_)
    ));
    let dump = half_broken::handle().table_dump();
    assert!(dump.contains("[conflict]"), "{dump}");
}

// ---- a kernel for a linked op's key from another crate, without `overrides` ----

#[kernel(op = neg, key = CPU_SIMD)]
fn neg_accidental(x: &Tensor) -> Tensor {
    x.clone()
}

#[test]
fn a_second_crate_at_a_simd_key_is_a_conflict_not_a_silent_loser() {
    let x = Tensor::vector(&[1.0]);
    let text = switchyard::ops::try_neg(&x).unwrap_err().to_string();
    assert!(text.contains("neg_accidental"), "{text}");
    assert!(
        text.contains("overrides"),
        "says how to override deliberately: {text}"
    );
    // The naive backend still serves `neg`; other ops are fine.
    let _naive = switchyard::exclude(DispatchKey::CpuSimd);
    assert_eq!(neg(&x).to_vec::<f32>(), [-1.0]);
}

// ---- a deliberate override ----

#[kernel(op = relu, key = CPU_SIMD, overrides)]
fn relu_mine(x: &Tensor) -> Tensor {
    Tensor::from_fn(x.shape(), |_| 42.0f32)
}

#[test]
fn a_declared_override_runs_and_shows_both_provenances() {
    let x = Tensor::vector(&[-1.0, 1.0]);
    assert_eq!(relu(&x).to_vec::<f32>(), [42.0, 42.0]);
    let dump = relu::handle().table_dump();
    assert!(dump.contains("relu_mine"), "{dump}");
    assert!(dump.contains("overrides"), "{dump}");
    assert!(
        dump.contains("backends/src/cpu/simd"),
        "the overridden kernel is listed: {dump}"
    );
}

#[test]
fn runtime_registration_that_would_never_run_is_refused_and_override_works() {
    // `sub`, which no other test here calls: the override changes it for the whole binary.
    let x = Tensor::vector(&[2.0]);
    let kernel: sub::KernelFn = |_, x, _| Ok(x.clone());
    let err = sub::register(DispatchKey::CpuSimd, "sub_plain", kernel).unwrap_err();
    assert!(
        err.to_string().contains("overrides") || err.to_string().contains("override"),
        "{err}"
    );
    assert_eq!(sub(&x, &x).to_vec::<f32>(), [0.0], "nothing changed");
    let guard = sub::register_override(DispatchKey::CpuSimd, "sub_mine", kernel).unwrap();
    assert_eq!(sub(&x, &x).to_vec::<f32>(), [2.0], "the override runs");
    assert!(sub::handle().table_dump().contains("sub_mine"));
    drop(guard);
    assert_eq!(sub(&x, &x).to_vec::<f32>(), [0.0], "undone");
}

#[test]
fn dump_lists_every_conflict() {
    let dump = switchyard::dump();
    let conflicts = dump
        .split("\nconflicts: ")
        .nth(1)
        .unwrap_or_else(|| panic!("{dump}"));
    assert!(conflicts.contains("Custom2"), "{conflicts}");
    assert!(conflicts.contains("conflicts::half_broken"), "{conflicts}");
    assert!(conflicts.contains("neg"), "{conflicts}");
    assert!(
        !conflicts.contains("relu"),
        "a declared override is no conflict: {conflicts}"
    );
}
