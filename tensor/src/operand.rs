//! Rust numbers as operands: `&x + 1.5`, `x * 2`, `1.0 - &x` (`f64` and `i64` numbers), `ops::add_scalar(&x, 2.0)`,
//! `ops::where_scalar(&c, &x, 0.0)`. A number is PyTorch's "wrapped number": it never raises a
//! tensor operand's dtype within its category (bool < integer < float), below even a 0-d
//! tensor: `f16[3] + 1.5` is `f16`, `u8[3] + 300` is `u8` (300 wraps to 44), `i32[3] + 1.5` is
//! `f32` (a float number is of the default float dtype, `f32`; an integer one of `i64`).
//!
//! The number becomes a 0-d tensor of the dtype the operation computes in, on the tensor
//! operand's device (the `full` op, dispatched to that device's backend; on the CPU, built in
//! place), and the tensor op runs as with any 0-d operand: the same kernels, the same
//! autograd. (`#[op]` functions take one signature, so the number forms are functions of their
//! own, `*_scalar`, as ATen's `add.Scalar` overloads are, and the operators.)

use std::ops::{Add, Div, Mul, Sub};

use switchyard::{DType, DispatchError};

use crate::{Device, Element, Scalar, Tensor, ops, with_element};

type Result<T> = std::result::Result<T, DispatchError>;

mod sealed {
    pub trait Sealed {}
}

/// A Rust number usable as an operand: `f32`, `f64` (float numbers), `i32`, `i64`, `u8`
/// (integer numbers) and `bool`.
pub trait Number: sealed::Sealed + Copy {
    /// The value, widened.
    fn value(self) -> Scalar;
}

macro_rules! numbers {
    ($($ty:ty),*) => {$(
        impl sealed::Sealed for $ty {}
        impl Number for $ty {
            fn value(self) -> Scalar {
                self.to_scalar()
            }
        }
    )*};
}
numbers!(f32, f64, i32, i64, u8, bool);

/// What an [`Operand`] is.
#[derive(Clone, Debug)]
pub enum OperandValue {
    /// A tensor.
    Tensor(Tensor),
    /// A number's value.
    Number(Scalar),
}

/// An operand of [`where_scalar`]: a tensor (`&Tensor` or `Tensor`) or
/// a [`Number`].
pub trait Operand {
    /// The tensor, or the number's value.
    fn operand(self) -> OperandValue;
}

impl Operand for &Tensor {
    fn operand(self) -> OperandValue {
        OperandValue::Tensor(self.clone())
    }
}

impl Operand for Tensor {
    fn operand(self) -> OperandValue {
        OperandValue::Tensor(self)
    }
}

impl<N: Number> Operand for N {
    fn operand(self) -> OperandValue {
        OperandValue::Number(self.value())
    }
}

/// The dtype of a number alone (PyTorch's wrapped numbers): `f32` for floats (the default
/// float dtype), `i64` for integers, `bool`.
fn number_dtype(value: Scalar) -> DType {
    match value {
        Scalar::Float(_) => DType::F32,
        Scalar::Int(_) => DType::I64,
        Scalar::Bool(_) => DType::Bool,
    }
}

/// The dtype `value` takes beside tensors whose result type is `tensors`: theirs, unless the
/// number is of a higher category (then the two promote), as [`rules::result_type`] ranks a 0-d
/// tensor.
///
/// [`rules::result_type`]: crate::rules::result_type
pub fn number_dtype_beside(tensors: DType, value: Scalar) -> DType {
    crate::rules::result_type_of(&[(tensors, false), (number_dtype(value), true)])
}

/// `value` as a 0-d tensor of `dtype` on `device`, converted as `to_dtype` converts (an integer
/// wraps into a narrower integer dtype, a float rounds).
pub fn number_tensor(value: Scalar, dtype: DType, device: Device) -> Result<Tensor> {
    with_element!(dtype, T => {
        let converted = T::from_scalar(value);
        if device == Device::Cpu {
            Tensor::from_scalar(converted)
        } else {
            // Every value of every dtype but an `i64` beyond 2^53 is exact in `f64`, and such
            // an `i64` is not on any GPU backend here.
            ops::try_full(&[], converted.to_scalar().as_f64(), dtype, device)
        }
    })
}

