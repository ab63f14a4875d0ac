//! `matmul` of `bf16` and `f16` on the CPU SIMD backend, what autocast's low precision runs on:
//! both operands widened to `f32`, the `f32` product (the same engines and threads as an `f32`
//! `matmul`, accumulating in `f32`), each result rounded once to the operands' dtype. On CPUs
//! without `bf16`/`f16` arithmetic this is the way to use their `f32` FMA units; the widened
//! copies cost memory traffic, which is why a `bf16` product is not faster than an `f32` one here.

use switchyard::ops::matmul;
use switchyard::{DType, Result, Tensor, kernel, rules};

use super::matmul::{Engine, gemm};
use crate::cpu::half::convert;

#[kernel(op = matmul, key = CpuSimd, dtypes = "bf16,f16")]
fn matmul_half(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    if x.dim() != 2 || y.dim() != 2 {
        return rules::matmul_batched(x, y, matmul_half);
    }
    let dtype = rules::matmul(x.dtype(), y.dtype())?;
    rules::matmul_dims(x, y, dtype)?;
    let (x, y) = (convert(x, DType::F32)?, convert(y, DType::F32)?);
    convert(&gemm(&x, &y, engine())?, dtype)
}

/// The engine an `f32` product starts from: the tiles of the best instruction set the CPU policy
/// allows, as an `f32` `matmul`'s variant is chosen (`SWITCHYARD_CPU_CAPABILITY` lowers it too;
/// `gemm` falls back to `matrixmultiply` where the tiles do not suit the product). Both tiles
/// give the same bits.
#[cfg(target_arch = "x86_64")]
fn engine() -> Engine {
    use switchyard::cpu::{CpuFeatures, CpuPolicy};
    const AVX2: CpuFeatures = CpuFeatures::AVX2.union(CpuFeatures::FMA);
    match CpuPolicy::current().choose(&[AVX2, CpuFeatures::AVX512F]) {
        Some(1) => Engine::Avx512Tiles,
        Some(_) => Engine::Avx2Tiles,
        None => Engine::MatrixMultiply,
    }
}
#[cfg(not(target_arch = "x86_64"))]
fn engine() -> Engine {
    Engine::MatrixMultiply
}
