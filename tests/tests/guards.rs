//! Thread-local include/exclude guards: what they change, how they nest and restore.

use std::sync::mpsc;

use switchyard::{
    DispatchKey, DispatchKeySet, LocalKeys, Tensor, exclude, include, kernel, local_keys, op,
};

/// Returns which backend ran: 2 for SIMD, 1 for naive.
#[op]
pub fn which(x: &Tensor) -> f32;

#[kernel(op = "which", key = CpuSimd)]
fn which_simd(_x: &Tensor) -> f32 {
    2.0
}

#[kernel(op = "which", key = CpuNaive)]
fn which_naive(_x: &Tensor) -> f32 {
    1.0
}

#[test]
fn exclude_forces_naive_and_nesting_restores() {
    let x = Tensor::scalar(0.0);
    assert_eq!(which(&x), 2.0, "SIMD is preferred");
    {
        let _naive = exclude(DispatchKey::CpuSimd);
        assert_eq!(which(&x), 1.0);
        {
            let _again = exclude(DispatchKey::CpuSimd);
            assert_eq!(which(&x), 1.0);
        }
        assert_eq!(
            which(&x),
            1.0,
            "the inner guard restores the outer one's state, not the default"
        );
        {
            let _tracing = include(DispatchKey::Tracing);
            assert_eq!(local_keys().included, DispatchKeySet::TRACING);
            assert_eq!(local_keys().excluded, DispatchKeySet::CPU_SIMD);
        }
        assert_eq!(local_keys().included, DispatchKeySet::EMPTY);
    }
    assert_eq!(which(&x), 2.0);
    assert_eq!(local_keys(), LocalKeys::default());
}

#[test]
fn exclusion_beats_inclusion() {
    let x = Tensor::scalar(0.0);
    let _include = include(DispatchKey::CpuSimd);
    let _exclude = exclude(DispatchKey::CpuSimd);
    assert_eq!(which(&x), 1.0);
}

#[test]
fn with_excluded_scopes_a_closure() {
    let x = Tensor::scalar(0.0);
    assert_eq!(
        switchyard::with_excluded(DispatchKey::CpuSimd, || which(&x)),
        1.0
    );
    assert_eq!(which(&x), 2.0);
}

#[test]
fn guards_are_per_thread() {
    let _naive = exclude(DispatchKey::CpuSimd);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(which(&Tensor::scalar(0.0))).unwrap());
    assert_eq!(rx.recv().unwrap(), 2.0, "another thread is not affected");
    assert_eq!(which(&Tensor::scalar(0.0)), 1.0);
}

#[test]
fn out_of_order_drop_panics_and_names_the_problem() {
    let result = std::thread::spawn(|| {
        let outer = exclude(DispatchKey::CpuSimd);
        let _inner = include(DispatchKey::Tracing);
        drop(outer);
    })
    .join();
    let message = *result.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.contains("key guards dropped out of order"),
        "{message}"
    );
}
