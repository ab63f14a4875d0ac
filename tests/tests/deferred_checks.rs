//! Deferred checks (`switchyard::deferred`): a check left for the next async read fails that
//! read once, passing checks leave reads alone however many there are, and one failure among
//! many passes is still reported. On the CPU here; the web page's test checks `cross_entropy`'s
//! deferred target check on WebGPU.

use std::sync::{Mutex, PoisonError};

use switchyard::{Tensor, deferred};
use switchyard_backends as _;

fn flags(values: &[bool]) -> Tensor {
    Tensor::from_slice(values, &[values.len()]).unwrap()
}

/// Pending checks are the process's: these tests take turns (a read settles every pending check).
static TURNS: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURNS.lock().unwrap_or_else(PoisonError::into_inner)
}

#[test]
fn a_failed_check_is_the_next_async_reads_error_once() {
    let _turn = turn();
    const OP: &str = "test::deferred_fails";
    deferred::check(
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
        deferred::check(OP, "never fails".into(), &flags(&[false, false, false])).unwrap();
    }
    assert_eq!(deferred::pending(), 1, "one entry for one op and message");
    let x = Tensor::vector(&[2.0]);
    let item = pollster::block_on(x.try_item_async()).unwrap();
    assert_eq!(item.as_f64(), 2.0);
    assert_eq!(deferred::pending(), 0, "the read settled it");
}

/// The async reads are `Send`: a multi-threaded executor can run them.
#[test]
fn async_reads_are_send() {
    fn send<T: Send>(_: T) {}
    let x = Tensor::vector(&[1.0]);
    send(x.try_to_vec_async::<f32>());
    send(x.try_item_async());
}

#[test]
fn a_failure_among_many_passes_is_still_reported() {
    let _turn = turn();
    const OP: &str = "test::deferred_one_bad";
    for step in 0..50 {
        deferred::check(OP, "one bad step".into(), &flags(&[step == 31, false])).unwrap();
    }
    let error = pollster::block_on(Tensor::vector(&[0.0]).try_to_vec_async::<f32>());
    assert!(error.is_err_and(|e| e.to_string().contains("one bad step")));
}
