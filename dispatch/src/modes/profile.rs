//! Profiling: `profile(|| …)` counts and times every op call, and keeps each call as a slice
//! for a timeline (`Profile::to_chrome_trace`).

use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::location_here;
use crate::registry::{FallbackRegistration, KernelMeta};
use crate::{DispatchError, DispatchKey, DispatchKeySet, OpHandle, Stack, include};

/// One op's line of a [`Profile`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileRow {
    /// The op's name.
    pub op: &'static str,
    /// How many times it was called.
    pub calls: u64,
    /// Total wall time of those calls, including the ops they called.
    pub total: Duration,
}

impl ProfileRow {
    /// Mean wall time per call.
    pub fn mean(&self) -> Duration {
        let calls = u32::try_from(self.calls.max(1)).unwrap_or(u32::MAX);
        self.total / calls
    }
}

/// One op call of a [`Profile`]: a slice of its thread's timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileSlice {
    /// The op's name.
    pub op: &'static str,
    /// The thread that called it: a small number, unique in the process (see
    /// [`Profile::threads`] for its name).
    pub thread: u64,
    /// When the call started, from a fixed instant of the process (the first profile's start),
    /// so slices of profiles taken on several threads share one time line.
    pub start: Duration,
    /// Wall time of the call, including the ops it called.
    pub duration: Duration,
    /// How many profiled calls enclose it (0: called by the profiled closure itself).
    pub depth: usize,
}

/// Per-op call counts and times of a profiled closure. Every op call is counted, including ops
/// called from inside other ops' kernels, and times are inclusive of them.
///
/// It displays as a text table; [`Profile::to_chrome_trace`] writes its calls as a timeline for
/// Perfetto or `chrome://tracing`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// One row per op, by descending total time.
    pub rows: Vec<ProfileRow>,
    /// Every call, in the order they started.
    pub slices: Vec<ProfileSlice>,
    /// The threads the slices ran on: number and name (`thread 3` for an unnamed thread).
    pub threads: Vec<(u64, String)>,
}

impl Profile {
    /// The row of `op`, if it was called: by full name (`switchyard::mul`), or by bare name
    /// (`mul`) where exactly one linked op has it, as [`find_op`](crate::find_op) finds ops.
    pub fn row(&self, op: &str) -> Option<&ProfileRow> {
        let full = match crate::names::find(op) {
            crate::names::Found::One(found) => found.info().name,
            _ => op,
        };
        self.rows.iter().find(|r| r.op == full)
    }

    fn record(&mut self, op: &'static str, elapsed: Duration) {
        match self.rows.iter_mut().find(|r| r.op == op) {
            Some(row) => {
                row.calls += 1;
                row.total += elapsed;
            }
            None => self.rows.push(ProfileRow {
                op,
                calls: 1,
                total: elapsed,
            }),
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<16} {:>7} {:>12} {:>12}",
            "op", "calls", "total", "mean"
        )?;
        for row in &self.rows {
            writeln!(
                f,
                "{:<16} {:>7} {:>12} {:>12}",
                row.op,
                row.calls,
                format!("{:.1?}", row.total),
                format!("{:.1?}", row.mean())
            )?;
        }
        Ok(())
    }
}

/// A profile being recorded: what it has so far, and how many of its calls are running.
#[derive(Default)]
struct Recording {
    profile: Profile,
    depth: usize,
}

thread_local! {
    static PROFILES: RefCell<Vec<Recording>> = const { RefCell::new(Vec::new()) };
    /// This thread's number in slices; 0 until it first profiles.
    static THREAD: Cell<u64> = const { Cell::new(0) };
}

/// The instant slices' start times count from.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// This thread's number and name, numbering it at its first profile.
fn this_thread() -> (u64, String) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = THREAD
        .try_with(|t| {
            if t.get() == 0 {
                t.set(NEXT.fetch_add(1, Ordering::Relaxed));
            }
            t.get()
        })
        .unwrap_or(0);
    let name = std::thread::current()
        .name()
        .map_or_else(|| format!("thread {id}"), str::to_owned);
    (id, name)
}

