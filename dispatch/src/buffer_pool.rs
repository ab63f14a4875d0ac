//! Reuse of large CPU tensor buffers, PyTorch's caching-allocator idea on the CPU.
//!
//! A fresh buffer of tens of megabytes comes from the kernel as untouched pages, and every page
//! faults on first write: at 16M elements that costs more than the op itself. So when a CPU
//! tensor's last handle drops, a large buffer is kept here (a few, up to a byte budget), and
//! kernels that produce a large output take one back with [`cpu_buffer`].

use std::sync::{Mutex, PoisonError};

/// Buffers smaller than this (1 MiB) are left to the allocator, which serves them well.
const MIN_POOLED_FLOATS: usize = 1 << 18;
/// At most this many bytes are kept idle.
const MAX_POOLED_BYTES: usize = 256 << 20;

static POOL: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());

/// An empty buffer with room for at least `len` floats: a large buffer that a dropped CPU tensor
/// left, when one of a fitting size is idle (at most twice `len`), else a new one. For kernels:
/// fill it and pass it to [`Tensor::from_vec`](crate::Tensor::from_vec).
pub fn cpu_buffer(len: usize) -> Vec<f32> {
    if len >= MIN_POOLED_FLOATS {
        let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        let fits = |b: &Vec<f32>| b.capacity() >= len && b.capacity() / 2 < len;
        if let Some(at) = pool.iter().position(fits) {
            let mut buffer = pool.swap_remove(at);
            buffer.clear();
            return buffer;
        }
    }
    Vec::with_capacity(len)
}

/// Keeps a large buffer of a dropped tensor for reuse, within the byte budget.
pub(crate) fn recycle(buffer: Vec<f32>) {
    if buffer.capacity() < MIN_POOLED_FLOATS {
        return;
    }
    let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    let idle: usize = pool.iter().map(|b| b.capacity() * 4).sum();
    if idle + buffer.capacity() * 4 <= MAX_POOLED_BYTES {
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
        let reused = cpu_buffer(len);
        assert_eq!(reused.as_ptr(), address);
        assert!(reused.is_empty() && reused.capacity() >= len);
        // A request far smaller than every idle buffer gets a fresh one.
        let small = cpu_buffer(16);
        assert!(small.capacity() >= 16 && small.capacity() < MIN_POOLED_FLOATS);
    }
}
