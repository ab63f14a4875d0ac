//! The Rust types of the eight dtypes, and conversion between them.

use std::fmt;

use half::{bf16, f16};
use switchyard::DType;

/// A value of any dtype, wide enough for each: how values cross between dtypes (`to_dtype`,
/// mixed-dtype kernels) without losing an `i64` to a float.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Scalar {
    /// A `bool`.
    Bool(bool),
    /// Any integer dtype.
    Int(i64),
    /// Any float dtype.
    Float(f64),
}

impl Scalar {
    /// As a float (`true` is 1).
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => f64::from(u8::from(b)),
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }

    /// As an integer: floats truncate toward zero and saturate (NaN is 0), as Rust's `as` does.
    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => i64::from(b),
            Scalar::Int(i) => i,
            Scalar::Float(f) => f as i64,
        }
    }

    /// As a boolean: non-zero is `true` (NaN too, as in PyTorch).
    pub fn as_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that is a tensor element: `f32, f64, half::f16, half::bf16, i32, i64, u8, bool`.
///
/// Sealed: the storage reads host bytes as these types, which is sound only for types whose
/// every written value is valid and that need no drop, at most 8-byte aligned.
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + PartialEq + PartialOrd + fmt::Debug + fmt::Display + 'static
{
    /// The dtype of tensors of this type.
    const DTYPE: DType;
    /// The additive identity.
    const ZERO: Self;
    /// The multiplicative identity.
    const ONE: Self;
    /// The value, widened.
    fn to_scalar(self) -> Scalar;
    /// The value converted from any dtype's, as `to_dtype` converts: floats round to nearest,
    /// floats to integers truncate and saturate, integers wrap to narrower integers, non-zero
    /// becomes `true`.
    fn from_scalar(value: Scalar) -> Self;
}

macro_rules! float_element {
    ($ty:ty, $dtype:ident, $zero:expr, $one:expr, $from:expr, $to:expr) => {
        impl sealed::Sealed for $ty {}
        impl Element for $ty {
            const DTYPE: DType = DType::$dtype;
            const ZERO: Self = $zero;
            const ONE: Self = $one;
            #[inline]
            fn to_scalar(self) -> Scalar {
                Scalar::Float($to(self))
            }
            #[inline]
            fn from_scalar(value: Scalar) -> Self {
                match value {
                    Scalar::Int(i) => $from(i as f64),
                    other => $from(other.as_f64()),
                }
            }
        }
    };
}

float_element!(f32, F32, 0.0, 1.0, |v: f64| v as f32, f64::from);
float_element!(f64, F64, 0.0, 1.0, |v: f64| v, |v: f64| v);
float_element!(f16, F16, f16::ZERO, f16::ONE, f16::from_f64, f16::to_f64);
float_element!(
    bf16,
    BF16,
    bf16::ZERO,
    bf16::ONE,
    bf16::from_f64,
    bf16::to_f64
);

macro_rules! int_element {
    ($ty:ty, $dtype:ident) => {
        impl sealed::Sealed for $ty {}
        impl Element for $ty {
            const DTYPE: DType = DType::$dtype;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline]
            fn to_scalar(self) -> Scalar {
                Scalar::Int(self as i64)
            }
            #[inline]
            fn from_scalar(value: Scalar) -> Self {
                match value {
                    Scalar::Float(f) => f as $ty,
                    other => other.as_i64() as $ty,
                }
            }
        }
    };
}

int_element!(i32, I32);
int_element!(i64, I64);
int_element!(u8, U8);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    const ZERO: Self = false;
    const ONE: Self = true;
    #[inline]
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    #[inline]
    fn from_scalar(value: Scalar) -> Self {
        value.as_bool()
    }
}

/// Runs `$body` with `$T` the Rust element type of `$dtype` (a `DType` value).
///
/// ```
/// use switchyard_tensor::{DType, Element, with_element};
/// fn size(dtype: DType) -> usize {
///     with_element!(dtype, T => size_of::<T>())
/// }
/// assert_eq!(size(DType::BF16), 2);
/// ```
#[macro_export]
macro_rules! with_element {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::DType::U8 => {
                type $T = u8;
                $body
            }
            $crate::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::DType::I64 => {
                type $T = i64;
                $body
            }
            $crate::DType::F16 => {
                type $T = $crate::half::f16;
                $body
            }
            $crate::DType::BF16 => {
                type $T = $crate::half::bf16;
                $body
            }
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_keep_integers_and_saturate_floats() {
        assert_eq!(i64::from_scalar(i64::MAX.to_scalar()), i64::MAX);
        assert_eq!(i32::from_scalar(Scalar::Float(1e20)), i32::MAX);
        assert_eq!(u8::from_scalar(Scalar::Int(257)), 1, "integers wrap");
        assert_eq!(i32::from_scalar(Scalar::Float(-2.7)), -2);
        assert!(bool::from_scalar(Scalar::Float(f64::NAN)));
        assert_eq!(f16::from_scalar(Scalar::Int(3)), f16::from_f32(3.0));
        assert_eq!(f32::from_scalar(true.to_scalar()), 1.0);
        for dtype in DType::ALL {
            assert_eq!(with_element!(dtype, T => T::DTYPE), dtype);
            assert_eq!(with_element!(dtype, T => size_of::<T>()), dtype.size_of());
        }
    }
}
