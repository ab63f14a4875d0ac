//! [`WgpuStorage`]: a tensor's values in a GPU buffer.

use std::fmt;

use switchyard::{BackendStorage, DType, DispatchError};

use super::context::{Binding, PooledBuffer};

/// The data of a tensor on [`switchyard::Device::Wgpu`]: `len` `f32`s, row-major, at the start of
/// a GPU buffer from the backend's pool (the buffer may be larger: pool buffers come in size
/// classes). Dropping the last tensor that holds it returns the buffer to the pool.
///
/// Kernels of other crates reach it with `tensor.backend_storage::<WgpuStorage>()`.
pub struct WgpuStorage {
    buffer: PooledBuffer,
    len: usize,
}

impl WgpuStorage {
    pub(crate) fn new(buffer: PooledBuffer, len: usize) -> WgpuStorage {
        WgpuStorage { buffer, len }
    }

    /// The GPU buffer; its first `len() * 4` bytes are the values.
    pub fn buffer(&self) -> &wgpu::Buffer {
        self.buffer.buffer()
    }

    /// The buffer and the bytes of it that hold values, as a kernel binds them.
    pub(crate) fn binding(&self) -> Binding<'_> {
        (self.buffer.buffer(), self.len as u64 * 4)
    }
}

/// The host never writes a storage's buffer: kernels write new output buffers, and `copy_` (the
/// one in-place write) records a GPU dispatch, which is recorded whole or not at all, so a panic
/// caught with `catch_unwind` cannot leave a buffer half-changed. wgpu's handles
/// are not marked unwind-safe only because they hold `Arc<dyn …>` internally; the pool and the
/// context they reach lock their state and recover from poisoning.
impl std::panic::UnwindSafe for WgpuStorage {}
impl std::panic::RefUnwindSafe for WgpuStorage {}

impl fmt::Debug for WgpuStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WgpuStorage")
            .field("len", &self.len)
            .field("buffer_size", &self.buffer.buffer().size())
            .finish()
    }
}

impl BackendStorage for WgpuStorage {
    fn len(&self) -> usize {
        self.len
    }

    /// `f32`: the one dtype the wgpu backend holds today.
    fn dtype(&self) -> DType {
        DType::F32
    }

    /// Submits the recorded work, waits for it, and copies the values back.
    fn read_bytes(&self) -> Result<Vec<u8>, DispatchError> {
        let values =
            self.buffer
                .context()
                .read("Tensor::to_vec", self.buffer.buffer(), self.len)?;
        Ok(bytemuck::cast_slice(&values).to_vec())
    }
}
