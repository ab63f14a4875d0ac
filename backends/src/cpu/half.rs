//! Conversions between `f32` and the 16-bit floats on the CPU SIMD backend: what autocast runs
//! at every cast. The naive kernel converts any pair of dtypes through a `Scalar`, one enum per
//! element; these convert directly (`half`'s conversions, which use the CPU's F16C instructions
//! for `f16` where it has them), with the same results: `f32` to `f64` is exact, so rounding
//! from either is the one rounding to the 16-bit type.

use switchyard::half::{bf16, f16};
use switchyard::ops::to_dtype;
use switchyard::{DType, Result, Tensor, kernel};

use crate::cpu::naive::{as_dtype, map_into};

const OP: &str = "to_dtype";

/// `f32` ↔ `bf16`/`f16` directly, any layout; other pairs as the naive kernel converts them.
#[kernel(op = to_dtype, key = CpuSimd, dtypes = "mixed")]
fn to_dtype_half(x: &Tensor, dtype: DType) -> Result<Tensor> {
    convert(x, dtype)
}

/// `x` in `dtype` (itself when it has it), the 16-bit float conversions taken directly.
pub(crate) fn convert(x: &Tensor, dtype: DType) -> Result<Tensor> {
    match (x.dtype(), dtype) {
        (DType::F32, DType::BF16) => map_into::<f32, bf16>(OP, x, bf16::from_f32),
        (DType::F32, DType::F16) => map_into::<f32, f16>(OP, x, f16::from_f32),
        (DType::BF16, DType::F32) => map_into::<bf16, f32>(OP, x, bf16::to_f32),
        (DType::F16, DType::F32) => map_into::<f16, f32>(OP, x, f16::to_f32),
        _ => as_dtype(x, dtype),
    }
}