/// Times every op call while a `profile` runs on this thread.
fn time_call(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    let depth = PROFILES
        .try_with(|p| {
            p.borrow_mut().last_mut().map(|r| {
                r.depth += 1;
                r.depth - 1
            })
        })
        .ok()
        .flatten();
    let begin = Instant::now();
    let result = op.redispatch_boxed(keys.below(DispatchKey::BuiltinProfile), stack);
    let end = Instant::now();
    let _ = PROFILES.try_with(|p| {
        if let (Some(recording), Some(depth)) = (p.borrow_mut().last_mut(), depth) {
            recording.depth = depth;
            let profile = &mut recording.profile;
            profile.record(op.name(), end - begin);
            profile.slices.push(ProfileSlice {
                op: op.name(),
                thread: THREAD.try_with(Cell::get).unwrap_or(0),
                start: begin.saturating_duration_since(epoch()),
                duration: end - begin,
                depth,
            });
        }
    });
    result
}

// At the library's own key, so that `Profiler` stays free for users' modes.
#[allow(unsafe_code)] // linkme's `link_section`
#[cfg_attr(
    not(target_family = "wasm"),
    linkme::distributed_slice(crate::registry::SWITCHYARD_FALLBACKS)
)]
static TIME_CALL: FallbackRegistration = FallbackRegistration::builtin(
    DispatchKey::BuiltinProfile,
    time_call,
    KernelMeta::new("time_call", location_here!()),
);
#[cfg(target_family = "wasm")]
crate::__switchyard_submit!(crate::registry::SWITCHYARD_FALLBACKS, TIME_CALL);

/// Pops the profile even if the profiled closure panics.
struct ProfileScope;

impl Drop for ProfileScope {
    fn drop(&mut self) {
        let _ = PROFILES.try_with(|p| p.borrow_mut().pop());
    }
}

/// Runs `f` with the profiler on and returns its result with per-op call counts and times.
///
/// Called from a thread-local destructor after this thread's profiler state was destroyed, it
/// runs `f` unprofiled and returns an empty profile.
///
/// ```
/// use switchyard::ops::{add, mul};
/// use switchyard::{Tensor, profile};
/// use switchyard_backends as _;
///
/// let x = Tensor::vector(&[1.0, 2.0]);
/// let (_, profile) = profile(|| add(&mul(&x, &x), &x));
/// assert_eq!(profile.row("mul").unwrap().calls, 1);
/// assert_eq!(profile.row("add").unwrap().calls, 1);
/// println!("{profile}");
/// ```
pub fn profile<R>(f: impl FnOnce() -> R) -> (R, Profile) {
    // In a thread-local destructor, after this thread's profiles were destroyed, there is
    // nowhere to count: `f` runs unprofiled and the profile is empty.
    let thread = this_thread();
    epoch();
    if PROFILES
        .try_with(|p| p.borrow_mut().push(Recording::default()))
        .is_err()
    {
        return (f(), Profile::default());
    }
    let scope = ProfileScope;
    let value = {
        let _profiling = include(DispatchKey::BuiltinProfile);
        f()
    };
    let mut profile = PROFILES
        .try_with(|p| {
            p.borrow_mut()
                .last_mut()
                .map(|r| std::mem::take(&mut r.profile))
        })
        .ok()
        .flatten()
        .unwrap_or_default();
    drop(scope);
    profile
        .rows
        .sort_by(|a, b| b.total.cmp(&a.total).then(a.op.cmp(b.op)));
    // Calls are recorded as they end; a timeline reads them as they start (a caller before the
    // calls it makes).
    profile
        .slices
        .sort_by(|a, b| a.start.cmp(&b.start).then(a.depth.cmp(&b.depth)));
    if !profile.slices.is_empty() {
        profile.threads.push(thread);
    }
    (value, profile)
}
