//! `SWITCHYARD_CPU_CAPABILITY=default` forces the scalar path on any CPU, and the table dump says
//! why each SIMD variant was not chosen. (A file of its own: its own process, so the variable is
//! set before anything reads it; it is read once.)

use switchyard::DTypeColumn;
use switchyard::cpu::{CAPABILITY_VAR, Capability, CpuFeatures, CpuPolicy};
use switchyard::{DispatchKey, DispatchKeySet, SlotOrigin, find_op};
use switchyard_backends as _;
use switchyard_tests::simd_check::{assert_exact, tensor};

const SIMD_OPS: [&str; 13] = [
    "add", "sub", "mul", "div", "neg", "relu", "exp", "log", "tanh", "sigmoid", "sum", "mean",
    "matmul",
];

#[test]
fn default_forces_the_scalar_path_and_the_dump_says_so() {
    // SAFETY: this file's only test sets the variable before any dispatch or detection, and no
    // other thread of this process reads the environment.
    unsafe { std::env::set_var(CAPABILITY_VAR, "default") };
    let policy = CpuPolicy::current();
    assert_eq!(policy.capability(), Capability::Default);
    assert_eq!(policy.requested(), Some(Capability::Default));
    assert_eq!(policy.warning(), None, "lowering is not clamping");

    let cpu = policy.detected();
    for op in SIMD_OPS {
        let handle = find_op(op).unwrap();
        assert_eq!(
            handle
                .slot_in(DispatchKey::CpuSimd, DTypeColumn::F32)
                .unwrap(),
            SlotOrigin::Fallthrough,
            "{op}"
        );
        let dump = handle.table_dump();
        let capped = "not chosen: capped by SWITCHYARD_CPU_CAPABILITY=default";
        if cpu.contains(CpuFeatures::AVX2 | CpuFeatures::FMA) {
            let line = format!("variant {op}_avx2 (cpu: avx2,fma): {capped}");
            assert!(dump.contains(&line), "{op}: {dump}");
        }
        if cpu.contains(CpuFeatures::AVX512F) && op != "matmul" {
            let line = format!("variant {op}_avx512 (cpu: avx512f): {capped}");
            assert!(dump.contains(&line), "{op}: {dump}");
        }
        if cpu.contains(CpuFeatures::NEON) {
            let line = format!("variant {op}_neon (cpu: neon): {capped}");
            assert!(dump.contains(&line), "{op}: {dump}");
        }
    }
    assert!(switchyard::dump().contains("cpu: default (detected "));

    // The naive kernels run: bit for bit their results, `exp` included.
    let naive = DispatchKeySet::CPU_NAIVE;
    let x = tensor(1001, 1, -20.0, 20.0, true);
    assert_exact(
        "exp",
        &switchyard::ops::exp(&x).to_vec::<f32>(),
        &switchyard::ops::exp::redispatch(naive, &x)
            .unwrap()
            .to_vec::<f32>(),
    );
    assert_eq!(
        switchyard::ops::sum(&x).to_vec::<f32>()[0].to_bits(),
        switchyard::ops::sum::redispatch(naive, &x)
            .unwrap()
            .to_vec::<f32>()[0]
            .to_bits()
    );
}
