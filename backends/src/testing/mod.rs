//! The backend conformance kit: every standard op, on every dtype, on edge shapes, on a device,
//! against the naive CPU backend (the oracle), with stated tolerances.
//!
//! ```
//! use switchyard::Device;
//! use switchyard_backends::testing::Conformance;
//!
//! // The CPU as a whole (the SIMD backend, falling through to the naive one where it has no
//! // kernel), for two ops.
//! let report = Conformance::new(Device::Cpu).ops(&["add", "sum"]).run().unwrap();
//! assert_eq!(report.not_served().count(), 0);
//! assert!(report.passed().count() > 100);
//! ```
//!
//! A downstream crate checks its own device the same way, telling the kit how a CPU tensor gets
//! there when the standard `to` op does not do it ([`Conformance::upload`]); see
//! `examples/downstream`.
//!
//! # What runs
//!
//! For each standard op (each op the tensor crate declares; one the kit has no cases for is a
//! [problem](Report::problems) of the run, never skipped), for every dtype: inputs of each edge
//! shape — 0-dimensional, empty (`[0]`, `[0, 3]`), one element, odd (`[7]`), each width of
//! [`Conformance::lanes`] ± 1, a matrix, and [`Conformance::large`] elements — laid out
//! contiguous, transposed, strided (every second element), offset (not from the storage's
//! start) and expanded (stride 0); for the binary ops also operands of different layouts,
//! broadcast pairs and pairs of two dtypes (promotion). The reductions along dimensions run on
//! matrices and 3-d tensors along each dimension, several and none, over empty extents and the
//! same layouts; `where` on three operands of those shapes and layouts and on broadcast triples;
//! `cat` and `stack` on inputs of several extents (one empty), each layout, negative dims and
//! pairs of two dtypes; the factories (`full`, `arange`, `rand`, `randn`) on the edge shapes,
//! `rand` and `randn` with several seeds and offsets (one that wraps the counter). The in-place ops (`add_` … `exp_`,
//! `copy_`, `fill_`, `zero_`) run the same cases, their first input the destination; the
//! result is the destination after the write. Floats include NaN, ±∞, ±0, subnormals
//! and values that overflow the 16-bit types; integers their extremes (elementwise ops and
//! conversions; reductions and `matmul` get finite values).
//!
//! Each case is computed twice: on the CPU with [`DispatchKey::CpuSimd`] excluded (the naive
//! backend, the oracle), and on the device, where the inputs are moved (as contiguous tensors)
//! and laid out with the view ops. Then it is one [`Outcome`]:
//!
//! - **passed**: same dtype and shape, result on the device, values within the tolerance;
//! - **rejected alike**: the oracle refuses the inputs (`sub` of `bool`s) and so does the backend;
//! - **not served**: the backend said it does not serve the case — no kernel for the call's
//!   dtypes at the device's keys (a missing-kernel error), or a kernel (or the upload) that
//!   refused with a kernel error naming what it lacks. Reported with the error, never skipped;
//!   a test decides which not-served cases it accepts;
//! - **failed**: anything else — a wrong value, dtype, shape or device, another kind of error
//!   where the oracle computed a result, a result where the oracle refused, a panic.
//!
//! [`Conformance::run`] returns the [`Report`] when nothing failed, else [`Failures`].
//!
//! On [`Device::Meta`] (or with [`Conformance::shapes_only`]) no values exist to compare: a case
//! passes when the result's device, dtype, shape and strides are the oracle's, and a refusal
//! must be the oracle's own error, word for word.
//!
//! # Tolerances
//!
//! Integer and `bool` results are always exact. For float results ([`Tolerance::default_for`];
//! an in-place op has its op's: `exp_` that of `exp`):
//!
//! | op | default | why |
//! |---|---|---|
//! | `add` `sub` `mul` `div` `neg` `relu`, `full`, `to_dtype`, `contiguous`, `to`, the view ops, `cat`, `stack` | [`Tolerance::Exact`]: bit for bit, `-0.0 ≠ 0.0`, any NaN matches any NaN | one IEEE operation (or a copy) per element |
//! | `exp`, `log`, `tanh`, `sigmoid` | [`Tolerance::Ulps`]`(1)` | the SIMD backend's promise, within 1 ulp of the exact value (computed in `f32`, every input tested), as the oracle is (the C library's `expf`, `logf`; `tanh`, `sigmoid` in `f64`, rounded once) |
//! | `randn` | [`Tolerance::Ulps`]`(1)` | two results each within half an ulp (a logarithm, a root and a cosine) |
//! | `sqrt`, comparisons, `where`, `max_dim`, `argmax`, `arange`, `rand` | [`Tolerance::Exact`] | one IEEE operation, a selection, or integer arithmetic per element |
//! | `sum`, `mean` | [`Tolerance::Accumulated`] `{ ulps: 1, epsilon: ε(dtype) }` with scale `n·Σ\|xᵢ\|` (`sum`), `Σ\|xᵢ\|` (`mean`) | accumulated in the dtype or wider (the SIMD backend: `f32` lanes within blocks of 1024, blocks in `f64`), in another order, rounded once |
//! | `sum_dim`, `mean_dim` | [`Tolerance::Accumulated`] `{ ulps: 1, epsilon: 2⁻⁵² }` with scale `n·Σ\|xᵢ\|` (`sum_dim`), `Σ\|xᵢ\|` (`mean_dim`), over the `n` elements each result element reduces | accumulated in `f64` like the oracle, in another order, rounded once |
//! | `matmul` | [`Tolerance::Accumulated`] `{ ulps: 0, epsilon: ε(dtype) }` with scale `k·Σₚ\|aᵢₚ·bₚⱼ\|` | products summed in any order, in the result dtype or wider |
//! | `softmax` | [`Tolerance::Ulps`]`(4)` | a composite: `exp`, a sum in another order, a division |
//! | `log_softmax`, `cross_entropy` | [`Tolerance::Accumulated`] `{ ulps: 2, epsilon: 4·ε(dtype) }` with scale `1 + \|xᵢ − m\| + \|ln Σ exp(x − m)\|` (`cross_entropy`: its mean over the targets' elements) | composites whose last step subtracts terms that may cancel |
//!
//! A backend with other promises states them with [`Conformance::tolerance`] (the wgpu test
//! allows what WGSL allows: 3 ulp for `div`, more for `exp`, `f32` accumulation). `log` and
//! `randn` cases carry an error scale of 1 per element, so that an
//! [`Accumulated`](Tolerance::Accumulated) tolerance's `epsilon` is an absolute error there
//! (WGSL bounds `log` near 1 absolutely).

