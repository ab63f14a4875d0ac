//! The standard ops. Declared here, once; their kernels live in `switchyard-backends` (and in any
//! crate that registers more), except the view ops', which compute a layout and serve every
//! backend from here.
//!
//! **Elementwise binary ops** broadcast (NumPy's rules) and promote (PyTorch's: the result of
//! `add(i32, f32)` is `f32`, and a 0-d operand does not raise the dtype within its category:
//! `f32[3] + f64 0-d` is `f32`; see [`rules::result_type`](crate::rules::result_type)); `div`
//! of two integer tensors is true division and gives `f32` ([`div_rounded`](fn@div_rounded) takes
//! PyTorch's rounding modes, [`Rounding`], and keeps integers integer). A Rust number is an operand too
//! (`&x + 1.5`, [`add_scalar`], [`where_scalar`]; see [`crate::operand`]). Incompatible shapes are a
//! [`switchyard::DispatchError`] naming both, never a panic inside a loop.
//!
//! **For neural networks** (declared in `nn_ops.rs`): elementwise `log`, `tanh`, `sigmoid`,
//! `sqrt`; reductions along dimensions (`sum_dim`, `mean_dim`, `max_dim`, `argmax`: each
//! dimension named must be in `-rank..rank`, `-1` the last, and named once, else the error names
//! the op, the dimension and the shape; `keepdim` keeps the reduced dimensions with extent 1); the
//! comparisons `eq`, `ne`, `lt`, `le`, `gt`, `ge` (broadcast and promoted like `add`, `bool`
//! results); `where_cond` (the op `where`); the factories `arange` and, through the per-device
//! generator of [`crate::random`], [`rand()`] and [`randn()`] (the ops `rand_seeded`,
//! `randn_seeded` take the seed and counter offset explicitly, so kernels are pure). The
//! composites `softmax`, `log_softmax` and `cross_entropy` (declared in `nn_composites.rs`) are
//! ops with a body made of those, stable for logits of any size, differentiated through their
//! decomposition.
//!
//! **Views** (`view`, `transpose`, `permute`, `narrow`, `slice`, `select`, `expand`, `squeeze`,
//! `squeeze_dims`, `unsqueeze`) share the input's storage: writes through one are seen by the
//! other.
//!
//! **Joining** (declared in `join.rs`): `cat` along an existing dimension, `stack` along a new
//! one; copies, promoted, differentiable. **Keyword forms** (`reduce_with.rs`, `ranges.rs`):
//! `sum_with` and `mean_with` take a [`Reduce`] (every dim or some, `keepdim`, `dtype`);
//! `argmax_all` is `argmax` without a dim, `max_dim_with_indices` PyTorch's `max(x, dim)`,
//! `softmax_in` and `log_softmax_in` convert to a dtype first, `arange_step` is
//! `arange(start, end, step)`. All composites of the ops above.
//!
//! **Dimensions and positions** are `isize`, as in PyTorch: `-1` is the last dimension (or
//! element), `-rank` the first; the ops that insert a dimension (`unsqueeze`, `stack`) take
//! `-(rank + 1)..=rank`. One rule serves every op ([`wrap_dim`](crate::wrap_dim)); a dim out of
//! range is a shape error naming the op, the dim, the shape and the range that would have
//! worked.
//!
//! **In-place ops** (`copy_`, `fill_`, `zero_`, `add_`, `sub_`, `mul_`, `div_`, `neg_`,
//! `relu_`, `exp_`) write the elements of their `&mut Tensor` argument: through a view, the base
//! and every other view of that storage see the write, and the storage's version
//! ([`Tensor::version`]) counts one more. `copy_` writes memory, with a kernel per backend;
//! the others are composites (the out-of-place op, or `full`, then `copy_`). They refuse, before
//! computing or writing anything (PyTorch's rules):
//! - a result of another shape than the destination's: the other operand broadcasts *to* it,
//!   never grows it (`add_` of a `[3]` into a `[1]` is an error, not a resize);
//! - a result whose dtype cannot be stored in the destination's without losing its kind
//!   ([`rules::can_store`](crate::rules::can_store): no float into an integer or `bool` tensor;
//!   `add_` of an `f64` into an `i32` tensor is an error, an `f64` into an `f32` one rounds);
//! - a destination two of whose elements share memory (an `expand`ed view): `contiguous()` it.
//!
//! A refused call writes nothing and counts no version. A failure of the write itself (the
//! storage borrowed elsewhere: a slice of it alive, a reader on another thread) happens in
//! `copy_`; the error names the op called and says its write failed.

