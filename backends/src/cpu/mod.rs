//! CPU backends.

mod half;
pub mod naive;
pub mod naive_div;
pub mod naive_nn;
pub mod simd;
pub mod threads;