/// `y` as a 0-d operand beside the tensor `x` (see the [module docs](self)).
pub(crate) fn beside(x: &Tensor, y: impl Number) -> Result<Tensor> {
    let value = y.value();
    number_tensor(value, number_dtype_beside(x.dtype(), value), x.device())
}

/// `y` as the 0-d operand of `op` beside `x`, after `op`'s dtype rule for a number ([`rules::binary_with_number`](crate::rules::binary_with_number): `x - true` is
/// refused as `x - bool_tensor` is).
pub(crate) fn operand_beside(op: &'static str, x: &Tensor, y: impl Number) -> Result<Tensor> {
    crate::rules::binary_with_number(op, x.dtype(), number_dtype(y.value()))?;
    beside(x, y)
}

/// Two operands of one op: numbers become 0-d tensors beside the tensors (on `device` when
/// both are numbers, in the dtype the numbers alone give).
pub(crate) fn resolve_pair(
    device: Device,
    a: impl Operand,
    b: impl Operand,
) -> Result<(Tensor, Tensor)> {
    use OperandValue::{Number as N, Tensor as T};
    match (a.operand(), b.operand()) {
        (T(a), T(b)) => Ok((a, b)),
        (T(a), N(b)) => {
            let b = number_tensor(b, number_dtype_beside(a.dtype(), b), a.device())?;
            Ok((a, b))
        }
        (N(a), T(b)) => {
            let a = number_tensor(a, number_dtype_beside(b.dtype(), a), b.device())?;
            Ok((a, b))
        }
        (N(a), N(b)) => {
            let dtype = DType::promote(number_dtype(a), number_dtype(b));
            Ok((
                number_tensor(a, dtype, device)?,
                number_tensor(b, dtype, device)?,
            ))
        }
    }
}

// The operators take `f64` and `i64` numbers only: one float and one integer type, so that a
// literal (`x * 2`, `x + 1.5`) picks its impl without an annotation. A number of another type
// converts losslessly (`f64::from(v)`, `i64::from(n)`), or goes through `ops::*_scalar`, which
// take every `Number`.
macro_rules! number_operators {
    ($($ty:ty),*) => {$(
        number_operators!(@one $ty, Add add => try_add, "add");
        number_operators!(@one $ty, Sub sub => try_sub, "sub");
        number_operators!(@one $ty, Mul mul => try_mul, "mul");
        number_operators!(@one $ty, Div div => try_div, "div");
    )*};
    (@one $ty:ty, $trait:ident $method:ident => $op:ident, $name:literal) => {
        impl $trait<$ty> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: $ty) -> Tensor {
                operand_beside($name, self, rhs)
                    .and_then(|rhs| ops::$op(self, &rhs))
                    .unwrap_or_else(|e| e.panic())
            }
        }

        impl $trait<$ty> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: $ty) -> Tensor {
                (&self).$method(rhs)
            }
        }

        // The number on the left: `1.5 - &x`.
        impl $trait<&Tensor> for $ty {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                operand_beside($name, rhs, self)
                    .and_then(|lhs| ops::$op(&lhs, rhs))
                    .unwrap_or_else(|e| e.panic())
            }
        }

        impl $trait<Tensor> for $ty {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                self.$method(&rhs)
            }
        }
    };
}

number_operators!(f64, i64);

macro_rules! scalar_ops {
    ($($(#[$doc:meta])* $name:ident, $try_name:ident => $op:ident($op_name:literal);)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name(x: &Tensor, y: impl Number) -> Tensor {
            $try_name(x, y).unwrap_or_else(|e| e.panic())
        }

        #[doc = concat!("[`", stringify!($name), "`], returning the op's error.")]
        pub fn $try_name(x: &Tensor, y: impl Number) -> Result<Tensor> {
            ops::$op(x, &operand_beside($op_name, x, y)?)
        }
    )*};
}

