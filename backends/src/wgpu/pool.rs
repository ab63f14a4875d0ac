//! A caching allocator for GPU buffers (PyTorch's CUDA caching allocator, in small).
//!
//! Creating a `wgpu::Buffer` asks the driver for memory; a loop of ops that created one output
//! per call would spend its time there. Instead a buffer whose tensor is dropped goes back to
//! the pool, filed under its *size class*, and the next request of that class takes it.
//!
//! Size classes: at least [`MIN_CLASS`] bytes, and four classes per power of two (5/8, 6/8, 7/8
//! and 8/8 of it, in steps of at least `MIN_CLASS`), so a buffer wastes less than a quarter of
//! the request, or less than `MIN_CLASS` bytes for small ones.
//!
//! **Invariant:** a buffer is reused only through the pool's one command stream. Every use of a
//! pooled buffer is recorded in order on the context's queue (see `context.rs`), so a buffer handed
//! out again is written only after every earlier use of it, even if those uses have not run yet.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The smallest buffer the pool hands out, in bytes.
pub const MIN_CLASS: u64 = 256;

/// Idle buffers beyond this many bytes are freed instead of kept.
const IDLE_LIMIT: u64 = 1 << 30;

/// What a buffer is for; buffers of different kinds have different usages and never mix.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Kind {
    /// Tensor data: read and written by shaders, copied to and from.
    Storage,
    /// Staging for reads back to the host: copied into, then mapped.
    Readback,
}

impl Kind {
    fn usage(self) -> wgpu::BufferUsages {
        match self {
            Kind::Storage => {
                wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST
            }
            Kind::Readback => wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        }
    }
}

/// The size class of a request for `bytes`: the size of the buffer that serves it.
pub fn size_class(bytes: u64) -> u64 {
    let bytes = bytes.max(MIN_CLASS);
    let step = (bytes.next_power_of_two() / 8).max(MIN_CLASS);
    bytes.div_ceil(step) * step
}

/// Counters of the buffer pool, for tests and benchmarks.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct PoolStats {
    /// Buffers created since the context was made.
    pub created: u64,
    /// Requests served by an idle buffer instead of a new one.
    pub reused: u64,
    /// Buffers idle in the pool now.
    pub idle_buffers: u64,
    /// Bytes idle in the pool now.
    pub idle_bytes: u64,
}

#[derive(Default)]
struct Idle {
    buffers: HashMap<(Kind, u64), Vec<wgpu::Buffer>>,
    bytes: u64,
    count: u64,
}

/// Idle buffers by (kind, size class), and counters.
#[derive(Default)]
pub(crate) struct Pool {
    idle: Mutex<Idle>,
    created: AtomicU64,
    reused: AtomicU64,
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("stats", &self.stats())
            .finish()
    }
}

impl Pool {
    /// A buffer of `kind` with room for `bytes`: an idle one of the same class, or a new one.
    pub(crate) fn acquire(&self, device: &wgpu::Device, kind: Kind, bytes: u64) -> wgpu::Buffer {
        let class = size_class(bytes);
        if let Some(buffer) = self.take_idle(kind, class) {
            self.reused.fetch_add(1, Ordering::Relaxed);
            return buffer;
        }
        self.created.fetch_add(1, Ordering::Relaxed);
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(match kind {
                Kind::Storage => "switchyard tensor",
                Kind::Readback => "switchyard readback",
            }),
            size: class,
            usage: kind.usage(),
            mapped_at_creation: false,
        })
    }

    fn take_idle(&self, kind: Kind, class: u64) -> Option<wgpu::Buffer> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let buffer = idle.buffers.get_mut(&(kind, class))?.pop()?;
        idle.bytes -= class;
        idle.count -= 1;
        Some(buffer)
    }

    /// Files `buffer` (created by [`Pool::acquire`] for `kind`) for reuse, or frees it when the
    /// pool already holds [`IDLE_LIMIT`] idle bytes.
    pub(crate) fn release(&self, kind: Kind, buffer: wgpu::Buffer) {
        let class = buffer.size();
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.bytes + class > IDLE_LIMIT {
            return; // dropped: wgpu frees it once the GPU is done with it
        }
        idle.bytes += class;
        idle.count += 1;
        idle.buffers.entry((kind, class)).or_default().push(buffer);
    }

    /// Frees every idle buffer.
    pub(crate) fn clear(&self) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        *idle = Idle::default();
    }

    pub(crate) fn stats(&self) -> PoolStats {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        PoolStats {
            created: self.created.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
            idle_buffers: idle.count,
            idle_bytes: idle.bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_waste_less_than_a_quarter_or_min_class() {
        assert_eq!(size_class(0), MIN_CLASS);
        assert_eq!(size_class(4), MIN_CLASS);
        assert_eq!(size_class(256), 256);
        assert_eq!(size_class(257), 512);
        assert_eq!(size_class(4096), 4096);
        assert_eq!(size_class(4097), 5120);
        assert_eq!(size_class(6000), 6144);
        assert_eq!(size_class(64 << 20), 64 << 20);
        for bytes in (1..200_000)
            .step_by(97)
            .chain([1 << 24, (1 << 24) + 4, 3 << 22])
        {
            let class = size_class(bytes);
            assert!(class >= bytes, "{bytes} -> {class}");
            assert!(
                class - bytes < (bytes / 4).max(MIN_CLASS),
                "{bytes} -> {class}"
            );
            assert_eq!(size_class(class), class, "a class is its own class");
        }
    }
}
