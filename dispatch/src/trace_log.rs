//! `SWITCHYARD_TRACE=1`: one line per dispatch on stderr, indented by nesting depth.
//!
//! Off, it costs the typed hot path nothing: ops' fast masks are zero while it is on, so every
//! call takes the out-of-line path, and only that path tests the flag (one relaxed load).

use std::cell::Cell;

use crate::diag::stderr_line;
use crate::key::{DispatchKey, DispatchKeySet};
use crate::resolve::SlotOrigin;
use crate::runtime::trace_enabled;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Prints one dispatch: op, key set, chosen key, and what the slot resolved to.
#[cold]
pub(crate) fn dispatch(op: &str, keys: DispatchKeySet, index: Option<usize>, origin: SlotOrigin) {
    let depth = DEPTH.with(Cell::get);
    let chosen = index
        .and_then(DispatchKey::from_index)
        .map_or("(no keys: composite)", DispatchKey::name);
    stderr_line(format_args!(
        "[switchyard] {:indent$}{op} keys={keys} -> {chosen} {origin}",
        "",
        indent = 2 * depth
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
    DEPTH.with(|d| d.set(d.get() + 1));
    Some(DepthGuard(()))
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}
