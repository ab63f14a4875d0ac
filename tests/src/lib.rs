//! Hosts the integration tests (`tests/`) and the compile-fail suite (`tests/ui/`).

pub mod simd_check;
