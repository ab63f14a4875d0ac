//! No way around the CPU check from safe code: runtime registration of a CPU variant carries its
//! features and is refused where they are missing (it could never run), and a plain runtime
//! registration runs on every CPU. (That linked registrations' kernels are unreachable from safe
//! code is the ui case `registration-kernel-unreachable`.)

use switchyard::cpu::{CpuFeatures, CpuPolicy};
use switchyard::ops::{exp, try_exp};
use switchyard::{DispatchKey, Tensor};
use switchyard_backends as _;

fn marker(_: switchyard::DispatchKeySet, x: &Tensor) -> switchyard::Result<Tensor> {
    Ok(Tensor::from_fn(x.shape(), |_| 7.0f32))
}

/// Features this CPU can never have: the other architecture's.
fn foreign() -> CpuFeatures {
    if cfg!(target_arch = "aarch64") {
        CpuFeatures::AVX2
    } else {
        CpuFeatures::NEON
    }
}

#[test]
fn a_variant_the_cpu_lacks_is_refused_and_changes_nothing() {
    let x = Tensor::vector(&[0.0]);
    // SAFETY: `marker` is plain Rust, sound on every CPU.
    let err = unsafe { exp::register_variant("exp_foreign", marker, foreign()) }.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("can never run in this process"), "{text}");
    assert!(text.contains("exp_foreign"), "{text}");
    assert_eq!(try_exp(&x).unwrap().to_vec::<f32>(), [1.0]);
}

#[test]
fn a_variant_the_cpu_has_must_still_override_the_linked_family() {
    let x = Tensor::vector(&[0.0]);
    let detected = CpuPolicy::current().detected();
    // SAFETY: `marker` is plain Rust, sound on every CPU.
    let result = unsafe { exp::register_variant("exp_detected", marker, detected) };
    // Another "crate" (run time) at a key the backends fill: a conflict, refused, naming both.
    let err = result.unwrap_err();
    assert!(err.to_string().contains("overrides"), "{err}");
    assert_eq!(try_exp(&x).unwrap().to_vec::<f32>(), [1.0]);
}

#[test]
fn runtime_registration_at_a_builtin_key_is_refused() {
    let err = exp::register(DispatchKey::BuiltinProfile, "mine", marker).unwrap_err();
    assert!(err.to_string().contains("the library's own key"), "{err}");
}
