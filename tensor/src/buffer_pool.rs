//! Reuse of large CPU tensor buffers, PyTorch's caching-allocator idea on the CPU.
//!
//! A fresh buffer of tens of megabytes comes from the kernel as untouched pages, and every page
//! faults on first write: at 16M elements that costs more than the op itself. So when a CPU
//! tensor's last handle drops, a large buffer is kept here (a few, up to a byte budget), and
//! kernels that produce a large output take one back with [`cpu_buffer`].

use std::sync::{Mutex, PoisonError};

use switchyard::DispatchError;

/// Buffers smaller than this (1 MiB) are left to the allocator, which serves them well.
const MIN_POOLED_FLOATS: usize = 1 << 18;
/// At most this many bytes are kept idle.
const MAX_POOLED_BYTES: usize = 256 << 20;

static POOL: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());

/// An empty buffer with room for at least `len` floats: a large buffer that a dropped CPU tensor
/// left, when one of a fitting size is idle (at most twice `len`), else a new one. For kernels:
/// fill it (up to `len`, so that it never reallocates) and pass it to
/// [`Tensor::from_vec`](crate::Tensor::from_vec).
///
/// The allocation is fallible: when the allocator refuses it (or `len` floats exceed the largest
/// possible allocation), the error names `op` and the bytes asked for, and nothing aborts.
pub fn cpu_buffer(op: &'static str, len: usize) -> Result<Vec<f32>, DispatchError> {
    if len >= MIN_POOLED_FLOATS {
        let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        let fits = |b: &Vec<f32>| b.capacity() >= len && b.capacity() / 2 < len;
        if let Some(at) = pool.iter().position(fits) {
            let mut buffer = pool.swap_remove(at);
            buffer.clear();
            return Ok(buffer);
        }
    }
    let mut buffer = Vec::new();
    match buffer.try_reserve_exact(len) {
        Ok(()) => Ok(buffer),
        Err(_) => Err(match len.checked_mul(size_of::<f32>()) {
            Some(bytes) => DispatchError::out_of_memory(op, bytes),
            None => DispatchError::size_overflow(
                op,
                &[&[len]],
                "the byte size of the buffer exceeds usize::MAX",
            ),
        }),
    }
}

/// Keeps a large buffer of a dropped tensor for reuse, within the byte budget.
pub(crate) fn recycle(buffer: Vec<f32>) {
    if buffer.capacity() < MIN_POOLED_FLOATS {
        return;
    }
    let bytes = |b: &Vec<f32>| b.capacity() * size_of::<f32>();
    let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    let idle: usize = pool.iter().map(bytes).sum();
    // This runs as a tensor drops: where the pool's own list cannot grow, the buffer is freed
    // instead, never an allocation failure's abort.
    if idle + bytes(&buffer) <= MAX_POOLED_BYTES && pool.try_reserve(1).is_ok() {
        pool.push(buffer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_large_buffer_is_reused_and_small_ones_are_not_kept() {
        let len = MIN_POOLED_FLOATS * 3;
        let data = vec![1.0; len];
        let address = data.as_ptr();
        drop(crate::Tensor::from_vec(data, &[len]).unwrap());
        // No other unit test of this crate makes a buffer this large, so the pooled one is ours.
        let reused = cpu_buffer("test", len).unwrap();
        assert_eq!(reused.as_ptr(), address);
        assert!(reused.is_empty() && reused.capacity() >= len);
        // A request far smaller than every idle buffer gets a fresh one.
        let small = cpu_buffer("test", 16).unwrap();
        assert!(small.capacity() >= 16 && small.capacity() < MIN_POOLED_FLOATS);
    }

    #[test]
    fn a_buffer_beyond_memory_is_an_error_not_an_abort() {
        // 2⁴⁸ bytes: more than a 64-bit process can map, whatever the overcommit policy.
        let error = cpu_buffer("test", 1 << 46).unwrap_err();
        assert_eq!(
            error.to_string(),
            "op `test`: out of memory: the allocator refused 281474976710656 bytes (256 TiB) \
             for the result"
        );
        // Bytes beyond `isize::MAX`: the same error (`try_reserve` reports a capacity overflow).
        let error = cpu_buffer("test", usize::MAX / 4).unwrap_err();
        assert!(
            matches!(error.kind(), switchyard::ErrorKind::OutOfMemory { bytes, .. } if *bytes == usize::MAX / 4 * 4),
            "{error}"
        );
        // Bytes beyond `usize::MAX`.
        let error = cpu_buffer("test", usize::MAX).unwrap_err();
        assert!(
            matches!(error.kind(), switchyard::ErrorKind::SizeOverflow { .. }),
            "{error}"
        );
    }
}
