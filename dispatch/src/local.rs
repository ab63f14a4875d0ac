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
    // the hot path is two thread-pointer-relative loads. It is derived from `GUARDS` whenever a
    // guard is created or dropped.
    //
    // Why plain `with` is right here (and in the guards' code below), where the rest of the engine
    // uses `try_with`: with native thread-locals (every tier-1 target), std stores a `const`
    // initialised value that does not need drop as a bare `#[thread_local]` static: no state, no
    // destructor registration, nothing that teardown destroys. So `with` cannot fail, not even
    // from another thread-local's destructor; the assertions below keep it that way.
    static LOCAL: Cell<LocalMasks> = const { Cell::new(LocalMasks { included: 0, kept: !0 }) };
    /// The live guards of this thread: what they add, and their nesting positions.
    static GUARDS: LiveGuards = const { LiveGuards::new() };
}

const _: () = assert!(!std::mem::needs_drop::<Cell<LocalMasks>>());
const _: () = assert!(!std::mem::needs_drop::<LiveGuards>());

/// A thread's live guards. The sets in force are always the union of what the live guards add,
/// so they do not depend on the order guards are dropped in: once every guard is gone, they are
/// empty again, whatever panics dropped guards out of order.
struct LiveGuards {
    /// Per key bit: how many live guards add it to the include set.
    included: [Cell<usize>; 64],
    /// Per key bit: how many live guards add it to the exclude set.
    excluded: [Cell<usize>; 64],
    /// Bit `p` is set while the guard at nesting position `p` lives. A new guard takes the
    /// position above the highest live one, so a live guard above another was created after it.
    positions: Cell<u64>,
}

/// The position of a guard created while position 63 is taken (guards nested 64 deep): its drop
/// order is not checked (its keys are still counted exactly).
const UNCHECKED: u32 = u64::BITS;

impl LiveGuards {
    const fn new() -> Self {
        LiveGuards {
            included: [const { Cell::new(0) }; 64],
            excluded: [const { Cell::new(0) }; 64],
            positions: Cell::new(0),
        }
    }

    /// Counts a new guard's keys and returns its position.
    fn enter(&self, change: LocalKeys) -> u32 {
        let live = self.positions.get();
        let position = u64::BITS - live.leading_zeros();
        if position != UNCHECKED {
            self.positions.set(live | 1 << position);
        }
        let mut masks = local_masks();
        masks.included |= count_up(&self.included, change.included);
        masks.kept &= !count_up(&self.excluded, change.excluded);
        LOCAL.with(|local| local.set(masks));
        position
    }

    /// Uncounts a dropped guard's keys; returns whether it was the newest live guard.
    fn leave(&self, change: LocalKeys, position: u32) -> bool {
        let mut masks = local_masks();
        masks.included &= !count_down(&self.included, change.included);
        masks.kept |= count_down(&self.excluded, change.excluded);
        LOCAL.with(|local| local.set(masks));
        if position == UNCHECKED {
            return true;
        }
        let live = self.positions.get();
        self.positions.set(live & !(1 << position));
        live >> position == 1
    }
}

/// Counts one more guard adding `keys`; returns the keys that were not added before.
fn count_up(counts: &[Cell<usize>; 64], keys: DispatchKeySet) -> u64 {
    let mut new = 0;
    for bit in bits(keys) {
        let count = &counts[bit];
        if count.get() == 0 {
            new |= 1 << bit;
        }
        count.set(count.get() + 1);
    }
    new
}

/// Counts one guard adding `keys` less; returns the keys no live guard adds any more.
fn count_down(counts: &[Cell<usize>; 64], keys: DispatchKeySet) -> u64 {
    let mut gone = 0;
    for bit in bits(keys) {
        let count = &counts[bit];
        // Each guard counts its keys up once and down once, so this never goes below 0.
        count.set(count.get() - 1);
        if count.get() == 0 {
            gone |= 1 << bit;
        }
    }
    gone
}

