//! The CPU policy on made-up CPUs: levels, the override and its clamping, the choice of a
//! variant, and the verdicts the table dump prints.

use super::*;

const AVX2_CPU: CpuFeatures = CpuFeatures::SSE2
    .union(CpuFeatures::AVX)
    .union(CpuFeatures::AVX2)
    .union(CpuFeatures::FMA);
const AVX512_CPU: CpuFeatures = AVX2_CPU.union(X86_AVX512);
const ARM_CPU: CpuFeatures = CpuFeatures::NEON;
const WASM_SIMD_CPU: CpuFeatures = CpuFeatures::SIMD128;

fn avx2_fma() -> CpuFeatures {
    CpuFeatures::AVX2 | CpuFeatures::FMA
}

#[test]
fn detection_levels() {
    assert_eq!(Capability::of(CpuFeatures::SSE2), Capability::Default);
    assert_eq!(Capability::of(AVX2_CPU), Capability::Avx2);
    assert_eq!(Capability::of(AVX512_CPU), Capability::Avx512);
    assert_eq!(Capability::of(ARM_CPU), Capability::Neon);
    assert_eq!(Capability::of(WASM_SIMD_CPU), Capability::Simd128);
    // A wasm module compiled without `simd128`.
    assert_eq!(Capability::of(CpuFeatures::empty()), Capability::Default);
    // AVX2 without FMA is not the AVX2 level.
    assert_eq!(
        Capability::of(CpuFeatures::AVX2 | CpuFeatures::AVX),
        Capability::Default
    );
}

#[test]
fn parse_names() {
    assert_eq!(Capability::parse("avx2"), Some(Capability::Avx2));
    assert_eq!(Capability::parse(" AVX512 "), Some(Capability::Avx512));
    assert_eq!(Capability::parse("default"), Some(Capability::Default));
    assert_eq!(Capability::parse("neon"), Some(Capability::Neon));
    assert_eq!(Capability::parse("SIMD128"), Some(Capability::Simd128));
    assert_eq!(Capability::parse("avx3"), None);
}

#[test]
fn override_lowers_and_is_clamped() {
    let unset = CpuPolicy::new(AVX512_CPU, None);
    assert_eq!(unset.capability(), Capability::Avx512);
    assert_eq!(unset.warning(), None);
    let empty = CpuPolicy::new(AVX512_CPU, Some(""));
    assert_eq!(empty.requested(), None);

    let lowered = CpuPolicy::new(AVX512_CPU, Some("avx2"));
    assert_eq!(lowered.capability(), Capability::Avx2);
    assert_eq!(lowered.warning(), None);

    let clamped = CpuPolicy::new(AVX2_CPU, Some("avx512"));
    assert_eq!(clamped.capability(), Capability::Avx2);
    assert_eq!(
        clamped.warning(),
        Some(
            "switchyard: SWITCHYARD_CPU_CAPABILITY=avx512 is above what this CPU supports \
             (avx2); clamped to avx2"
        )
    );
    // One line.
    assert!(!clamped.warning().unwrap().contains('\n'));

    // Another architecture's level leaves nothing of it: the scalar path.
    let foreign = CpuPolicy::new(AVX512_CPU, Some("neon"));
    assert_eq!(foreign.capability(), Capability::Default);
    assert_eq!(
        foreign.warning(),
        Some(
            "switchyard: SWITCHYARD_CPU_CAPABILITY=neon is for another architecture than \
             this CPU (avx512); clamped to default"
        )
    );
    let foreign = CpuPolicy::new(ARM_CPU, Some("avx2"));
    assert_eq!(foreign.capability(), Capability::Default);
    let foreign = CpuPolicy::new(AVX2_CPU, Some("simd128"));
    assert_eq!(foreign.capability(), Capability::Default);
    assert!(foreign.warning().unwrap().contains("another architecture"));
    // On wasm `default` leaves the naive kernels, `simd128` keeps the SIMD ones.
    let wasm = CpuPolicy::new(WASM_SIMD_CPU, Some("default"));
    assert_eq!(wasm.capability(), Capability::Default);
    assert_eq!(wasm.choose(&[CpuFeatures::SIMD128]), None);
    let wasm = CpuPolicy::new(WASM_SIMD_CPU, Some("simd128"));
    assert_eq!(wasm.capability(), Capability::Simd128);
    assert_eq!(wasm.warning(), None);
    assert_eq!(wasm.choose(&[CpuFeatures::SIMD128]), Some(0));

    let unknown = CpuPolicy::new(AVX2_CPU, Some("avx9000"));
    assert_eq!(unknown.capability(), Capability::Avx2);
    assert_eq!(unknown.requested(), None);
    assert!(
        unknown
            .warning()
            .unwrap()
            .contains("unknown SWITCHYARD_CPU_CAPABILITY=\"avx9000\""),
        "{unknown:?}"
    );
}

