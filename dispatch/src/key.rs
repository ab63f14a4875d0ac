//! Dispatch keys and key sets.
//!
//! A key names one layer of dispatch: a backend (where a tensor lives) or a functionality (a mode,
//! autograd, a downstream layer). Every key owns one bit of a [`DispatchKeySet`]; a higher bit is a
//! higher priority, so "which kernel runs" is "the highest bit that is set", one instruction.

use std::fmt;

/// One dispatch key. The discriminant is the key's bit in a [`DispatchKeySet`] and its slot in
/// every op's table; a higher value is a higher priority.
///
/// From high to low: the library's own keys (`BuiltinProfile`, `BuiltinTrace`: what
/// [`profile`](crate::profile) and [`trace`](crate::trace) use; not for users), user modes
/// (`Profiler`, `Tracing`, `Mode1..3`), per-backend autograd keys, downstream functionality slots
/// (`Custom1..4`), backends (`Wgpu`, `PrivateUse1..3`, `CpuSimd`, `CpuNaive`).
///
/// Every key but the two `Builtin…` ones is the users' to register at: the library occupies none
/// of them (the CPU backend's kernels and the `CpuSimd` fallthrough aside, which users may
/// override deliberately, see `#[kernel(overrides)]`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
pub enum DispatchKey {
    /// The reference CPU backend: plain scalar loops.
    CpuNaive = 0,
    /// Vectorised CPU kernels. A CPU tensor carries both CPU keys; an op with no SIMD kernel falls
    /// through to [`DispatchKey::CpuNaive`].
    CpuSimd = 1,
    /// A backend slot reserved for downstream crates (lowest of the three).
    PrivateUse3 = 2,
    /// A backend slot reserved for downstream crates.
    PrivateUse2 = 3,
    /// A backend slot reserved for downstream crates (highest of the three).
    PrivateUse1 = 4,
    /// GPU tensors through `wgpu`.
    Wgpu = 5,
    /// A functionality slot for downstream crates (lowest).
    Custom4 = 6,
    /// A functionality slot for downstream crates.
    Custom3 = 7,
    /// A functionality slot for downstream crates.
    Custom2 = 8,
    /// A functionality slot for downstream crates (highest).
    Custom1 = 9,
    /// Autograd for CPU tensors.
    AutogradCpu = 10,
    /// Autograd for tensors on [`DispatchKey::PrivateUse3`].
    AutogradPrivateUse3 = 11,
    /// Autograd for tensors on [`DispatchKey::PrivateUse2`].
    AutogradPrivateUse2 = 12,
    /// Autograd for tensors on [`DispatchKey::PrivateUse1`].
    AutogradPrivateUse1 = 13,
    /// Autograd for wgpu tensors.
    AutogradWgpu = 14,
    /// A mode slot for users, above autograd (lowest of the three).
    Mode3 = 15,
    /// A mode slot for users, above autograd.
    Mode2 = 16,
    /// A mode slot for users, above autograd (highest of the three).
    Mode1 = 17,
    /// A mode key for users: e.g. `#[fallback(key = Tracing)]` recording every call. The library's
    /// own [`trace`](crate::trace) uses [`DispatchKey::BuiltinTrace`], not this key.
    Tracing = 18,
    /// A mode key for users: e.g. a fallback timing every call. The library's own
    /// [`profile`](crate::profile) uses [`DispatchKey::BuiltinProfile`], not this key.
    Profiler = 19,
    /// The library's own: what [`trace`](crate::trace) records through. Users cannot register at
    /// it (a compile error in the macros, an error at run time).
    BuiltinTrace = 20,
    /// The library's own: what [`profile`](crate::profile) times through. Users cannot register
    /// at it.
    BuiltinProfile = 21,
}

/// Number of runtime keys; every op table has one slot per key (rounded up to 64, see `table.rs`).
pub const NUM_KEYS: usize = 22;

/// The group a key belongs to; groups are contiguous bit ranges, ordered by priority.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum KeyGroup {
    /// Where a tensor lives.
    Backend,
    /// Downstream functionality slots.
    Custom,
    /// Per-backend autograd keys.
    Autograd,
    /// Thread-local modes for users: `Profiler`, `Tracing`, `Mode1..3`.
    Mode,
    /// The library's own modes: `BuiltinProfile`, `BuiltinTrace`. Not for users.
    Builtin,
}

