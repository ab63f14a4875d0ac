//! Profiling: `profile(|| …)` counts and times every op call.

use std::cell::RefCell;
use std::fmt;
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

/// Per-op call counts and times of a profiled closure. Every op call is counted, including ops
/// called from inside other ops' kernels, and times are inclusive of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// One row per op, by descending total time.
    pub rows: Vec<ProfileRow>,
}

impl Profile {
    /// The row of `op`, if it was called.
    pub fn row(&self, op: &str) -> Option<&ProfileRow> {
        self.rows.iter().find(|r| r.op == op)
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

thread_local! {
    static PROFILES: RefCell<Vec<Profile>> = const { RefCell::new(Vec::new()) };
}

/// Times every op call while a `profile` runs on this thread.
fn time_call(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack) -> Result<(), DispatchError> {
    let start = Instant::now();
    let result = op.redispatch_boxed(keys.below(DispatchKey::BuiltinProfile), stack);
    let elapsed = start.elapsed();
    let _ = PROFILES.try_with(|p| {
        if let Some(profile) = p.borrow_mut().last_mut() {
            profile.record(op.name(), elapsed);
        }
    });
    result
}

// At the library's own key, so that `Profiler` stays free for users' modes.
#[allow(unsafe_code)] // linkme's `link_section`
#[linkme::distributed_slice(crate::registry::SWITCHYARD_FALLBACKS)]
static TIME_CALL: FallbackRegistration = FallbackRegistration::builtin(
    DispatchKey::BuiltinProfile,
    time_call,
    KernelMeta::new("time_call", location_here!()),
);

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
    if PROFILES
        .try_with(|p| p.borrow_mut().push(Profile::default()))
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
        .try_with(|p| p.borrow_mut().last_mut().map(std::mem::take))
        .ok()
        .flatten()
        .unwrap_or_default();
    drop(scope);
    profile
        .rows
        .sort_by(|a, b| b.total.cmp(&a.total).then(a.op.cmp(b.op)));
    (value, profile)
}
