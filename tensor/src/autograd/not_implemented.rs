//! The opt-in that turns "this op has no derivative" from an error into a warning.

use std::collections::HashSet;
use std::io::Write as _;
use std::sync::{Mutex, PoisonError};

use switchyard::{
    AliasKey, DispatchError, DispatchKeySet, OpHandle, Registration, Stack, register_fallback,
};

/// While alive, an op without a derivative that a tensor requiring grad reaches runs without
/// recording (its result does not require grad) and prints one warning per op to stderr,
/// instead of failing. See [`warn_not_implemented`].
#[must_use = "the warnings replace the errors only while this is alive"]
#[derive(Debug)]
pub struct NotImplementedWarnings {
    _registrations: Vec<Registration>,
}

/// Opts in to warnings for ops without a derivative, as PyTorch's
/// `torch._C._set_autograd_fallback_mode("warn")` does: while the returned value lives (process
/// wide), such an op runs below autograd and prints
/// `switchyard: autograd: op `…` has no derivative; …` once, and gradients do not flow through
/// it. By default (without this) such a call is an error naming the op and the derivative to
/// register.
///
/// It registers a boxed fallback at every per-backend autograd key, so while it lives every op
/// is dispatched out of line (tens of nanoseconds more per call); it errors if another
/// fallback holds one of those keys.
pub fn warn_not_implemented() -> Result<NotImplementedWarnings, DispatchError> {
    let registrations = DispatchKeySet::AUTOGRAD
        .keys()
        .map(|key| register_fallback(key, "autograd_not_implemented_warning", warn_and_skip))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(NotImplementedWarnings {
        _registrations: registrations,
    })
}

/// The ops warned about so far (once each).
static WARNED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

fn warn_and_skip(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    let first = WARNED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashSet::new)
        .insert(op.name());
    if first {
        // A broken stderr must not fail the call.
        let _ = writeln!(
            std::io::stderr(),
            "switchyard: autograd: op `{}` has no derivative; it ran without recording, so no \
             gradient flows through it (register one with {})",
            op.name(),
            switchyard::__private_v1::derivative_kernel(&op.item_path())
        );
    }
    // Below autograd with autograd off: ops the kernel calls in turn record nothing either.
    let _below = crate::autograd::no_grad();
    op.redispatch_boxed(keys.below(AliasKey::Autograd), stack)
}