impl DispatchKey {
    /// Every key, from the highest priority to the lowest.
    pub const ALL: [DispatchKey; NUM_KEYS] = [
        DispatchKey::BuiltinProfile,
        DispatchKey::BuiltinTrace,
        DispatchKey::Profiler,
        DispatchKey::Tracing,
        DispatchKey::Mode1,
        DispatchKey::Mode2,
        DispatchKey::Mode3,
        DispatchKey::AutogradWgpu,
        DispatchKey::AutogradPrivateUse1,
        DispatchKey::AutogradPrivateUse2,
        DispatchKey::AutogradPrivateUse3,
        DispatchKey::AutogradCpu,
        DispatchKey::Custom1,
        DispatchKey::Custom2,
        DispatchKey::Custom3,
        DispatchKey::Custom4,
        DispatchKey::Wgpu,
        DispatchKey::PrivateUse1,
        DispatchKey::PrivateUse2,
        DispatchKey::PrivateUse3,
        DispatchKey::CpuSimd,
        DispatchKey::CpuNaive,
    ];

    /// The key's bit position, which is also its slot in an op table.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The key whose bit is `index`, if there is one.
    pub const fn from_index(index: usize) -> Option<DispatchKey> {
        // Bits are dense and `ALL` runs from the highest to the lowest (both checked by tests).
        if index < NUM_KEYS {
            Some(DispatchKey::ALL[NUM_KEYS - 1 - index])
        } else {
            None
        }
    }

    /// The key's name, as written in `#[kernel(key = …)]`.
    pub const fn name(self) -> &'static str {
        match self {
            DispatchKey::CpuNaive => "CpuNaive",
            DispatchKey::CpuSimd => "CpuSimd",
            DispatchKey::PrivateUse3 => "PrivateUse3",
            DispatchKey::PrivateUse2 => "PrivateUse2",
            DispatchKey::PrivateUse1 => "PrivateUse1",
            DispatchKey::Wgpu => "Wgpu",
            DispatchKey::Custom4 => "Custom4",
            DispatchKey::Custom3 => "Custom3",
            DispatchKey::Custom2 => "Custom2",
            DispatchKey::Custom1 => "Custom1",
            DispatchKey::AutogradCpu => "AutogradCpu",
            DispatchKey::AutogradPrivateUse3 => "AutogradPrivateUse3",
            DispatchKey::AutogradPrivateUse2 => "AutogradPrivateUse2",
            DispatchKey::AutogradPrivateUse1 => "AutogradPrivateUse1",
            DispatchKey::AutogradWgpu => "AutogradWgpu",
            DispatchKey::Mode3 => "Mode3",
            DispatchKey::Mode2 => "Mode2",
            DispatchKey::Mode1 => "Mode1",
            DispatchKey::Tracing => "Tracing",
            DispatchKey::Profiler => "Profiler",
            DispatchKey::BuiltinTrace => "BuiltinTrace",
            DispatchKey::BuiltinProfile => "BuiltinProfile",
        }
    }

    /// The group this key belongs to.
    pub const fn group(self) -> KeyGroup {
        match self {
            DispatchKey::CpuNaive
            | DispatchKey::CpuSimd
            | DispatchKey::PrivateUse3
            | DispatchKey::PrivateUse2
            | DispatchKey::PrivateUse1
            | DispatchKey::Wgpu => KeyGroup::Backend,
            DispatchKey::Custom4
            | DispatchKey::Custom3
            | DispatchKey::Custom2
            | DispatchKey::Custom1 => KeyGroup::Custom,
            DispatchKey::AutogradCpu
            | DispatchKey::AutogradPrivateUse3
            | DispatchKey::AutogradPrivateUse2
            | DispatchKey::AutogradPrivateUse1
            | DispatchKey::AutogradWgpu => KeyGroup::Autograd,
            DispatchKey::Mode3
            | DispatchKey::Mode2
            | DispatchKey::Mode1
            | DispatchKey::Tracing
            | DispatchKey::Profiler => KeyGroup::Mode,
            DispatchKey::BuiltinTrace | DispatchKey::BuiltinProfile => KeyGroup::Builtin,
        }
    }

    /// Whether this key is the library's own (what `trace()` and `profile()` use): users cannot
    /// register kernels, fallbacks or fallthroughs at it.
    pub const fn is_builtin(self) -> bool {
        matches!(self.group(), KeyGroup::Builtin)
    }

    /// Whether this key names where a tensor lives.
    pub const fn is_backend(self) -> bool {
        matches!(self.group(), KeyGroup::Backend)
    }

    /// The set holding just this key.
    #[inline(always)]
    pub const fn set(self) -> DispatchKeySet {
        DispatchKeySet::from_bits_retain(1 << self.index())
    }
}

impl fmt::Display for DispatchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

