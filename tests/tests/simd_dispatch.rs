//! CPU variants in dispatch: the best variant the CPU runs is installed, one that cannot run is
//! never installed (the key then behaves as if it had no kernel), ops with only a naive kernel
//! still work, and every feature name the macro accepts is one the runtime knows.

use switchyard::DType;
use switchyard::cpu::{CpuFeatures, CpuPolicy, FEATURE_NAMES};
use switchyard::ops::full;
use switchyard::{Device, DispatchKey, SlotOrigin, Tensor, kernel, op};
use switchyard_backends as _; // the standard ops' kernels

/// An op with only a naive kernel.
#[op(name = "simd_dispatch::halve")]
pub fn halve(x: &Tensor) -> Tensor;

#[kernel(op = "halve", key = CpuNaive)]
fn halve_naive(x: &Tensor) -> Tensor {
    let values = x.as_slice::<f32>().unwrap();
    Tensor::from_fn(x.shape(), |i| values[i] / 2.0)
}

#[test]
fn an_op_with_only_a_naive_kernel_still_works() {
    // A CPU tensor carries CpuSimd above CpuNaive; CpuSimd falls through.
    let x = Tensor::vector(&[2.0, -4.0, 1.0]);
    assert_eq!(halve(&x).to_vec::<f32>(), [1.0, -2.0, 0.5]);
    assert_eq!(
        halve::handle().slot(DispatchKey::CpuSimd).unwrap(),
        SlotOrigin::Fallthrough
    );
    // A standard op with no SIMD kernel, through a Device argument.
    assert_eq!(
        full(&[3], 1.5, DType::F32, Device::Cpu).to_vec::<f32>(),
        [1.5; 3]
    );
    assert_eq!(
        full::handle().slot(DispatchKey::CpuSimd).unwrap(),
        SlotOrigin::Fallthrough
    );
}

/// Which variant ran, as a number: 0 plain, 2 AVX2, 5 AVX-512, 8 NEON, 9 impossible.
#[op(name = "simd_dispatch::which")]
pub fn which(x: &Tensor) -> f32;

#[kernel(op = "which", key = CpuSimd)]
fn which_plain(_x: &Tensor) -> f32 {
    0.0
}

#[cfg(target_arch = "x86_64")]
#[kernel(op = "which", key = CpuSimd, cpu = "avx2,fma")]
#[target_feature(enable = "avx2,fma")]
fn which_avx2(_x: &Tensor) -> f32 {
    2.0
}

#[cfg(target_arch = "x86_64")]
#[kernel(op = "which", key = CpuSimd, cpu = "avx512f")]
#[target_feature(enable = "avx512f")]
fn which_avx512(_x: &Tensor) -> f32 {
    5.0
}

#[cfg(target_arch = "aarch64")]
#[kernel(op = "which", key = CpuSimd, cpu = "neon")]
#[target_feature(enable = "neon")]
fn which_neon(_x: &Tensor) -> f32 {
    8.0
}

/// A variant no CPU of this architecture has: it must never be installed.
#[cfg(target_arch = "x86_64")]
#[kernel(op = "which", key = CpuSimd, cpu = "neon")]
fn which_impossible(_x: &Tensor) -> f32 {
    9.0
}

#[cfg(not(target_arch = "x86_64"))]
#[kernel(op = "which", key = CpuSimd, cpu = "avx512f,avx512bw")]
fn which_impossible(_x: &Tensor) -> f32 {
    9.0
}

#[test]
fn the_best_runnable_variant_is_installed() {
    let policy = CpuPolicy::current();
    let expected = if cfg!(target_arch = "x86_64") {
        let variants = [
            CpuFeatures::empty(),
            CpuFeatures::AVX2 | CpuFeatures::FMA,
            CpuFeatures::AVX512F,
        ];
        [0.0, 2.0, 5.0][policy.choose(&variants).unwrap()]
    } else {
        [0.0, 8.0][policy
            .choose(&[CpuFeatures::empty(), CpuFeatures::NEON])
            .unwrap()]
    };
    assert_eq!(which(&Tensor::scalar(0.0)), expected, "{policy}");
    let dump = which::handle().table_dump();
    assert!(
        dump.contains("variant which_impossible (cpu: "),
        "every variant is listed: {dump}"
    );
    assert!(dump.contains(": not chosen: CPU lacks "), "{dump}");
    assert!(dump.contains(": chosen"), "{dump}");
}

/// An op whose only SIMD variant cannot run here: it behaves as if it had none.
#[op(name = "simd_dispatch::unreachable_simd")]
pub fn unreachable_simd(x: &Tensor) -> f32;

#[kernel(op = "unreachable_simd", key = CpuNaive)]
fn unreachable_simd_naive(_x: &Tensor) -> f32 {
    1.0
}

#[cfg(target_arch = "x86_64")]
#[kernel(op = "unreachable_simd", key = CpuSimd, cpu = "neon")]
fn unreachable_simd_other_isa(_x: &Tensor) -> f32 {
    9.0
}

#[cfg(not(target_arch = "x86_64"))]
#[kernel(op = "unreachable_simd", key = CpuSimd, cpu = "avx2")]
fn unreachable_simd_other_isa(_x: &Tensor) -> f32 {
    9.0
}

