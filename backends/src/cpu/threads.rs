//! The CPU backends' worker threads: how many, and how a kernel splits its work among them.
//!
//! Large CPU ops (elementwise ops, reductions, `matmul`) split their output into *parts* and run
//! them on [`num_threads`] threads: the calling thread and a [`rayon`] pool of one fewer
//! workers; small ones run on the calling thread alone, where starting workers would cost more than it saves. The count is, in order of
//! precedence: the last [`set_num_threads`], the `SWITCHYARD_NUM_THREADS` environment variable
//! (read once, at the first use), or the cores this process may use
//! ([`std::thread::available_parallelism`]).
//!
//! ```
//! use switchyard_backends::cpu::threads;
//!
//! threads::set_num_threads(1).unwrap(); // every CPU kernel on the calling thread
//! assert_eq!(threads::num_threads(), 1);
//! assert!(threads::set_num_threads(0).is_err()); // an error, and the count stays 1
//! assert_eq!(threads::num_threads(), 1);
//! threads::reset_num_threads(); // back to the variable, or the available cores
//! ```
//!
//! Two promises hold whatever the count:
//! - **Results do not depend on it.** Elementwise parts are independent; a reduction's blocks are
//!   fixed by the input's length alone, and their sums combine in one fixed order (see
//!   `cpu::simd`), so one thread and sixteen give the same bits.
//! - **A busy core slows an op, it does not stall it.** Each op is cut into several parts per
//!   thread, claimed one at a time from a shared counter by the calling thread *and* the
//!   workers; the caller never waits for a worker to start, only for parts a worker has begun,
//!   so the parts a descheduled worker never got to are done by whoever runs. So when a
//!   neighbour process holds a core, an op runs at about the speed of the cores left: never far
//!   below one thread's (within 1.35× of it in the busy-neighbour run of benches/README.md,
//!   where a pool that waits at a barrier for every worker took up to 260× longer).
//!
//! A worker that has helped with an op lingers for 3 ms, yielding its core between looks, and
//! takes the next op offered to it there instead of being woken through the pool: waking a
//! sleeping thread can cost as long as a small op's whole part, and an op's parts usually follow
//! the last op's within that time (a training step's do). A neighbour process that wants the
//! core gets it from a lingering worker at its next look.
//!
//! The pool is built at the first op large enough to use it (no thread starts before), and again
//! by each [`set_num_threads`] that changes the count; an op that is running keeps the pool it
//! started with. Should the operating system refuse to start threads, [`set_num_threads`] says
//! so and keeps the previous count, and the lazily built default pool falls back to the calling
//! thread with a one-line warning on stderr: ops never fail for want of threads.
//!
//! WebAssembly without the `atomics` feature (`wasm32-unknown-unknown`, `wasm32-wasip1`) cannot
//! start threads at all: there the count is always 1, [`set_num_threads`] refuses more, and a
//! `SWITCHYARD_NUM_THREADS` above 1 is warned about and ignored.

#![allow(unsafe_code)]
// `run` hands workers a borrowed closure; its protocol is argued there
// Only the SIMD kernels split their work; where none is compiled (wasm32 without `simd128`) the
// naive kernels serve every op on the calling thread, and the splitting below is unused.
#![cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The environment variable read (once) for the default thread count: a positive integer.
pub const NUM_THREADS_VAR: &str = "SWITCHYARD_NUM_THREADS";

/// Whether this target can start threads (see the module's docs).
const CAN_START_THREADS: bool = !cfg!(all(target_family = "wasm", not(target_feature = "atomics")));

/// The thread count in effect; `0` until it is first resolved. Read on every large op without
/// taking the lock.
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// The pool for the count in effect, built when a large op first needs it (`None` before, and
/// for one thread).
static POOL: Mutex<Option<Arc<Pool>>> = Mutex::new(None);

/// Why [`set_num_threads`] refused a count. The count in effect is unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadCountError {
    requested: usize,
    reason: String,
}

impl fmt::Display for ThreadCountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "set_num_threads({}): {}; the CPU backends keep {} thread(s)",
            self.requested,
            self.reason,
            num_threads()
        )
    }
}

impl std::error::Error for ThreadCountError {}

/// How many threads the CPU backends' large ops use (at least 1).
pub fn num_threads() -> usize {
    match THREADS.load(Ordering::Relaxed) {
        0 => resolve_default(&mut lock_pool()),
        threads => threads,
    }
}

