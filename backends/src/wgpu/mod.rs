//! The GPU backend, through [wgpu](https://wgpu.rs): kernels for every standard op at
//! [`DispatchKey::Wgpu`](switchyard::DispatchKey::Wgpu), written in WGSL. It runs on Vulkan, Metal
//! and DX12, and on GL (through EGL) where there is no Vulkan driver: on a machine with neither,
//! Mesa's llvmpipe through GL is the adapter.
//!
//! Compiled with the crate feature `wgpu`. Tensors get to the GPU with
//! [`Tensor::to`](switchyard::Tensor::to) and back the same way, or with `to_vec`:
//!
//! ```
//! use switchyard::ops::{mean, mul};
//! use switchyard::{Device, Tensor};
//! use switchyard_backends as _;
//!
//! let x = Tensor::vector(&[1.0, 2.0, 3.0]);
//! match switchyard_backends::wgpu::adapter_info() {
//!     Ok(info) => {
//!         let on_gpu = x.to(Device::Wgpu);
//!         let loss = mean(&mul(&on_gpu, &on_gpu)); // recorded, not waited for
//!         assert_eq!(loss.device(), Device::Wgpu);
//!         assert!((loss.to_vec::<f32>()[0] - 14.0 / 3.0).abs() < 1e-6); // waits here
//!         println!("ran on {}", info.name);
//!     }
//!     // No adapter: every GPU call is an error that says so, never a panic of `try_` forms.
//!     Err(e) => assert!(e.to_string().contains("no wgpu adapter")),
//! }
//! ```
//!
//! # What it serves
//!
//! The GPU holds `f32`, `bool` and `i64` tensors (a `bool` is one 32-bit word, an `i64` two, low
//! first: WGSL has no narrower or wider types); other dtypes are an error that says so, never a
//! silent conversion. The arithmetic ops, `log`, `tanh`, `sigmoid`, `sqrt`, `sum`, `mean`,
//! `matmul` and the reductions along dimensions compute on `f32` (`argmax` returns `i64`);
//! `div_rounded` too, bit for bit the CPU's answer (an `i64` or `bool` operand beside an `f32`
//! one is converted first; two integer operands are refused: the CPU's zero-divisor error would
//! need the divisor's values, a wait); the comparisons take two `f32`, two `bool` or two `i64` tensors and return `bool`; `where` selects
//! among values of the held dtypes; `to_dtype` converts `f32` → `bool`/`i64`, `bool` → `f32`/`i64`
//! and `i64` → `bool`; `arange` makes `f32` and `i64`, `rand` and `randn` `f32` (element `i` from
//! the same Philox4x32-10 counter as on the CPU: `rand` bit for bit, `randn` within a few ulp).
//! Every kernel but `to`, `to_dtype` and `copy_` declares the dtypes it serves, so dumps and the
//! table of docs/ops.md show them.
//!
//! Any layout is served: views (`transpose`, `narrow`, `slice`, `select`, `permute`, `expand`,
//! …) share the GPU buffer, and every op reads them in place.
//! Binary elementwise ops broadcast with NumPy's rules. Operands that are contiguous from the
//! start of their buffer take the plain shaders; other layouts take strided twins that follow
//! each operand's offset and strides (stride 0 where it is broadcast), up to 8 dimensions after
//! merging the ones that are contiguous together (beyond that, an error). `matmul` reads strided
//! operands directly, so `x · wᵀ` costs no copy; `sum`, `mean`, the reductions along dimensions,
//! `contiguous` and `to(Device::Cpu)` gather a strided view into a new buffer on the GPU first.
//! Results are contiguous.
//!
//! # Context and memory
//!
//! One context per process (instance, adapter, device, queue, pipelines, buffer pool), made at
//! the first GPU call; `WGPU_BACKEND` and `WGPU_POWER_PREF` pick the adapter as in wgpu. Output
//! buffers come from a pool of size classes, so a loop of ops reuses buffers instead of
//! allocating one per call ([`pool_stats`], [`empty_cache`]).
//!
//! # Sync model
//!
//! No wait after an op: dispatches are recorded into a batch, which is submitted (without
//! waiting) every 32 dispatches and before an upload, and waited for only when the host reads
//! values; [`synchronize`] waits explicitly, [`recorded_dispatches`] tells what is not yet
//! submitted. Errors the device reports asynchronously come back from the next wait.
//!
//! # In a browser (WebGPU)
//!
//! Compiled for `wasm32`, the backend runs on the browser's WebGPU. A page cannot block, so:
//! await [`init`] before the first GPU op (nothing else makes the context there); read values
//! with [`Tensor::try_to_vec_async`](switchyard::Tensor::try_to_vec_async) or
//! [`try_item_async`](switchyard::Tensor::try_item_async) (`to_vec`, `item`, `to(Device::Cpu)`
//! and [`synchronize`] are errors that say so); a kernel's compile error is reported at the next
//! read instead of at its launch. The async reads work natively too, ready at once.
//!
//! # Writing a GPU kernel
//!
//! Any crate can give its own op, or a standard one, a GPU kernel through the API the standard
//! ops' kernels use here. A [`Kernel`] is a `static` naming an entry point of a WGSL module; its
//! pipeline is compiled at the first launch and kept in that static, so it is compiled once per
//! process and never confused with another crate's. [`elementwise`] launches it with one
//! invocation per element of a new output, over inputs in any layout; [`launch`],
//! [`Gpu::alloc`] and [`Gpu::dispatch`] are the steps it takes, for kernels of any other shape
//! (several passes, an output written in place, a grid of one's own).
//!
//! A kernel binds, in group 0, its input arrays (`read` storage, bindings `0..inputs`), its output
//! (`read_write` storage, binding `inputs`) and the [`Params`] uniform (binding `inputs + 1`).
//! Its WGSL starts with [`PRELUDE`], which declares `Params`, `WORKGROUP`, `index(…)` (the
//! invocation's element) and `offsets(i)` (where element `i` lies in each input, through its
//! offset and strides). On the GPU an `f32` tensor is an `array<f32>`, a `bool` an `array<u32>`
//! of 0 and 1, an `i64` an `array<vec2<u32>>`, low word first ([`words_per`]).
//!
//! Every failure is a [`DispatchError`] naming the op, never a panic: no adapter, a dtype the GPU
//! does not hold, sizes past its 32-bit indices, a layout of more than [`MAX_RANK`] dimensions
//! that do not merge, bindings that do not match the kernel, WGSL that does not compile (wgpu's
//! message, at the first launch and every later one). A launch records its dispatch and returns;
//! the result is read like any GPU tensor.
//!
//! ```
//! use switchyard::{DType, Device, Result, Tensor, kernel, op};
//! use switchyard_backends::wgpu::{self, Kernel, PRELUDE, Params};
//!
//! /// `x · factor + offset`, elementwise.
//! #[op(name = "doc::affine")]
//! pub fn affine(x: &Tensor, factor: f32, offset: f32) -> Tensor;
//!
//! const AFFINE_WGSL: &str = r#"
//! @group(0) @binding(0) var<storage, read> x: array<f32>;
//! @group(0) @binding(1) var<storage, read_write> out: array<f32>;
//! @group(0) @binding(2) var<uniform> params: Params;
//!
//! @compute @workgroup_size(WORKGROUP)
//! fn affine(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
//!           @builtin(local_invocation_index) local: u32) {
//!     let i = index(wg, groups, local);
//!     if i < params.n {
//!         out[i] = x[offsets(i).x] * params.scalar + bitcast<f32>(params.m);
//!     }
//! }
//! "#;
//!
//! static AFFINE: Kernel = Kernel::new(&[PRELUDE, AFFINE_WGSL], "affine", 1);
//!
//! #[kernel(op = "affine", key = Wgpu, dtypes = "f32")]
//! fn affine_wgpu(x: &Tensor, factor: f32, offset: f32) -> Result<Tensor> {
//!     let params = Params { scalar: factor, m: offset.to_bits(), ..Params::default() };
//!     wgpu::elementwise("doc::affine", &AFFINE, &[x], x.shape(), DType::F32, params)
//! }
//!
//! fn main() {
//!     let x = Tensor::from_vec::<f32>(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
//!     match wgpu::adapter_info() {
//!         Ok(_) => {
//!             // A transposed view of a GPU tensor, read in place.
//!             let y = affine(&x.to(Device::Wgpu).t(), 2.0, 0.5);
//!             assert_eq!(y.device(), Device::Wgpu);
//!             assert_eq!(y.to_vec::<f32>(), [2.5, 8.5, 4.5, 10.5, 6.5, 12.5]);
//!         }
//!         Err(_) => {
//!             let error = affine_wgpu(&x, 2.0, 0.5).unwrap_err();
//!             assert!(error.to_string().contains("doc::affine"), "{error}");
//!             assert!(error.to_string().contains("no wgpu adapter"), "{error}");
//!         }
//!     }
//! }
//! ```
//!
//! Work of one's own on [`Gpu::device`] and [`Gpu::queue`] is possible too; the [`wgpu`]
//! re-export names their types at the backend's own wgpu version, and [`Gpu::queue`] says how
//! such work is ordered with the backend's.