use switchyard::{DType, kernel, op};

use crate::view as layout;
use crate::{Device, Tensor};

pub use crate::cross_entropy::{
    CrossEntropyOptions, LossReduction, cross_entropy_with, try_cross_entropy_with,
};
pub use crate::div_rounded::{Rounding, div_rounded, try_div_rounded};
pub use crate::grad_ops::*;
pub use crate::join::*;
pub use crate::nn_composites::*;
pub use crate::nn_ops::*;
pub use crate::operand::{add_alpha, sub_alpha, try_add_alpha, try_sub_alpha};
pub use crate::operand::{
    add_scalar, div_scalar, eq_scalar, ge_scalar, gt_scalar, le_scalar, lt_scalar, mul_scalar,
    ne_scalar, sub_scalar, try_add_scalar, try_div_scalar, try_eq_scalar, try_ge_scalar,
    try_gt_scalar, try_le_scalar, try_lt_scalar, try_mul_scalar, try_ne_scalar, try_sub_scalar,
    try_where_scalar, where_scalar,
};
pub use crate::random::{rand, randn, try_rand, try_randn};
pub use crate::ranges::*;
pub use crate::reduce_with::*;

pub use crate::inplace::{
    add_, copy_, div_, exp_, fill_, mul_, neg_, relu_, sub_, try_add_, try_copy_, try_div_,
    try_exp_, try_fill_, try_mul_, try_neg_, try_relu_, try_sub_, try_zero_, zero_,
};

type Result<T> = std::result::Result<T, switchyard::DispatchError>;

/// `x + y`, elementwise, broadcast and promoted (`bool + bool` is logical or).
#[op(name = "switchyard::add")]
pub fn add(x: &Tensor, y: &Tensor) -> Tensor;

/// `x - y`, elementwise, broadcast and promoted (not defined for two `bool` tensors).
#[op(name = "switchyard::sub")]
pub fn sub(x: &Tensor, y: &Tensor) -> Tensor;

/// `x * y`, elementwise, broadcast and promoted (`bool * bool` is logical and).
#[op(name = "switchyard::mul")]
pub fn mul(x: &Tensor, y: &Tensor) -> Tensor;

/// `x / y`, elementwise, broadcast and promoted; true division (IEEE: `1 / 0 = inf`), so two
/// integer or `bool` tensors give `f32`.
#[op(name = "switchyard::div")]
pub fn div(x: &Tensor, y: &Tensor) -> Tensor;

/// `-x`, elementwise (not defined for `bool`).
#[op(name = "switchyard::neg")]
pub fn neg(x: &Tensor) -> Tensor;

/// `max(x, 0)`, elementwise (not defined for `bool`).
#[op(name = "switchyard::relu")]
pub fn relu(x: &Tensor) -> Tensor;

/// `e^x`, elementwise; integer and `bool` tensors give `f32`.
#[op(name = "switchyard::exp")]
pub fn exp(x: &Tensor) -> Tensor;

/// The sum of all elements, as a 0-dimensional tensor (`0` for an empty tensor); integer and
/// `bool` tensors sum to `i64`, floats keep their dtype.
#[op(name = "switchyard::sum")]
pub fn sum(x: &Tensor) -> Tensor;

/// The mean of all elements, as a 0-dimensional tensor (`NaN` for an empty tensor); floats only.
#[op(name = "switchyard::mean")]
pub fn mean(x: &Tensor) -> Tensor;

