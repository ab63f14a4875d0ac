//! The CPU's naive kernels serve wherever no SIMD kernel is compiled in: the SIMD kernels exist
//! for x86_64 and aarch64 only, so on wasm32 (`.ci/wasm` runs this file there) every op's
//! `CpuSimd` slot falls through and its CPU calls reach the naive kernels, as the table dump shows.

use switchyard::ops::add;
use switchyard::{DTypeColumn, DispatchKey, KernelKey, SlotOrigin, Tensor};
use switchyard_backends as _;

const SIMD_COMPILED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

#[test]
fn cpu_calls_reach_the_naive_kernels_where_no_simd_kernel_is_compiled() {
    let handle = switchyard::op_named("switchyard::add").unwrap();
    let f32 = DTypeColumn::F32;
    let dump = handle.table_dump();
    println!("{dump}");
    assert!(
        matches!(
            handle.slot_in(DispatchKey::CpuNaive, f32),
            Ok(SlotOrigin::Kernel(_))
        ),
        "{dump}"
    );
    if !SIMD_COMPILED {
        assert_eq!(
            handle.slot_in(DispatchKey::CpuSimd, f32).unwrap(),
            SlotOrigin::Fallthrough,
            "{dump}"
        );
        let with_simd: Vec<&str> = switchyard::ops()
            .into_iter()
            .filter(|op| {
                op.registrations()
                    .iter()
                    .any(|(key, _)| *key == KernelKey::Key(DispatchKey::CpuSimd))
            })
            .map(|op| op.name())
            .collect();
        assert!(with_simd.is_empty(), "SIMD kernels on {with_simd:?}");
    }
    let x = Tensor::vector(&[1.0, 2.0]);
    assert_eq!(add(&x, &x).to_vec::<f32>(), [2.0, 4.0]);
}
