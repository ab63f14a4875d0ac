//! Registrations made at run time (tests, plugins loaded at run time, targets without linkme):
//! the global registration lock, runtime fallbacks, and the dispatch trace switch. An op's own
//! runtime registrations are its table's (`table/live.rs`).
//!
//! **Invariants:** every change to the live set happens under [`lock`], then recomputes the tables
//! it affects while still holding it, so tables always reflect one consistent set. A table depends
//! on the set only, never on the order of registration (see `resolve.rs`). Lock order: the global
//! lock first, then one op's lock.

use std::panic::Location as CallerLocation;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::{DispatchError, Location};
use crate::key::DispatchKey;
use crate::origin::KernelMeta;
use crate::registration::{Registration, Undo};
use crate::registry::{
    BoxedKernel, FallbackKind, FallbackRegistration, Global, SWITCHYARD_OPS as OPS,
};
use crate::resolve::fallback_conflicts;
use crate::trace_log;

static GLOBAL: Mutex<Global> = Mutex::new(Global::new());

/// The global registration lock. A panic while holding it leaves the state consistent (every
/// change is one push or one retain), so poisoning is ignored.
pub(crate) fn lock() -> MutexGuard<'static, Global> {
    let guard = GLOBAL.lock().unwrap_or_else(PoisonError::into_inner);
    trace_log::read_env_once();
    guard
}

/// Republishes every op's tables that are built; unbuilt ones read the live set when built.
fn refresh_all(global: &Global) {
    for op in OPS.iter() {
        op.refresh(global);
    }
}

/// Turns the per-dispatch trace (the one `SWITCHYARD_TRACE=1` enables) on or off for the whole
/// process. While it is on, every call takes the dispatcher's out-of-line path, which prints; when
/// it is off, the typed hot path does not test for it at all.
pub fn set_dispatch_trace(on: bool) {
    let global = lock();
    trace_log::set_sink(trace_log::STDERR, on);
    refresh_all(&global);
}

/// Turns the dispatch trace's `tracing` events on or off for the whole process (as
/// `SWITCHYARD_TRACE=tracing` does at start-up). While they are on, every dispatch is a `DEBUG`
/// event of target `switchyard` (fields `op`, `keys`, `chosen`, `kernel`, `provenance`, `depth`;
/// a failed one `error`), and its kernel runs in a span `dispatch`, so the dispatches it makes
/// nest under it; any subscriber sees them. Like [`set_dispatch_trace`], it sends every call
/// through the dispatcher's out-of-line path while on; off, the typed hot path does not test for
/// it at all.
///
/// ```
/// use switchyard::ops::mul;
/// use switchyard::{Tensor, set_tracing_events};
/// use switchyard_backends as _;
///
/// set_tracing_events(true);
/// let x = Tensor::vector(&[1.0, 2.0]);
/// let _ = mul(&x, &x); // a `tracing` event, seen by the installed subscriber if any
/// set_tracing_events(false);
/// ```
#[cfg(feature = "tracing")]
pub fn set_tracing_events(on: bool) {
    let global = lock();
    trace_log::set_sink(trace_log::EVENTS, on);
    refresh_all(&global);
}

/// Where a runtime registration was made: the caller of the registering function.
pub(crate) fn caller_location(caller: &'static CallerLocation<'static>) -> Location {
    Location {
        module: "(registered at run time)",
        file: caller.file(),
        line: caller.line(),
    }
}

/// Registers `kernel` as the fallback of every op at `key`, until the returned guard drops.
///
/// Two fallbacks for one key (linked or registered) is an error naming both.
#[track_caller]
pub fn register_fallback(
    key: DispatchKey,
    name: &'static str,
    kernel: BoxedKernel,
) -> Result<Registration, DispatchError> {
    add_fallback(
        key,
        name,
        FallbackKind::Boxed(kernel),
        CallerLocation::caller(),
    )
}

/// Makes `key` a fallthrough for every op without a kernel of its own there, until the returned
/// guard drops.
#[track_caller]
pub fn register_fallthrough(key: DispatchKey) -> Result<Registration, DispatchError> {
    add_fallback(
        key,
        "fallthrough",
        FallbackKind::Fallthrough,
        CallerLocation::caller(),
    )
}

/// The error for a registration at one of the library's own keys.
pub(crate) fn builtin_key_error(key: DispatchKey) -> DispatchError {
    DispatchError::kernel(
        "(registration)",
        format!(
            "`{key}` is the library's own key (`switchyard::trace` and `switchyard::profile` use \
             it); register your mode at `Tracing`, `Profiler` or `Mode1`..`Mode3` instead"
        ),
    )
}

fn add_fallback(
    key: DispatchKey,
    name: &'static str,
    kind: FallbackKind,
    caller: &'static CallerLocation<'static>,
) -> Result<Registration, DispatchError> {
    if key.is_builtin() {
        return Err(builtin_key_error(key));
    }
    let mut global = lock();
    let meta = KernelMeta::new(name, caller_location(caller));
    let registration = FallbackRegistration::new(key, kind, meta);
    let mut all = global.all_fallbacks();
    all.push(registration);
    // A second fallback at a key is refused here, so that it never makes calls fail later.
    if let Some(conflict) = fallback_conflicts(&all)
        .into_iter()
        .find(|c| c.first == meta || c.second == meta)
    {
        return Err(conflict.error("(every op)"));
    }
    let id = global.next_id();
    global.fallbacks.push((id, registration));
    refresh_all(&global);
    Ok(Registration::new(id, &RuntimeFallbacks))
}

/// What a runtime fallback's [`Registration`] undoes.
struct RuntimeFallbacks;

impl Undo for RuntimeFallbacks {
    fn undo(&'static self, id: u64) {
        let mut global = lock();
        global.fallbacks.retain(|(i, _)| *i != id);
        refresh_all(&global);
    }

    fn describe(&self) -> &'static str {
        "(fallback)"
    }
}