scalar_ops! {
    /// `x + y` for a number `y` (see [`Number`] for the dtype): `add_scalar(&x, 2.0)` is `&x + 2.0`.
    add_scalar, try_add_scalar => try_add("add");
    /// `x - y` for a number `y`.
    sub_scalar, try_sub_scalar => try_sub("sub");
    /// `x * y` for a number `y`.
    mul_scalar, try_mul_scalar => try_mul("mul");
    /// `x / y` for a number `y` (true division, as [`div`](fn@crate::ops::div)).
    div_scalar, try_div_scalar => try_div("div");
    /// `x == y` for a number `y`, compared in the dtype `add_scalar` computes in: `f32` against
    /// `0.1` compares with `0.1f32`.
    eq_scalar, try_eq_scalar => try_eq("eq");
    /// `x != y` for a number `y`.
    ne_scalar, try_ne_scalar => try_ne("ne");
    /// `x < y` for a number `y`.
    lt_scalar, try_lt_scalar => try_lt("lt");
    /// `x <= y` for a number `y`.
    le_scalar, try_le_scalar => try_le("le");
    /// `x > y` for a number `y`.
    gt_scalar, try_gt_scalar => try_gt("gt");
    /// `x >= y` for a number `y`.
    ge_scalar, try_ge_scalar => try_ge("ge");
}

/// `cond ? x : y` where `x` and `y` are tensors or numbers ([`Operand`]): a number takes the
/// other operand's dtype unless it is of a higher category (`where_scalar(&c, &x_f32, 0.0)` is
/// `f32`, `where_scalar(&c, &x_i64, 0.5)` is `f32`); two numbers give `f32`, `i64` or `bool`
/// on `cond`'s device.
#[track_caller]
pub fn where_scalar(cond: &Tensor, x: impl Operand, y: impl Operand) -> Tensor {
    try_where_scalar(cond, x, y).unwrap_or_else(|e| e.panic())
}

/// [`where_scalar`], returning the op's error.
pub fn try_where_scalar(cond: &Tensor, x: impl Operand, y: impl Operand) -> Result<Tensor> {
    let (x, y) = resolve_pair(cond.device(), x, y)?;
    ops::try_where_cond(cond, &x, &y)
}

/// `x + alpha · y`, PyTorch's `add(x, y, alpha=…)`: `y` converted to the result dtype of `x`
/// and `y` (as [`add`](fn@crate::ops::add) promotes), multiplied by `alpha` there, then added.
/// `alpha` must fit that dtype's kind: a float `alpha` with an integer result, or a `bool` one
/// with a non-`bool` result, is an error, as in PyTorch. (PyTorch's CPU kernel fuses the
/// multiply-add, rounding once; this rounds the product and the sum.)
#[track_caller]
pub fn add_alpha(x: &Tensor, y: &Tensor, alpha: impl Number) -> Tensor {
    try_add_alpha(x, y, alpha).unwrap_or_else(|e| e.panic())
}

/// [`add_alpha`], returning the op's error.
pub fn try_add_alpha(x: &Tensor, y: &Tensor, alpha: impl Number) -> Result<Tensor> {
    ops::try_add(x, &scaled("add", x, y, alpha.value())?)
}

/// `x − alpha · y`, PyTorch's `sub(x, y, alpha=…)`; see [`add_alpha`].
#[track_caller]
pub fn sub_alpha(x: &Tensor, y: &Tensor, alpha: impl Number) -> Tensor {
    try_sub_alpha(x, y, alpha).unwrap_or_else(|e| e.panic())
}

/// [`sub_alpha`], returning the op's error.
pub fn try_sub_alpha(x: &Tensor, y: &Tensor, alpha: impl Number) -> Result<Tensor> {
    ops::try_sub(x, &scaled("sub", x, y, alpha.value())?)
}

/// `alpha · y` in the dtype `op(x, y)` computes in, after `alpha`'s checks.
fn scaled(op: &'static str, x: &Tensor, y: &Tensor, alpha: Scalar) -> Result<Tensor> {
    let dtype = crate::rules::binary(op, x, y)?;
    let fits = match alpha {
        Scalar::Float(_) => dtype.is_float(),
        Scalar::Int(_) => dtype != DType::Bool,
        Scalar::Bool(_) => dtype == DType::Bool,
    };
    if !fits {
        return Err(DispatchError::kernel(
            op,
            format!(
                "alpha {alpha:?} does not fit the result dtype {dtype} of {op}({} {:?}, {} {:?}): \
                 an integer result takes an integer alpha, a bool result a bool one",
                x.dtype(),
                x.shape(),
                y.dtype(),
                y.shape()
            ),
        ));
    }
    let y = if y.dtype() == dtype {
        y.clone()
    } else {
        ops::try_to_dtype(y, dtype)?
    };
    ops::try_mul(&y, &number_tensor(alpha, dtype, y.device())?)
}
