//! CPU backends.

pub mod naive;
pub mod simd;
