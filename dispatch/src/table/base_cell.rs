//! The cell that holds an op's base table: a `OnceLock` the hot path can read without testing
//! whether it is set.
//!
//! Why not `OnceLock` itself: its `get` loads and tests the cell's state on every call (a load, a
//! test and a branch on the hot path). The hot path already learns that the base table is
//! set from another load it needs anyway: a column's fast mask is non-zero only after the table
//! was set (`OpTable::publish` sets the table, *then* stores the masks with `Release`; the hot path
//! loads a mask with `Acquire`). So the hot path reads the table through
//! [`BaseCell::get_published`], whose caller states that fact, and every other reader uses the
//! checked [`BaseCell::get`].

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::Once;

/// A value set at most once ([`BaseCell::get_or_init`]), then read by shared reference.
pub(super) struct BaseCell<T> {
    once: Once,
    value: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: the value is written once, inside `once.call_once`, before `once` completes, and never
// again; it is read only after that completion is observed (`get`, `get_or_init`: `Once`'s
// acquire) or after an `Acquire` load that synchronises with a `Release` store made after it
// (`get_published`'s contract). So a `&BaseCell<T>` shared between threads gives them `&T` only:
// `T: Sync` suffices for that, and `T: Send` because the thread that initialises it may not be
// the one that drops it.
#[allow(unsafe_code)]
unsafe impl<T: Send + Sync> Sync for BaseCell<T> {}

impl<T> BaseCell<T> {
    pub(super) const fn new() -> Self {
        BaseCell {
            once: Once::new(),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// The value, if it is set.
    #[inline]
    #[allow(unsafe_code)]
    pub(super) fn get(&self) -> Option<&T> {
        if self.once.is_completed() {
            // SAFETY: `once` completed (observed with acquire ordering), so `call_once`'s closure
            // in `get_or_init` ran to its end: the value is initialised, and never written again.
            Some(unsafe { self.get_published() })
        } else {
            None
        }
    }

    /// The value, set by `init` if it is not set yet (`init` runs at most once; a panic in it
    /// leaves the cell unset and poisons it, so later calls panic too: the caller's `init` only
    /// moves a value in).
    #[allow(unsafe_code)]
    pub(super) fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
        self.once.call_once(|| {
            // SAFETY: inside `call_once`'s closure, which runs at most once and excludes every
            // other caller, and no reader reads before `once` completes (`get`, and
            // `get_published`'s contract): nothing else accesses the value meanwhile.
            unsafe { (*self.value.get()).write(init()) };
        });
        // SAFETY: `call_once` returned normally, so `once` completed: the value is set.
        unsafe { self.get_published() }
    }

    /// The value, without testing that it is set.
    ///
    /// # Safety
    /// The value must be set, and its setting must happen before this call: the caller has
    /// observed `once`'s completion, or has loaded with `Acquire` a value that a thread stored
    /// with `Release` after `get_or_init` returned (the op's fast masks).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) unsafe fn get_published(&self) -> &T {
        // SAFETY: the caller's contract: the value was written (initialised) and that write
        // happens before this read; it is never written again, so a shared borrow is sound.
        unsafe { (*self.value.get()).assume_init_ref() }
    }
}

impl<T> Drop for BaseCell<T> {
    fn drop(&mut self) {
        if self.once.is_completed() {
            // SAFETY: the value is set (`once` completed) and this is its last use (`&mut self`
            // in `drop`): dropped exactly once.
            #[allow(unsafe_code)]
            unsafe {
                self.value.get_mut().assume_init_drop()
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::BaseCell;

    #[test]
    fn get_is_none_until_set_then_the_value_set_first() {
        let cell = BaseCell::new();
        assert!(cell.get().is_none());
        assert_eq!(*cell.get_or_init(|| 7), 7);
        assert_eq!(*cell.get_or_init(|| 8), 7, "a second init must not run");
        assert_eq!(cell.get(), Some(&7));
    }

    #[test]
    fn the_value_drops_once_with_the_cell_and_an_unset_cell_drops_nothing() {
        let drops = Arc::new(AtomicUsize::new(0));
        struct Counted(Arc<AtomicUsize>);
        impl Drop for Counted {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        drop(BaseCell::<Counted>::new());
        let cell = BaseCell::new();
        cell.get_or_init(|| Counted(drops.clone()));
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(cell);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn racing_initialisers_agree_on_one_value() {
        let cell = BaseCell::new();
        let runs = AtomicUsize::new(0);
        let seen: Vec<usize> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..8)
                .map(|i| {
                    let (cell, runs) = (&cell, &runs);
                    s.spawn(move || {
                        *cell.get_or_init(|| {
                            runs.fetch_add(1, Ordering::SeqCst);
                            i
                        })
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert!(seen.iter().all(|&v| v == seen[0]));
    }
}
