//! Before a case is timed, every library's output is compared with Switchyard's: a benchmark
//! that computes something else (a wrong op, a lost element) fails instead of reporting a time.
//!
//! The libraries round differently (`exp`'s polynomial, a sum's order and accumulator width), so
//! each op gets a tolerance against the scale of what it computes.

use crate::cases::{Case, Op};

/// Relative tolerance for elementwise ops: `exp` implementations differ by a few ulp (1.2e-7
/// each); the others are exact.
const ELEMENTWISE: f64 = 1e-6;
/// For sums and `matmul`, relative to the sum of the terms' magnitudes: an `f32` accumulator over
/// 16M terms (candle's, ndarray's) drifts by far less than this, a wrong sum by far more.
const ACCUMULATED: f64 = 1e-5;

/// Whether `got` (a library's output) agrees with `want` (Switchyard's) for `case` on `inputs`.
pub fn agree(case: Case, inputs: &[Vec<f32>], want: &[f32], got: &[f32]) -> Result<(), String> {
    if want.len() != got.len() {
        return Err(format!(
            "{} values where Switchyard gives {}",
            got.len(),
            want.len()
        ));
    }
    let magnitude = |values: &[f32]| values.iter().map(|v| f64::from(v.abs())).sum::<f64>();
    // Every input is in [-1, 1), so an element of a `matmul` sums at most `n` terms of size < 1.
    let scale = match case.op {
        Op::Add | Op::Mul | Op::Exp | Op::Relu => None,
        Op::Sum => Some(magnitude(&inputs[0])),
        Op::Mean => Some(magnitude(&inputs[0]) / case.len() as f64),
        Op::Matmul => Some(case.size as f64),
    };
    for (i, (&w, &g)) in want.iter().zip(got).enumerate() {
        let (w, g) = (f64::from(w), f64::from(g));
        let allowed = match scale {
            None => ELEMENTWISE * w.abs(),
            Some(scale) => ACCUMULATED * scale,
        };
        // False for NaN too.
        let close = (w - g).abs() <= allowed;
        if !close {
            return Err(format!(
                "element {i} is {g}, Switchyard's {w} (allowed difference {allowed:.3e})"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_values_agree_and_wrong_ones_do_not() {
        let exp = Case {
            op: Op::Exp,
            size: 2,
        };
        let x = vec![vec![0.5, -0.5]];
        assert!(agree(exp, &x, &[1.0, 2.0], &[1.0 + 1e-7, 2.0]).is_ok());
        assert!(agree(exp, &x, &[1.0, 2.0], &[1.0, 2.001]).is_err());
        assert!(agree(exp, &x, &[1.0, 2.0], &[1.0, f32::NAN]).is_err());
        assert!(agree(exp, &x, &[1.0, 2.0], &[1.0]).is_err());

        let sum = Case {
            op: Op::Sum,
            size: 2,
        };
        assert!(agree(sum, &x, &[0.0], &[1e-6]).is_ok());
        assert!(agree(sum, &x, &[0.0], &[0.5]).is_err());
    }
}