/// Uses `threads` threads for the CPU backends' large ops from now on, on every thread of the
/// process (`1`: every op on its calling thread). The pool is started here, so a failure to start
/// threads is this call's error; `0` is an error too. Either way the previous count stays.
pub fn set_num_threads(threads: usize) -> Result<(), ThreadCountError> {
    let refuse = |reason: String| ThreadCountError {
        requested: threads,
        reason,
    };
    if threads == 0 {
        return Err(refuse(
            "the count must be at least 1 (1 runs every op on its calling thread)".into(),
        ));
    }
    if threads > 1 && !CAN_START_THREADS {
        return Err(refuse(
            "this target cannot start threads (WebAssembly without atomics)".into(),
        ));
    }
    let pool = if threads == 1 {
        None
    } else {
        Some(build_pool(threads).map_err(|e| refuse(format!("cannot start the threads: {e}")))?)
    };
    let mut slot = lock_pool();
    *slot = pool;
    THREADS.store(threads, Ordering::Relaxed);
    Ok(())
}

/// Goes back to the default count: `SWITCHYARD_NUM_THREADS` if it is set (read anew), else the
/// available cores. The pool for it is built when a large op next needs one.
pub fn reset_num_threads() {
    let mut slot = lock_pool();
    *slot = None;
    THREADS.store(0, Ordering::Relaxed);
    resolve_default(&mut slot);
}

/// The default count, stored; the caller holds the pool's lock, so two threads resolving at once
/// agree.
fn resolve_default(slot: &mut MutexGuard<'_, Option<Arc<Pool>>>) -> usize {
    let resolved = THREADS.load(Ordering::Relaxed);
    if resolved != 0 {
        return resolved;
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = match std::env::var(NUM_THREADS_VAR) {
        Err(std::env::VarError::NotPresent) => cores,
        Ok(value) => match value.trim().parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => {
                warn(&format!(
                    "{NUM_THREADS_VAR}={value:?} is not a positive integer; using {cores} (the available cores)"
                ));
                cores
            }
        },
        Err(std::env::VarError::NotUnicode(value)) => {
            warn(&format!(
                "{NUM_THREADS_VAR}={value:?} is not a positive integer; using {cores} (the available cores)"
            ));
            cores
        }
    };
    let threads = if threads > 1 && !CAN_START_THREADS {
        warn(&format!(
            "{NUM_THREADS_VAR} asks for {threads} threads, but this target cannot start threads; using 1"
        ));
        1
    } else {
        threads
    };
    **slot = None;
    THREADS.store(threads, Ordering::Relaxed);
    threads
}

/// The pool for `threads` threads (at least 2): `threads - 1` workers, since the thread that
/// calls an op works on it too (`run`).
fn build_pool(threads: usize) -> Result<Arc<Pool>, rayon::ThreadPoolBuildError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.saturating_sub(1).max(1))
        .thread_name(|i| format!("switchyard-cpu-{i}"))
        .build()
        .map(|workers| Arc::new(Pool::new(workers)))
}

/// The workers, and the op offered to those of them that linger.
struct Pool {
    workers: rayon::ThreadPool,
    next_op: Arc<NextOp>,
}

impl Pool {
    fn new(workers: rayon::ThreadPool) -> Self {
        Self::lingering(workers, LINGER)
    }

    /// A pool whose workers linger `linger` (the tests' choice; `new` takes [`LINGER`]).
    fn lingering(workers: rayon::ThreadPool, linger: Duration) -> Self {
        let next_op = NextOp {
            op: Mutex::new(None),
            offers: AtomicUsize::new(0),
            lingering: AtomicUsize::new(0),
            linger,
        };
        Pool {
            workers,
            next_op: Arc::new(next_op),
        }
    }
}

/// A warning on stderr, ignored if stderr is closed or broken (never a panic).
fn warn(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "switchyard: {message}");
}

