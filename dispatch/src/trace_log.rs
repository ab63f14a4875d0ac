//! `SWITCHYARD_TRACE=1`: one line per dispatch on stderr, indented by nesting depth; a dispatch
//! that fails prints its error.
//!
//! Off, it costs the typed hot path nothing: ops' fast masks are zero while it is on, so every
//! call takes the out-of-line path, and only that path tests the flag (one relaxed load).

use std::cell::Cell;

use crate::diag::stderr_line;
use crate::error::DispatchError;
use crate::key::{DispatchKey, DispatchKeySet};
use crate::resolve::SlotOrigin;
use crate::runtime::trace_enabled;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// The typed dispatch just printed, when its slot is a boxed fallback: the op's boxing
    /// adapter runs next and continues it as a boxed call with the same keys, which is the same
    /// dispatch, not one more (see [`hand_off`]).
    static HANDED_OFF: Cell<Option<(&'static str, DispatchKeySet)>> = const { Cell::new(None) };
}

// Neither needs drop, so `try_with` below never fails today; it is there so that a later change
// of these types cannot make a call from a thread-local destructor abort.

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

/// Records that the typed dispatch of `op` for `keys` just printed hands over to the op's boxing
/// adapter (`Some`), or that it does not (`None`).
///
/// Why: a boxed fallback's typed slot holds the op's generated `__via_boxed`, which boxes the
/// arguments and calls `redispatch_boxed` with the very keys the typed call selected. Without
/// this, that boxed step would print the dispatch a second time, one level deeper.
pub(crate) fn hand_off(dispatch: Option<(&'static str, DispatchKeySet)>) {
    let _ = HANDED_OFF.try_with(|h| h.set(dispatch));
}

/// Whether a boxed dispatch of `op` for `keys` continues the typed dispatch just printed (then
/// it prints no line and enters no level). Clears the record either way.
pub(crate) fn continues_typed(op: &'static str, keys: DispatchKeySet) -> bool {
    HANDED_OFF
        .try_with(|h| h.take())
        .ok()
        .flatten()
        .is_some_and(|(handed_op, handed_keys)| handed_op == op && handed_keys == keys)
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
