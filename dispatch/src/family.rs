//! Device families: which backend keys belong to one device, and the names errors print for them.
//!
//! A *device family* is the set of backend keys that serve one device. The CPU is one device
//! split into two keys (`CpuSimd` over `CpuNaive`, so an op without a SIMD kernel falls through to
//! the naive one); every other backend key (`PrivateUse1..3`, `Wgpu`) is a device of its own. A
//! family is derived from a key set by this partition alone: an argument that reports only
//! `CpuNaive`, or only `CpuSimd`, is on the CPU all the same.
//!
//! **The device-mismatch rule:** an op's call fails with `DeviceMismatch` when its arguments'
//! backend keys meet more than one family (unless the op is `#[op(mixes_devices)]`).
//!
//! Families have no names of their own in the engine: the crate that owns a device names it with
//! [`name_device!`](crate::name_device) (the tensor crate names `cpu` and `wgpu`; a downstream
//! crate its own), and errors print that name, or the family's keys when nobody named it.

use std::borrow::Cow;

#[cfg(not(target_family = "wasm"))]
use linkme::distributed_slice;

use crate::key::{DispatchKey, DispatchKeySet};

/// Every backend key but `CpuSimd`: with `CpuSimd` folded onto `CpuNaive`, one bit per family.
const NOT_CPU_SIMD: u64 = DispatchKeySet::BACKENDS.bits() & !DispatchKeySet::CPU_SIMD.bits();

/// Whether `keys` meet more than one device family. Branch-free and four instructions, because
/// every call of an op that does not mix devices runs it:
/// remove the lowest backend key; what is left, `CpuSimd` aside, is a second family. (`CpuSimd`
/// is left over only when the lowest key was `CpuNaive`, its own family.)
#[inline(always)]
pub(crate) const fn mixes_families(keys: DispatchKeySet) -> bool {
    let backends = keys.bits() & DispatchKeySet::BACKENDS.bits();
    backends & backends.wrapping_sub(1) & NOT_CPU_SIMD != 0
}

/// The family of a backend key (the CPU's two keys for either of them); empty for other keys.
pub const fn family_of(key: DispatchKey) -> DispatchKeySet {
    if DispatchKeySet::CPU.contains(key.set()) {
        DispatchKeySet::CPU
    } else if key.is_backend() {
        key.set()
    } else {
        DispatchKeySet::EMPTY
    }
}

/// The device families `keys` meet, highest priority first.
pub fn families(keys: DispatchKeySet) -> Vec<DispatchKeySet> {
    let mut found: Vec<DispatchKeySet> = Vec::new();
    for family in keys.keys().map(family_of) {
        if !family.is_empty() && !found.contains(&family) {
            found.push(family);
        }
    }
    found
}

// ---- autograd pairing ----

/// Backend keys are the lowest bits of a key set (checked below), so a set's backend part is a
/// small number that indexes the tables below.
const BACKEND_BITS: u32 = DispatchKeySet::BACKENDS.bits().count_ones();
const _: () = assert!(DispatchKeySet::BACKENDS.bits() == (1 << BACKEND_BITS) - 1);

/// Per set of backend keys: every bit but the autograd keys *not* paired with its highest
/// backend key (with no backend key: every bit but the autograd keys). Built from the key
/// table's pairs (`DispatchKey::autograd_backends`), so the pairing is written once.
///
/// Indexed by the set's low byte (a byte, not its `BACKEND_BITS`: the index is then one
/// zero-extending move on the hot path, where masking it took two instructions); the entries
/// repeat for the bits above the backends.
static PAIRED: [u64; PAIRING_ENTRIES] = by_low_byte(pairing_masks(false));

/// [`PAIRED`], with 0 for the sets that meet two device families: the hot path's one load both
/// pairs autograd and sends a device mismatch to the cold path (a call whose keys become empty
/// finds no kernel there), replacing a separate `mixes_families` test.
static PAIRED_ONE_FAMILY: [u64; PAIRING_ENTRIES] = by_low_byte(pairing_masks(true));