fn lock_pool() -> MutexGuard<'static, Option<Arc<Pool>>> {
    // The lock guards no invariant a panic could break halfway (a pool is swapped whole).
    POOL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The pool to run a large op on, or `None` to run it on the calling thread (one thread, or the
/// pool could not be started).
fn pool() -> Option<Arc<Pool>> {
    let threads = num_threads();
    if threads == 1 {
        return None;
    }
    let mut slot = lock_pool();
    if slot.is_none() && THREADS.load(Ordering::Relaxed) == threads {
        match build_pool(threads) {
            Ok(pool) => *slot = Some(pool),
            Err(e) => {
                warn(&format!(
                    "cannot start {threads} CPU worker threads ({e}); running ops on the calling thread"
                ));
                THREADS.store(1, Ordering::Relaxed);
            }
        }
    }
    slot.clone()
}

/// How finely a kernel's work may be cut.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grain {
    /// Below this many elements the op runs on the calling thread.
    pub parallel_from: usize,
    /// Every part but the last is a multiple of this many elements (a kernel's block or vector).
    pub multiple: usize,
    /// No part is shorter than this many elements (but the last).
    pub min_part: usize,
    /// Parts per thread: more leave a worker whose core another process holds fewer parts to
    /// finish late (the others take the rest); fewer cost less where each part repeats work
    /// (`matmul` packs its right operand once per part).
    pub parts_per_thread: usize,
}

/// The length of every part but the last, for `len` elements on `threads` threads; `len` (one
/// part) when the op should not be split.
fn part_len(len: usize, threads: usize, grain: Grain) -> usize {
    if threads <= 1 || len < grain.parallel_from {
        return len.max(1);
    }
    let multiple = grain.multiple.max(1);
    let parts = threads.saturating_mul(grain.parts_per_thread.max(1));
    let even = len.div_ceil(parts).max(grain.min_part);
    even.div_ceil(multiple).saturating_mul(multiple).max(1)
}

/// Runs `f(start, part)` over `out` cut into parts (`part` is `out[start..start + part.len()]`),
/// on the calling thread and the workers when `out` is long enough for `grain`, else once over all
/// of `out` on the calling thread. Returns whether every call returned `true`. A panic in `f`
/// (on any thread) is resumed on the calling thread once no part is running.
///
/// Inlined, so that a short call (most of a small op's) costs a comparison and a direct call of
/// `f`, which the compiler can inline too; the split lives in [`split_and_run`].
#[inline(always)]
pub(crate) fn for_each_part<T: Send>(
    out: &mut [T],
    grain: Grain,
    f: impl Fn(usize, &mut [T]) -> bool + Sync,
) -> bool {
    if out.len() < grain.parallel_from {
        return f(0, out);
    }
    split_and_run(out, grain, f)
}

/// [`for_each_part`] of an `out` long enough for `grain` to be split.
#[inline(never)]
fn split_and_run<T: Send>(
    out: &mut [T],
    grain: Grain,
    f: impl Fn(usize, &mut [T]) -> bool + Sync,
) -> bool {
    let len = out.len();
    let Some(pool) = pool() else {
        return f(0, out);
    };
    // The workers and the calling thread.
    let part = part_len(len, pool.workers.current_num_threads() + 1, grain);
    let mut slots = Vec::new();
    if part >= len || slots.try_reserve_exact(len.div_ceil(part)).is_err() {
        return f(0, out);
    }
    // Each part behind its own lock, taken once: whichever thread claims index `i` gets part `i`.
    slots.extend(out.chunks_mut(part).map(|p| Mutex::new(Some(p))));
    let all = std::sync::atomic::AtomicBool::new(true);
    run(&pool, slots.len(), &|i| {
        let taken = slots[i]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(p) = taken
            && !f(i * part, p)
        {
            all.store(false, Ordering::Relaxed);
        }
    });
    all.into_inner()
}

