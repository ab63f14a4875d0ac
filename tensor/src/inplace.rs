//! The in-place ops: `copy_`, `fill_`, `zero_` and the in-place forms of the elementwise ops
//! (`add_`, `sub_`, `mul_`, `div_`, `neg_`, `relu_`, `exp_`). Each writes the elements of its
//! `&mut Tensor` argument: through a view, the base and every other view of that storage see the
//! write, and the storage's version counter ([`Tensor::version`]) counts one more.
//!
//! `copy_` is the one that touches memory; each backend that holds tensors gives it a kernel
//! (`switchyard-backends` for the CPU). The others are composites: the out-of-place op (`full`
//! for `fill_`), then `copy_` into the destination, so every backend that serves the op and
//! `copy_` serves its in-place form too.
//!
//! What the destination must allow, checked before anything is computed or written (PyTorch's
//! rules):
//! - the result has the destination's shape: the other operand broadcasts *to* it, never grows
//!   it (`add_` of a `[3]` into a `[1]` is an error, not a resize);
//! - the result's dtype can be stored in the destination's without losing its kind: no float into
//!   an integer or `bool` tensor, nothing but `bool` into a `bool` tensor (`add_` of an `f64`
//!   into an `i32` tensor is an error; an `f64` into an `f32` one rounds, as `copy_` does);
//! - no two of the destination's elements share memory (an `expand`ed view: which write would
//!   win is undefined): `contiguous()` it first.
//!
//! A refused call writes nothing and leaves the version where it was. Failures of the write
//! itself (the storage borrowed elsewhere: a slice of it alive, a reader on another thread) happen
//! in `copy_`; the error names the op called and says its write failed.

use switchyard::{DType, DispatchError, ErrorKind, op};

use crate::Tensor;
use crate::ops::{try_add, try_div, try_exp, try_full, try_mul, try_neg, try_relu, try_sub};
use crate::rules;

type Result<T> = std::result::Result<T, DispatchError>;

/// Writes `src` into `dst`'s elements: broadcast to `dst`'s shape and converted to its dtype (as
/// [`to_dtype`](fn@crate::ops::to_dtype) converts). `src` may share storage with `dst`, even overlap
/// it: it is read in full before anything is written. `src` may be on another device.
#[op(name = "switchyard::copy_", mixes_devices)]
pub fn copy_(dst: &mut Tensor, src: &Tensor);

/// Sets every element of `x` to `value`, converted to `x`'s dtype (floats to integers truncate
/// toward zero and saturate; non-zero is `true`). A composite: `full` of one element on `x`'s
/// device, then `copy_`.
#[op(name = "switchyard::fill_")]
pub fn fill_(x: &mut Tensor, value: f64) {
    fill_as("fill_", x, value)
}

/// Sets every element of `x` to zero.
#[op(name = "switchyard::zero_")]
pub fn zero_(x: &mut Tensor) {
    fill_as("zero_", x, 0.0)
}

/// `fill_` on behalf of `op`, whose name its errors carry.
fn fill_as(op: &'static str, x: &mut Tensor, value: f64) -> Result<()> {
    x.check_writable(op)?;
    let value = try_full(&[], value, x.dtype(), x.device())?;
    write_result(op, x, &value)
}

macro_rules! binary_in_place {
    ($($(#[doc = $doc:literal])* $name:ident = $op:literal via $out_of_place:ident;)*) => {$(
        $(#[doc = $doc])*
        #[op(name = $op)]
        pub fn $name(x: &mut Tensor, y: &Tensor) {
            let op = bare($op);
            check_binary(op, x, y)?;
            let result = $out_of_place(x, y)?;
            write_result(op, x, &result)
        }
    )*};
}

binary_in_place! {
    /// `x += y`, `y` broadcast to `x`'s shape.
    add_ = "switchyard::add_" via try_add;
    /// `x -= y`, `y` broadcast to `x`'s shape.
    sub_ = "switchyard::sub_" via try_sub;
    /// `x *= y`, `y` broadcast to `x`'s shape.
    mul_ = "switchyard::mul_" via try_mul;
    /// `x /= y`, `y` broadcast to `x`'s shape (true division: `x` must be a float tensor).
    div_ = "switchyard::div_" via try_div;
}

macro_rules! unary_in_place {
    ($($(#[doc = $doc:literal])* $name:ident = $op:literal via $out_of_place:ident;)*) => {$(
        $(#[doc = $doc])*
        #[op(name = $op)]
        pub fn $name(x: &mut Tensor) {
            let op = bare($op);
            x.check_writable(op)?;
            fits(op, x, rules::unary(op, x.dtype())?)?;
            let result = $out_of_place(x)?;
            write_result(op, x, &result)
        }
    )*};
}

unary_in_place! {
    /// `x = -x`.
    neg_ = "switchyard::neg_" via try_neg;
    /// `x = max(x, 0)`.
    relu_ = "switchyard::relu_" via try_relu;
    /// `x = e^x` (`x` must be a float tensor).
    exp_ = "switchyard::exp_" via try_exp;
}

/// An op's name without its namespace, as the kernels' own errors (and `rules`) name ops.
fn bare(op: &'static str) -> &'static str {
    op.rsplit_once("::").map_or(op, |(_, bare)| bare)
}

/// The checks of a binary in-place op, before it computes: `x` writable, `y` broadcasting to
/// `x`'s shape, the promoted dtype storable in `x`'s.
fn check_binary(op: &'static str, x: &Tensor, y: &Tensor) -> Result<()> {
    x.check_writable(op)?;
    let shape = crate::shape::broadcast_shapes(op, x.shape(), y.shape())?;
    if shape != x.shape() {
        return Err(DispatchError::shape(
            op,
            format!(
                "{op} writes into its first operand, of shape {:?}; the second, of shape {:?}, \
                 would broadcast it to {shape:?} (an in-place op never resizes its destination)",
                x.shape(),
                y.shape()
            ),
        ));
    }
    fits(op, x, rules::binary(op, x, y)?)
}

/// A result of `dtype` can be stored in `x` (see the module docs).
fn fits(op: &'static str, x: &Tensor, dtype: DType) -> Result<()> {
    if rules::can_store(dtype, x.dtype()) {
        return Ok(());
    }
    Err(DispatchError::kernel(
        op,
        format!(
            "{op} computes its result in {dtype}, which cannot be stored in a destination of \
             dtype {}: compute out of place, or convert the destination first \
             (`to_dtype(DType::{dtype:?})`)",
            x.dtype(),
        ),
    ))
}

/// Writes a result (already checked to fit, broadcasting to `x`'s shape) into `x` for the
/// in-place op `op`. The write's own failures (the storage borrowed elsewhere, memory) are
/// reported as `op`'s, so the error names the op the user called; a missing `copy_` kernel stays
/// `copy_`'s (that is the kernel to add).
fn write_result(op: &'static str, x: &mut Tensor, result: &Tensor) -> Result<()> {
    try_copy_(x, result).map_err(|error| match error.kind() {
        ErrorKind::Kernel {
            op: "copy_",
            message,
        } => DispatchError::kernel(op, format!("its write (`copy_`) failed: {message}")),
        ErrorKind::OutOfMemory { op: "copy_", bytes } => DispatchError::out_of_memory(op, *bytes),
        _ => error,
    })
}
