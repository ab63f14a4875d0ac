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

/// Idle buffers beyond this many bytes are freed instead of kept, unless
/// `switchyard::set_cache_limit(Device::Wgpu, …)` said otherwise.
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
pub(crate) struct Pool {
    idle: Mutex<Idle>,
    created: AtomicU64,
    reused: AtomicU64,
    /// Bytes of the buffers handed out and not yet returned (held by tensors or reads).
    in_use: AtomicU64,
    /// The most `in_use` has been.
    peak: AtomicU64,
    /// Idle bytes kept at most.
    limit: AtomicU64,
}

impl Default for Pool {
    fn default() -> Pool {
        Pool {
            idle: Mutex::default(),
            created: AtomicU64::new(0),
            reused: AtomicU64::new(0),
            in_use: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            limit: AtomicU64::new(IDLE_LIMIT),
        }
    }
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
        let in_use = self.in_use.fetch_add(class, Ordering::Relaxed) + class;
        self.peak.fetch_max(in_use, Ordering::Relaxed);
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
    /// pool already holds its limit of idle bytes ([`IDLE_LIMIT`] unless set).
    pub(crate) fn release(&self, kind: Kind, buffer: wgpu::Buffer) {
        let class = buffer.size();
        self.in_use.fetch_sub(class, Ordering::Relaxed);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.bytes + class > self.limit.load(Ordering::Relaxed) {
            return; // dropped: wgpu frees it once the GPU is done with it
        }
        idle.bytes += class;
        idle.count += 1;
        idle.buffers.entry((kind, class)).or_default().push(buffer);
    }

    /// Frees `buffer` (created by [`Pool::acquire`]) instead of filing it for reuse: for a
    /// buffer that may still be mapped, which no later copy could write.
    pub(crate) fn discard(&self, buffer: &wgpu::Buffer) {
        self.in_use.fetch_sub(buffer.size(), Ordering::Relaxed);
        buffer.destroy();
    }

    /// Frees every idle buffer.
    pub(crate) fn clear(&self) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        *idle = Idle::default();
    }

    /// Keeps at most `bytes` idle from now on, freeing idle buffers (largest classes first)
    /// until the pool is within it.
    pub(crate) fn set_limit(&self, bytes: u64) {
        self.limit.store(bytes, Ordering::Relaxed);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let mut classes: Vec<(Kind, u64)> = idle.buffers.keys().copied().collect();
        classes.sort_unstable_by_key(|&(_, class)| std::cmp::Reverse(class));
        for key in classes {
            while idle.bytes > bytes {
                let Some(buffer) = idle.buffers.get_mut(&key).and_then(Vec::pop) else {
                    break;
                };
                idle.bytes -= buffer.size();
                idle.count -= 1;
            }
        }
    }

    /// What the pool holds, as `switchyard::memory_stats(Device::Wgpu)` reports it.
    pub(crate) fn memory_stats(&self) -> switchyard::MemoryStats {
        let stats = self.stats();
        let bytes = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        switchyard::MemoryStats {
            allocated: bytes(self.in_use.load(Ordering::Relaxed)),
            cached: bytes(stats.idle_bytes),
            peak: bytes(self.peak.load(Ordering::Relaxed)),
            allocations: stats.created + stats.reused,
            system_allocations: stats.created,
        }
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
