//! The naive kernel of `div_rounded` (`div` with a rounding mode), every dtype but `bool`
//! (refused by `rules::binary`). The SIMD backend has none of its own: its calls fall through to
//! this one.

use switchyard::half::{bf16, f16};
use switchyard::ops::{Rounding, div_rounded};
use switchyard::{
    DType, DispatchError, Element, Result, Tensor, host_buffer, kernel, rules, with_element,
};

use super::naive::{as_dtype, zip_values};

/// The two roundings of one element type's quotient. Integer divisors are never zero here (the
/// kernel refuses them first).
trait RoundedDiv: Element {
    fn div_trunc(a: Self, b: Self) -> Self;
    fn div_floor(a: Self, b: Self) -> Self;
}

/// `a / b` rounded toward negative infinity as PyTorch computes it for floats: from the exact
/// remainder `fmod(a, b)` (Rust's `%`), `(a - rem) / b` is the truncated quotient up to rounding;
/// one less when the remainder's sign differs from the divisor's; then the nearest integer
/// below, raised by one if the division rounded it just under an integer. A zero quotient takes
/// the sign of `a / b` (`-0.0` for `-1 // 3`), a zero divisor gives IEEE's `a / b` (±inf, NaN).
///
/// One body for `f64` and `f32` (`floor_div_f32`: the same steps in `f32` arithmetic, so the
/// same roundings as PyTorch's).
macro_rules! floor_div {
    ($name:ident, $float:ty) => {
        fn $name(a: $float, b: $float) -> $float {
            if b == 0.0 {
                return a / b;
            }
            let rem = a % b;
            let mut quotient = (a - rem) / b;
            if rem != 0.0 && (b < 0.0) != (rem < 0.0) {
                quotient -= 1.0;
            }
            if quotient == 0.0 {
                let zero: $float = 0.0;
                return zero.copysign(a / b);
            }
            let floor = quotient.floor();
            if quotient - floor > 0.5 {
                floor + 1.0
            } else {
                floor
            }
        }
    };
}

floor_div!(floor_div_f64, f64);
floor_div!(floor_div_f32, f32);

impl RoundedDiv for f32 {
    fn div_trunc(a: Self, b: Self) -> Self {
        (a / b).trunc()
    }
    fn div_floor(a: Self, b: Self) -> Self {
        floor_div_f32(a, b)
    }
}

impl RoundedDiv for f64 {
    fn div_trunc(a: Self, b: Self) -> Self {
        (a / b).trunc()
    }
    fn div_floor(a: Self, b: Self) -> Self {
        floor_div_f64(a, b)
    }
}

// Half precision computes in `f32` and rounds once, as its other arithmetic does.
macro_rules! half_rounded_div {
    ($($ty:ty),*) => {$(
        impl RoundedDiv for $ty {
            fn div_trunc(a: Self, b: Self) -> Self {
                <$ty>::from_f32((a.to_f32() / b.to_f32()).trunc())
            }
            fn div_floor(a: Self, b: Self) -> Self {
                <$ty>::from_f32(floor_div_f32(a.to_f32(), b.to_f32()))
            }
        }
    )*};
}
half_rounded_div!(f16, bf16);

// Wrapping: `i64::MIN / -1` is `i64::MIN`, as two's complement hardware without a trap gives.
macro_rules! int_rounded_div {
    ($($ty:ty),*) => {$(
        impl RoundedDiv for $ty {
            fn div_trunc(a: Self, b: Self) -> Self {
                a.wrapping_div(b)
            }
            #[allow(unused_comparisons)] // `u8` is never negative
            fn div_floor(a: Self, b: Self) -> Self {
                let quotient = a.wrapping_div(b);
                if a.wrapping_rem(b) != 0 && ((a < 0) != (b < 0)) {
                    quotient.wrapping_sub(1)
                } else {
                    quotient
                }
            }
        }
    )*};
}
int_rounded_div!(u8, i32, i64);

/// Never reached: `rules::binary` refuses two `bool` operands.
impl RoundedDiv for bool {
    fn div_trunc(a: Self, _: Self) -> Self {
        a
    }
    fn div_floor(a: Self, _: Self) -> Self {
        a
    }
}

#[kernel(op = div_rounded, key = CpuNaive)]
fn div_rounded_naive(x: &Tensor, y: &Tensor, mode: Rounding) -> Result<Tensor> {
    const OP: &str = "div_rounded";
    let dtype = rules::binary(OP, x, y)?;
    let (xb, yb, shape) = rules::broadcast_pair(OP, x, y)?;
    let (xc, yc) = (as_dtype(&xb, dtype)?, as_dtype(&yb, dtype)?);
    with_element!(dtype, T => quotients::<T>(x, y, &xc, &yc, &shape, mode))
}

/// The rounded quotients of `xc` and `yc` (the operands `x` and `y` broadcast to `shape` and
/// converted to `T`); an integer zero divisor is an error.
fn quotients<T: RoundedDiv>(
    x: &Tensor,
    y: &Tensor,
    xc: &Tensor,
    yc: &Tensor,
    shape: &[usize],
    mode: Rounding,
) -> Result<Tensor> {
    const OP: &str = "div_rounded";
    let (xv, yv) = (xc.host::<T>(OP)?, yc.host::<T>(OP)?);
    if T::DTYPE != DType::Bool && !T::DTYPE.is_float() && yv.iter().any(|b| b == T::ZERO) {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "integer division by zero: div_rounded({} {:?}, {} {:?}, {mode:?}) has a zero \
                 divisor in {}; divide floats for IEEE's ±inf and NaN",
                x.dtype(),
                x.shape(),
                y.dtype(),
                y.shape(),
                T::DTYPE
            ),
        ));
    }
    let f = match mode {
        Rounding::Trunc => T::div_trunc,
        Rounding::Floor => T::div_floor,
    };
    let mut out = host_buffer::<T>(OP, xc.numel())?;
    zip_values(&xv, &yv, &mut out, f);
    Tensor::from_host(out, shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Python: 7.5 // -2 == -4.0, -0.5 // 3 == -1.0, 0.0 // -3 == -0.0, 1e308 // 1e-308 == inf
    #[test]
    fn float_floor_division_follows_pythons_answers() {
        assert_eq!(floor_div_f64(7.5, -2.0), -4.0);
        assert_eq!(floor_div_f64(-0.5, 3.0), -1.0);
        assert!(floor_div_f64(0.0, -3.0).is_sign_negative());
        assert_eq!(floor_div_f32(-7.0, 2.0), -4.0);
        assert!(floor_div_f32(1.0, 0.0).is_infinite());
        assert_eq!(<i64 as RoundedDiv>::div_floor(-7, 2), -4);
        assert_eq!(<i64 as RoundedDiv>::div_floor(7, -2), -4);
        assert_eq!(<i64 as RoundedDiv>::div_trunc(-7, 2), -3);
        assert_eq!(<i64 as RoundedDiv>::div_floor(i64::MIN, -1), i64::MIN);
    }
}