/// The pairing tables' length: one entry per value of a key set's low byte.
const PAIRING_ENTRIES: usize = 1 << u8::BITS;
const _: () = assert!(BACKEND_BITS <= u8::BITS);

/// `masks` (per set of backend keys) repeated for every value of the bits above the backends
/// within a byte.
const fn by_low_byte(masks: [u64; 1 << BACKEND_BITS]) -> [u64; PAIRING_ENTRIES] {
    let mut table = [0; PAIRING_ENTRIES];
    let mut byte = 0;
    while byte < PAIRING_ENTRIES {
        table[byte] = masks[byte & DispatchKeySet::BACKENDS.bits() as usize];
        byte += 1;
    }
    table
}

const fn pairing_masks(zero_when_mixed: bool) -> [u64; 1 << BACKEND_BITS] {
    let autograd = DispatchKeySet::AUTOGRAD.bits();
    let mut table = [!autograd; 1 << BACKEND_BITS];
    let mut backends = 1;
    while backends < table.len() {
        let keys = DispatchKeySet::from_bits_retain(backends as u64);
        if zero_when_mixed && mixes_families(keys) {
            table[backends] = 0;
            backends += 1;
            continue;
        }
        let highest = (u64::BITS - 1 - (backends as u64).leading_zeros()) as usize;
        let Some(backend) = DispatchKey::from_index(highest) else {
            panic!("backend keys are valid keys");
        };
        let mut paired = 0;
        let mut i = 0;
        while i < DispatchKey::ALL.len() {
            if DispatchKey::ALL[i].autograd_backends().has(backend) {
                paired |= DispatchKey::ALL[i].set().bits();
            }
            i += 1;
        }
        assert!(
            paired.count_ones() == 1,
            "every backend key pairs with one autograd key"
        );
        table[backends] = !autograd | paired;
        backends += 1;
    }
    table
}

/// **The autograd pairing rule:** a call consults only the autograd key paired with its highest
/// backend key, when that key is among the call's keys; every other autograd key is ignored.
/// (PyTorch's rule: autograd is one functionality whose runtime key follows the backend.) So
/// whatever autograd keys the arguments or the thread's include set add, a CPU call never runs
/// `AutogradWgpu`'s slot, and a call whose highest backend is the GPU never a lower backend's.
/// Without a backend key no autograd key is consulted.
///
/// `keys` are the arguments' and the thread's included keys, before exclusion: the backend that
/// picks the pair is the highest one they name (excluding `CpuSimd` leaves the CPU's pair as it
/// is), and exclusion only removes keys afterwards.
#[inline(always)]
pub(crate) fn paired_autograd_mask(keys: u64) -> u64 {
    // A byte indexes the table's 256 entries: no bounds check, and no mask.
    PAIRED[usize::from(keys as u8)]
}

/// [`paired_autograd_mask`], or 0 when `keys` meet two device families.
#[inline(always)]
pub(crate) fn paired_autograd_mask_one_family(keys: u64) -> u64 {
    PAIRED_ONE_FAMILY[usize::from(keys as u8)]
}

impl DispatchKeySet {
    /// This set with the autograd pairing rule applied: of its autograd keys, only the one
    /// paired with its highest backend key is kept (none without a backend key). The
    /// dispatcher applies it to every call's keys (before the thread's exclusions); a kernel
    /// that builds a key set for a redispatch by hand can apply it too.
    ///
    /// ```
    /// use switchyard::DispatchKeySet;
    ///
    /// let keys = DispatchKeySet::CPU | DispatchKeySet::AUTOGRAD; // every autograd key
    /// assert_eq!(
    ///     keys.with_paired_autograd(),
    ///     DispatchKeySet::CPU | DispatchKeySet::AUTOGRAD_CPU
    /// );
    /// // Another backend's autograd key is not the CPU's.
    /// let odd = DispatchKeySet::CPU | DispatchKeySet::AUTOGRAD_WGPU;
    /// assert_eq!(odd.with_paired_autograd(), DispatchKeySet::CPU);
    /// ```
    #[must_use]
    #[inline]
    pub fn with_paired_autograd(self) -> DispatchKeySet {
        DispatchKeySet::from_bits_retain(self.bits() & paired_autograd_mask(self.bits()))
    }
}