mod cases;
mod compare;
mod join_cases;
mod keyword_cases;
mod nn_cases;
mod report;
mod table;
mod values;
mod view_cases;

use std::panic::{AssertUnwindSafe, catch_unwind};

use switchyard::{
    ColumnSet, DType, DTypeSet, Device, DispatchError, DispatchKey, ErrorKind, OpHandle, Result,
    SlotOrigin, Tensor,
};

pub use compare::Tolerance;
pub use report::{CaseReport, Failures, Outcome, Report, Step};
pub use table::{STANDARD_OPS_CRATE, op_table};

use cases::{Case, Plan};

/// How a CPU tensor gets onto the device under test.
type Upload = Box<dyn Fn(&Tensor) -> Result<Tensor>>;

/// A conformance run on one device; see the [module docs](self).
pub struct Conformance {
    device: Device,
    upload: Upload,
    ops: Option<Vec<String>>,
    tolerances: Vec<(String, DTypeSet, Tolerance)>,
    ordinary_only: Vec<String>,
    plan: Plan,
    shapes_only: bool,
}

impl std::fmt::Debug for Conformance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conformance")
            .field("device", &self.device)
            .field("ops", &self.ops)
            .field("tolerances", &self.tolerances)
            .field("ordinary_only", &self.ordinary_only)
            .field("plan", &self.plan)
            .field("shapes_only", &self.shapes_only)
            .finish_non_exhaustive()
    }
}

impl Conformance {
    /// A run of every standard op on `device`, inputs moved there with the `to` op, the default
    /// tolerances, widths 4, 8, 16 and 32 (NEON, AVX2, AVX-512 and two blocks of the SIMD
    /// reductions) and a large length of 100,003. On [`Device::Meta`] the run is
    /// [`shapes_only`](Conformance::shapes_only).
    pub fn new(device: Device) -> Conformance {
        Conformance {
            device,
            upload: Box::new(move |x| x.try_to(device)),
            ops: None,
            tolerances: Vec::new(),
            ordinary_only: Vec::new(),
            plan: Plan {
                lanes: vec![4, 8, 16, 32],
                large: 100_003,
            },
            shapes_only: device == Device::Meta,
        }
    }

