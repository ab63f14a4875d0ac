//! Kernels for switchyard's standard ops.
//!
//! | backend | key | status |
//! |---|---|---|
//! | CPU naive (the reference every other backend is tested against) | `CpuNaive` | here |
//! | CPU SIMD: AVX2+FMA, AVX-512F, NEON variants, the best the CPU runs; wasm32 `simd128` where the module is built with it (see [`cpu::simd`]) | `CpuSimd` | here |
//! | GPU through wgpu | `Wgpu` | module `wgpu`, with the crate feature `wgpu` |
//!
//! [`testing`] is the backend conformance kit: every standard op on a device, against the naive
//! backend, with stated tolerances (for this crate's backends and for a downstream crate's own).
//!
//! Kernels register themselves through linkme; a binary only needs to *name* this crate once so
//! the linker keeps it:
//!
//! ```
//! use switchyard_backends as _;
//!
//! let x = switchyard::Tensor::vector(&[1.0, -2.0]);
//! assert_eq!(switchyard::ops::relu(&x).to_vec::<f32>(), [1.0, 0.0]);
//! ```

// `deny`, not `forbid`: registering kernels emits linkme statics that carry `allow(unsafe_code)`.
// docs.rs builds with `--cfg docsrs` (see `[package.metadata.docs.rs]`): items marked with their feature.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod cpu;
pub mod meta;
pub mod testing;

pub use cpu::threads::{num_threads, reset_num_threads, set_num_threads};

#[cfg(feature = "wgpu")]
pub mod wgpu;