/// A name for one device family, registered with [`name_device!`](crate::name_device).
#[derive(Clone, Copy, Debug)]
pub struct DeviceName {
    /// Any backend key of the family.
    pub key: DispatchKey,
    /// What errors print, e.g. `cpu`.
    pub name: &'static str,
}

/// Every device name linked into the binary.
#[cfg(not(target_family = "wasm"))]
#[allow(unsafe_code)] // linkme's `link_section`; no unsafe code of ours
#[distributed_slice]
pub static SWITCHYARD_DEVICE_NAMES: [DeviceName];

/// Every device name linked into the module.
#[cfg(target_family = "wasm")]
pub static SWITCHYARD_DEVICE_NAMES: crate::linked::CtorSlice<DeviceName> =
    crate::linked::CtorSlice::new();

/// What errors call `family`: the names registered for it (several, sorted and joined with `|`,
/// if crates disagree), or its keys.
pub fn family_name(family: DispatchKeySet) -> Cow<'static, str> {
    device_name(family).unwrap_or_else(|| Cow::Owned(format!("{family}")))
}

/// The names registered for `family` with [`name_device!`](crate::name_device) (several, sorted
/// and joined with `|`, if crates disagree), or `None` when no crate named it.
pub fn device_name(family: DispatchKeySet) -> Option<Cow<'static, str>> {
    let mut names: Vec<&'static str> = SWITCHYARD_DEVICE_NAMES
        .iter()
        .filter(|named| family_of(named.key) == family && !family.is_empty())
        .map(|named| named.name)
        .collect();
    names.sort_unstable();
    names.dedup();
    match names.as_slice() {
        [] => None,
        [one] => Some(Cow::Borrowed(one)),
        several => Some(Cow::Owned(several.join("|"))),
    }
}

/// A key as dumps print it: its name, and for the keys that downstream crates give a device
/// (`PrivateUse1..3`) the device's registered name too, e.g. `PrivateUse1 (toy)`.
pub(crate) fn key_label(key: DispatchKey) -> Cow<'static, str> {
    let private = DispatchKeySet::PRIVATE_USE1
        .union(DispatchKeySet::PRIVATE_USE2)
        .union(DispatchKeySet::PRIVATE_USE3);
    match device_name(key.set()) {
        Some(name) if private.contains(key.set()) => Cow::Owned(format!("{} ({name})", key.name())),
        _ => Cow::Borrowed(key.name()),
    }
}

