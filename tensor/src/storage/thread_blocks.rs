//! Each thread's own few idle small blocks: the CPU caching allocator's fast path.
//!
//! The shared cache is a `Mutex`: taking a block and giving it back cost two locks and two
//! unlocks, four atomic read-modify-writes, about a quarter of a 1024-element `add`. So a thread
//! keeps up to [`PER_SIZE`] idle blocks of each power-of-two size up to [`LARGEST`] bytes for
//! itself (at most [`MOST_BYTES`]), taken and given back with no atomic operation: the blocks
//! short-lived results come and go in.
//!
//! **What the counters see.** A thread's idle blocks count as `cached` and its takings as
//! `allocations` in [`memory_stats`](crate::memory_stats): each thread writes its own
//! [`Ledger`] (plain stores; only its thread writes it) and `memory_stats` adds the ledgers up.
//! The ledgers are a fixed array of [`THREADS`], claimed without allocating; a thread that
//! finds them all held keeps no blocks (it takes the shared path).
//!
//! **`allocated` without an atomic add.** The allocator's process-wide count covers every block
//! out of the shared cache: in a tensor, or idle in a thread's hands. A block moving between a
//! thread and its own list does not change it (one atomic add per block in and one out cost
//! about 10 ns of a 64-element `mul`'s 65: benches/README.md); `allocated` is that count less
//! the ledgers' `cached`. Each taking checks the peak first against that count less the taking
//! thread's own idle bytes (an upper bound, two loads); only when the bound passes the peak does
//! it sum the ledgers (those ever claimed, see [`CLAIMED`]) for the exact figure.
//!
//! **Emptying and limits.** [`empty_cache`](crate::empty_cache) and
//! [`set_cache_limit`](crate::set_cache_limit) free the calling thread's blocks at once and move
//! [`EPOCH`] on; every other thread frees its own when it next takes or gives back a block and
//! sees the epoch moved. A thread keeps blocks only while the limit is at least
//! [`MOST_BYTES`]. When a thread ends, its blocks go to the shared cache; a block given back
//! after that (by another thread-local's destructor) takes the shared path.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use super::host::{HOST_ALIGN, HostBlock};

/// The largest block a thread keeps for itself.
const LARGEST: usize = 64 << 10;

/// The smallest block size: the allocator's smallest bucket.
const SMALLEST: usize = HOST_ALIGN;

/// Block sizes a thread keeps: the powers of two from [`SMALLEST`] to [`LARGEST`].
const SIZES: usize = (LARGEST / SMALLEST).trailing_zeros() as usize + 1;

/// Idle blocks of one size a thread keeps.
const PER_SIZE: usize = 4;

/// The most bytes one thread keeps idle: [`PER_SIZE`] blocks of every size.
const MOST_BYTES: usize = PER_SIZE * (2 * LARGEST - SMALLEST);

/// Moves on whenever every thread must free the blocks it keeps ([`flush_all`]).
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// What a thread's blocks add to the allocator's counters. Written by its thread only (a load
/// and a store, no read-modify-write), and by the allocator under its lock when the thread
/// ends; read by anyone.
pub(crate) struct Ledger {
    /// Held by a thread (claimed with one compare-exchange, the thread's first kept block).
    held: AtomicBool,
    /// Bytes of the blocks the thread keeps idle.
    pub(crate) cached: AtomicUsize,
    /// Blocks the thread took from its own cache.
    pub(crate) allocations: AtomicU64,
}

impl Ledger {
    const fn new() -> Ledger {
        Ledger {
            held: AtomicBool::new(false),
            cached: AtomicUsize::new(0),
            allocations: AtomicU64::new(0),
        }
    }

    /// Lets another thread take this ledger; its counts are the allocator's now.
    pub(crate) fn release(&self) {
        self.cached.store(0, Ordering::Relaxed);
        self.allocations.store(0, Ordering::Relaxed);
        self.held.store(false, Ordering::Release);
    }

    fn add_cached(&self, bytes: usize, more: bool) {
        let now = self.cached.load(Ordering::Relaxed);
        let now = if more { now + bytes } else { now - bytes };
        self.cached.store(now, Ordering::Relaxed);
    }
}

/// Threads that may keep blocks at once; a thread that finds every ledger held keeps none.
const THREADS: usize = 256;

/// One ledger per thread that keeps blocks, fixed in place: a thread claims one without
/// allocating (nothing to fail or abort in a tensor's drop), and hands it back when it ends.
static LEDGERS: [Ledger; THREADS] = [const { Ledger::new() }; THREADS];

/// One past the highest ledger ever claimed: the ledgers past it never counted anything, so
/// the sums over them stop here (threads claim the first free ledger, so these are few).
static CLAIMED: AtomicUsize = AtomicUsize::new(0);

/// Every ledger ever claimed (an unheld one counts nothing).
pub(crate) fn ledgers() -> &'static [Ledger] {
    &LEDGERS[..CLAIMED.load(Ordering::Acquire).min(THREADS)]
}

/// One thread's idle blocks, by size.
struct Local {
    lists: [Vec<HostBlock>; SIZES],
    /// Claimed in [`LEDGERS`] on the first block kept.
    ledger: Option<&'static Ledger>,
    /// The [`EPOCH`] the blocks were kept in.
    epoch: u64,
}

thread_local! {
    static LOCAL: RefCell<Local> = const {
        RefCell::new(Local { lists: [const { Vec::new() }; SIZES], ledger: None, epoch: 0 })
    };
}

