//! Thread-local include and exclude key sets, changed through scoped guards.

use std::cell::Cell;
use std::marker::PhantomData;

use crate::key::{DispatchKey, DispatchKeySet};

/// The calling thread's include and exclude sets.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct LocalKeys {
    /// Added to every call's key set (modes such as tracing).
    pub included: DispatchKeySet,
    /// Removed from every call's key set; wins over `included`.
    pub excluded: DispatchKeySet,
}

/// What the hot path reads: the include set, and the *complement* of the exclude set, so that
/// applying both is `(keys | included) & kept` with no negation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalMasks {
    pub(crate) included: u64,
    pub(crate) kept: u64,
}

thread_local! {
    // `const` init and a `Copy` payload: no lazy-init check and no destructor, so reading this on
    // the hot path is two thread-pointer-relative loads.
    static LOCAL: Cell<LocalMasks> = const { Cell::new(LocalMasks { included: 0, kept: !0 }) };
}

/// The hot path's view of the thread's sets.
#[inline(always)]
pub(crate) fn local_masks() -> LocalMasks {
    LOCAL.with(Cell::get)
}

impl From<LocalMasks> for LocalKeys {
    fn from(masks: LocalMasks) -> Self {
        LocalKeys {
            included: DispatchKeySet::from_bits_retain(masks.included),
            excluded: DispatchKeySet::from_bits_retain(!masks.kept),
        }
    }
}

impl From<LocalKeys> for LocalMasks {
    fn from(keys: LocalKeys) -> Self {
        LocalMasks {
            included: keys.included.bits(),
            kept: !keys.excluded.bits(),
        }
    }
}

/// The calling thread's include and exclude sets.
pub fn local_keys() -> LocalKeys {
    local_masks().into()
}

/// Restores the thread's previous include/exclude sets when dropped.
///
/// Guards must be dropped in the reverse order of their creation (scopes do that); dropping one
/// out of order panics, because restoring would silently undo a newer guard. A guard is `!Send`:
/// it belongs to the thread whose sets it changed.
#[must_use = "the keys are restored when the guard drops; bind it with `let _guard = …`"]
#[derive(Debug)]
pub struct KeyGuard {
    previous: LocalKeys,
    installed: LocalKeys,
    _not_send: PhantomData<*const ()>,
}

impl KeyGuard {
    fn install(change: impl FnOnce(LocalKeys) -> LocalKeys) -> KeyGuard {
        let previous = local_keys();
        let installed = change(previous);
        LOCAL.with(|cell| cell.set(installed.into()));
        KeyGuard {
            previous,
            installed,
            _not_send: PhantomData,
        }
    }
}

impl Drop for KeyGuard {
    fn drop(&mut self) {
        let current = local_keys();
        if current != self.installed && !std::thread::panicking() {
            panic!(
                "switchyard: key guards dropped out of order (this guard set {:?}, but the thread \
                 now has {:?}); drop guards in reverse order of creation",
                self.installed, current
            );
        }
        LOCAL.with(|cell| cell.set(self.previous.into()));
    }
}

/// Adds `keys` to the calling thread's include set until the guard drops.
pub fn include(keys: impl Into<DispatchKeySet>) -> KeyGuard {
    let keys = keys.into();
    KeyGuard::install(|l| LocalKeys {
        included: l.included | keys,
        ..l
    })
}

/// Adds `keys` to the calling thread's exclude set until the guard drops.
///
/// `exclude(DispatchKey::CpuSimd)` forces the naive CPU backend inside its scope.
pub fn exclude(keys: impl Into<DispatchKeySet>) -> KeyGuard {
    let keys = keys.into();
    KeyGuard::install(|l| LocalKeys {
        excluded: l.excluded | keys,
        ..l
    })
}

/// Runs `f` with `key` excluded on this thread.
pub fn with_excluded<R>(key: DispatchKey, f: impl FnOnce() -> R) -> R {
    let _guard = exclude(key);
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_nest_and_restore() {
        assert_eq!(local_keys(), LocalKeys::default());
        {
            let _a = exclude(DispatchKey::CpuSimd);
            {
                let _b = include(DispatchKey::Tracing);
                assert_eq!(local_keys().included, DispatchKeySet::TRACING);
                assert_eq!(local_keys().excluded, DispatchKeySet::CPU_SIMD);
            }
            assert_eq!(local_keys().included, DispatchKeySet::EMPTY);
            assert_eq!(local_keys().excluded, DispatchKeySet::CPU_SIMD);
        }
        assert_eq!(local_keys(), LocalKeys::default());
    }
}
