//! The CPU a run was promised is the CPU it got: with `SWITCHYARD_EXPECT_CPU=avx512` (set by
//! `tools/avx512-emu/run-tests`, whose emulated CPU has AVX-512) this process must detect
//! AVX-512 and dispatch must install the `_avx512` variants, so that the differential tests
//! beside it compare those variants and not others. It prints the policy and each op's variant
//! (`--nocapture`). Without the variable there is nothing promised and nothing to check.

use switchyard::cpu::{Capability, CpuPolicy};
use switchyard::{DTypeColumn, DispatchKey, SlotOrigin};
use switchyard_backends as _; // the standard ops' kernels
use switchyard_tests::simd_check::simd_ops;

#[test]
fn the_promised_cpu_is_detected_and_its_variants_installed() {
    let Ok(promised) = std::env::var("SWITCHYARD_EXPECT_CPU") else {
        return;
    };
    let want = Capability::parse(&promised)
        .unwrap_or_else(|| panic!("SWITCHYARD_EXPECT_CPU={promised} names no capability"));
    let policy = CpuPolicy::current();
    println!("{policy}");
    assert_eq!(policy.capability(), want, "{policy}");
    // Every op with SIMD kernels has a variant at every x86 level.
    for (op, handle) in simd_ops() {
        let slot = handle
            .slot_in(DispatchKey::CpuSimd, DTypeColumn::F32)
            .unwrap();
        println!("{op} f32 at CpuSimd: {slot}");
        let name = format!("{op}_{}", want.name());
        assert!(
            matches!(slot, SlotOrigin::Kernel(meta) if meta.name == name),
            "{op}: expected {name}, got {slot}"
        );
    }
}
