//! Boxed calls of an op, and the op seen without its types ([`ErasedOp`]): what handles, dumps,
//! `find_op` and runtime registration guards see.

use std::panic::Location as CallerLocation;

use crate::alias::KernelKey;
use crate::boxing::Stack;
use crate::dtype::{ColumnSet, DTypeColumn};
use crate::error::{DispatchError, ErrorKind};
use crate::family::mixes_families;
use crate::key::{DispatchKey, DispatchKeySet};
use crate::origin::{Conflict, KernelMeta, SlotOrigin};
use crate::registration::Registration;
use crate::registry::{ErasedOp, Global, OpHandle, OpInfo};
use crate::table::{Boxing, OpTable, with_local_keys};
use crate::trace_log::{self, trace_enabled};

impl<F: Copy + Send + Sync + 'static> OpTable<F> {
    /// The boxed kernel and the typed-to-boxed adapter, or the op's "unboxed" error.
    fn boxing(&self) -> Result<Boxing<F>, DispatchError> {
        self.boxing.ok_or_else(|| {
            DispatchError::new(ErrorKind::Unboxed {
                op: self.info.name,
                key: None,
            })
        })
    }

    /// The boxed step of a typed call whose slot is a boxed fallback: the op's generated
    /// `__via_boxed` boxes the arguments and calls this with the keys the typed call selected.
    /// That typed dispatch already printed its `SWITCHYARD_TRACE` line and entered its nesting
    /// level, so this one neither prints nor enters: one dispatch, one line.
    pub fn continue_boxed(
        &'static self,
        keys: DispatchKeySet,
        stack: &mut Stack,
    ) -> Result<(), DispatchError> {
        self.run_boxed::<false>(keys, keys, stack)
    }

    /// Runs the op boxed for exactly `keys`: a boxed fallback directly, a typed kernel through
    /// the op's unboxing adapter. `ANNOUNCE`: a dispatch of its own, which the trace prints and
    /// nests (not so for [`OpTable::continue_boxed`]).
    ///
    /// Where the fast table has the slot (the base table is current and the dispatch trace is
    /// off, so there is nothing to announce), it is read as the typed hot path reads it;
    /// everything else goes out of line.
    #[inline]
    fn run_boxed<const ANNOUNCE: bool>(
        &'static self,
        keys: DispatchKeySet,
        arg_keys: DispatchKeySet,
        stack: &mut Stack,
    ) -> Result<(), DispatchError> {
        if let Some(boxing) = self.boxing
            && let Some((table, column, index)) = self.fast_slot(keys)
            && let Some(kernel) = table.slots[column.index()][index]
        {
            return match table.part(column).boxed.get(index).copied().flatten() {
                Some(fallback) => fallback(&OpHandle { op: self }, keys, stack),
                None => (boxing.call_unboxed)(kernel, keys, stack),
            };
        }
        self.run_boxed_cold::<ANNOUNCE>(keys, arg_keys, stack)
    }

    /// [`OpTable::run_boxed`] from the current table (building it on first use), with the trace
    /// line and the errors.
    #[inline(never)]
    fn run_boxed_cold<const ANNOUNCE: bool>(
        &'static self,
        keys: DispatchKeySet,
        arg_keys: DispatchKeySet,
        stack: &mut Stack,
    ) -> Result<(), DispatchError> {
        let boxing = self.boxing()?;
        let table = self.current();
        let (index, kernel) = match self.choose(&table, keys, arg_keys) {
            Ok(chosen) => chosen,
            Err(error) => return Err(self.log_failure(keys, error)),
        };
        let _depth = if ANNOUNCE && trace_enabled() {
            self.log_dispatch(&table, keys, index);
            trace_log::enter()
        } else {
            None
        };
        match index.and_then(|i| table.part(keys.column()).boxed[i]) {
            Some(fallback) => fallback(&OpHandle { op: self }, keys, stack),
            None => (boxing.call_unboxed)(kernel, keys, stack),
        }
    }
}

impl<F: Copy + Send + Sync + 'static> ErasedOp for OpTable<F> {
    fn info(&self) -> &OpInfo {
        &self.info
    }

    fn registrations(&self) -> Vec<(KernelKey, KernelMeta)> {
        OpTable::registrations(self)
    }

    fn has_composite(&self) -> bool {
        self.composite.is_some()
    }

    fn slots(
        &'static self,
        column: DTypeColumn,
    ) -> Result<Vec<(DispatchKey, SlotOrigin)>, DispatchError> {
        let table = self.current();
        match &table.error {
            Some(error) => Err(error.clone()),
            None => Ok(DispatchKey::ALL
                .iter()
                .map(|&k| (k, table.part(column).origins[k.index()]))
                .collect()),
        }
    }

    fn parts(&'static self) -> Result<Vec<(ColumnSet, Vec<SlotOrigin>)>, DispatchError> {
        let table = self.current();
        match &table.error {
            Some(error) => Err(error.clone()),
            None => Ok(table
                .parts
                .iter()
                .map(|part| (part.columns, part.origins.to_vec()))
                .collect()),
        }
    }

    fn call_boxed(&'static self, stack: &mut Stack) -> Result<(), DispatchError> {
        stack.check_exact_args(self.info.arity, self.info.name, self.info.schema)?;
        let arg_keys = stack
            .values()
            .iter()
            .fold(DispatchKeySet::EMPTY, |keys, v| keys | v.dispatch_keys());
        if !self.info.mixes_devices && mixes_families(arg_keys) {
            return Err(self.device_mismatch(arg_keys));
        }
        let keys = DispatchKeySet::from_bits_retain(with_local_keys(arg_keys));
        self.run_boxed::<true>(keys, arg_keys, stack)
    }

    fn redispatch_boxed(
        &'static self,
        keys: DispatchKeySet,
        stack: &mut Stack,
    ) -> Result<(), DispatchError> {
        self.run_boxed::<true>(keys, keys, stack)
    }

    fn register_fallthrough(
        &'static self,
        key: DispatchKey,
        caller: &'static CallerLocation<'static>,
    ) -> Result<Registration, DispatchError> {
        self.add_fallthrough(key, caller)
    }

    fn conflicts(&'static self) -> Result<Vec<Conflict>, DispatchError> {
        let table = self.current();
        match &table.error {
            Some(error) => Err(error.clone()),
            None => Ok(table.conflicts.clone()),
        }
    }

    fn compute_table_uncached(&'static self) {
        std::hint::black_box(self.compute(None));
    }

    fn refresh(&'static self, global: &Global) {
        OpTable::refresh(self, global);
    }
}
