//! The dispatch trace: one record per dispatch (op, key set, chosen key, kernel, provenance,
//! nesting), written as a line on stderr (`SWITCHYARD_TRACE=1`, [`set_dispatch_trace`]) and, with
//! the crate feature `tracing`, as a `tracing` event and span (`SWITCHYARD_TRACE=tracing`,
//! [`set_tracing_events`]).
//!
//! Off, it costs the typed hot path nothing: ops' fast masks are zero while any sink is on, so
//! every call takes the out-of-line path, and only that path tests the sinks (one relaxed load).

use std::cell::Cell;
use std::sync::Once;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::diag::stderr_line;
use crate::error::DispatchError;
use crate::key::{DispatchKey, DispatchKeySet};
use crate::origin::SlotOrigin;

/// The sinks that are on: a bit each.
static SINKS: AtomicU8 = AtomicU8::new(0);
static TRACE_FROM_ENV: Once = Once::new();

/// One line per dispatch on stderr.
pub(crate) const STDERR: u8 = 1;
/// One `tracing` event and span per dispatch (crate feature `tracing`).
pub(crate) const EVENTS: u8 = 2;

/// Reads `SWITCHYARD_TRACE` once: `tracing` turns on the `tracing` events, any other value but
/// `0` or empty the stderr lines. The global registration lock calls it, so the sinks are set
/// before any table is published (every publication happens under that lock).
pub(crate) fn read_env_once() {
    TRACE_FROM_ENV.call_once(|| {
        let Some(value) = std::env::var_os("SWITCHYARD_TRACE") else {
            return;
        };
        let sinks = if value == "0" || value.is_empty() {
            0
        } else if value == "tracing" {
            if cfg!(feature = "tracing") {
                EVENTS
            } else {
                stderr_line(format_args!(
                    "[switchyard] SWITCHYARD_TRACE=tracing needs the crate feature `tracing` of \
                     switchyard; printing the trace on stderr instead"
                ));
                STDERR
            }
        } else {
            STDERR
        };
        SINKS.fetch_or(sinks, Ordering::Relaxed);
    });
}

/// Whether every dispatch is recorded (any sink on).
#[inline(always)]
pub(crate) fn trace_enabled() -> bool {
    SINKS.load(Ordering::Relaxed) != 0
}

#[inline(always)]
fn sink_on(sink: u8) -> bool {
    SINKS.load(Ordering::Relaxed) & sink != 0
}

/// Turns one sink on or off; the caller republishes every table (ops' fast masks depend on it).
pub(crate) fn set_sink(sink: u8, on: bool) {
    if on {
        SINKS.fetch_or(sink, Ordering::Relaxed);
    } else {
        SINKS.fetch_and(!sink, Ordering::Relaxed);
    }
}

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

// It needs no drop, so `try_with` below never fails today; it is there so that a later change of
// its type cannot make a call from a thread-local destructor abort.

fn depth() -> usize {
    DEPTH.try_with(Cell::get).unwrap_or(0)
}

/// Records one dispatch: op, key set, chosen key, and what the slot resolved to.
#[cold]
pub(crate) fn dispatch(op: &str, keys: DispatchKeySet, index: Option<usize>, origin: SlotOrigin) {
    let chosen = index
        .and_then(DispatchKey::from_index)
        .map_or("(no keys: composite)", DispatchKey::name);
    if sink_on(STDERR) {
        stderr_line(format_args!(
            "[switchyard] {:indent$}{op} keys={keys} -> {chosen} {origin}",
            "",
            indent = 2 * depth()
        ));
    }
    #[cfg(feature = "tracing")]
    if sink_on(EVENTS) {
        events::dispatch(op, keys, chosen, origin, depth());
    }
}

/// Records one dispatch that failed, with its error.
#[cold]
pub(crate) fn failure(op: &str, keys: DispatchKeySet, error: &DispatchError) {
    if sink_on(STDERR) {
        stderr_line(format_args!(
            "[switchyard] {:indent$}{op} keys={keys} -> error: {error}",
            "",
            indent = 2 * depth()
        ));
    }
    #[cfg(feature = "tracing")]
    if sink_on(EVENTS) {
        events::failure(op, keys, error, depth());
    }
}

/// While the dispatch trace is on, one level of nesting for the kernel about to run (and, with
/// `tracing` events on, the dispatch's span, entered).
#[derive(Debug)]
pub struct DepthGuard {
    #[cfg(feature = "tracing")]
    _span: Option<tracing::span::EnteredSpan>,
}

/// Enters one nesting level if the dispatch trace is on: the kernel of the dispatch just recorded
/// is about to run.
#[inline]
pub fn enter() -> Option<DepthGuard> {
    if !trace_enabled() {
        return None;
    }
    let _ = DEPTH.try_with(|d| d.set(d.get() + 1));
    Some(DepthGuard {
        #[cfg(feature = "tracing")]
        _span: events::enter(),
    })
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// The dispatch trace as `tracing` events and spans, under the target `switchyard`: each dispatch
/// is a `DEBUG` event (a failed one carries its `error`), and its kernel runs inside a `DEBUG`
/// span `dispatch`, so dispatches its kernel makes nest under it.
#[cfg(feature = "tracing")]
mod events {
    use std::cell::RefCell;

    use tracing::Span;

    use super::{DispatchError, DispatchKeySet, SlotOrigin};

    thread_local! {
        /// The span of the dispatch just recorded, entered when its kernel starts ([`enter`]).
        static PENDING: RefCell<Option<Span>> = const { RefCell::new(None) };
    }

    /// The name of what a slot holds: the kernel's or fallback's, else the kind of slot.
    fn kernel_name(origin: &SlotOrigin) -> &'static str {
        match origin {
            SlotOrigin::Kernel(meta)
            | SlotOrigin::CompositeExplicit(meta)
            | SlotOrigin::AutogradAlias(meta)
            | SlotOrigin::Fallback(meta)
            | SlotOrigin::FallbackUnboxed(meta) => meta.name,
            SlotOrigin::Composite => "composite",
            SlotOrigin::Conflict(_) => "conflict",
            SlotOrigin::Fallthrough => "fallthrough",
            SlotOrigin::Missing => "missing",
        }
    }

    pub(super) fn dispatch(
        op: &str,
        keys: DispatchKeySet,
        chosen: &'static str,
        origin: SlotOrigin,
        depth: usize,
    ) {
        let kernel = kernel_name(&origin);
        tracing::debug!(
            target: "switchyard",
            op,
            keys = %keys,
            chosen,
            kernel,
            provenance = %origin,
            depth,
            "dispatch"
        );
        let span = tracing::debug_span!(target: "switchyard", "dispatch", op, chosen, kernel);
        let _ = PENDING.try_with(|p| *p.borrow_mut() = Some(span));
    }

    pub(super) fn failure(op: &str, keys: DispatchKeySet, error: &DispatchError, depth: usize) {
        tracing::debug!(
            target: "switchyard",
            op,
            keys = %keys,
            error = %error,
            depth,
            "dispatch failed"
        );
    }

    pub(super) fn enter() -> Option<tracing::span::EnteredSpan> {
        PENDING
            .try_with(|p| p.borrow_mut().take())
            .ok()
            .flatten()
            .map(Span::entered)
    }
}
