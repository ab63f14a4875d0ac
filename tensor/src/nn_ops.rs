//! The standard ops a small neural network needs beyond `ops.rs`'s: elementwise `log`, `tanh`,
//! `sigmoid`, `sqrt`; reductions along dimensions; comparisons; `where`; the `arange`, `rand`
//! and `randn` factories. Re-exported from [`crate::ops`], like every standard op; their
//! kernels live in `switchyard-backends`, their dtype and shape rules in [`crate::rules`].
//!
//! **Reductions along dimensions** (`sum_dim`, `mean_dim`, `max_dim`, `argmax`) reduce the
//! dimensions named (each in `-rank..rank`, `-1` the last; none twice: anything else is an error
//! naming the op, the dimension and the shape) and keep them with extent 1 when `keepdim` is true, else drop
//! them.

use switchyard::{DType, op};

use crate::{Device, Tensor};

/// `ln(x)`, elementwise (`-inf` at 0, NaN below); integer and `bool` tensors give `f32`.
#[op(name = "switchyard::log")]
pub fn log(x: &Tensor) -> Tensor;

/// `tanh(x)`, elementwise (±1 for large |x|); integer and `bool` tensors give `f32`.
#[op(name = "switchyard::tanh")]
pub fn tanh(x: &Tensor) -> Tensor;

/// `1 / (1 + e^-x)`, elementwise, computed without overflow for any `x` (as `e^x / (1 + e^x)`
/// for negative `x`, so no infinity appears on the way); integer and `bool` tensors give `f32`.
#[op(name = "switchyard::sigmoid")]
pub fn sigmoid(x: &Tensor) -> Tensor;

/// `√x`, elementwise (NaN below 0, `-0` at `-0`); integer and `bool` tensors give `f32`.
#[op(name = "switchyard::sqrt")]
pub fn sqrt(x: &Tensor) -> Tensor;

/// The sums of `x` along `dims` (see the [ops docs](crate::ops) for `dims` and `keepdim`); an
/// empty extent sums to 0, an empty `dims` sums nothing. Integer and `bool` tensors sum to
/// `i64`, floats keep their dtype (as [`sum`](fn@crate::ops::sum)).
#[op(name = "switchyard::sum_dim")]
pub fn sum_dim(x: &Tensor, dims: &[isize], keepdim: bool) -> Tensor;

/// The means of `x` along `dims` (`NaN` over an empty extent); floats only, as
/// [`mean`](fn@crate::ops::mean).
#[op(name = "switchyard::mean_dim")]
pub fn mean_dim(x: &Tensor, dims: &[isize], keepdim: bool) -> Tensor;

/// The maxima of `x` along `dim` (the values, of `x`'s dtype); a NaN makes its maximum NaN, as in
/// PyTorch. An empty extent along `dim` is an error (the maximum of nothing is undefined).
#[op(name = "switchyard::max_dim")]
pub fn max_dim(x: &Tensor, dim: isize, keepdim: bool) -> Tensor;

/// The index (`i64`) of the maximum of `x` along `dim`: the first on ties; a NaN counts as
/// above everything, so the first NaN's index (as in PyTorch). An empty extent along `dim` is an
/// error, and so is a `bool` tensor (as in PyTorch: convert it to `u8`).
#[op(name = "switchyard::argmax")]
pub fn argmax(x: &Tensor, dim: isize, keepdim: bool) -> Tensor;

/// `x == y`, elementwise, broadcast and compared in the promoted dtype; `bool` result.
#[op(name = "switchyard::eq")]
pub fn eq(x: &Tensor, y: &Tensor) -> Tensor;

/// `x != y`, elementwise, broadcast and compared in the promoted dtype; `bool` result (true
/// where either is NaN).
#[op(name = "switchyard::ne")]
pub fn ne(x: &Tensor, y: &Tensor) -> Tensor;

/// `x < y`, elementwise, broadcast and compared in the promoted dtype; `bool` result.
#[op(name = "switchyard::lt")]
pub fn lt(x: &Tensor, y: &Tensor) -> Tensor;

/// `x <= y`, elementwise, broadcast and compared in the promoted dtype; `bool` result.
#[op(name = "switchyard::le")]
pub fn le(x: &Tensor, y: &Tensor) -> Tensor;

/// `x > y`, elementwise, broadcast and compared in the promoted dtype; `bool` result.
#[op(name = "switchyard::gt")]
pub fn gt(x: &Tensor, y: &Tensor) -> Tensor;

/// `x >= y`, elementwise, broadcast and compared in the promoted dtype; `bool` result.
#[op(name = "switchyard::ge")]
pub fn ge(x: &Tensor, y: &Tensor) -> Tensor;

/// `cond ? x : y`, elementwise: the three broadcast together, `x` and `y` promoted; `cond` must
/// be a `bool` tensor. (The op is named `where`, a Rust keyword, hence the function's name.)
#[op(name = "switchyard::where")]
pub fn where_cond(cond: &Tensor, x: &Tensor, y: &Tensor) -> Tensor;

/// `[0, 1, …, n - 1]` in `dtype` on `device`: floats round what they cannot hold (as
/// `to_dtype`), an integer dtype must hold `n - 1`, `bool` is refused. With a start and a step:
/// [`arange_step`](fn@crate::ops::arange_step).
#[op(name = "switchyard::arange")]
pub fn arange(n: usize, dtype: DType, device: Device) -> Tensor;

/// Values uniform in `[0, 1)` of `shape` and float `dtype` on `device`: element `i` is
/// [`random::uniform_value`](crate::random::uniform_value)`(dtype, seed, offset + i)` on every
/// backend (the bits of `seed` and `offset` as `u64`; `i64` here so that a boxed call carries
/// every value). Most code calls [`random::rand`](crate::random::rand), which takes `seed` and
/// `offset` from the device's generator.
#[op(name = "switchyard::rand")]
pub fn rand_seeded(shape: &[usize], seed: i64, offset: i64, dtype: DType, device: Device)
-> Tensor;

/// Values of the standard normal distribution of `shape` and float `dtype` on `device`: element
/// `i` is [`random::normal_value`](crate::random::normal_value)`(dtype, seed, offset + i)`
/// rounded to `dtype` (Box–Muller over one Philox block; a GPU computes it in `f32`, within its
/// `log`, `sqrt` and `cos` accuracy). See [`rand_seeded()`] for `seed` and `offset`;
/// [`random::randn`](crate::random::randn) takes them from the device's generator.
#[op(name = "switchyard::randn")]
pub fn randn_seeded(
    shape: &[usize],
    seed: i64,
    offset: i64,
    dtype: DType,
    device: Device,
) -> Tensor;
