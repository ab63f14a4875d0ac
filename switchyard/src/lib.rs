//! PyTorch-style operator dispatch for Rust.
//!
//! Ops are declared once, as typed functions; kernels for them are registered from any crate, one
//! per dispatch key; a call picks the kernel from the arguments' devices and the thread's modes,
//! with one indexed load.
//!
//! ```
//! use switchyard::ops::{mean, mul};
//! use switchyard::{DispatchKey, Tensor, kernel, op};
//! use switchyard_backends as _; // links the CPU kernels of the standard ops
//!
//! /// A new op, declared once. Calling it is a plain function call.
//! #[op(name = "doc::axpy")]
//! pub fn axpy(a: f32, x: &Tensor, y: &Tensor) -> Tensor;
//!
//! /// Its CPU kernel. A kernel whose signature differs from the op's does not compile.
//! #[kernel(op = "axpy", key = CpuNaive)]
//! fn axpy_cpu(a: f32, x: &Tensor, y: &Tensor) -> switchyard::Result<Tensor> {
//!     let (xs, ys) = (x.as_slice::<f32>().unwrap(), y.as_slice::<f32>().unwrap());
//!     if x.shape() != y.shape() {
//!         return Err(switchyard::DispatchError::shape("doc::axpy", "shapes differ"));
//!     }
//!     Tensor::from_vec::<f32>(xs.iter().zip(ys.iter()).map(|(x, y)| a * x + y).collect(), x.shape())
//! }
//!
//! fn main() {
//!     let x = Tensor::vector(&[1.0, 2.0, 3.0]);
//!     let y = Tensor::vector(&[4.0, 5.0, 6.0]);
//!     assert_eq!(axpy(2.0, &x, &y).to_vec::<f32>(), [6.0, 9.0, 12.0]);
//!     assert_eq!(mean(&mul(&x, &y)).to_vec::<f32>(), [32.0 / 3.0]);
//!
//!     // Every op has a fallible form; bad input is an error, not a panic.
//!     let err = switchyard::ops::try_add(&x, &Tensor::vector(&[1.0, 2.0])).unwrap_err();
//!     assert!(err.to_string().contains("op `add`: shape error"));
//!
//!     // Thread-local guards change what runs: this scope uses the naive CPU backend only.
//!     let _naive = switchyard::exclude(DispatchKey::CpuSimd);
//!     assert_eq!(mul(&x, &y).to_vec::<f32>(), [4.0, 10.0, 18.0]);
//! }
//! ```
//!
//! A kernel with the wrong signature is a compile error on the kernel's own signature:
//!
//! ```compile_fail,E0308
//! use switchyard::{Tensor, kernel};
//!
//! #[kernel(op = "switchyard::ops::mul", key = CpuNaive)]
//! fn mul_wrong(x: &Tensor, y: f32) -> Tensor {
//!     x.clone()
//! }
//! # fn main() {}
//! ```
//!
//! # Linking kernel crates
//!
//! Kernels are `linkme` statics. A binary must *name* each crate that provides kernels, or the
//! linker drops it: `use switchyard_backends as _;` once, anywhere in the binary. When it is
//! missing, the missing-kernel error and [`dump()`] say so.
//!
//! # Crates
//!
//! This crate is what users name; it re-exports two:
//! - `switchyard-dispatch`, the engine: keys, `#[op]`/`#[kernel]`/`#[fallback]`, tables, guards,
//!   boxing, runtime registration, `trace`/`profile`, introspection. It knows no tensor type, so a
//!   tensor library with its own tensor can depend on it alone;
//! - `switchyard-tensor`: [`Tensor`], [`Device`], [`DType`], the CPU buffer pool and the standard
//!   [`ops`](mod@ops), built on the engine through the same doors a user's tensor uses.

// docs.rs builds with `--cfg docsrs` (see `[package.metadata.docs.rs]`): items marked with their feature.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub use switchyard_dispatch::*;
pub use switchyard_tensor::*;

/// The README's examples, compiled and run as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