/// The matrix product, promoted (not `bool`), as PyTorch's `matmul` shapes it: `[m, k]` times
/// `[k, n]` is `[m, n]`; a 1-D `x` is a row and a 1-D `y` a column, whose extent-1 dimension
/// the result drops (two vectors give their dot product, 0-d); operands of rank 3 and more are
/// stacks of matrices whose batch dimensions broadcast (`[2, 1, m, k]` times `[5, k, n]` is
/// `[2, 5, m, n]`). See [`rules::matmul_shapes`](crate::rules::matmul_shapes).
#[op(name = "switchyard::matmul")]
pub fn matmul(x: &Tensor, y: &Tensor) -> Tensor;

/// A contiguous tensor of `shape` and `dtype` filled with `value` (converted as `to_dtype`
/// converts), on `device`. The device and dtype arguments select the kernel.
#[op(name = "switchyard::full")]
pub fn full(shape: &[usize], value: f64, dtype: DType, device: Device) -> Tensor;

/// `x` converted to `dtype` (the same tensor if it has it): floats round to nearest, floats to
/// integers truncate toward zero and saturate, integers wrap, non-zero is `true`.
#[op(name = "switchyard::to_dtype")]
pub fn to_dtype(x: &Tensor, dtype: DType) -> Tensor;

/// `x` with its elements laid out row-major in a storage of its own, or `x` itself when it is
/// contiguous already.
#[op(name = "switchyard::contiguous")]
pub fn contiguous(x: &Tensor) -> Tensor;

/// `x` copied to `device` (the same tensor if it is there already). The one standard op whose
/// arguments may be on different devices: the backend of the highest-priority device involved
/// does the copy (the wgpu backend copies in both directions between the CPU and the GPU).
#[op(name = "switchyard::to", mixes_devices)]
pub fn to(x: &Tensor, device: Device) -> Tensor;

/// `x` with `shape`, sharing its storage; one entry may be `-1`, inferred from the element
/// count. Errors when the layout cannot be viewed so without a copy (use [`reshape()`]).
#[op(name = "switchyard::view")]
pub fn view(x: &Tensor, shape: &[isize]) -> Tensor;

/// `x` with `shape` (one entry may be `-1`): a view when the layout allows, else a contiguous
/// copy.
#[op(name = "switchyard::reshape")]
pub fn reshape(x: &Tensor, shape: &[isize]) -> Tensor;

/// `x` with dimensions `d0` and `d1` swapped (a view; `transpose(x, -2, -1)` swaps the last
/// two).
#[op(name = "switchyard::transpose")]
pub fn transpose(x: &Tensor, d0: isize, d1: isize) -> Tensor;

/// `x` with its dimensions reordered: dimension `i` of the result is `dims[i]` of `x` (a view).
#[op(name = "switchyard::permute")]
pub fn permute(x: &Tensor, dims: &[isize]) -> Tensor;

/// Elements `start..start + len` along `dim` (a view; a negative `start` counts from the end).
/// The range must lie inside the extent, else the call is an error.
#[op(name = "switchyard::narrow")]
pub fn narrow(x: &Tensor, dim: isize, start: isize, len: usize) -> Tensor;

/// Elements `start..end` along `dim`, every `step`-th (a view), as a Python slice: negative
/// bounds count from the end, both are clamped to the extent (`isize::MAX` reads to the end),
/// `end` before `start` gives an empty view; `step` must be at least 1.
#[op(name = "switchyard::slice")]
pub fn slice(x: &Tensor, dim: isize, start: isize, end: isize, step: usize) -> Tensor;

/// The sub-tensor at `index` along `dim`, without that dimension (a view; `select(x, 0, -1)` is
/// the last row).
#[op(name = "switchyard::select")]
pub fn select(x: &Tensor, dim: isize, index: isize) -> Tensor;

/// `x` broadcast to `shape` (a view whose elements share memory: in-place writes into it are
/// refused); an entry `-1` keeps the extent of the matching dimension of `x`.
#[op(name = "switchyard::expand")]
pub fn expand(x: &Tensor, shape: &[isize]) -> Tensor;

/// `x` without its dimensions of extent 1 (`None`), or without `dim` if its extent is 1 (a view).
#[op(name = "switchyard::squeeze")]
pub fn squeeze(x: &Tensor, dim: Option<isize>) -> Tensor;

