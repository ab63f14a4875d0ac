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
#[cfg_attr(target_family = "wasm", ignore = "wasm32 starts no threads")]
fn guards_are_per_thread() {
    let _naive = exclude(DispatchKey::CpuSimd);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(which(&Tensor::scalar(0.0))).unwrap());
    assert_eq!(rx.recv().unwrap(), 2.0, "another thread is not affected");
    assert_eq!(which(&Tensor::scalar(0.0)), 1.0);
}

#[test]
#[cfg_attr(target_family = "wasm", ignore = "wasm32 starts no threads")]
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

/// Runs `f` on a thread of its own (fresh thread-local sets), which must not panic.
fn on_a_fresh_thread(f: impl FnOnce() + Send + 'static) {
    std::thread::spawn(f)
        .join()
        .expect("the thread's checks pass");
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "wasm32 aborts on panic: nothing to catch"
)]
fn a_caught_out_of_order_drop_still_restores_exactly() {
    on_a_fresh_thread(|| {
        let x = Tensor::scalar(0.0);
        let outer = exclude(DispatchKey::CpuSimd);
        let inner = include(DispatchKey::CpuNaive);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(outer)));
        assert!(panicked.is_err(), "an out-of-order drop is flagged");
        // The outer guard's change is gone, the inner guard's is still in force.
        assert_eq!(local_keys().excluded, DispatchKeySet::EMPTY);
        assert_eq!(local_keys().included, DispatchKeySet::CPU_NAIVE);
        drop(inner);
        assert_eq!(local_keys(), LocalKeys::default());
        assert_eq!(which(&x), 2.0, "the SIMD kernel runs again");
    });
}

/// Two guards in a struct: fields drop in declaration order, so `_older` drops first.
struct Scrambled {
    _older: switchyard::KeyGuard,
    _newer: switchyard::KeyGuard,
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "wasm32 aborts on panic: nothing to catch"
)]
fn out_of_order_drops_during_unwinding_restore_exactly() {
    on_a_fresh_thread(|| {
        let x = Tensor::scalar(0.0);
        let panicked = std::panic::catch_unwind(|| {
            let _guards = Scrambled {
                _older: exclude(DispatchKey::CpuSimd),
                _newer: include(DispatchKey::CpuNaive),
            };
            assert_eq!(which(&Tensor::scalar(0.0)), 1.0);
            panic!("a kernel failed");
        });
        assert!(panicked.is_err());
        // A pool worker that caught the panic: its next call sees the keys of before.
        assert_eq!(local_keys(), LocalKeys::default());
        assert_eq!(which(&x), 2.0, "the SIMD kernel runs again");
    });
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "wasm32 aborts on panic: nothing to catch"
)]
fn an_out_of_order_drop_outside_unwinding_panics_then_unwinds_the_rest_exactly() {
    on_a_fresh_thread(|| {
        let x = Tensor::scalar(0.0);
        let panicked = std::panic::catch_unwind(|| {
            // `_older` panics on its drop; `_newer` then drops while the thread unwinds.
            let _guards = Scrambled {
                _older: exclude(DispatchKey::CpuSimd),
                _newer: include(DispatchKey::CpuNaive),
            };
        });
        let message = *panicked.unwrap_err().downcast::<String>().unwrap();
        assert!(
            message.contains("key guards dropped out of order"),
            "{message}"
        );
        assert_eq!(local_keys(), LocalKeys::default());
        assert_eq!(which(&x), 2.0, "the SIMD kernel runs again");
    });
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "wasm32 aborts on panic: nothing to catch"
)]
fn guards_dropped_by_hand_in_any_order_inside_a_panicking_scope_restore_exactly() {
    /// Drops its guards oldest first from its own `Drop`, i.e. while the thread unwinds.
    struct DropsOldestFirst(Vec<switchyard::KeyGuard>);
    impl Drop for DropsOldestFirst {
        fn drop(&mut self) {
            for guard in self.0.drain(..) {
                std::mem::drop(guard);
            }
        }
    }
    on_a_fresh_thread(|| {
        let x = Tensor::scalar(0.0);
        let _outer = include(DispatchKey::CpuNaive);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = DropsOldestFirst(vec![
                exclude(DispatchKey::CpuSimd),
                include(DispatchKey::CpuSimd),
                exclude(DispatchKey::CpuSimd),
            ]);
            panic!("a kernel failed");
        }));
        assert!(panicked.is_err());
        assert_eq!(local_keys().included, DispatchKeySet::CPU_NAIVE);
        assert_eq!(local_keys().excluded, DispatchKeySet::EMPTY);
        assert_eq!(which(&x), 2.0, "the SIMD kernel runs again");
    });
}
