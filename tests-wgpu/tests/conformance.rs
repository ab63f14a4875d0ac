//! The wgpu backend through the conformance kit: every standard op, every dtype, every edge
//! shape, against the naive CPU backend. Where the backend does not serve a case (a dtype it does
//! not hold or compute), the kit must show it as not served with the backend's error; every case
//! it does serve must be right.

use switchyard::{DType, DTypeSet, Device, ErrorKind};
use switchyard_backends::testing::{Conformance, Outcome, Tolerance};
use switchyard_tests_wgpu::{RANDN_ULPS, WGPU_KERNEL_OPS, gpu_or_skip};

/// What WGSL allows beyond the CPU's promises, for ordinary inputs (within `[-4, 4)`; special
/// ones — NaN, ±∞, ±0, subnormals, huge — are decided on their bits in the shaders and must match
/// exactly):
///
/// - `div`: 2.5 ulp; `exp`: `3 + 2·|x|` ulp;
/// - `log`: 3 ulp, and an absolute 2⁻²¹ within `[0.5, 2]` (the kit gives `log` an error scale of
///   1, so `epsilon` is that absolute error);
/// - `sqrt`: WGSL's is `1 / inverseSqrt(x)`: 2 ulp, then a division's 2.5;
/// - `tanh`: below 0.55 a polynomial of correctly rounded products and sums (2 ulp); above,
///   `1 − 2/(e^{2a} + 1)`, where `exp`'s `3 + 4a` ulp, the division's 2.5 and the subtraction
///   leave at most 5 ulp of the result (at `a = 0.55`, where `2/(e^{2a} + 1)` is largest);
/// - `sigmoid`: `e^x/(1 + e^x)` below 0 carries `exp`'s `3 + 2·4` ulp, plus a division's 2.5 and a
///   sum's rounding: 14 ulp;
/// - `randn`: [`RANDN_ULPS`] (its cases also carry a scale of 1);
/// - `softmax` and `softmax_in` (composites of the GPU's ops): `exp`'s `3 + 2·4` ulp, the
///   division's 3, and the relative error of the `f32` tree sum it divides by (≤ ⌈log₂ n⌉ ulp,
///   17 for the kit's 100,003 elements): 32 ulp;
/// - reductions (`sum`, `mean`, `sum_dim`, `mean_dim`, `sum_with`, `mean_with`) accumulate in
///   `f32`.
///
/// Comparisons, `where`, `max_dim`, `argmax`, `arange` and `rand` are exact, as the kit's defaults
/// say: they select or compare bits, or compute integers. (Mesa's lavapipe divides exactly, is 2
/// ulp off in `exp` and within 3 ulp in `randn`.)
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
        .tolerance(
            "log",
            f32_only,
            Tolerance::Accumulated {
                ulps: 3,
                epsilon: 2f64.powi(-21),
            },
        )
        .tolerance("sqrt", f32_only, Tolerance::Ulps(5))
        .tolerance("tanh", f32_only, Tolerance::Ulps(5))
        .tolerance("sigmoid", f32_only, Tolerance::Ulps(14))
        .tolerance("randn", f32_only, Tolerance::Ulps(RANDN_ULPS))
        .tolerance("softmax", f32_only, Tolerance::Ulps(3 + 2 * 4 + 3 + 17))
        .tolerance("softmax_in", f32_only, Tolerance::Ulps(3 + 2 * 4 + 3 + 17))
        .tolerance("sum", f32_only, in_f32)
        .tolerance("mean", f32_only, in_f32)
        .tolerance("sum_dim", f32_only, in_f32)
        .tolerance("mean_dim", f32_only, in_f32)
        .tolerance("sum_with", f32_only, in_f32)
        .tolerance("mean_with", f32_only, in_f32)
}

#[test]
fn every_served_case_is_right_and_every_other_says_why() {
    if !gpu_or_skip("every_served_case_is_right_and_every_other_says_why") {
        return;
    }
    let report = wgpu_conformance()
        .run()
        .unwrap_or_else(|failures| panic!("{failures}"));
    println!("{report}");
    assert!(report.passed().count() > 0, "{report}");
    // The backend's core: every op with a wgpu kernel, and the composites over `copy_` (the
    // in-place ops, `cat` and `stack`).
    for op in WGPU_KERNEL_OPS
        .into_iter()
        .chain(["fill_", "zero_", "add_", "exp_", "cat", "stack"])
    {
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