    /// Checks what a result is, not what it holds: its device, dtype, shape and strides against
    /// the oracle's, and a refusal must be the oracle's own error (the same kind and words), for
    /// a backend whose tensors hold no data (the meta device, where this is the default). A
    /// refusal the oracle makes only on seeing the data (an integer division by zero, a target
    /// that is no class index) is the one difference allowed: such a case passes when the
    /// backend computes a result. (`to`'s strides are not compared: the oracle's stays on the
    /// CPU, where it is the same tensor.)
    pub fn shapes_only(mut self) -> Conformance {
        self.shapes_only = true;
        self
    }

    /// Moves inputs to the device with `upload` instead of `to` (for a device whose tensors are
    /// made another way). It gets contiguous CPU tensors; an error of the missing-kernel or
    /// kernel kind makes the case not served.
    pub fn upload(mut self, upload: impl Fn(&Tensor) -> Result<Tensor> + 'static) -> Conformance {
        self.upload = Box::new(upload);
        self
    }

    /// Runs only the ops named (a name that is no standard op is a problem of the run).
    pub fn ops(mut self, names: &[&str]) -> Conformance {
        self.ops = Some(names.iter().map(|s| s.to_string()).collect());
        self
    }

    /// Allows `tolerance` for `op`'s float results of the dtypes in `dtypes`, instead of the
    /// default ([`Tolerance::default_for`]); it covers `op`'s in-place form too (`exp` covers
    /// `exp_`, as the defaults do). Later calls win.
    pub fn tolerance(mut self, op: &str, dtypes: DTypeSet, tolerance: Tolerance) -> Conformance {
        self.tolerances.push((op.to_string(), dtypes, tolerance));
        self
    }

    /// Gives `ops` ordinary input values only: no NaN, infinity, `-0.0`, subnormal or integer
    /// extreme. For a backend that documents that it does not carry special values through
    /// those ops as the oracle does (the run then says nothing about them); every other op still
    /// gets them.
    pub fn without_special_values(mut self, ops: &[&str]) -> Conformance {
        self.ordinary_only.extend(ops.iter().map(|s| s.to_string()));
        self
    }

    /// The widths checked at ± 1 (SIMD lanes, workgroup sizes), replacing the defaults. A width
    /// above 2²⁰ is a problem of the run (the cases' shapes derive from it).
    pub fn lanes(mut self, lanes: &[usize]) -> Conformance {
        self.plan.lanes = lanes.to_vec();
        self
    }

    /// The element count of the large cases (several reduction passes, grid rows, cache sizes).
    pub fn large(mut self, len: usize) -> Conformance {
        self.plan.large = len;
        self
    }

    /// The tolerance of `op` for a result of `dtype`.
    fn tolerance_of(&self, op: &str, dtype: DType) -> Tolerance {
        self.tolerances
            .iter()
            .rev()
            .find(|(name, dtypes, _)| {
                let name = name.strip_prefix("switchyard::").unwrap_or(name);
                (name == op || name == op.trim_end_matches('_')) && dtypes.has(dtype)
            })
            .map_or_else(|| Tolerance::default_for(op, dtype), |t| t.2)
    }

    /// Runs every case: the report when none failed, else the failures (with the report).
    pub fn run(&self) -> std::result::Result<Report, Failures> {
        let mut report = Report {
            device: self.device,
            cases: Vec::new(),
            declared: Vec::new(),
            problems: Vec::new(),
        };
        if let Some(&width) = self.plan.lanes.iter().find(|&&w| w > Plan::WIDEST) {
            report.problems.push(format!(
                "lane width {width} is beyond the kit's reach (at most {}): the cases derive \
                 shapes from it",
                Plan::WIDEST
            ));
            return Err(Failures(report));
        }
        for op in self.selected(&mut report.problems) {
            let Some(mut cases) = cases::cases(op.bare_name(), &self.plan) else {
                report.problems.push(format!(
                    "the kit has no cases for the standard op `{}`; add them in \
                     backends/src/testing/cases.rs",
                    op.name()
                ));
                continue;
            };
            if self.ordinary_only.iter().any(|name| is_named(name, &op)) {
                cases::without_special_values(&mut cases);
            }
            match declared(&op, self.device) {
                Ok(columns) => report.declared.push((op.bare_name(), columns)),
                Err(error) => report.problems.push(format!("{}: {error}", op.bare_name())),
            }
            for case in &cases {
                report.cases.push(CaseReport {
                    op: op.bare_name(),
                    case: case.label(),
                    outcome: self.check(case),
                });
            }
        }
        if report.is_ok() {
            Ok(report)
        } else {
            Err(Failures(report))
        }
    }

