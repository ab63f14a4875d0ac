//! The typed hot path: `(arg_keys ∪ included) − excluded`, masked to the op's non-fallthrough
//! keys, highest bit, one load. It calls nothing, so the generated caller needs no stack frame;
//! anything unusual returns `None`, and the caller tail-calls its cold path (`cold.rs`).

use std::sync::atomic::Ordering;

use crate::family::mixes_families;
use crate::key::DispatchKeySet;
use crate::table::{OpTable, highest_slot, with_local_keys};

impl<F: Copy + Send + Sync + 'static> OpTable<F> {
    /// The hot path of every op call: the kernel for a call whose arguments carry `arg_keys`, and
    /// the call's keys; or `None` when anything is unusual (table not built yet, devices mixed,
    /// no kernel, runtime registrations, dispatch trace on). On `None` the caller uses
    /// [`OpTable::lookup`], which builds or explains.
    #[inline(always)]
    pub fn probe(&'static self, arg_keys: DispatchKeySet) -> Option<(F, DispatchKeySet)> {
        self.probe_checked::<true>(arg_keys)
    }

    /// [`OpTable::probe`] without the device-mismatch check, for `#[op(mixes_devices)]` (a copy
    /// between devices). A separate method, so that the ordinary hot path tests no flag.
    #[inline(always)]
    pub fn probe_mixed(&'static self, arg_keys: DispatchKeySet) -> Option<(F, DispatchKeySet)> {
        self.probe_checked::<false>(arg_keys)
    }

    #[inline(always)]
    fn probe_checked<const CHECK_DEVICES: bool>(
        &'static self,
        arg_keys: DispatchKeySet,
    ) -> Option<(F, DispatchKeySet)> {
        let table = self.base.get()?;
        if CHECK_DEVICES && mixes_families(arg_keys) {
            return None;
        }
        let keys = with_local_keys(arg_keys);
        let masked = keys & self.fast_mask.load(Ordering::Relaxed);
        if masked == 0 {
            return None;
        }
        let kernel = table.slots[highest_slot(masked)]?;
        Some((kernel, DispatchKeySet::from_bits_retain(keys)))
    }

    /// The kernel for exactly `keys` (no thread-local sets), when the fast table has one: the
    /// hot path of a redispatch. On `None` the caller uses [`OpTable::redispatch`].
    #[inline(always)]
    pub fn probe_exact(&'static self, keys: DispatchKeySet) -> Option<F> {
        let table = self.base.get()?;
        let masked = keys.bits() & self.fast_mask.load(Ordering::Relaxed);
        if masked == 0 {
            return None;
        }
        table.slots[highest_slot(masked)]
    }
}
