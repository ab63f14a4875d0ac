//! How close a backend's result must be to the oracle's: the [`Tolerance`]s, the defaults the
//! kit states for each op and dtype, and the element-by-element comparison.

use std::fmt;

use switchyard::half::{bf16, f16};
use switchyard::{DType, Element, Result, Scalar, Tensor, with_element};

/// How close a backend's float result must be to the oracle's. Integer and `bool` results are
/// always compared exactly, whatever the tolerance: integer arithmetic has one right answer.
///
/// In every tolerance a NaN matches any NaN (payloads are not compared), and an infinite value
/// matches only the same infinity.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Tolerance {
    /// Bit for bit (so `-0.0` differs from `0.0`).
    Exact,
    /// Within this many units in the last place of the result's dtype (`0.0` and `-0.0` are one
    /// value here).
    Ulps(u32),
    /// `|backend − oracle| ≤ ulps · ulp(oracle) + epsilon · scale`, where `scale` is the case's
    /// error scale: `n · Σ|xᵢ|` for `sum` of `n` elements, `Σ|xᵢ|` for `mean`, and
    /// `k · Σₚ|aᵢₚ·bₚⱼ|` for element `(i, j)` of a `matmul` with inner dimension `k`. That is the
    /// classic bound of a sum accumulated in any order in a type of unit roundoff `epsilon / 2`
    /// (the oracle's own rounding included).
    Accumulated {
        /// Units in the last place allowed on top, for the final rounding to the result dtype.
        ulps: u32,
        /// Allowed error per unit of the case's error scale.
        epsilon: f64,
    },
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Tolerance::Exact => f.write_str("exact"),
            Tolerance::Ulps(n) => write!(f, "within {n} ulp"),
            Tolerance::Accumulated { ulps, epsilon } => {
                write!(f, "within {ulps} ulp + {epsilon:e}·scale")
            }
        }
    }
}

impl Tolerance {
    /// What the kit expects of `op` with a result of `dtype`, unless told otherwise
    /// ([`Conformance::tolerance`](super::Conformance::tolerance)); the table in the
    /// [module docs](super#tolerances).
    pub fn default_for(op: &str, dtype: DType) -> Tolerance {
        // An in-place op (`exp_`) computes what its op does.
        match op.trim_end_matches('_') {
            // The SIMD backend's promise (`cpu::simd`): within 1 ulp of the exact value, as the
            // oracle is (the C library's `expf` and `logf`; `tanh` and `sigmoid` in `f64`, rounded
            // once): two results on either side of the exact value. `randn` is a logarithm, a root
            // and a cosine, each within half an ulp on both sides.
            "exp" | "log" | "tanh" | "sigmoid" | "randn" => Tolerance::Ulps(1),
            // Accumulated in the dtype (the SIMD backend's `f32` lanes) or wider, in another
            // order than the oracle's `f64`, rounded once.
            "sum" | "mean" => Tolerance::Accumulated {
                ulps: 1,
                epsilon: machine_epsilon(dtype),
            },
            // Accumulated in `f64`, as the oracle does, in another order.
            "sum_dim" | "mean_dim" | "sum_with" | "mean_with" => Tolerance::Accumulated {
                ulps: 1,
                epsilon: f64::EPSILON,
            },
            // Products and sums in any order in the result dtype (or wider).
            "matmul" => Tolerance::Accumulated {
                ulps: 0,
                epsilon: machine_epsilon(dtype),
            },
            // Composites: `exp` (1 ulp) of exact differences, a sum in another order (1 ulp)
            // and a division (half an ulp) on each side.
            "softmax" | "softmax_in" => Tolerance::Ulps(4),
            // A difference of terms that may cancel (`x − m` and `ln Σ`): each side's roundings
            // of `exp`, the sum and `ln` are a few epsilons of the terms (the cases' scale), the
            // subtraction and the mean an ulp of the result.
            "log_softmax" | "log_softmax_in" | "cross_entropy" => Tolerance::Accumulated {
                ulps: 2,
                epsilon: 4.0 * machine_epsilon(dtype),
            },
            _ => Tolerance::Exact,
        }
    }
}

