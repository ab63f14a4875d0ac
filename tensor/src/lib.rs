//! switchyard's tensor, built on the `switchyard-dispatch` engine: [`Tensor`] (an `f32`
//! n-dimensional array, one shared pointer), its [`Device`]s and their storage, the CPU buffer
//! pool, and the standard ops ([`ops`]), whose kernels live in `switchyard-backends`.
//!
//! Users name the `switchyard` crate, which re-exports this one and the engine. Nothing here is
//! special to the engine: the tensor boxes through [`switchyard::boxable_tensor!`] and names its
//! devices with [`switchyard::name_device!`], the doors any tensor library uses.

#![deny(unsafe_code)]
#![warn(missing_docs)]

// The engine under the name its macros' generated code uses (`::switchyard::__private_v1`).
extern crate switchyard_dispatch as switchyard;

mod arg;
mod buffer_pool;
mod device;
pub mod ops;
mod tensor;

pub use buffer_pool::cpu_buffer;
pub use device::{DType, Device};
pub use tensor::{BackendStorage, Tensor};
