//! Registrations made at run time (tests, plugins loaded at run time, targets without linkme),
//! and the guards whose drop undoes them.
//!
//! **Invariants:** every change to the live set happens under [`lock`], then recomputes the tables
//! it affects while still holding it, so tables always reflect one consistent set. A table depends
//! on the set only, never on the order of registration (see `resolve.rs`). Lock order: the global
//! lock first, then one op's lock.

use std::fmt;
use std::panic::Location as CallerLocation;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

use crate::error::{DispatchError, Location};
use crate::key::DispatchKey;
use crate::registry::{
    BoxedKernel, FallbackKind, FallbackRegistration, KernelMeta, SWITCHYARD_FALLBACKS,
    SWITCHYARD_OPS as OPS,
};
use crate::resolve::fallback_conflicts;
use crate::table::ErasedOp;

/// The runtime registrations that concern every op. Only reachable under [`lock`].
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Global {
    next_id: u64,
    /// Fallbacks registered at run time, with their registration ids.
    pub(crate) fallbacks: Vec<(u64, FallbackRegistration)>,
}

impl Global {
    /// A fresh registration id.
    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Every live fallback: linked and registered at run time.
    pub(crate) fn all_fallbacks(&self) -> Vec<FallbackRegistration> {
        SWITCHYARD_FALLBACKS
            .iter()
            .copied()
            .chain(self.fallbacks.iter().map(|(_, f)| *f))
            .collect()
    }

    /// Recomputes every op's table that is built; unbuilt ones read the live set when built.
    fn refresh_all(&self) {
        for op in OPS {
            op.refresh(self);
        }
    }
}

static GLOBAL: Mutex<Global> = Mutex::new(Global {
    next_id: 0,
    fallbacks: Vec::new(),
});

/// The global registration lock. A panic while holding it leaves the state consistent (every
/// change is one push or one retain), so poisoning is ignored.
pub(crate) fn lock() -> MutexGuard<'static, Global> {
    let guard = GLOBAL.lock().unwrap_or_else(PoisonError::into_inner);
    TRACE_FROM_ENV.call_once(|| {
        let on = std::env::var_os("SWITCHYARD_TRACE").is_some_and(|v| v != "0" && !v.is_empty());
        TRACE.store(on, Ordering::Relaxed);
    });
    guard
}

static TRACE: AtomicBool = AtomicBool::new(false);
static TRACE_FROM_ENV: Once = Once::new();

/// Whether every dispatch is printed (`SWITCHYARD_TRACE=1`, or [`set_dispatch_trace`]).
#[inline(always)]
pub(crate) fn trace_enabled() -> bool {
    TRACE.load(Ordering::Relaxed)
}

/// Turns the per-dispatch trace (the one `SWITCHYARD_TRACE=1` enables) on or off for the whole
/// process. While it is on, every call takes the dispatcher's out-of-line path, which prints; when
/// it is off, the typed hot path does not test for it at all.
pub fn set_dispatch_trace(on: bool) {
    let global = lock();
    TRACE.store(on, Ordering::Relaxed);
    global.refresh_all();
}

/// Where a runtime registration was made: the caller of the registering function.
pub(crate) fn caller_location(caller: &'static CallerLocation<'static>) -> Location {
    Location {
        module: "(registered at run time)",
        file: caller.file(),
        line: caller.line(),
    }
}

/// A live runtime registration. Dropping it undoes exactly that registration and recomputes the
/// affected tables; [`Registration::keep`] makes it permanent.
#[must_use = "dropping a `Registration` undoes it at once; bind it (`let _kernel = …`) or `keep()` it"]
pub struct Registration {
    id: u64,
    target: Target,
}

enum Target {
    /// A kernel or per-op fallthrough of one op.
    Op(&'static dyn ErasedOp),
    /// A fallback, which concerns every op.
    Fallback,
    /// Nothing left to undo (after `keep`).
    Kept,
}

impl Registration {
    pub(crate) fn op(id: u64, op: &'static dyn ErasedOp) -> Self {
        Registration {
            id,
            target: Target::Op(op),
        }
    }

    /// Makes the registration permanent: it is never undone.
    pub fn keep(mut self) {
        self.target = Target::Kept;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut global = lock();
        match self.target {
            Target::Op(op) => op.unregister(self.id, &global),
            Target::Fallback => {
                global.fallbacks.retain(|(id, _)| *id != self.id);
                global.refresh_all();
            }
            Target::Kept => {}
        }
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = match self.target {
            Target::Op(op) => op.info().name,
            Target::Fallback => "(fallback)",
            Target::Kept => "(kept)",
        };
        write!(f, "Registration({target} #{})", self.id)
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
    global.refresh_all();
    Ok(Registration {
        id,
        target: Target::Fallback,
    })
}