/// The list of a block size, when a thread keeps blocks of that size.
fn list_of(bytes: usize) -> Option<usize> {
    (bytes.is_power_of_two() && (SMALLEST..=LARGEST).contains(&bytes))
        .then(|| (bytes / SMALLEST).trailing_zeros() as usize)
}

impl Local {
    /// Frees every block if the epoch moved since they were kept.
    fn follow_epoch(&mut self) {
        let epoch = EPOCH.load(Ordering::Relaxed);
        if epoch != self.epoch {
            self.epoch = epoch;
            self.free_all();
        }
    }

    /// Frees every block (to the system: dropping a block touches no thread-local); they leave
    /// the allocator's count of blocks out of the shared cache.
    fn free_all(&mut self) {
        for list in &mut self.lists {
            for block in list.drain(..) {
                super::allocator::count_freed(block.bytes());
                if let Some(ledger) = &self.ledger {
                    ledger.add_cached(block.bytes(), false);
                }
            }
        }
    }
}

/// What [`take`] found: a block of this thread's own (counted as one allocation) or none, and
/// the bytes the thread still keeps idle after it (for the allocator's peak).
pub(crate) struct Taken {
    pub(crate) block: Option<HostBlock>,
    pub(crate) still_cached: usize,
}

impl Taken {
    /// No block, and none kept: a thread without a list (or ending).
    const NOTHING: Taken = Taken {
        block: None,
        still_cached: 0,
    };
}

/// An idle block of `bytes` (a bucket size) from this thread's own; none when it keeps none of
/// that size (or is ending).
#[inline]
pub(crate) fn take(bytes: usize) -> Taken {
    let list = list_of(bytes);
    LOCAL
        .try_with(|local| {
            let Ok(mut local) = local.try_borrow_mut() else {
                return Taken::NOTHING;
            };
            local.follow_epoch();
            let Local { lists, ledger, .. } = &mut *local;
            // Blocks are kept only once the ledger is registered (`keep`).
            let Some(ledger) = *ledger else {
                return Taken::NOTHING;
            };
            let block = list.and_then(|list| lists[list].pop());
            if let Some(block) = &block {
                ledger.add_cached(block.bytes(), false);
                let taken = ledger.allocations.load(Ordering::Relaxed);
                ledger.allocations.store(taken + 1, Ordering::Relaxed);
            }
            Taken {
                block,
                still_cached: ledger.cached.load(Ordering::Relaxed),
            }
        })
        .unwrap_or(Taken::NOTHING)
}

/// Keeps `block` (pooled, from a tensor that dropped) in this thread's own, when its size is
/// one a thread keeps, its list has room and `limit` allows; else gives it back.
#[inline]
pub(crate) fn keep(block: HostBlock, limit: usize) -> Option<HostBlock> {
    let Some(list) = list_of(block.bytes()).filter(|_| limit >= MOST_BYTES) else {
        return Some(block);
    };
    let mut block = Some(block);
    let _ = LOCAL.try_with(|local| {
        let Ok(mut local) = local.try_borrow_mut() else {
            return;
        };
        local.follow_epoch();
        if local.ledger.is_none() && !register(&mut local) {
            return;
        }
        let list = &mut local.lists[list];
        // Room for `PER_SIZE` is made once (fallibly), so the common case calls nothing.
        if list.len() >= PER_SIZE
            || list.capacity() < PER_SIZE && list.try_reserve_exact(PER_SIZE - list.len()).is_err()
        {
            return;
        }
        if let Some(kept) = block.take() {
            let bytes = kept.bytes();
            list.push(kept);
            if let Some(ledger) = &local.ledger {
                ledger.add_cached(bytes, true);
            }
        }
    });
    block
}

/// Claims a ledger in [`LEDGERS`] for this thread; `false` when all are held.
#[cold]
fn register(local: &mut Local) -> bool {
    let free = LEDGERS.iter().position(|ledger| {
        ledger
            .held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    });
    let Some(index) = free else {
        return false;
    };
    // Before the ledger counts anything (the first block is kept after this returns).
    CLAIMED.fetch_max(index + 1, Ordering::Release);
    let ledger = &LEDGERS[index];
    local.ledger = Some(ledger);
    local.epoch = EPOCH.load(Ordering::Relaxed);
    true
}

/// Frees the calling thread's blocks now, and every other thread's at its next taking or giving
/// back.
pub(crate) fn flush_all() {
    EPOCH.fetch_add(1, Ordering::Relaxed);
    let _ = LOCAL.try_with(|local| local.try_borrow_mut().map(|mut l| l.free_all()));
}

/// A thread that ends hands its blocks to the shared cache and its counts to the allocator, and
/// its ledger back.
impl Drop for Local {
    fn drop(&mut self) {
        let Some(ledger) = self.ledger.take() else {
            return;
        };
        let blocks = self.lists.iter_mut().flat_map(|l| l.drain(..));
        super::allocator::adopt_thread_blocks(ledger, blocks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_map_to_their_own_lists() {
        assert_eq!(SIZES, 11);
        assert_eq!(list_of(64), Some(0));
        assert_eq!(list_of(128), Some(1));
        assert_eq!(list_of(LARGEST), Some(SIZES - 1));
        assert_eq!(list_of(2 * LARGEST), None);
        assert_eq!(list_of(96), None);
        assert_eq!(list_of(32), None);
        assert_eq!(MOST_BYTES, 4 * (128 << 10) - 256);
    }
}
