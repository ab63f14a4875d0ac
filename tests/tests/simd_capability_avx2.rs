//! `SWITCHYARD_CPU_CAPABILITY=avx2` lowers an AVX-512 CPU to the AVX2 variants; the dump says
//! the AVX-512 ones were capped. (Own process: the variable is read once.)

use switchyard::DTypeColumn;
use switchyard::cpu::{CAPABILITY_VAR, Capability, CpuFeatures, CpuPolicy};
use switchyard::{DispatchKey, SlotOrigin, find_op};
use switchyard_backends as _;

#[test]
fn avx2_lowers_the_choice() {
    // SAFETY: this file's only test sets the variable before any dispatch or detection, and no
    // other thread of this process reads the environment.
    unsafe { std::env::set_var(CAPABILITY_VAR, "avx2") };
    let policy = CpuPolicy::current();
    let cpu = policy.detected();
    if !cpu.contains(CpuFeatures::AVX2 | CpuFeatures::FMA) {
        // Not an AVX2 machine (e.g. aarch64): clamped, with the one-line warning.
        assert_ne!(policy.capability(), Capability::Avx2);
        assert!(policy.warning().unwrap().contains("clamped to"));
        return;
    }
    assert_eq!(policy.capability(), Capability::Avx2);
    assert_eq!(policy.warning(), None);
    let exp = find_op("exp").unwrap();
    assert!(
        matches!(exp.slot_in(DispatchKey::CpuSimd, DTypeColumn::F32).unwrap(), SlotOrigin::Kernel(meta) if meta.name == "exp_avx2"),
        "{}",
        exp.table_dump()
    );
    let why = if cpu.contains(CpuFeatures::AVX512F) {
        "capped by SWITCHYARD_CPU_CAPABILITY=avx2"
    } else {
        "CPU lacks avx512f"
    };
    let dump = exp.table_dump();
    assert!(
        dump.contains(&format!(
            "variant exp_avx512 (cpu: avx512f): not chosen: {why}"
        )),
        "{dump}"
    );
    assert!(
        dump.contains("variant exp_avx2 (cpu: avx2,fma): chosen"),
        "{dump}"
    );
    let x = switchyard::Tensor::vector(&[0.0, 1.0]);
    assert_eq!(
        switchyard::ops::exp(&x).to_vec::<f32>(),
        [1.0, std::f32::consts::E]
    );
}