/// The distance from 1 to the next value of a float dtype (`f64`'s for the others).
fn machine_epsilon(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => f64::from(f16::EPSILON),
        DType::BF16 => f64::from(bf16::EPSILON),
        DType::F32 => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    }
}

/// The elements of `x`, row-major, widened losslessly ([`Scalar::Float`] holds every float
/// dtype's values exactly, [`Scalar::Int`] every integer's).
/// Whether the oracle refused for what its inputs hold rather than what they are: an integer
/// division by zero (`div_rounded`) or a target that is no class index (`cross_entropy`), the
/// standard ops' only such refusals.
pub(crate) fn refused_for_its_data(error: &switchyard::DispatchError) -> bool {
    const FOR_THEIR_DATA: [&str; 2] = ["integer division by zero", "is not a class index"];
    let message = error.to_string();
    matches!(error.kind(), switchyard::ErrorKind::Kernel { .. })
        && FOR_THEIR_DATA.iter().any(|words| message.contains(words))
}

pub(crate) fn scalars(x: &Tensor) -> Result<Vec<Scalar>> {
    with_element!(x.dtype(), T => Ok(x.try_to_vec::<T>()?.into_iter().map(|v| v.to_scalar()).collect()))
}

/// Compares `got` with `want` (both of `dtype`); `scale` is the case's per-element error scale
/// for [`Tolerance::Accumulated`]. On a mismatch: a description of the first few wrong elements.
pub(crate) fn compare(
    dtype: DType,
    got: &[Scalar],
    want: &[Scalar],
    tolerance: Tolerance,
    scale: Option<&[f64]>,
) -> std::result::Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{} elements read back, the oracle has {}",
            got.len(),
            want.len()
        ));
    }
    let mut wrong = Vec::new();
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = match (g, w) {
            (Scalar::Float(g), Scalar::Float(w)) => {
                let scale = scale.and_then(|s| s.get(i).copied());
                float_matches(dtype, g, w, tolerance, scale)
            }
            (g, w) => g == w,
        };
        if !ok {
            wrong.push(i);
        }
    }
    if wrong.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = wrong
        .iter()
        .take(3)
        .map(|&i| {
            let bound = match (tolerance, scale.and_then(|s| s.get(i))) {
                (Tolerance::Accumulated { ulps, epsilon }, Some(s)) => format!(
                    " (allowed: {:e})",
                    f64::from(ulps) * ulp(dtype, want[i].as_f64()) + epsilon * s
                ),
                _ => String::new(),
            };
            format!(
                "element {i}: got {}, the oracle gives {}{bound}",
                show(got[i]),
                show(want[i])
            )
        })
        .collect();
    Err(format!(
        "{} of {} elements differ beyond {tolerance}: {}{}",
        wrong.len(),
        got.len(),
        shown.join("; "),
        if wrong.len() > 3 { "; …" } else { "" }
    ))
}

/// A value as printed in a report: floats with their sign and enough digits to tell neighbours
/// apart.
fn show(v: Scalar) -> String {
    match v {
        Scalar::Float(f) => format!("{f:e}"),
        Scalar::Int(i) => i.to_string(),
        Scalar::Bool(b) => b.to_string(),
    }
}

fn float_matches(dtype: DType, g: f64, w: f64, tolerance: Tolerance, scale: Option<f64>) -> bool {
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    if g.is_infinite() || w.is_infinite() {
        return g == w;
    }
    match tolerance {
        Tolerance::Exact => g.to_bits() == w.to_bits(),
        Tolerance::Ulps(n) => ordered(dtype, g).abs_diff(ordered(dtype, w)) <= u64::from(n),
        Tolerance::Accumulated { ulps, epsilon } => {
            (g - w).abs() <= f64::from(ulps) * ulp(dtype, w) + epsilon * scale.unwrap_or(0.0)
        }
    }
}

