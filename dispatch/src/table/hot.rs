//! The typed hot path: `(arg_keys ∪ included) − excluded`, autograd paired with the backend (and
//! the device-family check) in one load; the column of the call's dtypes (one load, indexed by
//! the dtype bits); that column's mask of non-fallthrough keys; highest bit; one load. It
//! calls nothing, so the generated caller needs no stack frame; anything unusual returns `None`,
//! and the caller tail-calls its cold path (`cold.rs`).

use std::sync::atomic::Ordering;

use crate::dtype::{COLUMN_SHIFT, DTypeColumn};
use crate::family::{paired_autograd_mask, paired_autograd_mask_one_family};
use crate::key::DispatchKeySet;
use crate::local::local_masks;
use crate::table::{OpTable, Table, highest_slot, key_bits};

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
        // One load pairs autograd with the backend and, for an op that does not mix devices,
        // empties the keys of a call whose arguments meet two device families: it then finds
        // no kernel, and the cold path reports the mismatch. (Includes that add another
        // device's key also go out of line; the cold path decides on the arguments alone.)
        let local = local_masks();
        let keys = arg_keys.bits() | local.included;
        let mask = if CHECK_DEVICES {
            paired_autograd_mask_one_family(keys)
        } else {
            paired_autograd_mask(keys)
        };
        let keys = DispatchKeySet::from_bits_retain(keys & local.kept & mask);
        let kernel = self.fast_kernel(keys)?;
        Some((kernel, keys))
    }

    /// The kernel for exactly `keys` (no thread-local sets), when the fast table has one: the
    /// hot path of a redispatch. On `None` the caller uses [`OpTable::redispatch`].
    #[inline(always)]
    pub fn probe_exact(&'static self, keys: DispatchKeySet) -> Option<F> {
        self.fast_kernel(keys)
    }

    /// The slot `keys` selects in the fast table (its column and key index), with the table:
    /// what [`OpTable::probe_exact`] reads, for the boxed path, which also looks at the slot's
    /// boxed fallback. `None` where `probe_exact` finds nothing.
    ///
    /// `keys`' column, masked by its fast mask, highest key. The column is a `DTypeColumn`
    /// (below `NUM_COLUMNS`) and the slot index below 32, so neither index is bounds-checked; the
    /// base table sits at a fixed offset in the op, so reading it costs no instruction.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn fast_slot(
        &'static self,
        keys: DispatchKeySet,
    ) -> Option<(&'static Table<F>, DTypeColumn, usize)> {
        let column = self.column_of[(keys.bits() >> COLUMN_SHIFT) as usize];
        // `Acquire`: a non-zero mask proves the base table set (below). On x86-64, the same one
        // `mov` as a `Relaxed` load. One expression: a `let` of the mask alone measured one
        // instruction more (a register copy).
        let masked =
            key_bits(keys.bits()) & self.fast_masks[column.index()].load(Ordering::Acquire);
        if masked == 0 {
            return None;
        }
        // SAFETY: `get_published` needs the table set, its setting visible here. The column's
        // mask is not zero (`masked` is not). Masks are stored only by `OpTable::publish`, with `Release`,
        // after the base table is set, which is never unset (an op's masks start at 0, and
        // `publish` sets `base` before its first store of a mask): the `Acquire` load above
        // synchronises with that store, so the setting happens before this read.
        let table = unsafe { self.base.get_published() };
        Some((table, column, highest_slot(masked)))
    }

    /// The kernel in [`OpTable::fast_slot`]'s slot, if the slot has one.
    #[inline(always)]
    fn fast_kernel(&'static self, keys: DispatchKeySet) -> Option<F> {
        let (table, column, slot) = self.fast_slot(keys)?;
        table.slots[column.index()][slot]
    }
}