#[test]
fn a_variant_the_cpu_lacks_falls_through_to_naive() {
    assert_eq!(unreachable_simd(&Tensor::scalar(0.0)), 1.0);
    let handle = unreachable_simd::handle();
    assert_eq!(
        handle.slot(DispatchKey::CpuSimd).unwrap(),
        SlotOrigin::Fallthrough
    );
    let dump = handle.table_dump();
    assert!(
        dump.contains("variant unreachable_simd_other_isa (cpu: ")
            && dump.contains("): not chosen: CPU lacks "),
        "{dump}"
    );
}

/// One variant per feature name: each name must exist on both sides (macro and runtime), and the
/// table must pick what `CpuPolicy::choose` picks.
#[op(name = "simd_dispatch::feature_probe")]
pub fn feature_probe(x: &Tensor) -> f32;

macro_rules! probes {
    ($($name:ident: $feature:literal => $index:literal),* $(,)?) => {
        $(
            #[kernel(op = "feature_probe", key = CpuSimd, cpu = $feature)]
            fn $name(_x: &Tensor) -> f32 {
                $index
            }
        )*
    };
}

probes!(
    probe_sse2: "sse2" => 0.0, probe_sse3: "sse3" => 1.0, probe_ssse3: "ssse3" => 2.0,
    probe_sse41: "sse4.1" => 3.0, probe_sse42: "sse4.2" => 4.0, probe_popcnt: "popcnt" => 5.0,
    probe_avx: "avx" => 6.0, probe_avx2: "avx2" => 7.0, probe_fma: "fma" => 8.0,
    probe_f16c: "f16c" => 9.0, probe_bmi1: "bmi1" => 10.0, probe_bmi2: "bmi2" => 11.0,
    probe_avx512f: "avx512f" => 12.0, probe_avx512cd: "avx512cd" => 13.0,
    probe_avx512bw: "avx512bw" => 14.0, probe_avx512dq: "avx512dq" => 15.0,
    probe_avx512vl: "avx512vl" => 16.0, probe_neon: "neon" => 17.0,
    probe_simd128: "simd128" => 18.0,
);

#[test]
fn every_feature_name_is_known_to_the_runtime() {
    let handle = feature_probe::handle();
    let registered = handle.registrations();
    assert_eq!(registered.len(), FEATURE_NAMES.len());
    for ((_, meta), (flag, name)) in registered.iter().zip(FEATURE_NAMES) {
        assert_eq!(meta.cpu, flag, "{name}");
        assert_eq!(meta.cpu.to_string(), name);
    }
    let needs = FEATURE_NAMES.map(|(flag, _)| flag);
    let expected = CpuPolicy::current().choose(&needs);
    // The op has no naive kernel: when no variant runs here, the call is an error.
    let got = try_feature_probe(&Tensor::scalar(0.0))
        .ok()
        .map(|index| index as usize);
    assert_eq!(got, expected, "{}", handle.table_dump());
}

/// The SIMD kernels serve `f32` only (`dtypes = "f32"`): every other column of the standard ops'
/// tables falls through to the naive backend, and an `f64` call computes there.
#[test]
fn other_dtypes_fall_through_to_the_naive_backend() {
    use switchyard::DTypeColumn;
    use switchyard::ops::{add, exp, matmul, sum};
    for handle in [
        add::handle(),
        exp::handle(),
        sum::handle(),
        matmul::handle(),
    ] {
        for column in [
            DTypeColumn::F64,
            DTypeColumn::I32,
            DTypeColumn::F16,
            DTypeColumn::Mixed,
        ] {
            let simd = handle.slot_in(DispatchKey::CpuSimd, column).unwrap();
            // `matmul` of 16-bit floats has its own SIMD kernel (through the f32 engines).
            if handle.name() == "switchyard::matmul" && column == DTypeColumn::F16 {
                assert!(
                    matches!(&simd, SlotOrigin::Kernel(meta) if meta.name == "matmul_half"),
                    "{simd}"
                );
                continue;
            }
            assert_eq!(
                simd,
                SlotOrigin::Fallthrough,
                "{} {column:?}",
                handle.name()
            );
            assert!(
                matches!(
                    handle.slot_in(DispatchKey::CpuNaive, column).unwrap(),
                    SlotOrigin::Kernel(_)
                ),
                "{} {column:?}",
                handle.name()
            );
        }
        // f32 has a SIMD kernel when this CPU runs one of the variants.
        let simd = handle
            .slot_in(DispatchKey::CpuSimd, DTypeColumn::F32)
            .unwrap();
        let variant = if cfg!(target_arch = "x86_64") {
            CpuFeatures::AVX2 | CpuFeatures::FMA
        } else {
            CpuFeatures::NEON
        };
        let has_variant = CpuPolicy::current().choose(&[variant]).is_some();
        assert_eq!(
            matches!(simd, SlotOrigin::Kernel(_)),
            has_variant,
            "{} {simd:?}",
            handle.name()
        );
    }
    let x = Tensor::from_vec::<f64>(vec![1.5, -2.0], &[2]).unwrap();
    assert_eq!(add(&x, &x).to_vec::<f64>(), [3.0, -4.0]);
}
