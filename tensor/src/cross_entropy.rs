//! `cross_entropy` with PyTorch's options: [`cross_entropy_with`] and its
//! [`CrossEntropyOptions`] (`reduction`, `weight`, `ignore_index`, `label_smoothing`), for
//! logits of shape `[N, C]` or `[N, C, d1, …]`. Made of standard ops, like
//! [`cross_entropy`](fn@crate::ops::cross_entropy) (which is `cross_entropy_with` and the
//! default options, as an op), so it runs on every backend that serves them and autograd
//! differentiates it through them.

use switchyard::{DType, DTypeKind, DispatchError};

use crate::Tensor;
use crate::nn_composites::describe_arguments;
use crate::ops::{
    try_arange, try_div, try_eq, try_full, try_log_softmax, try_mul, try_ne, try_neg, try_sum,
    try_sum_dim, try_to, try_to_dtype, try_unsqueeze, try_view, try_where_cond,
};

type Result<T> = std::result::Result<T, DispatchError>;

/// How a loss reduces its per-element values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossReduction {
    /// Their (weighted) mean: the sum divided by the weights of the counted targets (their
    /// count without `weight`); ignored targets count for nothing.
    #[default]
    Mean,
    /// Their sum.
    Sum,
    /// None: the per-element losses, shape `[N, d1, …]` (0 where the target is ignored).
    None,
}

/// The options of [`cross_entropy_with`], PyTorch's keyword arguments; `Default` is PyTorch's
/// defaults (mean, no weight, nothing ignored, no smoothing).
///
/// ```
/// use switchyard_tensor::ops::{CrossEntropyOptions, LossReduction};
/// let options = CrossEntropyOptions::new()
///     .reduction(LossReduction::Sum)
///     .ignore_index(-100)
///     .label_smoothing(0.1);
/// assert_eq!(options.ignore_index, Some(-100));
/// ```
#[derive(Clone, Debug, Default)]
pub struct CrossEntropyOptions {
    /// How the per-element losses reduce.
    pub reduction: LossReduction,
    /// A weight per class (a float tensor of shape `[C]` on the logits' device): each target's
    /// loss is multiplied by its class's weight, and the mean divides by the weights' sum.
    pub weight: Option<Tensor>,
    /// A target value that contributes nothing (PyTorch's default is -100; here `None` ignores
    /// nothing). It need not be a class index.
    pub ignore_index: Option<i64>,
    /// `ε` in `[0, 1]`: the target distribution is `1 − ε` on the class plus `ε / C` on every
    /// class.
    pub label_smoothing: f64,
}

impl CrossEntropyOptions {
    /// PyTorch's defaults.
    pub fn new() -> CrossEntropyOptions {
        CrossEntropyOptions::default()
    }

    /// With `reduction`.
    #[must_use]
    pub fn reduction(mut self, reduction: LossReduction) -> CrossEntropyOptions {
        self.reduction = reduction;
        self
    }

    /// With a weight per class.
    #[must_use]
    pub fn weight(mut self, weight: &Tensor) -> CrossEntropyOptions {
        self.weight = Some(weight.clone());
        self
    }

    /// Ignoring targets equal to `index`.
    #[must_use]
    pub fn ignore_index(mut self, index: i64) -> CrossEntropyOptions {
        self.ignore_index = Some(index);
        self
    }

    /// With label smoothing `epsilon`.
    #[must_use]
    pub fn label_smoothing(mut self, epsilon: f64) -> CrossEntropyOptions {
        self.label_smoothing = epsilon;
        self
    }
}

const OP: &str = "cross_entropy";

