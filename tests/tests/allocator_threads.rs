//! The CPU caching allocator's per-thread blocks (each thread keeps a few idle blocks of up to 64
//! KiB for itself) against its counters, `empty_cache`, limits and threads that end. One test in
//! its own binary, so that no other test's tensors or `empty_cache` calls move the counters.

use std::cell::RefCell;
use std::sync::{Arc, Barrier};

use switchyard::{
    Device, MemoryStats, Tensor, empty_cache, memory_stats, reset_peak, set_cache_limit,
};

/// A 16 KiB tensor (its own bucket size: a block of exactly this many bytes).
const LEN: usize = 4096;
const BYTES: usize = LEN * 4;

fn stats() -> MemoryStats {
    memory_stats(Device::Cpu).unwrap()
}

fn tensor() -> Tensor {
    Tensor::from_fn(&[LEN], |i| i as f32)
}

fn address(t: &Tensor) -> *const f32 {
    t.host::<f32>("test")
        .unwrap()
        .contiguous()
        .unwrap()
        .as_ptr()
}

#[test]
fn a_threads_own_blocks_are_counted_reused_and_freed() {
    empty_cache(Device::Cpu);
    let start = stats();
    assert_eq!(start.cached, 0, "{start:?}");

    // A block given back stays with its thread, counted as cached, and is the next one of its
    // size there: one allocation, none from the system.
    let t = tensor();
    let first = address(&t);
    drop(t);
    let kept = stats();
    assert_eq!(
        (kept.allocated, kept.cached),
        (start.allocated, BYTES),
        "{kept:?}"
    );
    let t = tensor();
    assert_eq!(address(&t), first, "the thread's own block is reused");
    let taken = stats();
    assert_eq!(taken.allocations, kept.allocations + 1, "{taken:?}");
    assert_eq!(taken.system_allocations, kept.system_allocations);
    assert_eq!(
        (taken.allocated, taken.cached),
        (start.allocated + BYTES, 0)
    );
    assert!(taken.peak >= taken.allocated);
    drop(t);

    // The peak stays exact: three live blocks at most.
    reset_peak();
    let three: Vec<Tensor> = (0..3).map(|_| tensor()).collect();
    drop(three);
    assert_eq!(stats().peak, start.allocated + 3 * BYTES);

    // Blocks idle in the thread's hands are not allocated, nor part of the peak: with three
    // kept, taking one moves the peak by one block.
    assert_eq!(stats().cached, 3 * BYTES);
    reset_peak();
    let one = tensor();
    let taken = stats();
    assert_eq!(
        (taken.allocated, taken.cached, taken.peak),
        (start.allocated + BYTES, 2 * BYTES, start.allocated + BYTES),
        "{taken:?}"
    );
    drop(one);

    // Nor are another thread's: with four idle there, taking one here moves the peak by one
    // block.
    let barrier = Arc::new(Barrier::new(2));
    let keeper = {
        let barrier = Arc::clone(&barrier);
        std::thread::spawn(move || {
            drop((0..4).map(|_| tensor()).collect::<Vec<_>>());
            barrier.wait();
            barrier.wait();
        })
    };
    barrier.wait();
    assert_eq!(stats().cached, 7 * BYTES, "three here, four there");
    reset_peak();
    let one = tensor();
    let taken = stats();
    assert_eq!(
        (taken.allocated, taken.peak),
        (start.allocated + BYTES, start.allocated + BYTES),
        "{taken:?}"
    );
    drop(one);
    barrier.wait();
    keeper.join().unwrap();
    empty_cache(Device::Cpu);
    // The ended thread's blocks went to the shared cache, which `empty_cache` emptied; this
    // thread's three were freed too.
    assert_eq!(stats().cached, 0);

    // Six given back: four stay with the thread, two go to the shared cache. `empty_cache` on
    // another thread frees the shared ones at once and this thread's at its next allocation.
    let six: Vec<Tensor> = (0..6).map(|_| tensor()).collect();
    drop(six);
    assert_eq!(stats().cached, 6 * BYTES);
    std::thread::spawn(|| empty_cache(Device::Cpu))
        .join()
        .unwrap();
    assert_eq!(stats().cached, 4 * BYTES, "this thread's four wait for it");
    let before = stats();
    let t = tensor();
    let after = stats();
    assert_eq!(
        after.cached, 0,
        "freed at this thread's next allocation: {after:?}"
    );
    assert_eq!(after.system_allocations, before.system_allocations + 1);
    assert_eq!(
        after.allocated,
        start.allocated + BYTES,
        "the freed blocks are no longer counted: {after:?}"
    );
    drop(t);
    empty_cache(Device::Cpu);
    assert_eq!(
        stats().cached,
        0,
        "`empty_cache` frees the calling thread's own at once"
    );

    // A thread that ends hands its blocks to the shared cache, where another thread finds them.
    let (address_there, allocations_there) = std::thread::spawn(|| {
        let t = tensor();
        let address = address(&t) as usize;
        drop(t);
        (address, stats().allocations)
    })
    .join()
    .unwrap();
    let ended = stats();
    assert_eq!(
        (ended.allocated, ended.cached),
        (start.allocated, BYTES),
        "{ended:?}"
    );
    assert_eq!(
        ended.allocations, allocations_there,
        "its count stays when its thread ends"
    );
    let t = tensor();
    assert_eq!(address(&t) as usize, address_there);
    drop(t);
    empty_cache(Device::Cpu);

    // A tensor dropped by a thread-local's destructor after the thread's own blocks are gone
    // (std runs a thread's destructors in reverse order of first use) takes the shared path.
    thread_local! {
        static HELD: RefCell<Option<Tensor>> = const { RefCell::new(None) };
    }
    std::thread::spawn(|| {
        HELD.with(|held| held.borrow_mut().take()); // first use: its destructor runs last
        drop(tensor()); // the thread's own blocks: their destructor runs first
        let t = tensor();
        HELD.with(|held| *held.borrow_mut() = Some(t));
    })
    .join()
    .unwrap();
    let late = stats();
    assert_eq!(
        (late.allocated, late.cached),
        (start.allocated, BYTES),
        "the last tensor's block is in the shared cache: {late:?}"
    );
    empty_cache(Device::Cpu);

    // Under a limit smaller than a thread's share, threads keep nothing; at 0 nothing is kept.
    set_cache_limit(Device::Cpu, 100_000);
    drop(tensor());
    assert_eq!(
        stats().cached,
        BYTES,
        "in the shared cache, within the limit"
    );
    std::thread::spawn(|| {
        let t = tensor();
        assert_eq!(
            stats().cached,
            0,
            "another thread took it from the shared cache"
        );
        t.numel()
    })
    .join()
    .unwrap();
    set_cache_limit(Device::Cpu, 0);
    drop(tensor());
    assert_eq!(stats().cached, 0, "a limit of 0 keeps nothing");
    set_cache_limit(Device::Cpu, 256 << 20);

    // The ledgers are a fixed array of 256, and this thread holds one: of 256 more threads
    // keeping a block each, one finds none free and gives its block to the shared cache, which
    // `empty_cache` frees at once; the 255 others keep theirs until they end.
    let barrier = Arc::new(Barrier::new(257));
    let keepers: Vec<_> = (0..256)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                drop(tensor());
                barrier.wait();
                barrier.wait();
            })
        })
        .collect();
    barrier.wait();
    assert_eq!(stats().cached, 256 * BYTES);
    std::thread::spawn(|| empty_cache(Device::Cpu))
        .join()
        .unwrap();
    assert_eq!(stats().cached, 255 * BYTES, "one thread found no ledger");
    barrier.wait();
    for keeper in keepers {
        keeper.join().unwrap();
    }
    assert_eq!(
        stats().cached,
        255 * BYTES,
        "the ended threads' blocks, shared now"
    );
    empty_cache(Device::Cpu);
    assert_eq!(stats().cached, 0);
    let end = stats();
    assert_eq!(end.allocated, start.allocated, "{end:?}");
}
