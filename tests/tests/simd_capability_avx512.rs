//! `SWITCHYARD_CPU_CAPABILITY=avx512` on a CPU without AVX-512 is clamped (one-line warning) and
//! no AVX-512 kernel is ever installed; on a CPU with it, the AVX-512 variants run. (Own process:
//! the variable is read once. Run this binary under `qemu-x86_64 -cpu Haswell` to see the first
//! case on an AVX-512 machine; see ARCHITECTURE.md.)

use switchyard::cpu::{CAPABILITY_VAR, Capability, CpuFeatures, CpuPolicy};
use switchyard::{DispatchKey, SlotOrigin, Tensor, ops};
use switchyard_backends as _;

const AVX512: CpuFeatures = CpuFeatures::AVX512F
    .union(CpuFeatures::AVX512CD)
    .union(CpuFeatures::AVX512BW)
    .union(CpuFeatures::AVX512DQ)
    .union(CpuFeatures::AVX512VL);

#[test]
fn avx512_is_clamped_to_what_the_cpu_has() {
    // SAFETY: this file's only test sets the variable before any dispatch or detection, and no
    // other thread of this process reads the environment.
    unsafe { std::env::set_var(CAPABILITY_VAR, "avx512") };
    let policy = CpuPolicy::current();
    let cpu = policy.detected();
    let has_avx512 = cpu.contains(CpuFeatures::AVX2 | CpuFeatures::FMA | CpuFeatures::AVX512F);
    if has_avx512 {
        assert_eq!(policy.capability(), Capability::Avx512);
        assert_eq!(policy.warning(), None);
    } else {
        assert_ne!(policy.capability(), Capability::Avx512);
        let warning = policy.warning().expect("a clamped override warns");
        let why = if cfg!(target_arch = "x86_64") {
            "is above what this CPU supports"
        } else {
            "is for another architecture than this CPU"
        };
        assert!(
            warning.starts_with(&format!(
                "switchyard: SWITCHYARD_CPU_CAPABILITY=avx512 {why}"
            )),
            "{warning}"
        );
        assert!(!warning.contains('\n'));
    }
    // Every op: the installed CPU kernel needs only features this CPU has, and no AVX-512 kernel
    // is installed unless the CPU has AVX-512.
    for handle in switchyard::ops() {
        for key in [DispatchKey::CpuSimd, DispatchKey::CpuNaive] {
            if let SlotOrigin::Kernel(meta) = handle.slot(key).unwrap() {
                assert!(cpu.contains(meta.cpu), "{}: {}", handle.name(), meta.name);
                assert!(
                    has_avx512 || !meta.cpu.intersects(AVX512),
                    "{}: {}",
                    handle.name(),
                    meta.name
                );
            }
        }
    }
    let exp = switchyard::find_op("exp").unwrap();
    if !has_avx512 && cpu.contains(CpuFeatures::AVX2 | CpuFeatures::FMA) {
        assert!(
            exp.table_dump()
                .contains("variant exp_avx512 (cpu: avx512f): not chosen: CPU lacks avx512f"),
            "{}",
            exp.table_dump()
        );
    }
    // And every standard op runs (an AVX-512 instruction here would be SIGILL, not a failure).
    let x = Tensor::from_fn(&[33, 33], |i| i as f32 / 100.0);
    let y = ops::exp(&ops::relu(&ops::neg(&x)));
    let z = ops::div(&ops::mul(&ops::sub(&ops::add(&x, &y), &y), &y), &y);
    assert_eq!(z.shape(), &[33, 33]);
    assert!(ops::sum(&ops::matmul(&z, &z)).to_vec::<f32>()[0] > 0.0);
    assert!(ops::mean(&z).to_vec::<f32>()[0] > 0.0);
}
