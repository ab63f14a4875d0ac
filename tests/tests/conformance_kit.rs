//! The conformance kit catches what it exists to catch: wrong values, wrong dtypes, results beyond
//! the tolerance and panics are failures; a kernel that refuses a case is "not served", with its
//! error. Each test overrides the CPU's kernel of its own op at run time (tests run in parallel
//! in this binary, and an override changes the op for all of them).

use switchyard::ops::{self, contiguous, copy_, exp, mean, neg, relu, sum};
use switchyard::{BackendStorage, DType, DTypeSet, Device, DispatchError, DispatchKey, Tensor};
use switchyard_backends::testing::{Conformance, Outcome, Tolerance};

/// `op`'s result on the naive backend: what a correct kernel would give.
fn naive(f: impl FnOnce() -> switchyard::Result<Tensor>) -> switchyard::Result<Tensor> {
    let _naive = switchyard::exclude(DispatchKey::CpuSimd);
    f()
}

#[test]
fn wrong_values_fail_and_say_where() {
    // `-x` forgotten: right dtype and shape, wrong values (except at zeros and NaN).
    let kernel: neg::KernelFn = |_, x| Ok(x.clone());
    let _wrong = neg::register_override(DispatchKey::CpuSimd, "neg_wrong", kernel).unwrap();
    let failures = Conformance::new(Device::Cpu)
        .ops(&["neg"])
        .run()
        .unwrap_err();
    let report = &failures.0;
    assert!(report.failed().count() > 100, "{failures}");
    let first = report
        .failed()
        .find(|c| c.case.starts_with("f32"))
        .unwrap()
        .to_string();
    assert!(
        first.starts_with("neg(f32") && first.contains("the oracle gives"),
        "{first}"
    );
    // Where the oracle refuses (`neg` of `bool`), a result is a failure too.
    let bool_case = report
        .failed()
        .find(|c| c.case.starts_with("bool"))
        .unwrap()
        .to_string();
    assert!(
        bool_case.contains("where the oracle refused"),
        "{bool_case}"
    );
    assert!(failures.to_string().contains("FAILED"), "{failures}");
}

#[test]
fn a_refusal_is_not_served_with_the_backends_error() {
    // A backend for `f32` only, which says so for every other dtype.
    let kernel: relu::KernelFn = |_, x| {
        if x.dtype() != DType::F32 {
            return Err(DispatchError::kernel(
                "relu",
                format!("relu_f32_only: not {}", x.dtype()),
            ));
        }
        naive(|| ops::try_relu(x))
    };
    let _f32_only = relu::register_override(DispatchKey::CpuSimd, "relu_f32_only", kernel).unwrap();
    let report = Conformance::new(Device::Cpu).ops(&["relu"]).run().unwrap();
    assert!(report.not_served().count() > 100, "{report}");
    for case in report.not_served() {
        let Outcome::NotServed { error, .. } = &case.outcome else {
            unreachable!()
        };
        assert!(error.to_string().contains("relu_f32_only: not"), "{case}");
        assert!(!case.case.starts_with("f32"), "{case}");
    }
    let f32_cases = report.cases().iter().filter(|c| c.case.starts_with("f32"));
    assert!(f32_cases.clone().count() > 20);
    assert!(f32_cases.clone().all(|c| c.passed()), "{report}");
}

#[test]
fn a_panic_is_a_failure_not_a_crash() {
    let kernel: exp::KernelFn = |_, _| panic!("exp_panics was called");
    let _panics = exp::register_override(DispatchKey::CpuSimd, "exp_panics", kernel).unwrap();
    let failures = Conformance::new(Device::Cpu)
        .ops(&["exp"])
        .run()
        .unwrap_err();
    let first = failures.0.failed().next().unwrap().to_string();
    assert!(
        first.contains("the backend panicked: exp_panics was called"),
        "{first}"
    );
}

#[test]
fn a_sum_beyond_the_stated_bound_fails_and_one_within_it_passes() {
    // One part in a thousand off: far beyond `1 ulp + n·2⁻⁵²·Σ|x|` except where the sum is 0.
    let kernel: sum::KernelFn = |_, x| {
        let exact = naive(|| ops::try_sum(x))?;
        if !exact.dtype().is_float() {
            return Ok(exact);
        }
        let off = exact.try_item()?.as_f64() * 1.001;
        ops::try_to_dtype(&Tensor::from_scalar(off)?, exact.dtype())
    };
    let _off = sum::register_override(DispatchKey::CpuSimd, "sum_off", kernel).unwrap();
    let failures = Conformance::new(Device::Cpu)
        .ops(&["sum"])
        .run()
        .unwrap_err();
    let failed: Vec<String> = failures.0.failed().map(|c| c.to_string()).collect();
    assert!(
        failed.iter().any(|c| c.contains("(allowed: ")),
        "{failures}"
    );
    // Integers sum exactly, so they pass.
    assert!(
        failed.iter().all(|c| !c.starts_with("sum(i32")),
        "{failures}"
    );
}

#[test]
fn a_wrong_dtype_fails() {
    // The mean of `f32` in `f64`: the right number, the wrong dtype.
    let kernel: mean::KernelFn = |_, x| {
        let exact = naive(|| ops::try_mean(x))?;
        ops::try_to_dtype(&exact, DType::F64)
    };
    let _wide = mean::register_override(DispatchKey::CpuSimd, "mean_wide", kernel).unwrap();
    let failures = Conformance::new(Device::Cpu)
        .ops(&["mean"])
        .run()
        .unwrap_err();
    let first = failures
        .0
        .failed()
        .find(|c| c.case.starts_with("f32"))
        .unwrap()
        .to_string();
    assert!(first.contains("dtype f64, the oracle gives f32"), "{first}");
}

