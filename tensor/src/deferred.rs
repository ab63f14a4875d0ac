//! Checks of values an op cannot read when it is called. A web page cannot wait for its GPU, so
//! an op that checks its arguments' values (`cross_entropy`'s target range) cannot read GPU
//! targets there; it computes the check on the device instead and leaves it here with
//! [`check`], and the next [`Tensor::try_to_vec_async`] (or `try_item_async`) reads every pending
//! check first and returns the error of the first that failed: the error arrives late, but it
//! arrives, as a CUDA device-side assert does in PyTorch. Where values can be read at the call
//! ([`readable_now`]: the CPU, or a native GPU, whose read waits), ops check them there and
//! nothing is deferred. A downstream op does the same:
//!
//! ```
//! use switchyard::ops::lt;
//! use switchyard::{DispatchError, Tensor, deferred};
//!
//! /// Refuses negative weights, wherever they live.
//! fn check_weights(w: &Tensor) -> Result<(), DispatchError> {
//!     let negative = lt(w, &Tensor::scalar(0.0).try_to(w.device())?);
//!     if deferred::readable_now(w) {
//!         if negative.try_to_vec::<bool>()?.contains(&true) {
//!             return Err(DispatchError::kernel("my_loss", "a weight is negative"));
//!         }
//!         return Ok(());
//!     }
//!     deferred::check("my_loss", "a weight is negative".into(), &negative)
//! }
//!
//! assert!(check_weights(&Tensor::vector(&[1.0, -2.0])).is_err());
//! ```

use std::sync::{Mutex, PoisonError};

use switchyard::DispatchError;

use crate::ops::{try_add, try_eq, try_full, try_sum, try_sum_dim, try_to_dtype, try_where_cond};
use crate::tensor::Tensor;

/// A check left for the next async read: `op` fails with `message` unless `failures` (a
/// 0-dimensional `f32` count on the device) is 0.
struct Pending {
    op: &'static str,
    message: String,
    failures: Tensor,
}

/// Every thread's pending checks: a read on any thread reports them (they are errors of the
/// program, not of one call). Checks with the same op and message are summed into one, so a
/// training loop that never fails keeps one entry per distinct message, not one per step.
static PENDING: Mutex<Vec<Pending>> = Mutex::new(Vec::new());

/// Whether `x`'s values can be read where this is called: on the CPU, and on a device whose
/// [`read_bytes`](crate::BackendStorage::read_bytes) waits for them; not on one that answers
/// only asynchronously (see [`crate::BackendStorage::reads_synchronously`]).
pub fn readable_now(x: &Tensor) -> bool {
    x.storage()
        .backend()
        .is_none_or(|backend| backend.reads_synchronously())
}

/// Leaves a check for the next async read: `op` fails with `message` unless every element of
/// `failed` (a `bool` tensor, on any device) is false. Errors only when the ops that count the
/// failures on the device fail.
pub fn check(op: &'static str, message: String, failed: &Tensor) -> Result<(), DispatchError> {
    let failures = try_sum(&try_to_dtype(failed, switchyard::DType::F32)?)?;
    let mut pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(same) = pending
        .iter_mut()
        .find(|p| p.op == op && p.message == message && p.failures.device() == failures.device())
    {
        // A sum of 0s and 1s: positive once any element failed, however many there are.
        same.failures = try_add(&same.failures, &failures)?;
        return Ok(());
    }
    pending
        .try_reserve(1)
        .map_err(|_| DispatchError::out_of_memory(op, size_of::<Pending>()))?;
    pending.push(Pending {
        op,
        message,
        failures,
    });
    Ok(())
}

/// Defers a loss's check that every target is a class index in `0..classes`: `matches` (`bool`,
/// `[N, C, …]`) says which class each target matched, so a row without a match is a target out
/// of range, unless `counted` (`bool`, `[N, 1, …]`) says the target is ignored.
pub(crate) fn defer_target_range(
    op: &'static str,
    logits: &Tensor,
    targets: &Tensor,
    classes: usize,
    matches: &Tensor,
    counted: Option<&Tensor>,
) -> Result<(), DispatchError> {
    let device = matches.device();
    let f32 = switchyard::DType::F32;
    let per_row = try_sum_dim(&try_to_dtype(matches, f32)?, &[1], true)?;
    let mut unmatched = try_eq(&per_row, &try_full(&[], 0.0, f32, device)?)?;
    if let Some(counted) = counted {
        let no = try_full(&[], 0.0, switchyard::DType::Bool, device)?;
        unmatched = try_where_cond(counted, &unmatched, &no)?;
    }
    let message = format!(
        "{}: a target is not a class index in 0..{classes}{} (checked on the device, whose \
         values could not be read when the loss was computed; reported at this later read)",
        crate::nn_composites::describe_arguments(logits, targets),
        if counted.is_some() {
            " nor the ignored value"
        } else {
            ""
        }
    );
    check(op, message, &unmatched)
}

/// How many checks wait for the next async read (checks of one op with one message count once).
pub fn pending() -> usize {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner).len()
}

/// Reads the pending checks (asynchronously) and returns the first failed one's error. The
/// checks are taken either way: each is reported at most once, and those after a failed one are
/// dropped with it (the program has an error to handle already).
pub(crate) async fn settle() -> Result<(), DispatchError> {
    let taken = std::mem::take(&mut *PENDING.lock().unwrap_or_else(PoisonError::into_inner));
    for check in taken {
        let failures = check.failures.fetch_async::<f32>().await?;
        if failures.first().is_some_and(|&n| n > 0.0) {
            return Err(DispatchError::kernel(check.op, check.message));
        }
    }
    Ok(())
}