/// The indices of the bits set in `keys`, lowest first.
fn bits(keys: DispatchKeySet) -> impl Iterator<Item = usize> {
    let mut rest = keys.bits();
    std::iter::from_fn(move || {
        let bit = rest.trailing_zeros() as usize;
        rest &= rest.wrapping_sub(1);
        (bit < 64).then_some(bit)
    })
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

/// Takes its keys back out of the thread's include or exclude set when dropped.
///
/// The thread's sets are the union of what its live guards add, so once every guard is gone they
/// are exactly what they were before the first one, even when panics drop guards out of order.
/// Guards should still be dropped in the reverse order of their creation (scopes do that);
/// dropping one while a newer guard lives panics after removing its keys (unless the thread is
/// already panicking), because such code usually expects the older guard's keys to be gone
/// from the newer guard's scope. A guard is `!Send`: it belongs to the thread whose sets it
/// changed.
#[must_use = "the keys are restored when the guard drops; bind it with `let _guard = …`"]
#[derive(Debug)]
pub struct KeyGuard {
    /// What this guard adds to the thread's sets.
    change: LocalKeys,
    /// Its nesting position among the thread's live guards.
    position: u32,
    _not_send: PhantomData<*const ()>,
}

impl KeyGuard {
    fn install(change: LocalKeys) -> KeyGuard {
        // Dtypes are the arguments' to report, never the thread's: a guard adds and removes keys
        // only, so `included` never holds a dtype bit and `kept` always holds them all.
        let change = LocalKeys {
            included: change.included.keys_only(),
            excluded: change.excluded.keys_only(),
        };
        KeyGuard {
            change,
            position: GUARDS.with(|guards| guards.enter(change)),
            _not_send: PhantomData,
        }
    }
}

impl Drop for KeyGuard {
    fn drop(&mut self) {
        let newest = GUARDS.with(|guards| guards.leave(self.change, self.position));
        if !newest && !std::thread::panicking() {
            panic!(
                "switchyard: key guards dropped out of order (a guard adding {:?} dropped while a \
                 guard created after it is alive; the thread now has {:?}); drop guards in \
                 reverse order of creation",
                self.change,
                local_keys()
            );
        }
    }
}

/// Adds `keys` to the calling thread's include set until the guard drops.
pub fn include(keys: impl Into<DispatchKeySet>) -> KeyGuard {
    KeyGuard::install(LocalKeys {
        included: keys.into(),
        excluded: DispatchKeySet::EMPTY,
    })
}

/// Adds `keys` to the calling thread's exclude set until the guard drops.
///
/// `exclude(DispatchKey::CpuSimd)` forces the naive CPU backend inside its scope.
pub fn exclude(keys: impl Into<DispatchKeySet>) -> KeyGuard {
    KeyGuard::install(LocalKeys {
        included: DispatchKeySet::EMPTY,
        excluded: keys.into(),
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

    #[test]
    fn deep_nesting_restores_and_is_never_flagged() {
        fn nest(depth: usize) {
            if depth == 0 {
                assert!(local_keys().excluded.has(DispatchKey::CpuSimd));
                return;
            }
            let _guard = if depth.is_multiple_of(2) {
                exclude(DispatchKey::CpuSimd)
            } else {
                include(DispatchKey::CpuNaive)
            };
            nest(depth - 1);
        }
        nest(150);
        assert_eq!(local_keys(), LocalKeys::default());
    }

    #[test]
    fn a_key_stays_while_any_guard_adds_it() {
        let a = exclude(DispatchKeySet::CPU_SIMD | DispatchKeySet::CPU_NAIVE);
        let b = exclude(DispatchKey::CpuSimd);
        drop(b);
        assert_eq!(
            local_keys().excluded,
            DispatchKeySet::CPU_SIMD | DispatchKeySet::CPU_NAIVE
        );
        let c = exclude(DispatchKey::CpuSimd);
        drop(c);
        drop(a);
        assert_eq!(local_keys(), LocalKeys::default());
    }
}