#[test]
fn an_unknown_op_is_a_problem_of_the_run() {
    let failures = Conformance::new(Device::Cpu)
        .ops(&["add", "nope"])
        .run()
        .unwrap_err();
    assert_eq!(failures.0.problems(), ["`nope` is not a standard op"]);
    assert_eq!(failures.0.failed().count(), 0, "{failures}");
}

#[test]
fn ops_without_special_values_get_ordinary_inputs_only() {
    // Flushes NaN and -0.0 to 0, as some GPU drivers do: wrong with special values, right
    // without them.
    let kernel: contiguous::KernelFn = |_, x| {
        let copy = naive(|| ops::try_contiguous(x))?;
        if x.dtype() != DType::F32 {
            return Ok(copy);
        }
        let values = copy.try_to_vec::<f32>()?;
        let flushed = values
            .iter()
            .map(|&v| if v.is_nan() || v == 0.0 { 0.0 } else { v });
        Tensor::from_vec::<f32>(flushed.collect(), x.shape())
    };
    let _flush = contiguous::register_override(DispatchKey::CpuSimd, "flush", kernel).unwrap();
    let with = Conformance::new(Device::Cpu).ops(&["contiguous"]).run();
    let failures = with.unwrap_err();
    assert!(
        failures.0.failed().all(|c| c.case.starts_with("f32")),
        "{failures}"
    );
    let without = Conformance::new(Device::Cpu)
        .ops(&["contiguous"])
        .without_special_values(&["contiguous"])
        .run();
    let report = without.unwrap_or_else(|f| panic!("{f}"));
    assert!(
        report.passed().any(|c| c.case.starts_with("f32")),
        "{report}"
    );
}

/// A device storage whose read-back panics: a downstream backend's bug, which the kit must report
/// as a failure rather than crash on.
#[derive(Debug)]
struct PanicsOnRead(usize);

impl BackendStorage for PanicsOnRead {
    fn len(&self) -> usize {
        self.0
    }

    fn dtype(&self) -> DType {
        DType::F32
    }

    fn read_bytes(&self) -> Result<Vec<u8>, DispatchError> {
        panic!("read_bytes_panics")
    }
}

fn unreadable(x: &Tensor) -> switchyard::Result<Tensor> {
    Tensor::from_backend(PanicsOnRead(x.numel()), x.shape(), Device::PrivateUse3)
}

#[test]
fn a_panic_reading_a_result_back_is_a_failure_not_a_crash() {
    let kernel: neg::KernelFn = |_, x| unreadable(x);
    let _unreadable = neg::register_override(DispatchKey::PrivateUse3, "neg_unreadable", kernel);
    let failures = Conformance::new(Device::PrivateUse3)
        .upload(unreadable)
        .ops(&["neg"])
        .run()
        .unwrap_err();
    assert!(
        failures
            .0
            .failed()
            .any(|c| c.to_string().contains("panicked: read_bytes_panics")),
        "{failures}"
    );
}

#[test]
fn inputs_the_kit_cannot_build_fail_the_run() {
    // More elements than memory holds: the oracle and the backend both fail to get them, which
    // must not pass as "rejected alike".
    let failures = Conformance::new(Device::Cpu)
        .ops(&["neg"])
        .large(usize::MAX / 2)
        .run()
        .unwrap_err();
    let failed: Vec<String> = failures.0.failed().map(|c| c.to_string()).collect();
    assert!(!failed.is_empty(), "{failures}");
    assert!(
        failed.iter().all(|c| c.contains("the kit could not build")),
        "{failures}"
    );
}

#[test]
fn widths_beyond_the_kits_reach_are_a_problem_of_the_run() {
    let failures = Conformance::new(Device::Cpu)
        .ops(&["neg"])
        .lanes(&[usize::MAX])
        .run()
        .unwrap_err();
    assert!(
        failures
            .0
            .problems()
            .iter()
            .any(|p| p.contains("lane width")),
        "{failures}"
    );
}

#[test]
fn a_wrong_in_place_write_fails() {
    // `copy_` writing `-src`. The oracle and the backend each need a destination of their own:
    // sharing one, both writes would land in one storage and compare equal.
    let kernel: copy_::KernelFn = |_, dst, src| {
        let _naive = switchyard::exclude(DispatchKey::CpuSimd);
        ops::try_copy_(dst, &ops::try_neg(src)?)
    };
    let _negated = copy_::register_override(DispatchKey::CpuSimd, "copy_negated", kernel).unwrap();
    let failures = Conformance::new(Device::Cpu)
        .ops(&["copy_"])
        .run()
        .unwrap_err();
    assert!(
        failures.0.failed().any(|c| c.case.starts_with("f32")),
        "{failures}"
    );
}

#[test]
fn settings_for_no_op_are_problems_not_silently_ignored() {
    // A misspelt op in a tolerance or in `without_special_values` would leave the op it meant
    // with the defaults; an empty selection would check nothing and pass.
    let failures = Conformance::new(Device::Cpu)
        .ops(&["neg"])
        .tolerance("nge", DTypeSet::of(&[DType::F32]), Tolerance::Ulps(2))
        .without_special_values(&["rleu"])
        .run()
        .unwrap_err();
    let problems = failures.0.problems();
    assert!(problems.iter().any(|p| p.contains("`nge`")), "{problems:?}");
    assert!(
        problems.iter().any(|p| p.contains("`rleu`")),
        "{problems:?}"
    );
    let failures = Conformance::new(Device::Cpu).ops(&[]).run().unwrap_err();
    assert!(
        failures.0.problems().iter().any(|p| p.contains("no op")),
        "{failures}"
    );
}