/// Names the device family of a backend key, for errors: `name_device!(PrivateUse1, "toy");`
/// (the key by its [`DispatchKey`] variant name, or `name_device!(key = path, "toy")` for a path
/// to a key constant). Use it once per device, at module level, in the crate that owns the device.
///
/// ```
/// use switchyard::{DispatchKey, DispatchKeySet};
///
/// pub const TOY: DispatchKey = DispatchKey::PrivateUse3;
/// switchyard::name_device!(key = TOY, "toy");
///
/// // (Two crates naming one device would print `a|b`.)
/// assert_eq!(switchyard::family_name(DispatchKeySet::PRIVATE_USE3), "toy");
/// ```
///
/// Only backend keys are devices:
///
/// ```compile_fail
/// switchyard::name_device!(Tracing, "not a device");
/// ```
#[macro_export]
macro_rules! name_device {
    (key = $key:expr, $name:expr) => {
        const _: () = {
            ::core::assert!(
                $crate::DispatchKey::is_backend($key),
                "name_device!: only backend keys (CpuNaive, CpuSimd, PrivateUse1..3, Wgpu) are devices"
            );
            #[allow(unsafe_code)] // linkme's `link_section`
            #[cfg_attr(
                not(target_family = "wasm"),
                $crate::__private_v1::linkme::distributed_slice($crate::__private_v1::DEVICE_NAMES)
            )]
            #[cfg_attr(not(target_family = "wasm"), linkme(crate = $crate::__private_v1::linkme))]
            static NAME: $crate::DeviceName = $crate::DeviceName {
                key: $key,
                name: $name,
            };
            #[cfg(target_family = "wasm")]
            $crate::__private_v1::submit!($crate::__private_v1::DEVICE_NAMES, NAME);
        };
    };
    ($key:ident, $name:expr) => {
        $crate::name_device!(key = $crate::DispatchKey::$key, $name);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: DispatchKeySet = DispatchKeySet::CPU;
    const NAIVE: DispatchKeySet = DispatchKeySet::CPU_NAIVE;
    const SIMD: DispatchKeySet = DispatchKeySet::CPU_SIMD;
    const WGPU: DispatchKeySet = DispatchKeySet::WGPU;
    const P1: DispatchKeySet = DispatchKeySet::PRIVATE_USE1;
    const P3: DispatchKeySet = DispatchKeySet::PRIVATE_USE3;

    /// The four-instruction test agrees with counting `families` on every set of backend keys,
    /// with functionality keys mixed in.
    #[test]
    fn mixes_families_counts_families_for_every_backend_set() {
        let backends: Vec<DispatchKey> = DispatchKey::ALL
            .into_iter()
            .filter(|k| k.is_backend())
            .collect();
        for subset in 0u32..(1 << backends.len()) {
            let mut keys = DispatchKeySet::TRACING | DispatchKeySet::AUTOGRAD_CPU;
            for (i, key) in backends.iter().enumerate() {
                if subset & (1 << i) != 0 {
                    keys |= key.set();
                }
            }
            assert_eq!(
                mixes_families(keys),
                families(keys).len() > 1,
                "keys {keys}"
            );
        }
    }

    #[test]
    fn one_cpu_key_is_the_cpu() {
        assert!(!mixes_families(NAIVE | CPU));
        assert!(!mixes_families(SIMD | NAIVE));
        assert!(
            mixes_families(NAIVE | WGPU),
            "a value reporting only CpuNaive is on the CPU"
        );
        assert!(mixes_families(SIMD | WGPU));
        assert!(mixes_families(P1 | P3));
        assert_eq!(families(NAIVE | WGPU), [WGPU, CPU]);
        assert_eq!(family_of(DispatchKey::CpuNaive), CPU);
        assert_eq!(family_of(DispatchKey::Tracing), DispatchKeySet::EMPTY);
    }

    /// The tables agree with the key table's pairs and with `mixes_families` on every set of
    /// backend keys.
    #[test]
    fn the_autograd_key_consulted_is_the_highest_backends() {
        for backends in 0u64..1 << BACKEND_BITS {
            let keys = DispatchKeySet::from_bits_retain(backends);
            let expected: DispatchKeySet = match keys.highest() {
                Some(highest) => DispatchKeySet::AUTOGRAD
                    .keys()
                    .filter(|a| a.autograd_backends().has(highest))
                    .collect(),
                None => DispatchKeySet::EMPTY,
            };
            assert_eq!(
                expected.bits().count_ones(),
                u32::from(!keys.is_empty()),
                "backends {keys}"
            );
            let all = keys | DispatchKeySet::AUTOGRAD | DispatchKeySet::TRACING;
            assert_eq!(
                all.with_paired_autograd(),
                keys | expected | DispatchKeySet::TRACING,
                "backends {keys}"
            );
            assert_eq!(
                keys.with_paired_autograd(),
                keys,
                "no autograd key: unchanged"
            );
            let one_family = all.bits() & paired_autograd_mask_one_family(all.bits());
            if mixes_families(keys) {
                assert_eq!(one_family, 0, "backends {keys}");
            } else {
                assert_eq!(one_family, all.with_paired_autograd().bits());
            }
        }
    }

    #[test]
    fn unnamed_families_print_their_keys() {
        assert_eq!(family_name(P1), "{PrivateUse1}");
    }
}