/// Runs `work(i)` for every `i < parts`, each exactly once, on the calling thread and on up to
/// `parts - 1` of the pool's workers, and returns when all have run.
///
/// The calling thread claims parts like the workers do and never waits for a worker to *start*:
/// parts are claimed from one counter, so a worker that the operating system has not scheduled
/// yet (a neighbour process holds its core) simply finds nothing left when it does run, and the
/// op costs what one thread would, plus the wake-ups. (A pool that hands each worker a fixed
/// share, and waits at a barrier for it, stalls for a whole scheduler slice instead.) The caller
/// waits only for parts that a worker has begun.
///
/// Workers that have just helped with an op and still linger ([`NextOp`]) are offered this one;
/// only the rest are woken through the pool.
fn run(pool: &Pool, parts: usize, work: &(dyn Fn(usize) + Sync)) {
    let helpers = pool
        .workers
        .current_num_threads()
        .min(parts.saturating_sub(1));
    let shared = Arc::new(Shared {
        next: AtomicUsize::new(0),
        active: AtomicUsize::new(0),
        parts,
        panic: Mutex::new(None),
        // SAFETY (of the lifetime erasure): `work` is called only by `Shared::claim_and_run`,
        // only for an index it claimed below `parts`, and only between `active`'s increment and
        // decrement. `Finish` (below) does not return, or unwind past this frame, until every
        // index has been claimed and `active` is 0; after that no call can start (every later
        // claim is `>= parts`). So every call happens while `work`'s borrow is alive.
        work: unsafe {
            std::mem::transmute::<
                *const (dyn Fn(usize) + Sync + '_),
                *const (dyn Fn(usize) + Sync + 'static),
            >(work)
        },
    });
    let offered = pool.next_op.offer(&shared, helpers);
    for _ in offered..helpers {
        let (shared, next_op) = (Arc::clone(&shared), Arc::clone(&pool.next_op));
        pool.workers
            .spawn(move || help_then_linger(shared, &next_op));
    }
    let finish = Finish(&shared);
    // The calling thread's share: parts until none is left (no `active` count for it: the
    // frame that owns `work` is this one).
    while let Some(i) = shared.claim() {
        work(i);
    }
    drop(finish);
    let payload = shared
        .panic
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(payload) = payload {
        std::panic::resume_unwind(payload);
    }
}

/// How long a worker that has helped with an op looks for the next before it goes back to the
/// pool, which puts an idle worker to sleep within microseconds. Waking a sleeping thread cost
/// tens of microseconds on a virtual machine (as long as a small op's whole part, so the caller
/// had often done every part before the worker began), and a training step's parallel ops come
/// up to about a millisecond apart; lingering 3 ms ran its step at two threads 15 % faster.
/// None on WebAssembly, where `Instant` is not available everywhere.
const LINGER: Duration = match cfg!(target_family = "wasm") {
    true => Duration::ZERO,
    false => Duration::from_millis(3),
};

/// A worker's loop: `shared`'s parts, then each op offered while it lingers.
fn help_then_linger(mut shared: Arc<Shared>, next_op: &NextOp) {
    loop {
        shared.claim_and_run();
        match next_op.wait() {
            Some(next) => shared = next,
            None => return,
        }
    }
}

/// The op a pool last offered to its lingering workers. Only a pool's own workers look here, so
/// those of a pool that `set_num_threads` replaced finish their linger and end.
struct NextOp {
    /// The op (an old one stays until the next offer: a worker takes it only when `offers`
    /// changes, and every part of it was claimed before its caller returned).
    op: Mutex<Option<Arc<Shared>>>,
    /// Offers made; a lingering worker takes `op` when this changes.
    offers: AtomicUsize,
    /// Workers lingering now.
    lingering: AtomicUsize,
    /// How long a worker lingers.
    linger: Duration,
}

impl NextOp {
    /// Offers `shared` to up to `helpers` lingering workers; returns how many it counted on. A
    /// worker that stops lingering just then leaves the caller with more parts of its own, as a
    /// worker that starts late does.
    fn offer(&self, shared: &Arc<Shared>, helpers: usize) -> usize {
        let lingering = self.lingering.load(Ordering::SeqCst).min(helpers);
        if lingering > 0 {
            *self.op.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(shared));
            self.offers.fetch_add(1, Ordering::SeqCst);
        }
        lingering
    }

    /// The next op offered within `self.linger`, or `None`. Looks by yielding the core between
    /// looks, so a neighbour process that wants the core gets it.
    fn wait(&self) -> Option<Arc<Shared>> {
        let linger = self.linger;
        if linger.is_zero() {
            return None;
        }
        // Read before counting this worker as lingering: an offer that counted it comes after.
        let seen = self.offers.load(Ordering::SeqCst);
        self.lingering.fetch_add(1, Ordering::SeqCst);
        let start = Instant::now();
        let next = loop {
            if self.offers.load(Ordering::SeqCst) != seen {
                break self
                    .op
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
            }
            if start.elapsed() >= linger {
                break None;
            }
            std::thread::yield_now();
        };
        self.lingering.fetch_sub(1, Ordering::SeqCst);
        next
    }
}

/// One op's parts, shared with the workers that help with it (which may outlive the op: a
/// worker scheduled late finds every part claimed and touches only this struct).
struct Shared {
    /// The next part to claim; `>= parts` when none is left.
    next: AtomicUsize,
    /// Workers between "about to claim" and "done with their claims".
    active: AtomicUsize,
    parts: usize,
    /// The first panic of a worker's part, resumed on the calling thread.
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    /// The op's work: valid while an unclaimed part remains or a claimed one runs (see `run`).
    work: *const (dyn Fn(usize) + Sync + 'static),
}

// SAFETY: `work` points to a `Sync` closure (so calling it from any thread is allowed), and it
// is dereferenced only while the borrow it came from is alive (see `run`). The other fields are
// `Send + Sync`.
unsafe impl Send for Shared {}
// SAFETY: as for `Send`: shared access only calls the `Sync` closure, under `run`'s protocol.
unsafe impl Sync for Shared {}

impl Shared {
    fn claim(&self) -> Option<usize> {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        (i < self.parts).then_some(i)
    }

    /// A worker's share: parts until none is left, a panic caught and kept for the caller.
    fn claim_and_run(&self) {
        // Counted active *before* claiming, so the caller, which waits for `active == 0` after
        // every part is claimed, cannot miss a part claimed but not yet begun.
        self.active.fetch_add(1, Ordering::SeqCst);
        while let Some(i) = self.claim() {
            // SAFETY: `i < parts` was claimed while this worker is counted in `active`, so the
            // caller is still inside `run` and `work`'s borrow is alive (see `run`).
            let work = unsafe { &*self.work };
            if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(i)))
            {
                let mut slot = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
                slot.get_or_insert(payload);
                // Stop handing out parts: the op fails anyway.
                self.next.store(self.parts, Ordering::SeqCst);
            }
        }
        self.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits, when `run` ends or unwinds, until no worker runs a part: then nothing touches `work`.
struct Finish<'a>(&'a Shared);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        // When unwinding (the caller's own part panicked), let no worker begin another part.
        self.0.next.store(self.0.parts, Ordering::SeqCst);
        // Only parts a worker has begun remain: spin briefly, then give the core away (the
        // worker may be waiting for it), then sleep in short steps. No park/unpark: that needs
        // `thread::current()`, which an op run from a thread-local destructor must not rely on.
        let mut waits = 0u32;
        while self.0.active.load(Ordering::SeqCst) != 0 {
            waits = waits.saturating_add(1);
            match waits {
                0..200 => std::hint::spin_loop(),
                200..300 => std::thread::yield_now(),
                _ => std::thread::sleep(std::time::Duration::from_micros(20)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAIN: Grain = Grain {
        parallel_from: 100,
        multiple: 8,
        min_part: 16,
        parts_per_thread: 4,
    };

    #[test]
    fn short_or_single_threaded_work_is_one_part() {
        assert_eq!(part_len(99, 4, GRAIN), 99);
        assert_eq!(part_len(10_000, 1, GRAIN), 10_000);
        assert_eq!(part_len(0, 1, GRAIN), 1);
    }

    #[test]
    fn parts_are_multiples_several_per_thread_and_not_too_short() {
        // 1000 over 2 threads: 8 parts of 125, rounded up to 128.
        assert_eq!(part_len(1000, 2, GRAIN), 128);
        // 100 over 16 threads: parts of at least 16.
        assert_eq!(part_len(100, 16, GRAIN), 16);
        // Huge lengths do not overflow.
        assert!(part_len(usize::MAX, 3, GRAIN).is_multiple_of(8));
    }

    #[test]
    fn a_count_of_n_is_the_calling_thread_and_n_minus_1_workers() {
        // The only test of this crate that sets the process-wide count.
        set_num_threads(3).unwrap();
        assert_eq!(num_threads(), 3);
        assert_eq!(
            super::pool().map(|p| p.workers.current_num_threads()),
            Some(2)
        );
        set_num_threads(1).unwrap();
        assert!(super::pool().is_none());
        reset_num_threads();
    }

    fn pool(threads: usize) -> Pool {
        Pool::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap(),
        )
    }

    #[test]
    fn every_part_runs_exactly_once_on_any_thread() {
        let pool = pool(4);
        for parts in [1, 2, 3, 17, 1000] {
            let hits: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
            run(&pool, parts, &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                "{parts}"
            );
        }
    }

    #[test]
    fn a_workers_panic_reaches_the_caller_after_every_running_part_ends() {
        let pool = pool(3);
        let caller = std::thread::current().id();
        let running = AtomicUsize::new(0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(&pool, 64, &|i| {
                running.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_micros(200));
                let on_worker = std::thread::current().id() != caller;
                running.fetch_sub(1, Ordering::SeqCst);
                assert!(!(on_worker && i % 7 == 3), "part {i} failed");
            })
        }));
        // Either the caller ran every part itself (no panic) or a worker's panic came back.
        if let Err(payload) = result {
            let message = payload.downcast_ref::<String>().unwrap();
            assert!(message.contains("failed"), "{message}");
        }
        assert_eq!(
            running.load(Ordering::SeqCst),
            0,
            "a part still ran after `run` returned"
        );
    }

    #[test]
    fn the_callers_panic_waits_for_the_workers_parts() {
        let pool = pool(3);
        let caller = std::thread::current().id();
        let running = AtomicUsize::new(0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(&pool, 64, &|_| {
                running.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_micros(200));
                running.fetch_sub(1, Ordering::SeqCst);
                assert!(
                    std::thread::current().id() != caller,
                    "the caller's part failed"
                );
            })
        }));
        assert!(result.is_err());
        assert_eq!(
            running.load(Ordering::SeqCst),
            0,
            "a part still ran after `run` unwound"
        );
    }

    #[test]
    fn a_pool_whose_workers_are_all_busy_does_not_hold_up_the_caller() {
        // Both workers are stuck in another job until the op is done: the caller runs every part.
        let pool = pool(2);
        let release = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        for _ in 0..2 {
            let release = Arc::clone(&release);
            pool.workers.spawn(move || {
                let (lock, ready) = &*release;
                let mut go = lock.lock().unwrap();
                while !*go {
                    go = ready.wait(go).unwrap();
                }
            });
        }
        let count = AtomicUsize::new(0);
        run(&pool, 100, &|_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(count.load(Ordering::Relaxed), 100);
        let (lock, ready) = &*release;
        *lock.lock().unwrap() = true;
        ready.notify_all();
    }

    /// Polls `done` for up to a second (a loaded test machine may be slow to schedule a worker).
    fn within_a_second(done: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(1) {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        done()
    }

    /// An op of two parts, each waiting (up to a second) until both have begun: when both began,
    /// a worker ran one of them. Returns the threads that ran the two parts.
    fn op_on_two_threads(pool: &Pool) -> Vec<std::thread::ThreadId> {
        let begun = AtomicUsize::new(0);
        let threads = Mutex::new(Vec::new());
        run(pool, 2, &|_| {
            threads.lock().unwrap().push(std::thread::current().id());
            begun.fetch_add(1, Ordering::SeqCst);
            within_a_second(|| begun.load(Ordering::SeqCst) == 2);
        });
        threads.into_inner().unwrap()
    }

    #[test]
    fn a_worker_that_helped_takes_the_next_op_while_it_lingers() {
        // A long linger, so that a loaded machine that deschedules this test for a while does
        // not end it before the second op.
        let workers = rayon::ThreadPoolBuilder::new().num_threads(1).build();
        let pool = Pool::lingering(workers.unwrap(), Duration::from_millis(500));
        let caller = std::thread::current().id();
        let first = op_on_two_threads(&pool);
        let worker = *first
            .iter()
            .find(|&&id| id != caller)
            .expect("a worker ran a part");
        assert!(
            within_a_second(|| pool.next_op.lingering.load(Ordering::SeqCst) == 1),
            "the worker did not linger after its part"
        );
        // Offered, not spawned: the offers counted it, and the worker runs a part.
        let offers = pool.next_op.offers.load(Ordering::SeqCst);
        let second = op_on_two_threads(&pool);
        assert!(
            second.contains(&worker),
            "{second:?} lacks the lingering worker"
        );
        assert_eq!(pool.next_op.offers.load(Ordering::SeqCst), offers + 1);
    }

    #[test]
    fn a_worker_stops_lingering_when_no_op_comes() {
        let pool = pool(1);
        let caller = std::thread::current().id();
        assert!(op_on_two_threads(&pool).iter().any(|&id| id != caller));
        // It lingers, then stops. (Seeing it linger is not asserted: a loaded machine may
        // deschedule this thread for the whole linger.)
        let lingering = || pool.next_op.lingering.load(Ordering::SeqCst);
        within_a_second(|| lingering() == 1);
        assert!(
            within_a_second(|| lingering() == 0),
            "the worker still lingers long after {LINGER:?}"
        );
    }

    #[test]
    fn ops_from_many_threads_with_lingering_workers_run_every_part_once() {
        let pool = pool(3);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for round in 0..200 {
                        let parts = 1 + round % 9;
                        let hits: Vec<AtomicUsize> =
                            (0..parts).map(|_| AtomicUsize::new(0)).collect();
                        run(&pool, parts, &|i| {
                            hits[i].fetch_add(1, Ordering::Relaxed);
                        });
                        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
                    }
                });
            }
        });
    }
}
