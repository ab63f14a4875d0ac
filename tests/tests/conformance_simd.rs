//! The conformance kit on the CPU: the SIMD backend (with the naive one beneath it, where it has
//! no kernel or takes its slow path) against the naive backend alone, every standard op, every
//! dtype, every edge shape.

use switchyard::{DType, DTypeColumn, Device, DispatchKey, SlotOrigin};
use switchyard_backends::testing::Conformance;

#[test]
fn the_cpu_serves_every_case_and_matches_the_oracle() {
    let report = Conformance::new(Device::Cpu)
        .run()
        .unwrap_or_else(|f| panic!("{f}"));
    println!("{report}");
    let not_served: Vec<String> = report.not_served().map(|c| c.to_string()).collect();
    assert!(
        not_served.is_empty(),
        "the CPU serves everything; not served:\n{}",
        not_served.join("\n")
    );
    assert!(report.passed().count() > 1000, "{report}");
}

/// The run above compares the SIMD kernels only where the table installed them: say which, so
/// that a machine without AVX2 or NEON does not pass silently for the wrong reason.
#[test]
fn the_simd_kernels_are_installed_where_the_cpu_has_them() {
    let slot = switchyard::ops::add::handle()
        .slot_in(DispatchKey::CpuSimd, DTypeColumn::from(DType::F32))
        .unwrap();
    match slot {
        SlotOrigin::Kernel(meta) => println!("add f32 at CpuSimd runs {}", meta.name),
        other => {
            // (`SWITCHYARD_CPU_CAPABILITY=default` turns the SIMD variants off on purpose.)
            let capped = std::env::var("SWITCHYARD_CPU_CAPABILITY").is_ok_and(|v| v == "default");
            assert!(
                capped || !simd_cpu(),
                "this CPU has SIMD features but CpuSimd holds {other:?}"
            );
            eprintln!(
                "no SIMD variant runs on this CPU: the conformance run checks the naive backend against itself"
            );
        }
    }
}

/// Whether the CPU has the features of some SIMD variant of `add` (AVX2 and FMA, or NEON).
fn simd_cpu() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
    #[cfg(target_arch = "aarch64")]
    return true;
    #[allow(unreachable_code)]
    false
}
