//! CPU backends.

pub mod naive;
