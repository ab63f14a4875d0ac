//! `SWITCHYARD_CPU_CAPABILITY=avx2` lowers an AVX-512 CPU to the AVX2 variants; the dump says
//! the AVX-512 ones were capped. (Own process: the variable is read once.)

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
    let add = find_op("add").unwrap();
    assert!(
        matches!(add.slot(DispatchKey::CpuSimd).unwrap(), SlotOrigin::Kernel(meta) if meta.name == "add_avx2"),
        "{}",
        add.table_dump()
    );
    let why = if cpu.contains(CpuFeatures::AVX512F) {
        "capped by SWITCHYARD_CPU_CAPABILITY=avx2"
    } else {
        "CPU lacks avx512f"
    };
    let dump = add.table_dump();
    assert!(
        dump.contains(&format!(
            "variant add_avx512 (cpu: avx512f): not chosen: {why}"
        )),
        "{dump}"
    );
    assert!(
        dump.contains("variant add_avx2 (cpu: avx2,fma): chosen"),
        "{dump}"
    );
    assert_eq!(switchyard::ops::add(&x(), &x()).to_vec(), [2.0, -4.0]);
}

fn x() -> switchyard::Tensor {
    switchyard::Tensor::vector(&[1.0, -2.0])
}