mod context;
mod gpu;
mod kernels;
mod kernels_nn;
mod launch;
mod layout;
mod pipeline;
mod pool;
mod shaders;
mod storage;

use switchyard::DispatchError;

/// The wgpu crate this backend is built on, so that a kernel using [`Gpu::device`] or
/// [`WgpuStorage::buffer`] names its types without depending on a matching wgpu version.
pub use ::wgpu;

pub use gpu::Gpu;
pub use launch::{MAX_GROUPS, Plan, WORKGROUP, elementwise, grid, launch};
pub use layout::{MAX_OPERANDS, MAX_RANK, Operand, Params, param};
pub use pipeline::{Kernel, MAX_INPUTS, PRELUDE};
pub use pool::PoolStats;
pub use storage::{WgpuStorage, words_per};

/// The adapter the backend uses (creating the context if needed), or the error every GPU call
/// returns when there is none: `no wgpu adapter: <wgpu's reason>`. On the web, an error until
/// [`init`] has finished.
pub fn adapter_info() -> Result<&'static wgpu::AdapterInfo, DispatchError> {
    Ok(context::context("wgpu::adapter_info")?.info())
}

/// Creates the backend's context without blocking and returns its adapter, or the error every
/// GPU call returns when there is none. On the web, await it before the first GPU op: a page
/// cannot block while the browser finds an adapter, so nothing else creates the context there.
/// Natively it is optional (the first GPU call creates the context) and ready when first polled.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # pollster::block_on(async {
/// use switchyard::ops::{mean, mul};
/// use switchyard::{Device, Tensor};
///
/// if switchyard_backends::wgpu::init().await.is_ok() {
///     let x = Tensor::vector(&[1.0, 2.0, 3.0]).try_to(Device::Wgpu)?;
///     let loss = mean(&mul(&x, &x));
///     // On the web, the way to read a GPU tensor: `to_vec` there is an error that says so.
///     let value = loss.try_item_async().await?.as_f64();
///     assert!((value - 14.0 / 3.0).abs() < 1e-6);
/// }
/// # Ok(())
/// # })
/// # }
/// ```
pub async fn init() -> Result<&'static wgpu::AdapterInfo, DispatchError> {
    Ok(context::init("wgpu::init").await?.info())
}

