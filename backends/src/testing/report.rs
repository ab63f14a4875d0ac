//! What a conformance run found: one [`Outcome`] per case, gathered in a [`Report`]; a run with
//! failures returns them as [`Failures`].

use std::fmt;

use switchyard::{ColumnSet, Device, DispatchError};

use super::compare::Tolerance;

/// Where a backend's part of a case stopped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Step {
    /// Moving an input to the device (the kit's upload function, `to` by default).
    Upload,
    /// Viewing an input with the case's layout on the device (a view op).
    Layout,
    /// Calling the op.
    Call,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Step::Upload => "moving an input to the device",
            Step::Layout => "laying out an input on the device",
            Step::Call => "the op",
        })
    }
}

/// What became of one case.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The backend's result had the oracle's dtype and shape, was on the device, and its values
    /// were within the tolerance.
    Passed(Tolerance),
    /// The oracle refuses these inputs (`sub` of two `bool` tensors, `mean` of integers) and the
    /// backend refused them too.
    RejectedAlike {
        /// The oracle's error.
        oracle: DispatchError,
        /// The backend's error.
        backend: DispatchError,
    },
    /// The backend does not serve the case, and said so: no kernel for the call's dtypes at the
    /// device's keys ([`ErrorKind::MissingKernel`](switchyard::ErrorKind::MissingKernel)), or
    /// a kernel that refused it ([`ErrorKind::Kernel`](switchyard::ErrorKind::Kernel): a dtype,
    /// layout or feature it lacks).
    NotServed {
        /// Where the backend stopped.
        step: Step,
        /// Its error.
        error: DispatchError,
    },
    /// A wrong answer: a wrong value, dtype, shape or device; an error of another kind where the
    /// oracle computed a result; a result where the oracle refused; or a panic.
    Failed(String),
}

/// One case and what became of it.
#[derive(Clone, Debug)]
pub struct CaseReport {
    /// The op's name.
    pub op: &'static str,
    /// The inputs (`dtype[shape] layout`) and the op's other arguments.
    pub case: String,
    /// What happened.
    pub outcome: Outcome,
}

impl CaseReport {
    /// Whether the backend computed the case correctly.
    pub fn passed(&self) -> bool {
        matches!(self.outcome, Outcome::Passed(_))
    }

    /// Whether the backend declared that it does not serve the case.
    pub fn not_served(&self) -> bool {
        matches!(self.outcome, Outcome::NotServed { .. })
    }

    /// Whether the backend got the case wrong.
    pub fn failed(&self) -> bool {
        matches!(self.outcome, Outcome::Failed(_))
    }
}

impl fmt::Display for CaseReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}): ", self.op, self.case)?;
        match &self.outcome {
            Outcome::Passed(tolerance) => write!(f, "passed ({tolerance})"),
            Outcome::RejectedAlike { backend, .. } => write!(f, "rejected alike: {backend}"),
            Outcome::NotServed { step, error } => write!(f, "not served ({step}): {error}"),
            Outcome::Failed(why) => write!(f, "FAILED: {why}"),
        }
    }
}

/// Every case of a run, in the order run, and what each op declares.
#[derive(Clone, Debug)]
pub struct Report {
    pub(crate) device: Device,
    pub(crate) cases: Vec<CaseReport>,
    pub(crate) declared: Vec<(&'static str, ColumnSet)>,
    pub(crate) problems: Vec<String>,
}

impl Report {
    /// The device the run checked.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Every case, in the order run.
    pub fn cases(&self) -> &[CaseReport] {
        &self.cases
    }

    /// The cases the backend computed correctly.
    pub fn passed(&self) -> impl Iterator<Item = &CaseReport> {
        self.cases.iter().filter(|c| c.passed())
    }

    /// The cases the backend declared it does not serve, each with its error.
    pub fn not_served(&self) -> impl Iterator<Item = &CaseReport> {
        self.cases.iter().filter(|c| c.not_served())
    }

    /// The cases the backend got wrong.
    pub fn failed(&self) -> impl Iterator<Item = &CaseReport> {
        self.cases.iter().filter(|c| c.failed())
    }

    /// For each op run, the dtype columns the device's backend keys serve in its table (a kernel,
    /// a composite or a fallback, after fallthroughs): what the backend declares. A case outside
    /// them is expected to be [`Outcome::NotServed`] with a missing-kernel error.
    pub fn declared(&self) -> &[(&'static str, ColumnSet)] {
        &self.declared
    }

    /// Problems with the run itself rather than a case: a standard op the kit has no cases for
    /// (it must be added to the kit, not skipped), an op named in
    /// [`Conformance::ops`](super::Conformance::ops) that does not exist.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// Whether nothing failed and the run had no problems.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty() && self.failed().next().is_none()
    }

    fn count(&self, op: &str, f: fn(&CaseReport) -> bool) -> usize {
        self.cases.iter().filter(|c| c.op == op && f(c)).count()
    }
}

/// A summary: per op, what it declares and how many cases passed, were rejected alike, were
/// not served (with the first reason) and failed.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed = self.failed().count();
        writeln!(
            f,
            "conformance on {}: {} cases, {} passed, {} not served, {failed} failed",
            self.device,
            self.cases.len(),
            self.passed().count(),
            self.not_served().count(),
        )?;
        for problem in &self.problems {
            writeln!(f, "  problem: {problem}")?;
        }
        for (op, declared) in &self.declared {
            writeln!(
                f,
                "  {op:<11} declares {declared:<10} passed {:>4}  rejected alike {:>3}  not served {:>4}  failed {:>3}",
                self.count(op, CaseReport::passed),
                self.count(op, |c| matches!(c.outcome, Outcome::RejectedAlike { .. })),
                self.count(op, CaseReport::not_served),
                self.count(op, CaseReport::failed),
            )?;
            if let Some(first) = self.not_served().find(|c| c.op == *op) {
                writeln!(f, "              first not served: {first}")?;
            }
        }
        Ok(())
    }
}

/// A run that found wrong answers (or could not cover every op): the whole [`Report`], printed
/// failures first. `Debug` prints the same, so `run().unwrap()` shows them.
pub struct Failures(pub Report);

impl fmt::Display for Failures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = &self.0;
        writeln!(
            f,
            "{} of {} conformance cases failed on {}{}:",
            report.failed().count(),
            report.cases.len(),
            report.device,
            if report.problems.is_empty() {
                String::new()
            } else {
                format!(", and {} problems with the run", report.problems.len())
            }
        )?;
        // The problems are listed by the report below.
        for case in report.failed() {
            writeln!(f, "  {case}")?;
        }
        write!(f, "{report}")
    }
}

impl fmt::Debug for Failures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Failures {}
