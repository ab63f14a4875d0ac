//! `matmul` of `bf16` and `f16` on the CPU SIMD backend, what autocast's low precision runs on:
//! both operands widened to `f32`, the `f32` product (the same engines and threads as an `f32`
//! `matmul`, accumulating in `f32`), each result rounded once to the operands' dtype. On CPUs
//! without `bf16`/`f16` arithmetic this is the way to use their `f32` FMA units; the widened
//! copies cost memory traffic, which is why a `bf16` product is not faster than an `f32` one here.

use switchyard::ops::matmul;
use switchyard::{DType, DTypeSet, DispatchKeySet, Result, Tensor, kernel, rules};

use crate::cpu::half::convert;

/// The keys of an `f32` call on a CPU tensor: the op's table sends them to the `f32` variant
/// the CPU policy installed at `CpuSimd` (or below it, to the naive kernel).
const F32_ON_CPU: DispatchKeySet = DispatchKeySet::CPU.with_dtypes(DTypeSet::of(&[DType::F32]));

#[kernel(op = matmul, key = CpuSimd, dtypes = "bf16,f16")]
fn matmul_half(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    if x.dim() != 2 || y.dim() != 2 {
        return rules::matmul_batched(x, y, matmul_half);
    }
    let dtype = rules::matmul(x.dtype(), y.dtype())?;
    rules::matmul_dims(x, y, dtype)?;
    let (x, y) = (convert(x, DType::F32)?, convert(y, DType::F32)?);
    // The `f32` product through the op's own table: the same kernel, threads and bits as an
    // `f32` `matmul` on this CPU.
    convert(&matmul::redispatch(F32_ON_CPU, &x, &y)?, dtype)
}