    /// The standard ops to run, by name. Names that are no standard op (chosen, or given a
    /// tolerance or ordinary values only: a misspelling would leave the op meant with the
    /// defaults) and an empty choice go to `problems`.
    fn selected(&self, problems: &mut Vec<String>) -> Vec<OpHandle> {
        let standard = table::standard_ops();
        let is_standard = |name: &str| standard.iter().any(|op| is_named(name, op));
        let settings = self.tolerances.iter().map(|(name, ..)| name);
        for name in settings.chain(&self.ordinary_only) {
            if !is_standard(name) {
                problems.push(format!(
                    "`{name}` (given a tolerance or ordinary values only) is not a standard op"
                ));
            }
        }
        let Some(names) = &self.ops else {
            return standard;
        };
        if names.is_empty() {
            problems.push("no op was chosen (`ops(&[])`): the run would check nothing".into());
        }
        let mut chosen = Vec::new();
        for name in names {
            match standard.iter().find(|op| is_named(name, op)) {
                Some(op) => chosen.push(*op),
                None => problems.push(format!("`{name}` is not a standard op")),
            }
        }
        chosen
    }

    /// One case: its inputs, the oracle, the backend, and the verdict.
    fn check(&self, case: &Case) -> Outcome {
        // The oracle's inputs, built first: an input the kit cannot build (more elements than
        // memory holds) is the run's failure; left to each side, both would fail alike and the
        // case would pass as "rejected alike". The backend builds its own (an in-place op writes
        // its destination, so the two sides must never share one).
        let mut bases = Vec::with_capacity(case.inputs.len());
        for (i, input) in case.inputs.iter().enumerate() {
            match caught("building it", || input.base()) {
                Ok(base) => bases.push(base),
                Err(Ok(error)) => {
                    return Outcome::Failed(format!(
                        "the kit could not build input {i} ({input}): {error}"
                    ));
                }
                Err(Err(panic)) => {
                    return Outcome::Failed(format!(
                        "the kit could not build input {i} ({input}): {panic}"
                    ));
                }
            }
        }
        let oracle = caught("the oracle", || oracle(case, &bases));
        let backend = caught("the backend", || self.on_device(case));
        let (want, got) = match (oracle, backend) {
            (Err(Err(panic)), _) | (_, Err(Err(panic))) => return Outcome::Failed(panic),
            (Err(Ok(oracle)), Err(Ok((step, backend)))) => {
                if self.shapes_only && oracle.to_string() != backend.to_string() {
                    return Outcome::Failed(format!(
                        "{step} refused otherwise than the oracle: `{backend}`, the oracle: \
                         `{oracle}`"
                    ));
                }
                return Outcome::RejectedAlike { oracle, backend };
            }
            (Err(Ok(oracle)), Ok(got)) => {
                if self.shapes_only
                    && compare::refused_for_its_data(&oracle)
                    && got.device() == self.device
                {
                    return Outcome::Passed(Tolerance::Exact);
                }
                return Outcome::Failed(format!(
                    "the backend returned a result where the oracle refused: {oracle}"
                ));
            }
            (Ok(_), Err(Ok((step, error)))) => {
                return match error.kind() {
                    ErrorKind::MissingKernel { .. } | ErrorKind::Kernel { .. } => {
                        Outcome::NotServed { step, error }
                    }
                    _ => Outcome::Failed(format!(
                        "{step} failed where the oracle computed a result: {error}"
                    )),
                };
            }
            (Ok(want), Ok(got)) => (want, got),
        };
        let (want, scale) = want;
        match self.verdict(case, &want, &got, scale.as_deref()) {
            Ok(tolerance) => Outcome::Passed(tolerance),
            Err(why) => Outcome::Failed(why),
        }
    }

