//! The meta backend against the naive one, on every case of the conformance kit: each standard
//! op's meta kernel (or body) gives the oracle's dtype, shape and strides, and refuses what the
//! oracle refuses with the oracle's own error.

use switchyard::Device;
use switchyard_backends as _; // links the CPU and meta kernels
use switchyard_backends::testing::{Conformance, Outcome};

#[test]
fn every_standard_op_has_the_oracles_shapes_dtypes_and_errors_on_meta() {
    let report = match Conformance::new(Device::Meta).run() {
        Ok(report) => report,
        Err(failures) => panic!("{failures}"),
    };
    let not_served: Vec<String> = report.not_served().map(|c| c.to_string()).collect();
    assert!(
        not_served.is_empty(),
        "not served on meta:\n{}",
        not_served.join("\n")
    );
    assert!(
        report.passed().count() > 1000,
        "{} passed",
        report.passed().count()
    );
    let rejected = report
        .cases()
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::RejectedAlike { .. }))
        .count();
    assert!(
        rejected > 10,
        "{rejected} refusals: the kit's refused cases did not run"
    );
}
