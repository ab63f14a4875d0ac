//! The composite ops of a classifier's last layer: `softmax`, `log_softmax` and
//! `cross_entropy`. Each is an op with a body, written in terms of other standard ops: the body
//! is the op's `CompositeImplicit` kernel, so it runs on every backend that serves the ops it
//! calls, and autograd differentiates it through its decomposition (no derivative of its own).
//! Re-exported from [`crate::ops`], like every standard op.
//!
//! All three are numerically stable: they subtract the maximum along the class dimension before
//! exponentiating, so logits of any magnitude (1000, -1000) give finite results.

use switchyard::{DType, DTypeKind, DispatchError, op};

use crate::Tensor;
use crate::ops::{
    try_arange, try_div, try_eq, try_exp, try_log, try_max_dim, try_mean, try_mul, try_neg,
    try_sub, try_sum_dim, try_to, try_to_dtype, try_unsqueeze, try_view,
};

type Result<T> = std::result::Result<T, DispatchError>;

/// `exp(xᵢ) / Σⱼ exp(xⱼ)` along `dim` (`-1` the last): each slice along `dim` becomes a probability
/// distribution. Computed as `exp(x − m) / Σ exp(x − m)` with `m` the maximum along `dim`
/// ([`max_dim`](fn@crate::ops::max_dim)), so no exponential overflows. `x` must be a float
/// tensor and `dim` in `-rank..rank`; an empty extent along `dim` gives an empty result.
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{Tensor, ops};
/// let logits = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 1000.0, 1000.0, 0.0], &[2, 3]).unwrap();
/// let p = ops::softmax(&logits, 1).to_vec::<f32>();
/// let e: f32 = (1.0f32 + 1f32.exp() + 2f32.exp()).recip();
/// let want = [e, e * 1f32.exp(), e * 2f32.exp(), 0.5, 0.5, 0.0];
/// assert!(p.iter().zip(want).all(|(p, w)| (p - w).abs() < 1e-6));
/// ```
#[op(name = "switchyard::softmax")]
pub fn softmax(x: &Tensor, dim: isize) -> Tensor {
    let shifted = shifted_by_max("softmax", x, dim)?;
    let e = try_exp(&shifted)?;
    try_div(&e, &try_sum_dim(&e, &[dim], true)?)
}

/// `log(softmax(x, dim))`, computed as `(x − m) − log Σ exp(x − m)` with `m` the maximum along
/// `dim`: finite wherever the result is (a logit 1000 below its row's maximum gives −1000, where
/// `log(softmax(..))` would give `-inf`). `x` must be a float tensor and `dim` in `-rank..rank`.
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{Tensor, ops};
/// let logits = Tensor::from_vec(vec![0.0f64, 1000.0], &[1, 2]).unwrap();
/// let lp = ops::log_softmax(&logits, 1).to_vec::<f64>();
/// assert!((lp[0] + 1000.0).abs() < 1e-9 && lp[1].abs() < 1e-9);
/// ```
#[op(name = "switchyard::log_softmax")]
pub fn log_softmax(x: &Tensor, dim: isize) -> Tensor {
    log_softmax_as("log_softmax", x, dim)
}

/// The mean cross-entropy loss of a batch (PyTorch's defaults; for `reduction`, `weight`,
/// `ignore_index`, `label_smoothing` and `[N, C, d1, …]` logits, see
/// [`cross_entropy_with`](crate::ops::cross_entropy_with)):
/// `−(1/N) Σₙ log_softmax(logits, 1)[n, targets[n]]`
/// for `logits` of shape `[N, C]` (one row of class scores per example, a float tensor) and
/// `targets` of shape `[N]` (each example's class, an integer tensor, `i64` as in PyTorch, with
/// values in `0..C`), on one device. A 0-d tensor of the logits' dtype; an empty batch gives
/// NaN, as PyTorch's mean does.
///
/// The class is picked with a one-hot mask (`eq` of `arange(C)` against the targets, in the
/// logits' float dtype so a backend that serves only `f32` serves it), multiplied with
/// `log_softmax` and summed, so the whole loss is made of standard ops and differentiable
/// through them. The targets are read on the host to check their range (a class outside `0..C`
/// is an error naming it, not a silently zero row): on a GPU that is one read-back per call.
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{Tensor, ops};
/// let logits = Tensor::from_vec(vec![2.0f32, 0.0, 0.0, 3.0], &[2, 2]).unwrap();
/// let targets = Tensor::from_vec(vec![0i64, 1], &[2]).unwrap();
/// let loss = ops::cross_entropy(&logits, &targets).to_vec::<f32>()[0];
/// // −(log σ(2) + log σ(3)) / 2, with σ the logistic function
/// let want = ((1.0 + (-2f32).exp()).ln() + (1.0 + (-3f32).exp()).ln()) / 2.0;
/// assert!((loss - want).abs() < 1e-6);
///
/// let bad = Tensor::from_vec(vec![0i64, 2], &[2]).unwrap();
/// let e = ops::try_cross_entropy(&logits, &bad).unwrap_err().to_string();
/// assert!(e.contains("cross_entropy") && e.contains("target 2"), "{e}");
/// ```
#[op(name = "switchyard::cross_entropy")]
pub fn cross_entropy(logits: &Tensor, targets: &Tensor) -> Tensor {
    const OP: &str = "cross_entropy";
    let (n, classes) = check_cross_entropy(logits, targets)?;
    // Compared in the logits' precision, at least f32's: every class index below 2^24 (2^53 in
    // f64) is exact there, which the checks guarantee.
    let compare = if logits.dtype() == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    let class_ids = try_view(
        &try_arange(classes, compare, logits.device())?,
        &[1, classes as isize],
    )?;
    let wanted = try_unsqueeze(&try_to_dtype(targets, compare)?, 1)?;
    let matches = try_eq(&class_ids, &wanted)?;
    if !crate::deferred::readable_now(targets) {
        crate::deferred::defer_target_range(OP, logits, targets, classes, &matches, None)?;
    }
    let one_hot = try_to_dtype(&matches, logits.dtype())?;
    let log_p = log_softmax_as(OP, logits, 1)?;
    let picked = try_sum_dim(&try_mul(&one_hot, &log_p)?, &[1], false)?;
    debug_assert_eq!(picked.shape(), [n]);
    try_neg(&try_mean(&picked)?)
}

