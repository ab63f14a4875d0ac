//! The out-of-line path: what a call does when `probe` finds nothing (first use, runtime
//! registrations, the dispatch trace, mixed devices, no kernel), and the errors that explain a
//! failed dispatch.

use std::sync::Arc;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;

use crate::alias::KernelKey;
use crate::dtype::{self, UserDType};
use crate::dtype::{ColumnSet, DTypeColumn};
use crate::error::{DispatchError, ErrorKind};
use crate::family::{families, mixes_families};
use crate::key::{DispatchKey, DispatchKeySet};
use crate::origin::SlotOrigin;
use crate::table::{Current, OpTable, Table, highest_slot, key_bits, with_local_keys};
use crate::trace_log::{self, trace_enabled};

impl<F: Copy + Send + Sync + 'static> OpTable<F> {
    /// The kernel for a call whose arguments carry `arg_keys`, and the call's keys, building the
    /// table on first use; or the error that explains why there is none. Same result as
    /// [`OpTable::probe`] where that finds a kernel.
    #[inline(never)]
    pub fn lookup(
        &'static self,
        arg_keys: DispatchKeySet,
    ) -> Result<(F, DispatchKeySet), DispatchError> {
        self.lookup_checked::<true>(arg_keys)
    }

    /// [`OpTable::lookup`] without the device-mismatch check, for `#[op(mixes_devices)]`.
    #[inline(never)]
    pub fn lookup_mixed(
        &'static self,
        arg_keys: DispatchKeySet,
    ) -> Result<(F, DispatchKeySet), DispatchError> {
        self.lookup_checked::<false>(arg_keys)
    }

    fn lookup_checked<const CHECK_DEVICES: bool>(
        &'static self,
        arg_keys: DispatchKeySet,
    ) -> Result<(F, DispatchKeySet), DispatchError> {
        let table = self.current();
        if CHECK_DEVICES && mixes_families(arg_keys) {
            return Err(self.device_mismatch(arg_keys));
        }
        let keys = DispatchKeySet::from_bits_retain(with_local_keys(arg_keys));
        let kernel = self.select(&table, keys, arg_keys)?;
        Ok((kernel, keys))
    }

    /// The kernel for exactly `keys`, ignoring thread-local sets: what a kernel uses to continue
    /// below its own key.
    #[inline(never)]
    pub fn redispatch(&'static self, keys: DispatchKeySet) -> Result<F, DispatchError> {
        self.select(&self.current(), keys, keys)
    }

    /// The table cold calls read: the base table (built and published on first use) or, while
    /// runtime registrations concern the op, the live one.
    pub(super) fn current(&'static self) -> Current<F> {
        let base = self.base();
        if !self.has_live.load(Ordering::Acquire) {
            return Current::Base(base);
        }
        match &*self.live.read().unwrap_or_else(PoisonError::into_inner) {
            Some(live) => Current::Live(Arc::clone(live)),
            None => Current::Base(base),
        }
    }

    /// The slot `keys` selects, its origin, and the kernel there, or the error.
    fn select(
        &'static self,
        table: &Table<F>,
        keys: DispatchKeySet,
        arg_keys: DispatchKeySet,
    ) -> Result<F, DispatchError> {
        let (index, kernel) = match self.choose(table, keys, arg_keys) {
            Ok(chosen) => chosen,
            Err(error) => return Err(self.log_failure(keys, error)),
        };
        if trace_enabled() {
            self.log_dispatch(table, keys, index);
        }
        Ok(kernel)
    }

    /// One `SWITCHYARD_TRACE` line: what `keys` selected in `table`.
    #[cold]
    pub(super) fn log_dispatch(
        &'static self,
        table: &Table<F>,
        keys: DispatchKeySet,
        index: Option<usize>,
    ) {
        let part = table.part(keys.column());
        let origin = index.map_or(SlotOrigin::Composite, |i| part.origins[i]);
        trace_log::dispatch(self.info.name, keys, index, origin);
    }

    /// A failed dispatch's `SWITCHYARD_TRACE` line, if the trace is on; returns the error.
    #[cold]
    pub(super) fn log_failure(
        &'static self,
        keys: DispatchKeySet,
        error: DispatchError,
    ) -> DispatchError {
        if trace_enabled() {
            trace_log::failure(self.info.name, keys, &error);
        }
        error
    }

    /// The slot index (`None`: the no-keys slot) and kernel for `keys`, in their column.
    pub(super) fn choose(
        &'static self,
        table: &Table<F>,
        keys: DispatchKeySet,
        arg_keys: DispatchKeySet,
    ) -> Result<(Option<usize>, F), DispatchError> {
        if let Some(error) = &table.error {
            return Err(error.clone());
        }
        if let Some(dtype) = dtype::conflict_in(keys) {
            return Err(self.user_dtype_conflict(dtype));
        }
        let column = keys.column();
        let masked = key_bits(keys.bits()) & table.masks[column.index()];
        if masked == 0 {
            return match table.part(column).undefined {
                Ok(Some(kernel)) => Ok((None, kernel)),
                Ok(None) => Err(self.nothing_selected(keys, arg_keys)),
                Err(conflict) => Err(conflict.error(self.info.name)),
            };
        }
        let index = highest_slot(masked);
        match table.slots[column.index()][index] {
            Some(kernel) => Ok((Some(index), kernel)),
            None => Err(self.missing(table, index, keys)),
        }
    }

    // ---- errors ----

    #[cold]
    pub(super) fn device_mismatch(&'static self, arg_keys: DispatchKeySet) -> DispatchError {
        let error = DispatchError::new(ErrorKind::DeviceMismatch {
            op: self.info.name,
            families: families(arg_keys),
        });
        self.log_failure(arg_keys, error)
    }

    #[cold]
    fn user_dtype_conflict(&'static self, dtype: UserDType) -> DispatchError {
        let (first, second) = dtype
            .conflict()
            .expect("called for a slot two declarations claim");
        DispatchError::new(ErrorKind::UserDTypeConflict {
            op: self.info.name,
            dtype,
            first: *first,
            second: *second,
        })
    }

    #[cold]
    fn nothing_selected(
        &'static self,
        keys: DispatchKeySet,
        arg_keys: DispatchKeySet,
    ) -> DispatchError {
        match keys.highest() {
            // Every key left is a fallthrough: report the highest one.
            Some(key) => self.missing_at(key, keys),
            None => DispatchError::new(ErrorKind::NoDispatchKeys {
                op: self.info.name,
                arg_keys,
            }),
        }
    }

    #[cold]
    fn missing(
        &'static self,
        table: &Table<F>,
        index: usize,
        keys: DispatchKeySet,
    ) -> DispatchError {
        let key = DispatchKey::from_index(index).expect("slot indices come from valid keys");
        match table.part(keys.column()).origins[index] {
            SlotOrigin::FallbackUnboxed(_) => DispatchError::new(ErrorKind::Unboxed {
                op: self.info.name,
                key: Some(key),
            }),
            SlotOrigin::Conflict(conflict) => conflict.error(self.info.name),
            _ => self.missing_at(key, keys),
        }
    }

    #[cold]
    fn missing_at(&'static self, key: DispatchKey, keys: DispatchKeySet) -> DispatchError {
        let registrations = self.registrations();
        // What the kernels at each of the call's keys serve, for a call whose column they miss.
        let served = keys
            .keys()
            .filter_map(|at| {
                let columns = registrations
                    .iter()
                    .filter(|(k, _)| *k == KernelKey::Key(at))
                    .fold(ColumnSet::EMPTY, |set, (_, meta)| set.union(meta.dtypes));
                (!columns.is_empty()).then_some((at, columns))
            })
            .collect();
        DispatchError::new(ErrorKind::MissingKernel {
            op: self.info.name,
            item: self.info.item_path(),
            key,
            call_keys: keys,
            column: DTypeColumn::of_keys(keys),
            served,
            available: registrations
                .iter()
                .filter_map(|(key, _)| key.runtime())
                .collect(),
        })
    }
}