/// The cross-entropy loss of `logits` (`[N, C]` or `[N, C, d1, …]`, a float tensor: class
/// scores along dimension 1) against `targets` (`[N]` or `[N, d1, …]`, class indices in an
/// integer tensor) with `options`, PyTorch's `cross_entropy(logits, targets, weight=…,
/// ignore_index=…, reduction=…, label_smoothing=…)`: a 0-d tensor (`Mean`, `Sum`) or the
/// per-element losses (`None`), of the logits' dtype. A mean over no counted target is NaN, as
/// in PyTorch.
///
/// The targets are read on the host to check them (each a class index in `0..C` or the ignored
/// value): on a GPU, one read-back per call.
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{Tensor, ops};
/// use ops::{CrossEntropyOptions, LossReduction};
/// let logits = Tensor::from_vec(vec![2.0f32, 0.0, 0.0, 3.0, 1.0, 1.0], &[3, 2]).unwrap();
/// let targets = Tensor::from_vec(vec![0i64, 1, -100], &[3]).unwrap();
/// let options = CrossEntropyOptions::new()
///     .ignore_index(-100)
///     .reduction(LossReduction::None);
/// let losses = ops::cross_entropy_with(&logits, &targets, &options).to_vec::<f32>();
/// let softplus = |x: f32| (1.0 + x.exp()).ln();
/// assert!((losses[0] - softplus(-2.0)).abs() < 1e-6);
/// assert!((losses[1] - softplus(-3.0)).abs() < 1e-6);
/// assert_eq!(losses[2], 0.0);
/// ```
#[track_caller]
pub fn cross_entropy_with(
    logits: &Tensor,
    targets: &Tensor,
    options: &CrossEntropyOptions,
) -> Tensor {
    try_cross_entropy_with(logits, targets, options).unwrap_or_else(|e| e.panic())
}

/// [`cross_entropy_with`], returning the error.
pub fn try_cross_entropy_with(
    logits: &Tensor,
    targets: &Tensor,
    options: &CrossEntropyOptions,
) -> Result<Tensor> {
    let classes = check(logits, targets, options)?;
    let dtype = logits.dtype();
    let (device, rank) = (logits.device(), logits.dim());
    // Compared in the logits' precision, at least f32's (every class index is exact there).
    let compare = if dtype == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    // Shapes along the class dimension: `[1, C, 1, …]`.
    let mut class_shape = vec![1isize; rank];
    class_shape[1] = classes as isize;
    let class_ids = try_view(&try_arange(classes, compare, device)?, &class_shape)?;
    let targets_f = try_unsqueeze(&try_to_dtype(targets, compare)?, 1)?;
    // Ignored targets match no class (their one-hot row is all zeros) and count for nothing.
    let counted = match options.ignore_index {
        Some(index) => {
            let ignored = try_full(&[], index as f64, compare, device)?;
            Some(try_ne(&targets_f, &ignored)?)
        }
        None => None,
    };
    let mut one_hot = try_eq(&class_ids, &targets_f)?;
    if !crate::deferred::readable_now(targets) {
        crate::deferred::defer_target_range(
            OP,
            logits,
            targets,
            classes,
            &one_hot,
            counted.as_ref(),
        )?;
    }
    if let Some(counted) = &counted {
        let none = try_full(&[], 0.0, DType::Bool, device)?;
        one_hot = try_where_cond(counted, &one_hot, &none)?;
    }
    let one_hot = try_to_dtype(&one_hot, dtype)?;
    let log_p = try_log_softmax(logits, 1)?;
    let weight = match &options.weight {
        Some(w) => Some(try_view(&try_to_dtype(w, dtype)?, &class_shape)?),
        None => None,
    };
    let weighted = |t: &Tensor| match &weight {
        Some(w) => try_mul(t, w),
        None => Ok(t.clone()),
    };
    // Per element: −w[t]·log p[t], and the weight it counts with in a mean (w[t], 1, or 0 for
    // an ignored target).
    let target_weight = try_sum_dim(&weighted(&one_hot)?, &[1], false)?;
    let nll = try_neg(&try_sum_dim(
        &try_mul(&weighted(&one_hot)?, &log_p)?,
        &[1],
        false,
    )?)?;
    let reduce = |per_element: Tensor| match options.reduction {
        LossReduction::None => Ok(per_element),
        LossReduction::Sum => try_sum(&per_element),
        LossReduction::Mean => try_div(&try_sum(&per_element)?, &try_sum(&target_weight)?),
    };
    let epsilon = options.label_smoothing;
    if epsilon == 0.0 {
        return reduce(nll);
    }
    // Smoothing: −Σ_c w[c]·log p[c] per counted element, scaled by ε / C; the class term by
    // 1 − ε. (PyTorch's mean divides both by the same weights.)
    let mut smooth = try_neg(&try_sum_dim(&weighted(&log_p)?, &[1], false)?)?;
    if let Some(counted) = &counted {
        let zero = try_full(&[], 0.0, dtype, device)?;
        smooth = try_where_cond(
            &try_view(counted, &shape_without_class(logits))?,
            &smooth,
            &zero,
        )?;
    }
    let keep = try_full(&[], 1.0 - epsilon, dtype, device)?;
    let spread = try_full(&[], epsilon / classes as f64, dtype, device)?;
    let nll = reduce(nll)?;
    let smooth = reduce(smooth)?;
    crate::ops::try_add(&try_mul(&nll, &keep)?, &try_mul(&smooth, &spread)?)
}

