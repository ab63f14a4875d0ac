//! The wgpu backend through the conformance kit: every standard op, every dtype, every edge
//! shape, against the naive CPU backend. Where the backend does not serve a case (today: dtypes
//! other than `f32`), the kit must show it as not served with the backend's error; every case it
//! does serve must be right.

use switchyard::{DType, DTypeSet, Device, ErrorKind};
use switchyard_backends::testing::{Conformance, Outcome, Tolerance};
use switchyard_tests_wgpu::{WGPU_KERNEL_OPS, gpu_or_skip};

/// What WGSL allows beyond the CPU's promises: `f32` division within 2.5 ulp, `exp` within
/// `3 + 2·|x|` ulp (ordinary inputs are within `[-4, 4)`; special ones give 0, 1, ∞ or NaN, which
/// must match exactly), and reductions accumulated in `f32`. (Mesa's lavapipe divides exactly
/// and is 2 ulp off in `exp`.)
fn wgpu_conformance() -> Conformance {
    let f32_only = DTypeSet::of(&[DType::F32]);
    let in_f32 = Tolerance::Accumulated {
        ulps: 1,
        epsilon: f64::from(f32::EPSILON),
    };
    Conformance::new(Device::Wgpu)
        // The workgroup size of elementwise ops and reductions, beside the CPU's lane counts.
        .lanes(&[4, 8, 16, 32, 256])
        .tolerance("div", f32_only, Tolerance::Ulps(3))
        .tolerance("exp", f32_only, Tolerance::Ulps(3 + 2 * 4))
        .tolerance("sum", f32_only, in_f32)
        .tolerance("mean", f32_only, in_f32)
}

#[test]
fn every_served_case_is_right_and_every_other_says_why() {
    if !gpu_or_skip("every_served_case_is_right_and_every_other_says_why") {
        return;
    }
    let mut conformance = wgpu_conformance();
    let adapter = switchyard_backends::wgpu::adapter_info().unwrap();
    if adapter.backend.to_string() == "gl" {
        // GLSL does not promise NaN and -0.0 through comparisons: on Mesa's GL `relu` turns
        // NaN and -0.0 into 0 (CI skips `special_values` there for the same reason).
        conformance = conformance.without_special_values(&["relu", "relu_"]);
    }
    let report = conformance
        .run()
        .unwrap_or_else(|failures| panic!("{failures}"));
    println!("{report}");
    assert!(report.passed().count() > 0, "{report}");
    // The backend's core: every op with a wgpu kernel but `to_dtype` (which serves `f32` → `f32`
    // only), and in-place composites over `copy_`.
    let core = WGPU_KERNEL_OPS.into_iter().filter(|op| *op != "to_dtype");
    for op in core.chain(["fill_", "zero_", "add_", "exp_"]) {
        assert!(
            report.passed().any(|c| c.op == op),
            "wgpu serves no case of {op}:\n{report}"
        );
    }
    for case in report.not_served() {
        let Outcome::NotServed { error, .. } = &case.outcome else {
            unreachable!()
        };
        // Refusals name the backend, or are the engine's missing kernel.
        let named = error.to_string().contains("wgpu");
        let missing = matches!(error.kind(), ErrorKind::MissingKernel { .. });
        assert!(named || missing, "{case}");
    }
}