    /// The backend's result against the oracle's: device, dtype, shape, then values.
    fn verdict(
        &self,
        case: &Case,
        want: &Tensor,
        got: &Tensor,
        scale: Option<&[f64]>,
    ) -> std::result::Result<Tolerance, String> {
        if got.device() != self.device {
            return Err(format!(
                "the result is on {}, not {}",
                got.device(),
                self.device
            ));
        }
        if got.dtype() != want.dtype() {
            return Err(format!(
                "dtype {}, the oracle gives {}",
                got.dtype(),
                want.dtype()
            ));
        }
        if got.shape() != want.shape() {
            return Err(format!(
                "shape {:?}, the oracle gives {:?}",
                got.shape(),
                want.shape()
            ));
        }
        if self.shapes_only {
            // The oracle's `to` stays on the CPU (the same tensor, its strides kept); a move to
            // another device lays its result out anew.
            if got.strides() != want.strides() && case.op != "to" {
                return Err(format!(
                    "strides {:?}, the oracle gives {:?}",
                    got.strides(),
                    want.strides()
                ));
            }
            return Ok(Tolerance::Exact);
        }
        // Reading back runs the backend's code too (its storage's `read_bytes`): a panic there
        // is a failure like any other of the backend's.
        let read = |x: &Tensor, who: &str| match caught("reading it back", || compare::scalars(x)) {
            Ok(values) => Ok(values),
            Err(Ok(error)) => Err(format!("reading {who}'s result back failed: {error}")),
            Err(Err(panic)) => Err(format!("{who}'s result: {panic}")),
        };
        let (got, want_values) = (read(got, "the backend")?, read(want, "the oracle")?);
        let tolerance = self.tolerance_of(case.op, want.dtype());
        compare::compare(want.dtype(), &got, &want_values, tolerance, scale)?;
        Ok(tolerance)
    }

    /// The case on the device: inputs built, moved there (unless the op moves them) and laid
    /// out.
    fn on_device(&self, case: &Case) -> std::result::Result<Tensor, (Step, DispatchError)> {
        let mut inputs = Vec::with_capacity(case.inputs.len());
        for input in &case.inputs {
            let base = input.base().map_err(|e| (Step::Upload, e))?;
            let x = if case.inputs_on_cpu {
                input.lay_out(&base).map_err(|e| (Step::Layout, e))?
            } else {
                let moved = (self.upload)(&base).map_err(|e| (Step::Upload, e))?;
                input.lay_out(&moved).map_err(|e| (Step::Layout, e))?
            };
            inputs.push(x);
        }
        (case.call)(&inputs, self.device).map_err(|e| (Step::Call, e))
    }
}

/// The case on the naive CPU backend, its inputs laid out over `bases`, and its error scale.
fn oracle(case: &Case, bases: &[Tensor]) -> Result<(Tensor, Option<Vec<f64>>)> {
    let _naive = switchyard::exclude(DispatchKey::CpuSimd);
    let inputs = case
        .inputs
        .iter()
        .zip(bases)
        .map(|(input, base)| input.lay_out(base))
        .collect::<Result<Vec<_>>>()?;
    let out = (case.call)(&inputs, Device::Cpu)?;
    let scale = case.scale.as_ref().map(|f| f(&inputs)).transpose()?;
    Ok((out, scale))
}

/// `f()`, or a description of its panic: `Err(Ok(error))` is an ordinary failure, `Err(Err(…))`
/// a panic (which a `try_` call must never do).
fn caught<T, E>(
    who: &str,
    f: impl FnOnce() -> std::result::Result<T, E>,
) -> std::result::Result<T, std::result::Result<E, String>> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(Ok),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(not a string)");
            Err(Err(format!("{who} panicked: {message}")))
        }
    }
}

/// The columns of `op`'s table that `device`'s backend keys serve: in each, the first of the
/// device's keys (highest first) whose slot is not a fallthrough holds something other than
/// "missing".
/// Whether `name`, as a kit user writes it (`add` or `switchyard::add`), names `op`.
fn is_named(name: &str, op: &OpHandle) -> bool {
    name == op.name() || name == op.bare_name()
}

fn declared(op: &OpHandle, device: Device) -> Result<ColumnSet> {
    let family = device.keys();
    let mut served = ColumnSet::EMPTY;
    for (columns, slots) in op.columns()? {
        let first = slots
            .iter()
            .filter(|(key, _)| family.has(*key))
            .map(|(_, origin)| origin)
            .find(|origin| !matches!(origin, SlotOrigin::Fallthrough));
        if first.is_some_and(|origin| !matches!(origin, SlotOrigin::Missing)) {
            served = served.union(columns);
        }
    }
    Ok(served)
}
