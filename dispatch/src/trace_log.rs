//! `SWITCHYARD_TRACE=1`: one line per dispatch on stderr, indented by nesting depth; a dispatch
//! that fails prints its error.
//!
//! Off, it costs the typed hot path nothing: ops' fast masks are zero while it is on, so every
//! call takes the out-of-line path, and only that path tests the flag (one relaxed load).

use std::cell::Cell;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::diag::stderr_line;
use crate::error::DispatchError;
use crate::key::{DispatchKey, DispatchKeySet};
use crate::origin::SlotOrigin;

static TRACE: AtomicBool = AtomicBool::new(false);
static TRACE_FROM_ENV: Once = Once::new();

/// Reads `SWITCHYARD_TRACE` once. The global registration lock calls it, so the flag is read
/// before any table is published (every publication happens under that lock).
pub(crate) fn read_env_once() {
    TRACE_FROM_ENV.call_once(|| {
        let on = std::env::var_os("SWITCHYARD_TRACE").is_some_and(|v| v != "0" && !v.is_empty());
        TRACE.store(on, Ordering::Relaxed);
    });
}

/// Whether every dispatch is printed (`SWITCHYARD_TRACE=1`, or `set_dispatch_trace`).
#[inline(always)]
pub(crate) fn trace_enabled() -> bool {
    TRACE.load(Ordering::Relaxed)
}

/// Turns the trace on or off; the caller republishes every table (ops' fast masks depend on it).
pub(crate) fn set_trace(on: bool) {
    TRACE.store(on, Ordering::Relaxed);
}

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

// It needs no drop, so `try_with` below never fails today; it is there so that a later change of
// its type cannot make a call from a thread-local destructor abort.

fn depth() -> usize {
    DEPTH.try_with(Cell::get).unwrap_or(0)
}

/// Prints one dispatch: op, key set, chosen key, and what the slot resolved to.
#[cold]
pub(crate) fn dispatch(op: &str, keys: DispatchKeySet, index: Option<usize>, origin: SlotOrigin) {
    let chosen = index
        .and_then(DispatchKey::from_index)
        .map_or("(no keys: composite)", DispatchKey::name);
    stderr_line(format_args!(
        "[switchyard] {:indent$}{op} keys={keys} -> {chosen} {origin}",
        "",
        indent = 2 * depth()
    ));
}

/// Prints one dispatch that failed, with its error.
#[cold]
pub(crate) fn failure(op: &str, keys: DispatchKeySet, error: &DispatchError) {
    stderr_line(format_args!(
        "[switchyard] {:indent$}{op} keys={keys} -> error: {error}",
        "",
        indent = 2 * depth()
    ));
}

/// While the dispatch trace is on, one level of nesting for the kernel about to run.
#[derive(Debug)]
pub struct DepthGuard(());

/// Enters one nesting level if the dispatch trace is on.
#[inline]
pub fn enter() -> Option<DepthGuard> {
    if !trace_enabled() {
        return None;
    }
    let _ = DEPTH.try_with(|d| d.set(d.get() + 1));
    Some(DepthGuard(()))
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
    }
}
