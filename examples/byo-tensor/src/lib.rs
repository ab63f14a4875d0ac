//! A tensor library that brings its own tensor to switchyard's engine: [`NdTensor`], an
//! `ndarray::ArrayD<f32>` behind an `Arc`, on two devices of its own (a host and a pretend
//! accelerator), with a dtype the engine does not know ([`COMPLEX64`]), its own ops, kernels on
//! both devices and per dtype, and a logging mode.
//!
//! It depends on `switchyard-dispatch` alone (under the name `switchyard`), not on switchyard's
//! tensor, standard ops or backends. The README next to this crate's `Cargo.toml` is the guide
//! for a library author; this crate is its code.
//!
//! ```
//! use switchyard_example_byo_tensor::{Device, NdTensor, add, sum, take_kernel_log, to_device};
//!
//! let x = NdTensor::vector(&[1.0, 2.0], Device::Host);
//! let on_accel = to_device(&x, Device::Accel);
//! let y = sum(&add(&on_accel, &on_accel)); // the accelerator's kernels
//! assert_eq!((y.to_vec(), y.device()), (vec![6.0], Device::Accel));
//! assert_eq!(
//!     take_kernel_log(),
//!     ["byo::to_device@accel", "byo::add@accel", "byo::sum@accel"]
//! );
//!
//! let error = switchyard_example_byo_tensor::try_add(&x, &on_accel).unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "op `byo::add`: arguments are on different devices (accel and host); move them to one device first"
//! );
//! ```

#![warn(missing_docs)]

mod kernels;
mod logging;
mod ops;
mod tensor;

pub use kernels::take_kernel_log;
pub use logging::{LOGGING, logged};
pub use ops::*;
pub use tensor::{ACCEL, COMPLEX64, Device, HOST, NdTensor, Shared};
