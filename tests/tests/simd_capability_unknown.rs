//! An unknown `SWITCHYARD_CPU_CAPABILITY` warns (one line) and detects the CPU as if unset.
//! (Own process: the variable is read once.)

use switchyard::cpu::{CAPABILITY_VAR, Capability, CpuPolicy};
use switchyard_backends as _;

#[test]
fn an_unknown_value_warns_and_detects() {
    // SAFETY: this file's only test sets the variable before any dispatch or detection, and no
    // other thread of this process reads the environment.
    unsafe { std::env::set_var(CAPABILITY_VAR, "avx1024") };
    let policy = CpuPolicy::current();
    assert_eq!(policy.requested(), None);
    assert_eq!(policy.capability(), Capability::of(policy.detected()));
    assert_eq!(
        policy.warning(),
        Some(&*format!(
            "switchyard: unknown SWITCHYARD_CPU_CAPABILITY=\"avx1024\" (expected default, avx2, \
             avx512, neon or simd128); using the detected {}",
            policy.capability()
        ))
    );
    let x = switchyard::Tensor::vector(&[1.0, 2.0, 3.0]);
    assert_eq!(switchyard::ops::sum(&x).to_vec::<f32>(), [6.0]);
}
