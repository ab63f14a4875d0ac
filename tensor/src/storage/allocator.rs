//! Allocators per device, and the CPU's caching allocator.
//!
//! A freed CPU block is kept in a size bucket and handed to the next request of that bucket, as
//! PyTorch's caching allocators do: no page faults for a large output whose size was seen before,
//! no `malloc` for a small one. The shared cache holds at most [`cache_limit`] bytes (256 MiB
//! unless set); besides, each thread keeps a few idle blocks of up to 64 KiB for itself (at most
//! about 512 KiB, `thread_blocks.rs`), taken and given back without a lock. [`empty_cache`]
//! returns every idle block to the system (another thread's own when it next allocates or frees
//! one), and [`memory_stats`] reports what each device holds. Other devices register theirs with
//! [`register_allocator`] (the wgpu backend's buffer pool does).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};

use switchyard::DispatchError;

use crate::device::Device;
use crate::storage::host::{HOST_ALIGN, HostBlock};
use crate::storage::thread_blocks::{self, Ledger};

/// What a device's allocator holds, in bytes, and how often it was asked.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct MemoryStats {
    /// Bytes held by live tensors (rounded to the allocator's block sizes).
    pub allocated: usize,
    /// Bytes kept idle for reuse.
    pub cached: usize,
    /// The most `allocated` has been since the process started (on the CPU: or since
    /// [`reset_peak`] ran; a device's own allocator keeps its own peak).
    pub peak: usize,
    /// Blocks handed out, from the cache or fresh.
    pub allocations: u64,
    /// Of those, how many came fresh from the system (the rest reused a cached block).
    pub system_allocations: u64,
}

/// A device's memory, as [`memory_stats`] and [`empty_cache`] see it: what a backend registers
/// with [`register_allocator`].
pub trait DeviceAllocator: Send + Sync {
    /// What the device holds now.
    fn memory_stats(&self) -> MemoryStats;
    /// Returns every idle cached block to the system.
    fn empty_cache(&self);
    /// Sets the most memory kept idle; blocks above it are freed now.
    fn set_cache_limit(&self, bytes: usize);
}

static REGISTERED: RwLock<Vec<(Device, &'static dyn DeviceAllocator)>> = RwLock::new(Vec::new());

/// Makes `allocator` the one [`memory_stats`] and [`empty_cache`] consult for `device` (a later
/// registration for the same device replaces it). The CPU's is built in.
pub fn register_allocator(device: Device, allocator: &'static dyn DeviceAllocator) {
    let mut registered = REGISTERED.write().unwrap_or_else(PoisonError::into_inner);
    registered.retain(|(d, _)| *d != device);
    registered.push((device, allocator));
}

fn allocator_of(device: Device) -> Option<&'static dyn DeviceAllocator> {
    if device == Device::Cpu {
        return Some(&CPU);
    }
    let registered = REGISTERED.read().unwrap_or_else(PoisonError::into_inner);
    registered
        .iter()
        .find(|(d, _)| *d == device)
        .map(|(_, a)| *a)
}

/// What `device`'s allocator holds; `None` when no allocator is registered for it (a backend
/// that is not linked, or not started: the wgpu backend registers when its context starts).
pub fn memory_stats(device: Device) -> Option<MemoryStats> {
    allocator_of(device).map(|a| a.memory_stats())
}

/// Frees every idle block `device`'s allocator caches; returns whether one is registered. On the
/// CPU it also frees the tensor headers the calling thread keeps for reuse; the idle blocks
/// another thread keeps for itself (up to about 512 KiB) are freed when it next allocates or
/// frees a block.
pub fn empty_cache(device: Device) -> bool {
    allocator_of(device).map(|a| a.empty_cache()).is_some()
}

/// Sets the most idle memory `device`'s allocator keeps; returns whether one is registered. On
/// the CPU the limit is the shared cache's; a thread keeps its own few small blocks besides
/// (about 512 KiB at most) only while the limit is at least that much.
pub fn set_cache_limit(device: Device, bytes: usize) -> bool {
    allocator_of(device)
        .map(|a| a.set_cache_limit(bytes))
        .is_some()
}

/// The CPU cache's limit in bytes.
pub fn cache_limit() -> usize {
    CPU.limit.load(Ordering::Relaxed)
}

/// Restarts the CPU's `peak` at what is allocated now.
pub fn reset_peak() {
    CPU.peak.store(CPU.allocated(), Ordering::Relaxed);
}

/// Requests up to this size round up to a power of two; larger ones to a multiple of an eighth
/// of their next power of two (at most a quarter more).
const SMALL: usize = 1 << 20;

/// The block size a request of `bytes` gets: its bucket.
pub(crate) fn bucket(bytes: usize) -> Option<usize> {
    let bytes = bytes.max(HOST_ALIGN);
    if bytes <= SMALL {
        return Some(bytes.next_power_of_two());
    }
    let step = bytes.checked_next_power_of_two()? / 8;
    bytes.checked_next_multiple_of(step)
}

