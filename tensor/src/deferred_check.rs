//! Checks of values a caller cannot read when it makes its call. A web page cannot wait for its
//! GPU, so an op that checks its arguments' values (`cross_entropy`'s target range) cannot read
//! GPU targets there; it computes the check on the device instead and leaves it here, and the
//! next [`Tensor::try_to_vec_async`] (or `try_item_async`) reads every pending check first and
//! returns the error of the first that failed: the error arrives late, but it arrives, as a
//! CUDA device-side assert does in PyTorch. Where values can be read at the call (the CPU, or a
//! native GPU, whose read waits), ops check them there and nothing is deferred.

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
pub(crate) fn readable_now(x: &Tensor) -> bool {
    x.storage()
        .backend()
        .is_none_or(|backend| backend.reads_synchronously())
}

/// Leaves a check for the next async read: `op` fails with `message` unless every element of
/// `failed` (a `bool` tensor on the device) is false.
pub(crate) fn defer(
    op: &'static str,
    message: String,
    failed: &Tensor,
) -> Result<(), DispatchError> {
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
    defer(op, message, &unmatched)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(values: &[bool]) -> Tensor {
        Tensor::from_slice(values, &[values.len()]).unwrap()
    }

    /// `PENDING` is the process's: these tests take turns (a read settles every pending check).
    static TURNS: Mutex<()> = Mutex::new(());

    fn turn() -> std::sync::MutexGuard<'static, ()> {
        TURNS.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[test]
    fn a_failed_check_is_the_next_async_reads_error_once() {
        let _turn = turn();
        const OP: &str = "test::deferred_fails";
        defer(
            OP,
            "target 9 is out of range".into(),
            &flags(&[false, true]),
        )
        .unwrap();
        let x = Tensor::vector(&[1.0]);
        let error = pollster::block_on(x.try_to_vec_async::<f32>()).unwrap_err();
        assert!(
            error.to_string().contains("target 9 is out of range"),
            "{error}"
        );
        assert!(error.to_string().contains(OP), "{error}");
        // Reported once: the next read succeeds.
        assert_eq!(
            pollster::block_on(x.try_to_vec_async::<f32>()).unwrap(),
            [1.0]
        );
    }

    #[test]
    fn passing_checks_are_summed_into_one_entry_and_leave_reads_alone() {
        let _turn = turn();
        const OP: &str = "test::deferred_passes";
        for _ in 0..100 {
            defer(OP, "never fails".into(), &flags(&[false, false, false])).unwrap();
        }
        let entries = PENDING
            .lock()
            .unwrap()
            .iter()
            .filter(|p| p.op == OP)
            .count();
        assert_eq!(entries, 1, "one entry for one op and message");
        let x = Tensor::vector(&[2.0]);
        let item = pollster::block_on(x.try_item_async()).unwrap();
        assert_eq!(item.as_f64(), 2.0);
        assert!(PENDING.lock().unwrap().iter().all(|p| p.op != OP));
    }

    #[test]
    fn a_failure_among_many_passes_is_still_reported() {
        let _turn = turn();
        const OP: &str = "test::deferred_one_bad";
        for step in 0..50 {
            defer(OP, "one bad step".into(), &flags(&[step == 31, false])).unwrap();
        }
        let error = pollster::block_on(Tensor::vector(&[0.0]).try_to_vec_async::<f32>());
        assert!(error.is_err_and(|e| e.to_string().contains("one bad step")));
    }
}
