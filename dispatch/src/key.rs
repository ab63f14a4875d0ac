//! Dispatch keys and key sets.
//!
//! A key names one layer of dispatch: a backend (where a tensor lives) or a functionality (a mode,
//! autograd, a downstream layer). Every key owns one bit of a [`DispatchKeySet`]; a higher bit is a
//! higher priority, so "which kernel runs" is "the highest bit that is set", one instruction.

use std::fmt;

/// Declares the keys from [`the table below`](dispatch_keys): the `DispatchKey` enum, `NUM_KEYS`,
/// `DispatchKey::ALL`, `name`, `group`, `autograd_backends` and one `DispatchKeySet` constant per
/// key, so that each fact about a key is written once.
///
/// One row per key, from the highest priority to the lowest: its doc, `Name = bit`, the name of
/// its `DispatchKeySet` constant, its group, and for an autograd key the backend keys it pairs
/// with (a `DispatchKeySet` constant).
macro_rules! dispatch_keys {
    ($(
        $(#[doc = $doc:literal])*
        $key:ident = $bit:literal, $flag:ident, $group:ident $(($backends:ident))?;
    )*) => {
        /// One dispatch key. The discriminant is the key's bit in a [`DispatchKeySet`] and its
        /// slot in every op's table; a higher value is a higher priority.
        ///
        /// From high to low: the library's own keys (`BuiltinProfile`, `BuiltinTrace`: what
        /// [`profile`](crate::profile) and [`trace`](crate::trace) use; not for users), user
        /// modes (`Profiler`, `Tracing`, `Mode1..3`), autocast (`Autocast`), per-backend autograd
        /// keys, downstream
        /// functionality slots (`Custom1..4`), the fake-tensor layer (`Fake`), backends (`Meta`,
        /// `Wgpu`, `PrivateUse1..3`, `CpuSimd`, `CpuNaive`).
        ///
        /// Every key but the two `Builtin…` ones is the users' to register at: the library
        /// occupies none of them (the backends' kernels, the `CpuSimd` fallthrough, the tensor
        /// crate's fallback at `Fake` and the standard ops' own derivatives at `Autograd` aside,
        /// which users may override deliberately, see `#[kernel(overrides)]`; their own ops'
        /// slots are all theirs).
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        #[repr(u8)]
        pub enum DispatchKey {
            $($(#[doc = $doc])* $key = $bit,)*
        }

        /// Number of runtime keys; every op table has one slot per key (its slot count, in
        /// `table/mod.rs`, is at least this).
        pub const NUM_KEYS: usize = [$(DispatchKey::$key),*].len();

        impl DispatchKey {
            /// Every key, from the highest priority to the lowest.
            pub const ALL: [DispatchKey; NUM_KEYS] = [$(DispatchKey::$key),*];

            /// The key's name, as written in `#[kernel(key = …)]`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(DispatchKey::$key => stringify!($key),)*
                }
            }

            /// The group this key belongs to.
            pub const fn group(self) -> KeyGroup {
                match self {
                    $(DispatchKey::$key => KeyGroup::$group,)*
                }
            }

            /// For an autograd key, the backend keys of its device (`AutogradCpu` →
            /// `CpuSimd | CpuNaive`); empty for every other key.
            pub const fn autograd_backends(self) -> DispatchKeySet {
                match self {
                    $(DispatchKey::$key => DispatchKeySet::EMPTY $(.union(DispatchKeySet::$backends))?,)*
                }
            }
        }

        bitflags::bitflags! {
            /// A set of [`DispatchKey`]s, one bit each; a higher bit is a higher priority.
            ///
            /// The dispatcher computes `(union of the arguments' sets ∪ thread-local includes) −
            /// thread-local excludes` and runs the kernel of the highest key left.
            #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
            pub struct DispatchKeySet: u64 {
                $(
                    #[doc = concat!("See [`DispatchKey::", stringify!($key), "`].")]
                    const $flag = 1 << DispatchKey::$key.index();
                )*
            }
        }
    };
}

dispatch_keys! {
    /// The library's own: what [`profile`](crate::profile) times through. Users cannot register
    /// at it.
    BuiltinProfile = 25, BUILTIN_PROFILE, Builtin;
    /// The library's own: what [`trace`](crate::trace) records through. Users cannot register at
    /// it (a compile error in the macros, an error at run time).
    BuiltinTrace = 24, BUILTIN_TRACE, Builtin;
    /// A mode key for users: e.g. a fallback timing every call. The library's own
    /// [`profile`](crate::profile) uses [`DispatchKey::BuiltinProfile`], not this key.
    Profiler = 23, PROFILER, Mode;
    /// A mode key for users: e.g. `#[fallback(key = Tracing)]` recording every call. The library's
    /// own [`trace`](crate::trace) uses [`DispatchKey::BuiltinTrace`], not this key.
    Tracing = 22, TRACING, Mode;
    /// A mode slot for users, above autograd (highest of the three).
    Mode1 = 21, MODE1, Mode;
    /// A mode slot for users, above autograd.
    Mode2 = 20, MODE2, Mode;
    /// A mode slot for users, above autograd (lowest of the three).
    Mode3 = 19, MODE3, Mode;
    /// Autocast: while a guard of the tensor crate's `autocast` is alive, the ops with a
    /// precision policy (a kernel here) cast their float arguments first (`matmul` to the low
    /// precision, `exp` or `sum` to `f32`, …). Above autograd, so that autograd records the casts
    /// and gradients reach `f32` parameters in `f32`. An op without a kernel here falls through
    /// (the engine registers the fallthrough, as at `CpuSimd`).
    Autocast = 18, AUTOCAST, Autocast;
    /// Autograd for meta tensors (shapes without data).
    AutogradMeta = 17, AUTOGRAD_META, Autograd(META);
    /// Autograd for wgpu tensors.
    AutogradWgpu = 16, AUTOGRAD_WGPU, Autograd(WGPU);
    /// Autograd for tensors on [`DispatchKey::PrivateUse1`].
    AutogradPrivateUse1 = 15, AUTOGRAD_PRIVATE_USE1, Autograd(PRIVATE_USE1);
    /// Autograd for tensors on [`DispatchKey::PrivateUse2`].
    AutogradPrivateUse2 = 14, AUTOGRAD_PRIVATE_USE2, Autograd(PRIVATE_USE2);
    /// Autograd for tensors on [`DispatchKey::PrivateUse3`].
    AutogradPrivateUse3 = 13, AUTOGRAD_PRIVATE_USE3, Autograd(PRIVATE_USE3);
    /// Autograd for CPU tensors.
    AutogradCpu = 12, AUTOGRAD_CPU, Autograd(CPU);
    /// A functionality slot for downstream crates (highest).
    Custom1 = 11, CUSTOM1, Custom;
    /// A functionality slot for downstream crates.
    Custom2 = 10, CUSTOM2, Custom;
    /// A functionality slot for downstream crates.
    Custom3 = 9, CUSTOM3, Custom;
    /// A functionality slot for downstream crates (lowest).
    Custom4 = 8, CUSTOM4, Custom;
    /// Fake tensors: a tensor that reports a real device but holds no data carries this key
    /// above its device's, and one fallback here runs every op on meta tensors instead (the
    /// tensor crate's fake mode). Below autograd, so that autograd records fake computations.
    Fake = 7, FAKE, Fake;
    /// Meta tensors: shapes, dtypes and strides without data. Its kernels compute what an op's
    /// result would be, with the errors the real kernels give. The highest backend key, so that
    /// moving any tensor to the meta device (the op `to`) is its kernel's work.
    Meta = 6, META, Backend;
    /// GPU tensors through `wgpu`.
    Wgpu = 5, WGPU, Backend;
    /// A backend slot reserved for downstream crates (highest of the three).
    PrivateUse1 = 4, PRIVATE_USE1, Backend;
    /// A backend slot reserved for downstream crates.
    PrivateUse2 = 3, PRIVATE_USE2, Backend;
    /// A backend slot reserved for downstream crates (lowest of the three).
    PrivateUse3 = 2, PRIVATE_USE3, Backend;
    /// Vectorised CPU kernels. A CPU tensor carries both CPU keys; an op with no SIMD kernel falls
    /// through to [`DispatchKey::CpuNaive`].
    CpuSimd = 1, CPU_SIMD, Backend;
    /// The reference CPU backend: plain scalar loops.
    CpuNaive = 0, CPU_NAIVE, Backend;
}

// The rows run from the highest bit to the lowest, with no gap: `from_index` relies on it.
const _: () = {
    let mut i = 0;
    while i < NUM_KEYS {
        assert!(DispatchKey::ALL[i].index() == NUM_KEYS - 1 - i);
        i += 1;
    }
};

/// The group a key belongs to; groups are contiguous bit ranges, ordered by priority.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum KeyGroup {
    /// Where a tensor lives.
    Backend,
    /// The fake-tensor layer (`Fake`), between the functionality slots and the backends.
    Fake,
    /// Downstream functionality slots.
    Custom,
    /// Per-backend autograd keys.
    Autograd,
    /// Autocast (`Autocast`), between autograd and the user modes.
    Autocast,
    /// Thread-local modes for users: `Profiler`, `Tracing`, `Mode1..3`.
    Mode,
    /// The library's own modes: `BuiltinProfile`, `BuiltinTrace`. Not for users.
    Builtin,
}