/// `x` without those of `dims` whose extent is 1 (the others stay, as PyTorch's
/// `squeeze(dim=(…))`; a view).
#[op(name = "switchyard::squeeze_dims")]
pub fn squeeze_dims(x: &Tensor, dims: &[isize]) -> Tensor;

/// `x` with a new dimension of extent 1 at `dim` (a view; `-1` appends one).
#[op(name = "switchyard::unsqueeze")]
pub fn unsqueeze(x: &Tensor, dim: isize) -> Tensor;

/// `-1` entries as unknowns; other negative entries are errors.
fn wanted_shape(op: &'static str, shape: &[isize]) -> Result<Vec<Option<usize>>> {
    shape
        .iter()
        .map(|&d| match d {
            -1 => Ok(None),
            d if d >= 0 => Ok(Some(d as usize)),
            d => Err(switchyard::DispatchError::shape(
                op,
                format!(
                    "shape {shape:?} has a negative extent {d} (only -1, inferred, is allowed)"
                ),
            )),
        })
        .collect()
}

// The view ops' one kernel each: a layout over the same storage, whatever the backend and the
// dtype (`"all"`: a view of a user dtype's tensor keeps that dtype and reads nothing).

#[kernel(op = "view", key = CompositeExplicit, dtypes = "all")]
fn view_layout(x: &Tensor, shape: &[isize]) -> Result<Tensor> {
    layout::view(x, &wanted_shape("view", shape)?)
}

#[kernel(op = "reshape", key = CompositeExplicit, dtypes = "all")]
fn reshape_layout(x: &Tensor, shape: &[isize]) -> Result<Tensor> {
    let wanted = wanted_shape("reshape", shape)?;
    match layout::view(x, &wanted) {
        Ok(v) => Ok(v),
        Err(_) => {
            layout::infer_shape("reshape", x, &wanted)?;
            layout::view(&try_contiguous(x)?, &wanted)
        }
    }
}

#[kernel(op = "transpose", key = CompositeExplicit, dtypes = "all")]
fn transpose_layout(x: &Tensor, d0: isize, d1: isize) -> Result<Tensor> {
    layout::transpose(x, d0, d1)
}

#[kernel(op = "permute", key = CompositeExplicit, dtypes = "all")]
fn permute_layout(x: &Tensor, dims: &[isize]) -> Result<Tensor> {
    layout::permute(x, dims)
}

#[kernel(op = "narrow", key = CompositeExplicit, dtypes = "all")]
fn narrow_layout(x: &Tensor, dim: isize, start: isize, len: usize) -> Result<Tensor> {
    layout::narrow(x, dim, start, len)
}

#[kernel(op = "slice", key = CompositeExplicit, dtypes = "all")]
fn slice_layout(x: &Tensor, dim: isize, start: isize, end: isize, step: usize) -> Result<Tensor> {
    layout::slice(x, dim, start, end, step)
}

#[kernel(op = "select", key = CompositeExplicit, dtypes = "all")]
fn select_layout(x: &Tensor, dim: isize, index: isize) -> Result<Tensor> {
    layout::select(x, dim, index)
}

#[kernel(op = "expand", key = CompositeExplicit, dtypes = "all")]
fn expand_layout(x: &Tensor, shape: &[isize]) -> Result<Tensor> {
    layout::expand(x, &layout::expand_shape(x, shape)?)
}

#[kernel(op = "squeeze", key = CompositeExplicit, dtypes = "all")]
fn squeeze_layout(x: &Tensor, dim: Option<isize>) -> Result<Tensor> {
    layout::squeeze(x, dim)
}

#[kernel(op = "squeeze_dims", key = CompositeExplicit, dtypes = "all")]
fn squeeze_dims_layout(x: &Tensor, dims: &[isize]) -> Result<Tensor> {
    layout::squeeze_dims(x, dims)
}

#[kernel(op = "unsqueeze", key = CompositeExplicit, dtypes = "all")]
fn unsqueeze_layout(x: &Tensor, dim: isize) -> Result<Tensor> {
    layout::unsqueeze(x, dim)
}
