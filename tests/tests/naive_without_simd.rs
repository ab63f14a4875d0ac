//! Which CPU kernels serve depends on what the build compiled in: x86_64 and aarch64 always have
//! their SIMD kernels (chosen at runtime), and wasm32 has its `simd128` ones only in a module
//! built with `-C target-feature=+simd128` (WebAssembly has no runtime detection). Without them
//! (wasm32 by default: `.ci/wasm` runs this file there) every op's `CpuSimd` slot falls through
//! and its CPU calls reach the naive kernels; with `simd128` most standard `f32` ops have a
//! `CpuSimd` kernel. The table dump says which.

use switchyard::ops::add;
use switchyard::{DTypeColumn, DispatchKey, KernelKey, SlotOrigin, Tensor};
use switchyard_backends as _;

const SIMD_COMPILED: bool = cfg!(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    all(target_arch = "wasm32", target_feature = "simd128")
));

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

/// On wasm32 the dump's first line says whether the module has SIMD kernels, and the tables
/// name the `simd128` kernels where it does (`exp` has none: the naive kernel serves it).
#[cfg(target_arch = "wasm32")]
#[test]
fn the_dump_says_whether_simd128_kernels_serve() {
    use switchyard::cpu::{CpuFeatures, CpuPolicy};
    use switchyard::ops::{exp, matmul, sum};
    let dump = switchyard::dump();
    let first = dump.lines().next().unwrap();
    println!("{first}");
    let policy = CpuPolicy::current();
    let runs_simd = policy.choose(&[CpuFeatures::SIMD128]).is_some();
    if cfg!(target_feature = "simd128") {
        assert!(first.contains("detected simd128"), "{first}");
        assert!(!first.contains("without simd128"), "{first}");
    } else {
        assert!(!runs_simd);
        assert!(
            first.contains("wasm32 built without simd128: no SIMD kernels"),
            "{first}"
        );
    }
    assert_eq!(
        exp::handle()
            .slot_in(DispatchKey::CpuSimd, DTypeColumn::F32)
            .unwrap(),
        SlotOrigin::Fallthrough
    );
    for (op, handle) in [
        ("add", add::handle()),
        ("sum", sum::handle()),
        ("matmul", matmul::handle()),
    ] {
        let slot = handle
            .slot_in(DispatchKey::CpuSimd, DTypeColumn::F32)
            .unwrap();
        let table = handle.table_dump();
        if runs_simd {
            let name = format!("{op}_simd128");
            assert!(
                matches!(slot, SlotOrigin::Kernel(meta) if meta.name == name),
                "{op}: {slot}\n{table}"
            );
            assert!(
                table.contains(&format!("variant {name} (cpu: simd128): chosen")),
                "{table}"
            );
        } else {
            assert_eq!(slot, SlotOrigin::Fallthrough, "{op}\n{table}");
        }
    }
}