/// One list of idle blocks per bucket size: `k` eighths of `2^e` (`k` in 5..=8; a power of two
/// is `k = 8`) is list `e·8 + k − 1`. A fixed array, so that taking a block back never allocates
/// a map node (only, fallibly, room in its list).
const BUCKETS: usize = 64 * 8;

/// The list of a bucket size (a value [`bucket`] returned: at least 64, at most `2^63`).
fn list_of(size: usize) -> usize {
    let e = size.next_power_of_two().trailing_zeros() as usize;
    let k = size >> (e - 3);
    e * 8 + k - 1
}

/// The shared cache: its idle blocks and what it has handed out.
struct CpuState {
    idle: [Vec<HostBlock>; BUCKETS],
    /// Bytes in `idle`.
    cached: usize,
    /// Blocks handed out from `idle` or fresh (a thread's own takings are in its ledger).
    allocations: u64,
    system_allocations: u64,
}

impl CpuState {
    /// Lists `block` as idle. Its list grows fallibly: a block that cannot be listed is freed,
    /// never an abort while a tensor drops or a thread ends.
    fn list_idle(&mut self, block: HostBlock) {
        let bytes = block.bytes();
        let list = &mut self.idle[list_of(bytes)];
        if list.try_reserve(1).is_ok() {
            list.push(block);
            self.cached += bytes;
        }
    }
}

/// The CPU's caching allocator. `out` and `peak` are atomics outside the lock, so that a
/// thread's own blocks (`thread_blocks`) are counted without taking it.
struct CpuAllocator {
    state: Mutex<CpuState>,
    limit: AtomicUsize,
    /// Bytes of the blocks out of the shared cache: in live tensors, or idle in a thread's own
    /// (`thread_blocks`, whose ledgers count those). A block moving between a thread and its
    /// own list does not change it, so the fast path has no atomic add.
    out: AtomicUsize,
    peak: AtomicUsize,
}

static CPU: CpuAllocator = CpuAllocator {
    state: Mutex::new(CpuState {
        idle: [const { Vec::new() }; BUCKETS],
        cached: 0,
        allocations: 0,
        system_allocations: 0,
    }),
    limit: AtomicUsize::new(256 << 20),
    out: AtomicUsize::new(0),
    peak: AtomicUsize::new(0),
};

impl CpuAllocator {
    fn lock(&self) -> std::sync::MutexGuard<'_, CpuState> {
        // The state is counters and lists, consistent after every statement: a panic elsewhere
        // while it was held leaves nothing half-done.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Frees idle blocks, largest first, until at most `limit` bytes stay cached.
    fn trim(state: &mut CpuState, limit: usize) {
        if state.cached <= limit {
            return;
        }
        for list in (0..BUCKETS).rev() {
            while state.cached > limit {
                let Some(block) = state.idle[list].pop() else {
                    break;
                };
                state.cached -= block.bytes();
            }
        }
    }

    /// Bytes held by live tensors: the blocks out of the shared cache less those idle in
    /// threads' own lists. Exact when no thread is taking or giving back a block meanwhile.
    fn allocated(&self) -> usize {
        allocated_of(self.out.load(Ordering::Relaxed))
    }

    /// Moves the peak to what is allocated now if that passed it; `out` is the count of blocks
    /// out of the shared cache the caller just read or made, `own_idle` its thread's idle
    /// bytes. `out − own_idle` bounds the allocated bytes from above (other threads' idle
    /// blocks are in `out` too): below the peak, nothing more to do, with no sum and no
    /// read-modify-write.
    #[inline]
    fn note_peak(&self, out: usize, own_idle: usize) {
        if out.saturating_sub(own_idle) > self.peak.load(Ordering::Relaxed) {
            self.raise_peak(out);
        }
    }

    /// The exact check behind `note_peak`: the ledgers summed.
    #[cold]
    #[inline(never)]
    fn raise_peak(&self, out: usize) {
        let now = allocated_of(out);
        if now > self.peak.load(Ordering::Relaxed) {
            self.peak.fetch_max(now, Ordering::Relaxed);
        }
    }
}

/// `out` (bytes of blocks out of the shared cache) less the bytes idle in threads' own lists.
fn allocated_of(out: usize) -> usize {
    let idle: usize = thread_blocks::ledgers()
        .iter()
        .map(|ledger| ledger.cached.load(Ordering::Relaxed))
        .sum();
    out.saturating_sub(idle)
}

/// Counts `bytes` more out of the shared cache; returns the new count.
#[inline]
fn count_out_of_cache(bytes: usize) -> usize {
    CPU.out.fetch_add(bytes, Ordering::Relaxed) + bytes
}

/// Counts `bytes` back in the shared cache or freed: a block that left a tensor and a thread's
/// own list.
#[inline]
pub(crate) fn count_freed(bytes: usize) {
    // Saturating: every pooled block was counted when it left the shared cache, so this never
    // reaches below 0; if it did, a wrong count is better than a wrapped one.
    let _ = CPU
        .out
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |a| {
            Some(a.saturating_sub(bytes))
        });
}

