//! CPU backends.

// The 16-bit conversions at `CpuSimd` (and the SIMD backend's 16-bit `matmul`, which uses them):
// x86_64 and aarch64 only; on wasm32, with or without `simd128`, the naive kernels serve them.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod half;
pub mod naive;
pub mod naive_div;
pub mod naive_nn;
pub mod simd;
pub mod threads;