impl DispatchKey {
    /// The key's bit position, which is also its slot in an op table.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The key whose bit is `index`, if there is one.
    pub const fn from_index(index: usize) -> Option<DispatchKey> {
        // Bits are dense and `ALL` runs from the highest to the lowest (checked at compile time).
        if index < NUM_KEYS {
            Some(DispatchKey::ALL[NUM_KEYS - 1 - index])
        } else {
            None
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

impl DispatchKeySet {
    /// The empty set.
    pub const EMPTY: DispatchKeySet = DispatchKeySet::empty();
    /// The keys a CPU tensor carries: the SIMD backend over the naive one.
    pub const CPU: DispatchKeySet = DispatchKeySet::CPU_SIMD.union(DispatchKeySet::CPU_NAIVE);
    /// Every backend key.
    pub const BACKENDS: DispatchKeySet = DispatchKeySet::of_group(KeyGroup::Backend);
    /// Every per-backend autograd key: the keys the `Autograd` alias stands for.
    pub const AUTOGRAD: DispatchKeySet = DispatchKeySet::of_group(KeyGroup::Autograd);
    /// The mode keys offered to users (thread-local modes above autograd).
    pub const MODES: DispatchKeySet = DispatchKeySet::of_group(KeyGroup::Mode);
    /// The library's own keys, used by `trace()` and `profile()`; not for users.
    pub const BUILTIN: DispatchKeySet = DispatchKeySet::of_group(KeyGroup::Builtin);

    /// Every key of `group`.
    const fn of_group(group: KeyGroup) -> DispatchKeySet {
        let mut bits = 0;
        let mut i = 0;
        while i < NUM_KEYS {
            let key = DispatchKey::ALL[i];
            // `KeyGroup` is not `PartialEq` in `const`; its discriminants are.
            if key.group() as u8 == group as u8 {
                bits |= 1 << key.index();
            }
            i += 1;
        }
        DispatchKeySet::from_bits_retain(bits)
    }

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
        match self.keys_only().bits() {
            0 => None,
            bits => DispatchKey::from_index(63 - bits.leading_zeros() as usize),
        }
    }

    /// The set without the dtype bits a call's key set carries in its high byte (see
    /// [`DType::key_bit`](crate::DType::key_bit)): the keys alone.
    #[inline(always)]
    #[must_use]
    pub const fn keys_only(self) -> DispatchKeySet {
        DispatchKeySet::from_bits_retain(self.bits() & DispatchKeySet::all().bits())
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
            KeyGroup::Fake => 1,
            KeyGroup::Custom => 2,
            KeyGroup::Autograd => 3,
            KeyGroup::Autocast => 4,
            KeyGroup::Mode => 5,
            KeyGroup::Builtin => 6,
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
    fn every_autograd_key_maps_to_one_device() {
        for key in DispatchKeySet::AUTOGRAD.keys() {
            assert!(!key.autograd_backends().is_empty(), "{key}");
            assert!(DispatchKeySet::BACKENDS.contains(key.autograd_backends()));
        }
        assert!(DispatchKey::CpuSimd.autograd_backends().is_empty());
        assert_eq!(
            DispatchKey::AutogradCpu.autograd_backends(),
            DispatchKeySet::CPU
        );
    }

    /// The macros accept `key = PRIVATE_USE1` for `PrivateUse1`: each flag constant is its key's
    /// name in SCREAMING_CASE (a digit stays with the word before it).
    #[test]
    fn flag_names_are_screaming_key_names() {
        for key in DispatchKey::ALL {
            let mut screaming = String::new();
            for (i, c) in key.name().chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    screaming.push('_');
                }
                screaming.push(c.to_ascii_uppercase());
            }
            let flag = DispatchKeySet::from_name(&screaming);
            assert_eq!(flag, Some(key.set()), "{key}: no constant `{screaming}`");
        }
    }

    #[test]
    fn group_sets_hold_their_groups() {
        assert_eq!(
            DispatchKeySet::BACKENDS,
            DispatchKeySet::CPU
                | DispatchKeySet::PRIVATE_USE3
                | DispatchKeySet::PRIVATE_USE2
                | DispatchKeySet::PRIVATE_USE1
                | DispatchKeySet::WGPU
                | DispatchKeySet::META
        );
        assert_eq!(
            DispatchKeySet::MODES,
            DispatchKeySet::TRACING
                | DispatchKeySet::PROFILER
                | DispatchKeySet::MODE1
                | DispatchKeySet::MODE2
                | DispatchKeySet::MODE3
        );
        assert_eq!(
            DispatchKeySet::BUILTIN,
            DispatchKeySet::BUILTIN_TRACE | DispatchKeySet::BUILTIN_PROFILE
        );
        for key in DispatchKey::ALL {
            let in_autograd = DispatchKeySet::AUTOGRAD.has(key);
            assert_eq!(in_autograd, key.group() == KeyGroup::Autograd, "{key}");
        }
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
