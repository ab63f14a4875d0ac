//! switchyard's tensor, built on the `switchyard-dispatch` engine: [`Tensor`], a strided view of
//! a shared [`Storage`] with a [`DType`] and a [`Device`]; the CPU's caching allocator and the
//! allocator registry ([`memory_stats`], [`empty_cache`]); and the standard ops ([`ops`]), whose
//! kernels live in `switchyard-backends`.
//!
//! Users name the `switchyard` crate, which re-exports this one and the engine. Nothing here is
//! special to the engine: the tensor boxes through [`switchyard::boxable_tensor!`], names its
//! devices with [`switchyard::name_device!`] and declares dtypes through the engine's [`DType`],
//! the doors any tensor library uses.

#![deny(unsafe_code)]
#![warn(missing_docs)]

// The engine under the name its macros' generated code uses (`::switchyard::__private_v1`).
extern crate switchyard_dispatch as switchyard;

/// The 16-bit float types of the `f16` and `bf16` dtypes.
pub use half;

mod access;
mod arg;
pub mod autograd;
mod device;
mod element;
mod grad_ops;
mod inplace;
mod join;
mod methods;
mod nn_composites;
mod nn_ops;
mod operators;
pub mod ops;
pub mod optim;
mod print;
pub mod random;
mod ranges;
mod reduce_with;
pub mod rules;
mod shape;
#[allow(unsafe_code)]
// host memory, its borrow guards, headers built in place: the crate's only `unsafe`
mod storage;
mod tensor;
mod view;

pub use access::{CpuSlice, HostView, HostViewMut};
pub use device::Device;
pub use element::{Element, Scalar};
pub use shape::{Offsets, broadcast_shapes, wrap_dim, wrap_dims, wrap_index, wrap_new_dim};
pub use storage::allocator::{
    DeviceAllocator, MemoryStats, cache_limit, empty_cache, memory_stats, register_allocator,
    reset_peak, set_cache_limit,
};
pub use storage::host::HostVec;
pub use storage::{BackendStorage, ReadGuard, Storage, WriteGuard, host_buffer};
pub use switchyard::{DType, DTypeSet};
pub use tensor::Tensor;
