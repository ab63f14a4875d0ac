//! Joining tensors: `cat` (along an existing dimension) and `stack` (along a new one). Re-exported
//! from [`crate::ops`], like every standard op.
//!
//! `cat` has one kernel for every backend: it allocates the result with `full` on the inputs'
//! device and writes each input into its slice (a `narrow` view) with `copy_`, so any backend
//! that serves `full` and `copy_` for the dtypes involved serves `cat` (the CPU backends and the
//! GPU's). Its derivative hands each input its slice of the gradient. `stack` is a composite:
//! `cat` of the inputs each `unsqueeze`d at `dim`, differentiated through that.

use switchyard::{DType, DispatchError, DispatchKeySet, kernel, op};

use crate::Tensor;
use crate::autograd::meta::InputInfo;
use crate::autograd::record::{below, fit, record, run_below};
use crate::ops::{try_copy_, try_full, try_narrow, try_unsqueeze};
use crate::shape::{wrap_dim, wrap_new_dim};

type Result<T> = std::result::Result<T, DispatchError>;

/// The tensors of `xs` joined along dimension `dim` (`-1` the last): every input has the same
/// rank (at least 1) and the same extents outside `dim`; the result's extent along `dim` is the
/// sum of theirs, its dtype their promoted dtype (as PyTorch: `cat` of an `f32` and an `f64`
/// tensor is `f64`). All on one device; at least one input. A copy, never a view.
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{Tensor, ops};
/// let a = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
/// let b = Tensor::from_vec(vec![3.0f32, 4.0, 5.0, 6.0], &[2, 2]).unwrap();
/// let rows = ops::cat(&[a.clone(), b.clone()], 0);
/// assert_eq!(rows.shape(), [3, 2]);
/// assert_eq!(rows.to_vec::<f32>(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// let e = ops::try_cat(&[a, b], -1).unwrap_err().to_string();
/// assert!(e.contains("cat") && e.contains("[1, 2]") && e.contains("[2, 2]"), "{e}");
/// ```
#[op(name = "switchyard::cat")]
pub fn cat(xs: &[Tensor], dim: isize) -> Tensor;

/// The tensors of `xs` (all of one shape) stacked along a new dimension `dim`
/// (`-(rank + 1)..=rank`; `-1` appends it): `stack(xs, d)` is `cat` of each `unsqueeze(x, d)`,
/// so the result has one more dimension, of extent `xs.len()`. Promoted and placed as `cat`.
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{Tensor, ops};
/// let a = Tensor::vector(&[1.0, 2.0]);
/// let b = Tensor::vector(&[3.0, 4.0]);
/// let pairs = ops::stack(&[a, b], -1);
/// assert_eq!(pairs.shape(), [2, 2]);
/// assert_eq!(pairs.to_vec::<f32>(), [1.0, 3.0, 2.0, 4.0]);
/// ```
#[op(name = "switchyard::stack")]
pub fn stack(xs: &[Tensor], dim: isize) -> Tensor {
    const OP: &str = "stack";
    let first = check_nonempty(OP, xs)?;
    if let Some(other) = xs.iter().find(|x| x.shape() != first.shape()) {
        return Err(DispatchError::shape(
            OP,
            format!(
                "stack needs tensors of one shape, got {:?} and {:?}",
                first.shape(),
                other.shape()
            ),
        ));
    }
    let d = wrap_new_dim(OP, dim, first.shape())? as isize;
    let unsqueezed = xs
        .iter()
        .map(|x| try_unsqueeze(x, d))
        .collect::<Result<Vec<_>>>()?;
    try_cat(&unsqueezed, d)
}

/// The first tensor of `xs`, or an error naming `op` when there is none.
fn check_nonempty<'a>(op: &'static str, xs: &'a [Tensor]) -> Result<&'a Tensor> {
    xs.first().ok_or_else(|| {
        DispatchError::shape(
            op,
            format!("{op} of no tensors: pass at least one (the result's shape comes from them)"),
        )
    })
}

/// Checks `cat`'s inputs and returns the wrapped dim, the result's shape and dtype.
fn cat_plan(xs: &[Tensor], dim: isize) -> Result<(usize, Vec<usize>, DType)> {
    const OP: &str = "cat";
    let first = check_nonempty(OP, xs)?;
    if first.dim() == 0 {
        return Err(DispatchError::shape(
            OP,
            "a 0-dimensional tensor has no dimension to join along: `stack` it, or `unsqueeze` \
             it first",
        ));
    }
    let d = wrap_dim(OP, dim, first.shape())?;
    let mut shape = first.shape().to_vec();
    let mut dtype = first.dtype();
    for x in &xs[1..] {
        let fits = x.dim() == first.dim()
            && (0..x.dim()).all(|i| i == d || x.shape()[i] == first.shape()[i]);
        if !fits {
            return Err(DispatchError::shape(
                OP,
                format!(
                    "cat along dim {dim} of shapes {:?} and {:?}: every tensor needs the same \
                     rank and the same extents outside dim {d}",
                    first.shape(),
                    x.shape()
                ),
            ));
        }
        shape[d] = shape[d].checked_add(x.shape()[d]).ok_or_else(|| {
            DispatchError::size_overflow(OP, &[first.shape(), x.shape()], "the joined extent")
        })?;
        dtype = DType::promote(dtype, x.dtype());
    }
    Tensor::checked_numel(OP, &shape, dtype)?;
    Ok((d, shape, dtype))
}

/// `cat` on any backend: the result made with `full`, each input copied into its slice.
#[kernel(op = "cat", key = CompositeExplicit)]
fn cat_by_copies(xs: &[Tensor], dim: isize) -> Result<Tensor> {
    let (d, shape, dtype) = cat_plan(xs, dim)?;
    let out = try_full(&shape, 0.0, dtype, xs[0].device())?;
    let mut at = 0;
    for x in xs {
        let len = x.shape()[d];
        if len > 0 {
            // In range: `at + len` is at most the joined extent, far below `isize::MAX`.
            try_copy_(&mut try_narrow(&out, d as isize, at as isize, len)?, x)?;
        }
        at += len;
    }
    Ok(out)
}

/// Each input's gradient is its slice of the result's, converted to its dtype.
#[kernel(op = "cat", key = Autograd)]
fn cat_autograd(keys: DispatchKeySet, xs: &[Tensor], dim: isize) -> Result<Tensor> {
    let out = run_below(|| cat::redispatch(below(keys), xs, dim))?;
    let d = wrap_dim("cat", dim, xs[0].shape())?;
    let slices: Vec<(usize, usize, bool, InputInfo)> = xs
        .iter()
        .scan(0, |at, x| {
            let start = *at;
            *at += x.shape()[d];
            Some((start, x.shape()[d], x.requires_grad(), InputInfo::of(x)))
        })
        .collect();
    let inputs: Vec<&Tensor> = xs.iter().collect();
    Ok(record("cat", &inputs, out, move |g| {
        slices
            .iter()
            .map(|(start, len, needed, info)| {
                if !needed {
                    return Ok(None);
                }
                let slice = try_narrow(g, d as isize, *start as isize, *len)?;
                fit(slice, info).map(Some)
            })
            .collect()
    }))
}
