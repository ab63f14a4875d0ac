//! CPU backends.

// Beside the SIMD kernels, where those are compiled (on wasm the naive kernels serve alone).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod half;
pub mod naive;
pub mod naive_div;
pub mod naive_nn;
pub mod simd;
pub mod threads;
