//! [`WgpuStorage`]: a tensor's values in a GPU buffer, and how each dtype the backend holds lies
//! in one.

use std::fmt;

use switchyard::{BackendStorage, DType, Device, DispatchError, ReadBytes, Tensor};

use super::context::{Binding, PooledBuffer};

/// The 32-bit words one element of `dtype` takes in a GPU buffer, or `None` for a dtype the
/// backend does not hold. WGSL has no 8- or 64-bit types, so:
///
/// - `f32`: one word, the value's bits;
/// - `bool`: one word, 0 or 1 (a byte per element would need atomics to write);
/// - `i64`: two words, the low one first: exactly the value's little-endian bytes, so a read-back
///   is a plain copy. Shaders compare and convert them word by word.
///
/// Every other dtype (`f64`, `f16`, `bf16`, `i32`, `u8`) is an error naming it, never a silent
/// conversion. (A dtype is held when it has a layout in words; one the engine does not know yet
/// would be held the same way, as its element size in words.)
pub fn words_per(dtype: DType) -> Option<usize> {
    match dtype {
        DType::F32 | DType::Bool => Some(1),
        DType::I64 => Some(2),
        _ => None,
    }
}

/// The dtypes the backend holds, as its errors list them.
pub(crate) const HELD: &str = "f32, bool and i64";

/// The data of a tensor on [`switchyard::Device::Wgpu`]: `len` elements of `dtype` (`f32`, `bool`
/// or `i64`, laid out as [`WgpuStorage::buffer`] says), row-major, at the start of a GPU buffer
/// from the backend's pool (the buffer may be larger: pool buffers come in size classes). Dropping
/// the last tensor that holds it returns the buffer to the pool.
///
/// Kernels reach an input's storage with [`WgpuStorage::of`], get a new one from
/// [`Gpu::alloc`](super::Gpu::alloc) and make it a tensor with [`WgpuStorage::into_tensor`].
pub struct WgpuStorage {
    buffer: PooledBuffer,
    len: usize,
    dtype: DType,
}

impl WgpuStorage {
    /// `len` elements of `dtype` at the start of `buffer`; `dtype` is one the backend holds (its
    /// kernels check that before they allocate).
    pub(crate) fn new(buffer: PooledBuffer, len: usize, dtype: DType) -> WgpuStorage {
        debug_assert!(words_per(dtype).is_some(), "no GPU layout for {dtype}");
        WgpuStorage { buffer, len, dtype }
    }

    /// The GPU storage of `x`, or an error naming `op` if `x` is on another device (a call
    /// reaches a `Wgpu` kernel only if an argument is on the GPU, and mixed devices are an error
    /// before that, so this fails only for a kernel called by hand).
    pub fn of<'t>(op: &'static str, x: &'t Tensor) -> Result<&'t WgpuStorage, DispatchError> {
        x.backend_storage::<WgpuStorage>().ok_or_else(|| {
            DispatchError::kernel(
                op,
                format!(
                    "the wgpu backend got a tensor on {}; its kernels read GPU tensors \
                     (`to(Device::Wgpu)`)",
                    x.device()
                ),
            )
        })
    }

    /// A contiguous GPU tensor of `shape` over these values; an error if `shape` does not have
    /// exactly [`len`](BackendStorage::len) elements.
    pub fn into_tensor(self, shape: &[usize]) -> Result<Tensor, DispatchError> {
        Tensor::from_backend(self, shape, Device::Wgpu)
    }

    /// The GPU buffer. Its first bytes are the values: `f32` as their bits, `bool` as one 32-bit
    /// word each (0 or 1), `i64` as their little-endian bytes (two 32-bit words, low first).
    pub fn buffer(&self) -> &wgpu::Buffer {
        self.buffer.buffer()
    }

    /// Bytes of the buffer that hold values. `len` is a tensor's checked element count of at
    /// most 8-byte elements and GPU elements take at most 8 bytes, so the product fits.
    pub(crate) fn bytes(&self) -> u64 {
        self.len as u64 * 4 * words_per(self.dtype).unwrap_or(1) as u64
    }

    /// The buffer and the bytes of it that hold values, as a kernel binds them.
    pub(crate) fn binding(&self) -> Binding<'_> {
        (self.buffer.buffer(), self.bytes())
    }

    /// The buffer's `words`, read back, as the host holds the values: `f32` and `i64` as they
    /// are (already little-endian), `bool` one byte per word.
    fn host_bytes(&self, op: &'static str, words: Vec<u8>) -> Result<Vec<u8>, DispatchError> {
        if self.dtype != DType::Bool {
            return Ok(words);
        }
        let mut bools = Vec::new();
        bools
            .try_reserve_exact(self.len)
            .map_err(|_| DispatchError::out_of_memory(op, self.len))?;
        bools.extend(
            words
                .chunks_exact(4)
                .map(|word| u8::from(word != [0, 0, 0, 0])),
        );
        Ok(bools)
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
            .field("dtype", &self.dtype)
            .field("buffer_size", &self.buffer.buffer().size())
            .finish()
    }
}

impl BackendStorage for WgpuStorage {
    fn len(&self) -> usize {
        self.len
    }

    fn dtype(&self) -> DType {
        self.dtype
    }

    /// Submits the recorded work, waits for it, and copies the values back: `f32` and `i64` as
    /// the buffer holds them (already little-endian), `bool` one byte per word. On the web, an
    /// error pointing to the async read.
    fn read_bytes(&self) -> Result<Vec<u8>, DispatchError> {
        const OP: &str = "Tensor::to_vec";
        let words = self
            .buffer
            .context()
            .read(OP, self.buffer.buffer(), self.bytes())?;
        self.host_bytes(OP, words)
    }

    /// Natively a read waits for the GPU; on the web it cannot (see `read_bytes`).
    fn reads_synchronously(&self) -> bool {
        cfg!(not(target_arch = "wasm32"))
    }

    /// `read_bytes` without blocking: how a web page reads WebGPU memory.
    fn read_bytes_async(&self) -> ReadBytes<'_> {
        const OP: &str = "Tensor::to_vec_async";
        Box::pin(async move {
            let context = self.buffer.context();
            let words = context
                .read_async(OP, self.buffer.buffer(), self.bytes())
                .await?;
            self.host_bytes(OP, words)
        })
    }
}
