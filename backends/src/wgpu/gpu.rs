//! [`Gpu`]: what a kernel reaches the process's GPU context through (the standard ops' kernels
//! and any other crate's alike): buffers from the pool, and dispatches recorded in the context's
//! one ordered stream.

use switchyard::{DType, DispatchError, Result};

use super::context::{Context, context};
use super::layout::Params;
use super::pipeline::{Kernel, MAX_INPUTS};
use super::storage::WgpuStorage;

/// The process's GPU context: its device and queue, the buffer pool and the batch of recorded
/// work (see the [sync model](super#sync-model)). Made at the first GPU call, by whichever call
/// comes first; [`Gpu::get`] is cheap after that.
#[derive(Clone, Copy, Debug)]
pub struct Gpu {
    context: &'static Context,
}

impl Gpu {
    /// The context, created if needed; or, naming `op`, the error every GPU call gets without
    /// an adapter: `no wgpu adapter: <wgpu's reason>`.
    pub fn get(op: &'static str) -> Result<Gpu> {
        Ok(Gpu {
            context: context(op)?,
        })
    }

    /// The wgpu device, to make buffers, textures or pipelines of your own. Its uncaptured-error
    /// handler is the backend's (such errors come back from the next wait): leave it in place.
    pub fn device(self) -> &'static wgpu::Device {
        self.context.device()
    }

    /// The wgpu queue. The backend submits its batches on it at times of its own choosing, so work
    /// you submit yourself is ordered after what the backend has already submitted, not after
    /// what it has recorded: call [`synchronize`](super::synchronize) first if your work reads a
    /// tensor, and never write through the queue into a tensor's buffer (its pool may have handed
    /// that buffer to a tensor that recorded work still reads).
    pub fn queue(self) -> &'static wgpu::Queue {
        self.context.queue()
    }

    /// The adapter in use.
    pub fn info(self) -> &'static wgpu::AdapterInfo {
        self.context.info()
    }

    /// The device's limits (the adapter's best, as requested).
    pub fn limits(self) -> &'static wgpu::Limits {
        self.context.limits()
    }

    /// A buffer for `len` elements of `dtype` from the pool, for a kernel to write (its values
    /// are unspecified until a dispatch does); an error naming `op` when the backend does not
    /// hold `dtype` ([`words_per`](super::words_per)) or the adapter cannot bind that many bytes.
    pub fn alloc(self, op: &'static str, dtype: DType, len: usize) -> Result<WgpuStorage> {
        let buffer = self.context.alloc(op, len, dtype)?;
        Ok(WgpuStorage::new(buffer, len, dtype))
    }

    /// A new buffer holding `len` elements of `dtype` whose GPU bytes are `bytes` (the layout of
    /// [`words_per`](super::words_per): `len · 4 · words_per(dtype)` bytes), written after all
    /// work recorded so far; errors as [`Gpu::alloc`], or naming `op` when `bytes` has another
    /// length.
    pub fn upload(
        self,
        op: &'static str,
        dtype: DType,
        len: usize,
        bytes: &[u8],
    ) -> Result<WgpuStorage> {
        let buffer = self.context.upload(op, dtype, len, bytes)?;
        Ok(WgpuStorage::new(buffer, len, dtype))
    }

    /// Records one dispatch of `kernel` on a grid of `groups` workgroups (see
    /// [`grid`](super::grid)), binding `bindings` (the kernel's inputs, then its output, which it
    /// may write anywhere in) and `params`. Returns at once: the GPU runs it in order with every
    /// other recorded dispatch, and a read of the output waits for it.
    ///
    /// An error naming `op` and the kernel, with nothing recorded, when `bindings` has not one
    /// tensor per input plus the output, the output is also an input's buffer, the grid or the
    /// bindings exceed the adapter's limits, or the kernel's WGSL or pipeline does not compile
    /// (wgpu's message says where).
    pub fn dispatch(
        self,
        op: &'static str,
        kernel: &'static Kernel,
        bindings: &[&WgpuStorage],
        params: &Params,
        groups: [u32; 2],
    ) -> Result<()> {
        // The buffers bound, on the stack: a kernel binds at most `MAX_INPUTS + 1` arrays (the
        // filler, the parameter buffer, is never bound: only the first `bindings.len()` are).
        let mut buffers = [(self.context.params_buffer(), 0); MAX_INPUTS + 1];
        let Some(used) = buffers.get_mut(..bindings.len()) else {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "wgpu kernel `{}` binds {} input(s) and an output, but {} tensors were given",
                    kernel.entry_point(),
                    kernel.inputs(),
                    bindings.len()
                ),
            ));
        };
        for (slot, storage) in used.iter_mut().zip(bindings) {
            *slot = storage.binding();
        }
        self.context.dispatch(op, kernel, used, params, groups)
    }
}
