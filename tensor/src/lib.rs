//! switchyard's tensor, built on the `switchyard-dispatch` engine: [`Tensor`], a strided view of
//! a shared [`Storage`] with a [`DType`] and a [`Device`]; the CPU's caching allocator and the
//! allocator registry ([`memory_stats`], [`empty_cache`]); and the standard ops ([`ops`]), whose
//! kernels live in `switchyard-backends`.
//!
//! Users name the `switchyard` crate, which re-exports this one and the engine. Nothing here is
//! special to the engine: the tensor boxes through [`switchyard::boxable_tensor!`], names its
//! devices with [`switchyard::name_device!`] and declares dtypes through the engine's [`DType`],
//! the doors any tensor library uses.
//!
//! # Where the standard ops depart from PyTorch
//!
//! The ops follow PyTorch's answers (shapes, dtypes, special values) unless this table says
//! otherwise; each row is deliberate.
//!
//! | What | Here | PyTorch | Why |
//! |---|---|---|---|
//! | `sum`, `mean` of floats on the CPU | the naive backend sums in `f64` and rounds once (`mean` of `f32` `[3e38, 3e38]` is `3e38`); the SIMD one adds its `f32` lane blocks in `f64` | accumulated in the dtype (or `f32` for halves): `inf` there | the exact answer where a wider sum costs little (the GPU sums in `f32`) |
//! | float → integer `to_dtype` | truncates and saturates, NaN is 0 (Rust's `as`) | undefined in C++; on x86 out-of-range values become the type's minimum | one defined answer on every backend |
//! | `matmul` on the naive backend | each dot product in `f64`, rounded once; infinite where an `f32` accumulation overflows | in the dtype, in BLAS's order | the oracle: the exact sum, and IEEE's overflow |
//! | a float number beside `f16`/`bf16` (`&h + 0.1`) | the number rounded to the tensor's dtype, then the op | the number kept in `f32` for the op | one 0-d operand path for numbers and tensors |
//! | operators with a number (`&x * 2`) | `f64` and `i64` numbers only (`ops::mul_scalar` takes every [`operand::Number`]) | any Python number | a literal needs one impl per kind to infer its type |
//! | numbers in op calls | `ops::add_scalar(&x, 2.0)`, not `ops::add(&x, 2.0)` | `torch.add(x, 2.0)` | an op has one signature (ATen's `add.Scalar` is a separate overload too) |
//! | `add_alpha`, `sub_alpha` | `alpha · y` rounded, then the sum | one fused multiply-add on the CPU | made of `mul` and `add`, on every backend that serves them |
//! | `relu_backward`'s body on a device without its kernel | `le` and `where`: `out` gets no gradient (none, not zeros) | zeros | the body is made of standard ops; the values of `grad`'s gradient are the same |

#![deny(unsafe_code)]
#![warn(missing_docs)]

// The engine under the name its macros' generated code uses (`::switchyard::__private_v1`).
extern crate switchyard_dispatch as switchyard;

/// The 16-bit float types of the `f16` and `bf16` dtypes.
pub use half;

mod access;
mod arg;
pub mod autocast;
pub mod autograd;
mod cross_entropy;
pub mod deferred;
mod device;
mod div_rounded;
mod element;
pub mod fake;
mod grad_ops;
mod inplace;
mod join;
mod matmul_batch;
mod methods;
mod nn_composites;
mod nn_ops;
pub mod operand;
mod operators;
pub mod ops;
pub mod optim;
mod print;
pub mod random;
mod ranges;
mod read_async;
mod reduce_with;
pub mod rules;
mod shape;
// Host memory, its borrow guards, headers built in place, tensors written in place: the
// crate's only `unsafe`.
#[allow(unsafe_code)]
mod storage;
mod tensor;
mod user_dtype;
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
pub use storage::uninit::UninitTensor;
pub use storage::{BackendStorage, ReadBytes, ReadGuard, Storage, WriteGuard, host_buffer};
pub use switchyard::{DType, DTypeSet};
pub use tensor::Tensor;