/// `log_softmax` on behalf of `op`, whose name its errors carry.
fn log_softmax_as(op: &'static str, x: &Tensor, dim: isize) -> Result<Tensor> {
    let shifted = shifted_by_max(op, x, dim)?;
    let log_total = try_log(&try_sum_dim(&try_exp(&shifted)?, &[dim], true)?)?;
    try_sub(&shifted, &log_total)
}

/// `x − max(x, dim)` (the maximum kept as an extent-1 dimension and broadcast), after checking
/// that `x` is a float tensor and `dim` one of its dimensions; `x` itself when its extent along
/// `dim` is 0 (there is nothing to overflow, and the maximum of nothing is undefined).
fn shifted_by_max(op: &'static str, x: &Tensor, dim: isize) -> Result<Tensor> {
    if x.dtype().kind() != DTypeKind::Float {
        return Err(DispatchError::kernel(
            op,
            format!(
                "x is a {} tensor of shape {:?}; {op} needs a float tensor: convert it with \
                 `to_dtype(x, DType::F32)` first",
                x.dtype(),
                x.shape()
            ),
        ));
    }
    if x.shape()[crate::shape::wrap_dim(op, dim, x.shape())?] == 0 {
        return Ok(x.clone());
    }
    // The maximum is detached: every `op` here is unchanged by a shift along `dim`, so its
    // gradient through the maximum is exactly zero, and the backward pass skips `max_dim`'s
    // derivative (an argmax and a mask) instead of computing that zero.
    let max = try_max_dim(&x.detach(), dim, true)?;
    try_sub(x, &max)
}

/// `logits f32 [4, 3], targets i64 [4]`: how `cross_entropy`'s errors name their arguments.
pub(crate) fn describe_arguments(logits: &Tensor, targets: &Tensor) -> String {
    format!(
        "logits {} {:?}, targets {} {:?}",
        logits.dtype(),
        logits.shape(),
        targets.dtype(),
        targets.shape()
    )
}

/// Checks `cross_entropy`'s arguments: shapes `[N, C]` and `[N]`, a float and an integer dtype,
/// every target in `0..C`. Returns `(N, C)`. (The dispatcher refused two devices before the body
/// ran.)
fn check_cross_entropy(logits: &Tensor, targets: &Tensor) -> Result<(usize, usize)> {
    const OP: &str = "cross_entropy";
    let describe = || describe_arguments(logits, targets);
    if logits.dim() != 2 || targets.dim() != 1 || logits.shape()[0] != targets.shape()[0] {
        return Err(DispatchError::shape(
            OP,
            format!(
                "{}: expected logits of shape [N, C] (a row of class scores per example) and \
                 targets of shape [N] (one class index per example)",
                describe()
            ),
        ));
    }
    if logits.dtype().kind() != DTypeKind::Float {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "{}: logits must be a float tensor (convert them with `to_dtype`)",
                describe()
            ),
        ));
    }
    if targets.dtype().kind() != DTypeKind::Int {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "{}: targets must be class indices in an integer tensor (i64, as in PyTorch)",
                describe()
            ),
        ));
    }
    let (n, classes) = (logits.shape()[0], logits.shape()[1]);
    let exact = exact_class_count(logits.dtype());
    if classes > exact {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "{}: {classes} classes are more than {} logits tell apart exactly (2^{}); use f64 \
                 logits",
                describe(),
                logits.dtype(),
                exact.trailing_zeros()
            ),
        ));
    }
    if targets.is_meta() {
        // No values to check (a meta or fake run): the range check needs data, as in PyTorch.
        return Ok((n, classes));
    }
    if !crate::deferred::readable_now(targets) {
        // Checked on the device by the caller, reported at the next async read.
        return Ok((n, classes));
    }
    let values = try_to(targets, crate::Device::Cpu)?.try_to_f64_vec()?;
    if let Some((row, &target)) = values
        .iter()
        .enumerate()
        .find(|&(_, &t)| t < 0.0 || t >= classes as f64)
    {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "{}: target {target} (row {row}) is not a class index in 0..{classes}",
                describe()
            ),
        ));
    }
    Ok((n, classes))
}

/// The most classes whose indices logits of `dtype` hold exactly (`2^53` for `f64`, else `2^24`):
/// `cross_entropy` and `cross_entropy_with` refuse more.
pub(crate) fn exact_class_count(dtype: DType) -> usize {
    if dtype == DType::F64 {
        // On 32-bit targets (wasm32) every count is below 2^53: none is refused for it.
        usize::try_from(1_u64 << 53).unwrap_or(usize::MAX)
    } else {
        1 << 24
    }
}