impl DeviceAllocator for CpuAllocator {
    fn memory_stats(&self) -> MemoryStats {
        // Under the lock, as a thread's end moves its ledger's counts into the state.
        let state = self.lock();
        // One read of each ledger: its idle bytes are `cached`, and not `allocated`.
        let (mut idle, mut allocations) = (0, state.allocations);
        for ledger in thread_blocks::ledgers() {
            idle += ledger.cached.load(Ordering::Relaxed);
            allocations += ledger.allocations.load(Ordering::Relaxed);
        }
        let allocated = self.out.load(Ordering::Relaxed).saturating_sub(idle);
        MemoryStats {
            allocated,
            cached: state.cached + idle,
            // A block just counted in may not have moved the peak yet: `allocated` was reached.
            peak: self.peak.load(Ordering::Relaxed).max(allocated),
            allocations,
            system_allocations: state.system_allocations,
        }
    }

    fn empty_cache(&self) {
        let idle = {
            let mut state = self.lock();
            state.cached = 0;
            std::mem::replace(&mut state.idle, [const { Vec::new() }; BUCKETS])
        };
        super::header::free_cached();
        thread_blocks::flush_all();
        // Freed outside the lock.
        drop(idle);
    }

    fn set_cache_limit(&self, bytes: usize) {
        self.limit.store(bytes, Ordering::Relaxed);
        thread_blocks::flush_all();
        CpuAllocator::trim(&mut self.lock(), bytes);
    }
}

/// A host block of at least `bytes` bytes for a tensor: a cached one of its bucket, or a fresh
/// one. Errors (never aborts) when the size overflows or the system refuses.
pub(crate) fn cpu_allocate(op: &'static str, bytes: usize) -> Result<HostBlock, DispatchError> {
    let size = bucket(bytes).ok_or_else(|| {
        DispatchError::size_overflow(op, &[&[bytes]], "the byte size exceeds usize::MAX")
    })?;
    let taken = thread_blocks::take(size);
    let (block, out) = match taken.block {
        // Out of the shared cache already: only the thread's idle bytes changed.
        Some(block) => (block, CPU.out.load(Ordering::Relaxed)),
        None => {
            let block = shared_allocate(op, size)?;
            (block, count_out_of_cache(size))
        }
    };
    CPU.note_peak(out, taken.still_cached);
    Ok(block)
}

/// A block of bucket size `size` from the shared cache, or fresh.
fn shared_allocate(op: &'static str, size: usize) -> Result<HostBlock, DispatchError> {
    let cached = {
        let mut state = CPU.lock();
        state.allocations += 1;
        let block = state.idle[list_of(size)].pop();
        if let Some(block) = &block {
            state.cached -= block.bytes();
        } else {
            state.system_allocations += 1;
        }
        block
    };
    match cached {
        Some(block) => Ok(block),
        None => HostBlock::allocate(op, size),
    }
}

/// Takes back a block a tensor no longer uses: cached within the limit, else freed. An adopted
/// block (a `Vec`'s buffer, see `HostBlock::from_vec`) was never counted here: it is freed.
pub(crate) fn cpu_release(block: HostBlock) {
    if !block.is_pooled() {
        return;
    }
    let limit = CPU.limit.load(Ordering::Relaxed);
    let Some(block) = thread_blocks::keep(block, limit) else {
        return;
    };
    count_freed(block.bytes());
    if block.bytes() > limit {
        drop(block);
        return;
    }
    let mut state = CPU.lock();
    state.list_idle(block);
    CpuAllocator::trim(&mut state, limit);
}

/// A thread that ends: its idle blocks join the shared cache (within the limit), its takings
/// the shared count, and its ledger goes back, all at once for `memory_stats`.
pub(crate) fn adopt_thread_blocks(ledger: &Ledger, blocks: impl Iterator<Item = HostBlock>) {
    let mut state = CPU.lock();
    state.allocations += ledger.allocations.load(Ordering::Relaxed);
    count_freed(ledger.cached.load(Ordering::Relaxed));
    ledger.release();
    for block in blocks {
        state.list_idle(block);
    }
    CpuAllocator::trim(&mut state, CPU.limit.load(Ordering::Relaxed));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_round_up_within_an_eighth() {
        assert_eq!(bucket(1), Some(64));
        assert_eq!(bucket(65), Some(128));
        assert_eq!(bucket(SMALL), Some(SMALL));
        assert_eq!(bucket(SMALL + 1), Some(SMALL + SMALL / 4));
        assert_eq!(bucket(64 << 20), Some(64 << 20));
        assert_eq!(bucket(usize::MAX), None);
        // Every bucket size has its own list, in order of size.
        let sizes = [64, 128, SMALL, SMALL + SMALL / 4, 3 << 20, 1 << 30, 1 << 63];
        let lists: Vec<usize> = sizes.iter().map(|&s| list_of(bucket(s).unwrap())).collect();
        assert!(lists.windows(2).all(|w| w[0] < w[1]), "{lists:?}");
        assert_eq!(lists.last(), Some(&(BUCKETS - 1)));
        for bytes in [SMALL + 1, 3 << 20, (5 << 20) + 7, 1 << 30] {
            let b = bucket(bytes).unwrap();
            assert!(b >= bytes && b - bytes <= bytes / 4, "{bytes} -> {b}");
        }
    }
}