/// Submits all recorded GPU work and waits for it to finish; returns errors the device reported
/// since the last wait. Reading a tensor's values does this by itself; benchmarks and tests that
/// time GPU work call it. On the web, where a page cannot wait, it submits and returns an error
/// that says so.
pub fn synchronize() -> Result<(), DispatchError> {
    context::context("wgpu::synchronize")?.synchronize("wgpu::synchronize")
}

/// The buffer pool's counters, or `None` if the backend has no context (no GPU call yet, or no
/// adapter).
pub fn pool_stats() -> Option<PoolStats> {
    context::existing().map(context::Context::pool_stats)
}

/// Dispatches recorded but not yet submitted to the GPU (0 with no context); see the
/// [sync model](self#sync-model).
pub fn recorded_dispatches() -> u64 {
    context::existing().map_or(0, context::Context::recorded)
}

/// Frees the pool's idle buffers (buffers held by live tensors stay). The same as
/// `switchyard::empty_cache(Device::Wgpu)`.
pub fn empty_cache() {
    if let Some(gpu) = context::existing() {
        gpu.pool.clear();
    }
}

/// The buffer pool behind the tensor crate's allocator trait: `switchyard::memory_stats`,
/// `empty_cache` and `set_cache_limit` of `Device::Wgpu` reach it once the context exists (the
/// first GPU call registers it; before that they report no allocator).
pub(crate) struct GpuAllocator;

impl switchyard::DeviceAllocator for GpuAllocator {
    fn memory_stats(&self) -> switchyard::MemoryStats {
        context::existing().map_or_else(Default::default, |gpu| gpu.pool.memory_stats())
    }

    fn empty_cache(&self) {
        empty_cache();
    }

    fn set_cache_limit(&self, bytes: usize) {
        if let Some(gpu) = context::existing() {
            gpu.pool.set_limit(u64::try_from(bytes).unwrap_or(u64::MAX));
        }
    }
}