bitflags::bitflags! {
    /// A set of [`DispatchKey`]s, one bit each; a higher bit is a higher priority.
    ///
    /// The dispatcher computes `(union of the arguments' sets ∪ thread-local includes) −
    /// thread-local excludes` and runs the kernel of the highest key left.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct DispatchKeySet: u64 {
        /// See [`DispatchKey::CpuNaive`].
        const CPU_NAIVE = 1 << DispatchKey::CpuNaive.index();
        /// See [`DispatchKey::CpuSimd`].
        const CPU_SIMD = 1 << DispatchKey::CpuSimd.index();
        /// See [`DispatchKey::PrivateUse3`].
        const PRIVATE_USE3 = 1 << DispatchKey::PrivateUse3.index();
        /// See [`DispatchKey::PrivateUse2`].
        const PRIVATE_USE2 = 1 << DispatchKey::PrivateUse2.index();
        /// See [`DispatchKey::PrivateUse1`].
        const PRIVATE_USE1 = 1 << DispatchKey::PrivateUse1.index();
        /// See [`DispatchKey::Wgpu`].
        const WGPU = 1 << DispatchKey::Wgpu.index();
        /// See [`DispatchKey::Custom4`].
        const CUSTOM4 = 1 << DispatchKey::Custom4.index();
        /// See [`DispatchKey::Custom3`].
        const CUSTOM3 = 1 << DispatchKey::Custom3.index();
        /// See [`DispatchKey::Custom2`].
        const CUSTOM2 = 1 << DispatchKey::Custom2.index();
        /// See [`DispatchKey::Custom1`].
        const CUSTOM1 = 1 << DispatchKey::Custom1.index();
        /// See [`DispatchKey::AutogradCpu`].
        const AUTOGRAD_CPU = 1 << DispatchKey::AutogradCpu.index();
        /// See [`DispatchKey::AutogradPrivateUse3`].
        const AUTOGRAD_PRIVATE_USE3 = 1 << DispatchKey::AutogradPrivateUse3.index();
        /// See [`DispatchKey::AutogradPrivateUse2`].
        const AUTOGRAD_PRIVATE_USE2 = 1 << DispatchKey::AutogradPrivateUse2.index();
        /// See [`DispatchKey::AutogradPrivateUse1`].
        const AUTOGRAD_PRIVATE_USE1 = 1 << DispatchKey::AutogradPrivateUse1.index();
        /// See [`DispatchKey::AutogradWgpu`].
        const AUTOGRAD_WGPU = 1 << DispatchKey::AutogradWgpu.index();
        /// See [`DispatchKey::Mode3`].
        const MODE3 = 1 << DispatchKey::Mode3.index();
        /// See [`DispatchKey::Mode2`].
        const MODE2 = 1 << DispatchKey::Mode2.index();
        /// See [`DispatchKey::Mode1`].
        const MODE1 = 1 << DispatchKey::Mode1.index();
        /// See [`DispatchKey::Tracing`].
        const TRACING = 1 << DispatchKey::Tracing.index();
        /// See [`DispatchKey::Profiler`].
        const PROFILER = 1 << DispatchKey::Profiler.index();
        /// See [`DispatchKey::BuiltinTrace`].
        const BUILTIN_TRACE = 1 << DispatchKey::BuiltinTrace.index();
        /// See [`DispatchKey::BuiltinProfile`].
        const BUILTIN_PROFILE = 1 << DispatchKey::BuiltinProfile.index();
    }
}

impl DispatchKeySet {
    /// The empty set.
    pub const EMPTY: DispatchKeySet = DispatchKeySet::empty();
    /// The keys a CPU tensor carries: the SIMD backend over the naive one.
    pub const CPU: DispatchKeySet = DispatchKeySet::CPU_SIMD.union(DispatchKeySet::CPU_NAIVE);
    /// Every backend key.
    pub const BACKENDS: DispatchKeySet = DispatchKeySet::CPU
        .union(DispatchKeySet::PRIVATE_USE3)
        .union(DispatchKeySet::PRIVATE_USE2)
        .union(DispatchKeySet::PRIVATE_USE1)
        .union(DispatchKeySet::WGPU);
    /// Every per-backend autograd key: the keys the `Autograd` alias stands for.
    pub const AUTOGRAD: DispatchKeySet = DispatchKeySet::AUTOGRAD_CPU
        .union(DispatchKeySet::AUTOGRAD_PRIVATE_USE3)
        .union(DispatchKeySet::AUTOGRAD_PRIVATE_USE2)
        .union(DispatchKeySet::AUTOGRAD_PRIVATE_USE1)
        .union(DispatchKeySet::AUTOGRAD_WGPU);
    /// The mode keys offered to users (thread-local modes above autograd).
    pub const MODES: DispatchKeySet = DispatchKeySet::TRACING
        .union(DispatchKeySet::PROFILER)
        .union(DispatchKeySet::MODE1)
        .union(DispatchKeySet::MODE2)
        .union(DispatchKeySet::MODE3);
    /// The library's own keys, used by `trace()` and `profile()`; not for users.
    pub const BUILTIN: DispatchKeySet =
        DispatchKeySet::BUILTIN_TRACE.union(DispatchKeySet::BUILTIN_PROFILE);