/// `x` (a value of float `dtype`) on a line where neighbouring values of the dtype are
/// neighbouring integers: the magnitude's bits, negated for negative values (so `-0.0` and `0.0`
/// are both 0).
fn ordered(dtype: DType, x: f64) -> i64 {
    let (bits, sign) = match dtype {
        DType::F16 => (u64::from(f16::from_f64(x).to_bits()), 15),
        DType::BF16 => (u64::from(bf16::from_f64(x).to_bits()), 15),
        DType::F32 => (u64::from((x as f32).to_bits()), 31),
        _ => (x.to_bits(), 63),
    };
    let magnitude = (bits & !(1 << sign)) as i64;
    if bits >> sign & 1 == 1 {
        -magnitude
    } else {
        magnitude
    }
}

/// The spacing of float `dtype`'s values around `x`: `2^(e − p + 1)` for `x`'s exponent `e`
/// (at least the dtype's smallest normal exponent) and the dtype's `p` significand bits.
fn ulp(dtype: DType, x: f64) -> f64 {
    let (digits, min_exp) = match dtype {
        DType::F16 => (11, -14),
        DType::BF16 => (8, -126),
        DType::F32 => (24, -126),
        _ => (53, -1022),
    };
    let exp = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    f64::from(exp.max(min_exp) - (digits - 1)).exp2()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_are_one_ulp_apart() {
        let one = 1.0f32;
        let next = f32::from_bits(one.to_bits() + 1);
        assert_eq!(
            ordered(DType::F32, f64::from(next)) - ordered(DType::F32, 1.0),
            1
        );
        assert_eq!(ulp(DType::F32, 1.0), f64::from(f32::EPSILON));
        assert_eq!(ulp(DType::F16, 1.0), f64::from(f16::EPSILON));
        // Across zero: the smallest positive and negative subnormals are two steps apart.
        let tiny = f64::from(f32::from_bits(1));
        assert_eq!(ordered(DType::F32, tiny) - ordered(DType::F32, -tiny), 2);
    }

    #[test]
    fn exact_tells_zeros_apart_and_ulps_does_not() {
        let (zero, minus) = ([Scalar::Float(0.0)], [Scalar::Float(-0.0)]);
        assert!(compare(DType::F32, &zero, &minus, Tolerance::Exact, None).is_err());
        assert!(compare(DType::F32, &zero, &minus, Tolerance::Ulps(0), None).is_ok());
    }

    #[test]
    fn nan_matches_nan_and_infinity_only_itself() {
        let nan = [Scalar::Float(f64::NAN)];
        assert!(compare(DType::F32, &nan, &nan, Tolerance::Exact, None).is_ok());
        let (inf, max) = (
            [Scalar::Float(f64::INFINITY)],
            [Scalar::Float(f64::from(f32::MAX))],
        );
        assert!(compare(DType::F32, &max, &inf, Tolerance::Ulps(5), None).is_err());
    }

    #[test]
    fn accumulated_allows_the_scaled_bound_and_no_more() {
        let tolerance = Tolerance::Accumulated {
            ulps: 0,
            epsilon: 0.5,
        };
        let (got, want) = ([Scalar::Float(10.0)], [Scalar::Float(9.0)]);
        assert!(compare(DType::F64, &got, &want, tolerance, Some(&[2.0])).is_ok());
        let message = compare(DType::F64, &got, &want, tolerance, Some(&[1.9])).unwrap_err();
        assert!(
            message.contains("element 0: got 1e1, the oracle gives 9e0"),
            "{message}"
        );
    }

    #[test]
    fn integers_are_exact_whatever_the_tolerance() {
        let (got, want) = ([Scalar::Int(3)], [Scalar::Int(4)]);
        let loose = Tolerance::Accumulated {
            ulps: 100,
            epsilon: 1.0,
        };
        assert!(compare(DType::I32, &got, &want, loose, Some(&[100.0])).is_err());
    }
}