/// The logits' shape without the class dimension, as `view` takes it.
fn shape_without_class(logits: &Tensor) -> Vec<isize> {
    let s = logits.shape();
    s.iter()
        .enumerate()
        .filter(|&(d, _)| d != 1)
        .map(|(_, &e)| e as isize)
        .collect()
}

/// Checks the arguments; returns `C`.
fn check(logits: &Tensor, targets: &Tensor, options: &CrossEntropyOptions) -> Result<usize> {
    let describe = || describe_arguments(logits, targets);
    let expected: Vec<usize> = shape_without_class(logits)
        .iter()
        .map(|&e| e as usize)
        .collect();
    if logits.dim() < 2 || targets.shape() != expected.as_slice() {
        return Err(DispatchError::shape(
            OP,
            format!(
                "{}: expected logits of shape [N, C] or [N, C, d1, …] (class scores along \
                 dimension 1) and targets of their shape without dimension 1 ([N] or [N, d1, …])",
                describe()
            ),
        ));
    }
    if logits.dtype().kind() != DTypeKind::Float || targets.dtype().kind() != DTypeKind::Int {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "{}: logits must be a float tensor and targets class indices in an integer \
                 tensor (convert them with `to_dtype`)",
                describe()
            ),
        ));
    }
    let classes = logits.shape()[1];
    if let Some(w) = &options.weight
        && (w.shape() != [classes] || w.dtype().kind() != DTypeKind::Float)
    {
        return Err(DispatchError::shape(
            OP,
            format!(
                "{}: weight is {} {:?}; it must be a float tensor of shape [{classes}], one \
                 weight per class",
                describe(),
                w.dtype(),
                w.shape()
            ),
        ));
    }
    let epsilon = options.label_smoothing;
    if !(0.0..=1.0).contains(&epsilon) {
        return Err(DispatchError::kernel(
            OP,
            format!("label_smoothing is {epsilon}; it must be in [0, 1]"),
        ));
    }
    let exact = crate::nn_composites::exact_class_count(logits.dtype());
    if classes > exact {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "{}: {classes} classes are more than {} logits tell apart exactly; use f64 logits",
                describe(),
                logits.dtype()
            ),
        ));
    }
    if targets.is_meta() {
        // No values to check (a meta or fake run): the range check needs data, as in PyTorch.
        return Ok(classes);
    }
    if !crate::deferred::readable_now(targets) {
        // Checked on the device by the caller, reported at the next async read.
        return Ok(classes);
    }
    let values = try_to(targets, crate::Device::Cpu)?.try_to_f64_vec()?;
    let ignored = options.ignore_index.map(|i| i as f64);
    if let Some((at, &target)) = values
        .iter()
        .enumerate()
        .find(|&(_, &t)| Some(t) != ignored && (t < 0.0 || t >= classes as f64))
    {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "{}: target {target} (element {at}) is not a class index in 0..{classes}{}",
                describe(),
                match ignored {
                    Some(i) => format!(" nor the ignored value {i}"),
                    None => String::new(),
                }
            ),
        ));
    }
    Ok(classes)
}