    /// The set holding exactly `keys`.
    pub const fn of(keys: &[DispatchKey]) -> DispatchKeySet {
        let mut bits = 0;
        let mut i = 0;
        while i < keys.len() {
            bits |= 1 << keys[i].index();
            i += 1;
        }
        DispatchKeySet::from_bits_retain(bits)
    }

    /// Whether `key` is in the set.
    #[inline(always)]
    pub const fn has(self, key: DispatchKey) -> bool {
        self.bits() & (1 << key.index()) != 0
    }

    /// The set with `key` added.
    #[inline(always)]
    #[must_use]
    pub const fn with(self, key: DispatchKey) -> DispatchKeySet {
        DispatchKeySet::from_bits_retain(self.bits() | 1 << key.index())
    }

    /// The set with `key` removed.
    #[inline(always)]
    #[must_use]
    pub const fn without(self, key: DispatchKey) -> DispatchKeySet {
        DispatchKeySet::from_bits_retain(self.bits() & !(1 << key.index()))
    }

    /// The highest-priority key in the set, if any.
    #[inline(always)]
    pub const fn highest(self) -> Option<DispatchKey> {
        match self.bits() {
            0 => None,
            bits => DispatchKey::from_index(63 - bits.leading_zeros() as usize),
        }
    }

    /// The keys in the set, from the highest priority to the lowest.
    pub fn keys(self) -> impl Iterator<Item = DispatchKey> {
        DispatchKey::ALL.into_iter().filter(move |k| self.has(*k))
    }
}

impl From<DispatchKey> for DispatchKeySet {
    fn from(key: DispatchKey) -> Self {
        key.set()
    }
}

impl FromIterator<DispatchKey> for DispatchKeySet {
    fn from_iter<I: IntoIterator<Item = DispatchKey>>(iter: I) -> Self {
        iter.into_iter()
            .fold(DispatchKeySet::EMPTY, DispatchKeySet::with)
    }
}

impl fmt::Debug for DispatchKeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for DispatchKeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, key) in self.keys().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(key.name())?;
        }
        f.write_str("}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_sorted_by_priority_and_complete() {
        for pair in DispatchKey::ALL.windows(2) {
            assert!(
                pair[0].index() > pair[1].index(),
                "{} !> {}",
                pair[0],
                pair[1]
            );
        }
        for (i, key) in DispatchKey::ALL.iter().rev().enumerate() {
            assert_eq!(key.index(), i, "bits are dense");
            assert_eq!(DispatchKey::from_index(i), Some(*key));
        }
        assert_eq!(DispatchKey::from_index(NUM_KEYS), None);
    }

    #[test]
    fn groups_are_ordered_modes_autograd_custom_backends() {
        let rank = |k: DispatchKey| match k.group() {
            KeyGroup::Backend => 0,
            KeyGroup::Custom => 1,
            KeyGroup::Autograd => 2,
            KeyGroup::Mode => 3,
            KeyGroup::Builtin => 4,
        };
        for pair in DispatchKey::ALL.windows(2) {
            assert!(rank(pair[0]) >= rank(pair[1]));
        }
    }

    #[test]
    fn highest_and_below() {
        let set = DispatchKeySet::CPU | DispatchKeySet::TRACING;
        assert_eq!(set.highest(), Some(DispatchKey::Tracing));
        assert_eq!(set.below(DispatchKey::Tracing), DispatchKeySet::CPU);
        assert_eq!(
            set.below(DispatchKey::CpuSimd).highest(),
            Some(DispatchKey::CpuNaive)
        );
        assert_eq!(set.below(DispatchKey::CpuNaive), DispatchKeySet::EMPTY);
        assert_eq!(DispatchKeySet::EMPTY.highest(), None);
    }

    #[test]
    fn flag_constants_match_key_bits() {
        for key in DispatchKey::ALL {
            let named: Vec<_> = DispatchKeySet::all()
                .iter()
                .filter(|f| f.bits() == 1 << key.index())
                .collect();
            assert_eq!(named.len(), 1, "{key} has exactly one flag constant");
        }
        assert_eq!(DispatchKeySet::all().bits().count_ones() as usize, NUM_KEYS);
    }

    #[test]
    fn set_algebra_and_display() {
        let set = DispatchKeySet::of(&[DispatchKey::CpuNaive, DispatchKey::Profiler]);
        assert!(set.has(DispatchKey::Profiler));
        assert!(!set.has(DispatchKey::CpuSimd));
        assert_eq!(
            set.with(DispatchKey::CpuSimd)
                .without(DispatchKey::Profiler),
            DispatchKeySet::CPU
        );
        assert_eq!(set.to_string(), "{Profiler, CpuNaive}");
        let collected: DispatchKeySet = set.keys().collect();
        assert_eq!(collected, set);
    }
}
