//! Conversions between `f32` and the 16-bit floats on the CPU SIMD backend: what autocast runs
//! at every cast. The naive kernel converts any pair of dtypes through a `Scalar`, one enum per
//! element; these convert directly (`half`'s conversions, which use the CPU's F16C instructions
//! for `f16` where it has them), with the same results: `f32` to `f64` is exact, so rounding
//! from either is the one rounding to the 16-bit type.

use switchyard::half::slice::HalfFloatSliceExt;
use switchyard::half::{bf16, f16};
use switchyard::ops::to_dtype;
use switchyard::{DType, Element, Result, Tensor, host_buffer, kernel};

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
        (DType::F32, DType::BF16) => narrow(x, bf16::from_f32, |to, from| {
            to.convert_from_f32_slice(from)
        }),
        (DType::F32, DType::F16) => {
            narrow(x, f16::from_f32, |to, from| to.convert_from_f32_slice(from))
        }
        (DType::BF16, DType::F32) => {
            widen(x, bf16::to_f32, |from, to| from.convert_to_f32_slice(to))
        }
        (DType::F16, DType::F32) => widen(x, f16::to_f32, |from, to| from.convert_to_f32_slice(to)),
        _ => as_dtype(x, dtype),
    }
}

/// Elements converted per slice call: a buffer on the stack.
const CHUNK: usize = 512;

/// `f32` to a 16-bit float: a contiguous `x` a chunk at a time through `slices` (vectorised),
/// any other layout an element at a time through `one`.
fn narrow<H: Element>(
    x: &Tensor,
    one: fn(f32) -> H,
    slices: fn(&mut [H], &[f32]),
) -> Result<Tensor> {
    let view = x.host::<f32>(OP)?;
    let Some(from) = view.contiguous() else {
        drop(view);
        return map_into::<f32, H>(OP, x, one);
    };
    let mut out = host_buffer::<H>(OP, from.len())?;
    let mut chunk = [H::ZERO; CHUNK];
    for part in from.chunks(CHUNK) {
        let to = &mut chunk[..part.len()];
        slices(to, part);
        out.extend_from_slice(to);
    }
    Tensor::from_host(out, x.shape())
}

/// A 16-bit float to `f32`, as [`narrow`] does the other way.
fn widen<H: Element>(
    x: &Tensor,
    one: fn(H) -> f32,
    slices: fn(&[H], &mut [f32]),
) -> Result<Tensor> {
    let view = x.host::<H>(OP)?;
    let Some(from) = view.contiguous() else {
        drop(view);
        return map_into::<H, f32>(OP, x, one);
    };
    let mut out = host_buffer::<f32>(OP, from.len())?;
    let mut chunk = [0.0f32; CHUNK];
    for part in from.chunks(CHUNK) {
        let to = &mut chunk[..part.len()];
        slices(part, to);
        out.extend_from_slice(to);
    }
    Tensor::from_host(out, x.shape())
}