#[test]
fn best_supported_variant_wins() {
    let variants = [CpuFeatures::empty(), avx2_fma(), CpuFeatures::AVX512F];
    assert_eq!(CpuPolicy::new(AVX512_CPU, None).choose(&variants), Some(2));
    assert_eq!(CpuPolicy::new(AVX2_CPU, None).choose(&variants), Some(1));
    assert_eq!(
        CpuPolicy::new(CpuFeatures::SSE2, None).choose(&variants),
        Some(0)
    );
    assert_eq!(CpuPolicy::new(ARM_CPU, None).choose(&variants), Some(0));
    // Order of the slice does not matter for distinct ranks.
    let reversed = [CpuFeatures::AVX512F, avx2_fma(), CpuFeatures::empty()];
    assert_eq!(CpuPolicy::new(AVX512_CPU, None).choose(&reversed), Some(0));
    // A superset of features ranks above a subset of the same level, a newer feature above
    // an older one.
    let same_level = [CpuFeatures::AVX2, avx2_fma()];
    assert_eq!(CpuPolicy::new(AVX2_CPU, None).choose(&same_level), Some(1));
    let same_level = [CpuFeatures::AVX, CpuFeatures::SSE2 | CpuFeatures::SSE3];
    assert_eq!(CpuPolicy::new(AVX2_CPU, None).choose(&same_level), Some(0));
}

#[test]
fn unsupported_variants_are_never_chosen() {
    let only_simd = [avx2_fma(), CpuFeatures::AVX512F];
    assert_eq!(
        CpuPolicy::new(CpuFeatures::SSE2, None).choose(&only_simd),
        None
    );
    assert_eq!(CpuPolicy::new(ARM_CPU, None).choose(&only_simd), None);
    assert_eq!(CpuPolicy::new(WASM_SIMD_CPU, None).choose(&only_simd), None);
    // A wasm module built without `simd128` never installs a `simd128` variant.
    let empty = CpuPolicy::new(CpuFeatures::empty(), Some("simd128"));
    assert_eq!(empty.choose(&[CpuFeatures::SIMD128]), None);
    assert_eq!(
        empty.verdict(CpuFeatures::SIMD128).to_string(),
        "not chosen: CPU lacks simd128"
    );
    // Exhaustively: on the AVX2 CPU, whatever the override, nothing needing AVX-512 runs.
    for request in [
        None,
        Some("avx512"),
        Some("avx2"),
        Some("default"),
        Some("x"),
    ] {
        let policy = CpuPolicy::new(AVX2_CPU, request);
        let chosen = policy.choose(&only_simd).map(|i| only_simd[i]);
        assert!(
            chosen.is_none_or(|needs| AVX2_CPU.contains(needs)),
            "{request:?}"
        );
    }
}

#[test]
fn default_forces_the_plain_kernel() {
    let policy = CpuPolicy::new(AVX512_CPU, Some("default"));
    let variants = [CpuFeatures::empty(), avx2_fma(), CpuFeatures::AVX512F];
    assert_eq!(policy.choose(&variants), Some(0));
    assert_eq!(policy.choose(&variants[1..]), None);
    assert_eq!(
        policy.verdict(avx2_fma()),
        Verdict::Capped(Capability::Default)
    );
    assert_eq!(
        policy.verdict(avx2_fma()).to_string(),
        "not chosen: capped by SWITCHYARD_CPU_CAPABILITY=default"
    );
}

#[test]
fn verdicts_say_why() {
    let policy = CpuPolicy::new(AVX2_CPU, Some("avx2"));
    assert_eq!(
        policy.verdict(CpuFeatures::AVX512F | CpuFeatures::AVX512BW),
        Verdict::Lacks(CpuFeatures::AVX512F | CpuFeatures::AVX512BW)
    );
    assert_eq!(
        Verdict::Lacks(CpuFeatures::AVX512F | CpuFeatures::AVX512BW).to_string(),
        "not chosen: CPU lacks avx512f,avx512bw"
    );
    assert_eq!(policy.verdict(CpuFeatures::AVX2), Verdict::Outranked);
    let capped = CpuPolicy::new(AVX512_CPU, Some("avx2"));
    assert_eq!(
        capped.verdict(CpuFeatures::AVX512F),
        Verdict::Capped(Capability::Avx2)
    );
}

#[test]
fn every_feature_belongs_to_one_architecture() {
    assert_eq!(
        X86_ALL | CpuFeatures::NEON | CpuFeatures::SIMD128,
        CpuFeatures::all()
    );
    assert!(!X86_ALL.contains(CpuFeatures::NEON | CpuFeatures::SIMD128));
    assert!(X86_ALL.contains(X86_AVX512));
    // Detection finds only the running architecture's features.
    let native = if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        X86_ALL
    } else if cfg!(target_arch = "aarch64") {
        CpuFeatures::NEON
    } else if cfg!(target_arch = "wasm32") {
        CpuFeatures::SIMD128
    } else {
        CpuFeatures::empty()
    };
    assert!(native.contains(detected()), "{}", detected());
    // On wasm32, `simd128` is detected exactly when the module was compiled with it.
    if cfg!(target_arch = "wasm32") {
        assert_eq!(
            detected().contains(CpuFeatures::SIMD128),
            cfg!(target_feature = "simd128")
        );
    }
}

#[test]
fn names_and_display() {
    assert_eq!(avx2_fma().to_string(), "avx2,fma");
    assert_eq!(CpuFeatures::empty().to_string(), "-");
    let all: CpuFeatures = FEATURE_NAMES.iter().map(|(f, _)| *f).collect();
    assert_eq!(all, CpuFeatures::all());
    let policy = CpuPolicy::new(AVX2_CPU, Some("default"));
    assert_eq!(
        policy.to_string(),
        "cpu: default (detected sse2,avx,avx2,fma; SWITCHYARD_CPU_CAPABILITY=default)"
    );
}
