//! The toy device through switchyard's backend conformance kit, as a downstream crate checks its
//! own device: every standard op, every dtype, every edge shape, against the naive CPU backend.
//!
//! The toy device serves `add` and `mul` of whole `f32` tensors of one shape; everything else
//! must come back "not served" with an error that says why, never a wrong answer.

use switchyard::{Device, ErrorKind};
use switchyard_backends::testing::{Conformance, Outcome, Step};
use switchyard_example_downstream::to_toy;

#[test]
fn the_toy_device_is_right_where_it_serves_and_says_so_where_it_does_not() {
    let report = Conformance::new(Device::PrivateUse1)
        .upload(to_toy)
        .run()
        .unwrap_or_else(|failures| panic!("{failures}"));
    println!("{report}");

    // What it serves: `add` and `mul` of contiguous f32 operands of one shape, and the view ops
    // (computed from the layout on any device; the toy device only holds and reads storage).
    let served: Vec<&str> = report.passed().map(|c| c.op).collect();
    for op in ["add", "mul", "view", "transpose", "expand"] {
        assert!(served.contains(&op), "{op} passes somewhere:\n{report}");
    }
    for case in report.passed().filter(|c| c.op == "add" || c.op == "mul") {
        assert!(case.case.starts_with("f32["), "{case}");
    }

    // What it does not: every other op has no kernel at `PrivateUse1` (the call's error names
    // the toy device), and other dtypes do not get onto the device at all.
    for case in report.not_served() {
        let Outcome::NotServed { step, error } = &case.outcome else {
            unreachable!()
        };
        match (step, error.kind()) {
            (Step::Call, ErrorKind::MissingKernel { .. }) => {
                assert!(!["add", "mul"].contains(&case.op), "{case}");
                assert!(error.to_string().contains("toy"), "{case}");
            }
            // The toy's own refusals (views, broadcasting), also reached by the in-place forms,
            // which compute with `add` and `mul`.
            (Step::Call, ErrorKind::Kernel { .. }) => {
                assert!(["add", "mul", "add_", "mul_"].contains(&case.op), "{case}")
            }
            (Step::Upload, ErrorKind::Kernel { .. }) => {
                let other = ["bool[", "u8[", "i32[", "i64[", "f16[", "bf16[", "f64["];
                assert!(other.iter().any(|d| case.case.contains(d)), "{case}")
            }
            _ => panic!("unexpected refusal: {case}"),
        }
    }
}
