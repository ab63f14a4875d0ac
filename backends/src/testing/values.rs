//! Deterministic inputs for every dtype: ordinary values and, where a case asks for them, the
//! special values each kernel must treat exactly as the oracle does.

use switchyard::{DType, Element, Result, Scalar, Tensor, with_element};

/// What a case's inputs hold.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Values {
    /// Ordinary values, and a special value at every fifth index from 2 on: NaN, infinities,
    /// signed zeros, subnormals and overflowing magnitudes for floats, the extremes for integers.
    /// Elementwise ops and conversions, whose results are compared element by element.
    WithSpecials,
    /// Finite values in `[-4, 4)` (integers in `[-100, 100]`): reductions and `matmul`, whose
    /// tolerance scales with the magnitude of their terms and would mean nothing with an
    /// infinity among them.
    Finite,
}

/// Special floats, as `f64`s converted to the dtype (`1e-40` is subnormal in `f32` and `bf16`
/// and `0` in `f16`; `1e5` overflows `f16` to infinity).
const FLOAT_SPECIALS: [f64; 9] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -0.0,
    0.0,
    1e-40,
    -1e-40,
    1e5,
    -3e38,
];

/// Special integers, wrapped into the dtype as `to_dtype` wraps them.
const INT_SPECIALS: [i64; 8] = [
    i64::MIN,
    i64::MAX,
    i32::MIN as i64,
    i32::MAX as i64,
    0,
    -1,
    255,
    256,
];

/// A CPU tensor of `shape` whose element `i` is [`value`]`(dtype, seed, i, values)`.
pub(crate) fn tensor(dtype: DType, shape: &[usize], seed: u64, values: Values) -> Result<Tensor> {
    with_element!(dtype, T => Tensor::try_from_fn::<T>(shape, |i| {
        T::from_scalar(value(dtype, seed, i, values))
    }))
}

/// The `i`th input value of stream `seed`: a pure function of its arguments, so the oracle and
/// the backend get the same inputs, and a failure report names a reproducible case.
pub(crate) fn value(dtype: DType, seed: u64, i: usize, values: Values) -> Scalar {
    let r = mix(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64);
    let special = values == Values::WithSpecials && i % 5 == 2;
    match dtype {
        DType::Bool => Scalar::Bool(r & 1 == 1),
        DType::U8 if !special => Scalar::Int((r % 256) as i64),
        _ if dtype.is_float() => {
            if special {
                Scalar::Float(FLOAT_SPECIALS[(r % FLOAT_SPECIALS.len() as u64) as usize])
            } else {
                // 24 random bits: exact in every float dtype's conversion from f64, then rounded once.
                let unit = (r >> 40) as f64 / (1u64 << 24) as f64;
                Scalar::Float((2.0 * unit - 1.0) * 4.0)
            }
        }
        _ if special => Scalar::Int(INT_SPECIALS[(r % INT_SPECIALS.len() as u64) as usize]),
        _ => Scalar::Int((r % 201) as i64 - 100),
    }
}

/// SplitMix64's finaliser: consecutive indices give unrelated bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
