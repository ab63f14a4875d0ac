//! Live tables: publishing what calls read, and the op's runtime registrations.
//!
//! **Invariant (publication):** the base table, `live`, `has_live` and `fast_masks` are written
//! only by [`OpTable::publish`], under the global registration lock, so each column's fast mask is
//! the base table's mask of that column exactly while no runtime registration concerns the op and
//! the dispatch trace is off, and 0 otherwise.

use std::panic::Location as CallerLocation;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::alias::KernelKey;
use crate::cpu::{CpuFeatures, CpuPolicy};
use crate::dtype::{ColumnSet, NUM_COLUMNS};
use crate::error::DispatchError;
use crate::key::DispatchKey;
use crate::origin::KernelMeta;
use crate::registration::{Registration, Undo};
use crate::registry::{Global, KernelRegistration};
use crate::runtime::{self, builtin_key_error, caller_location};
use crate::table::{OpTable, RuntimeOp, Table};
use crate::trace_log::trace_enabled;

/// An op's runtime registrations; poisoning is ignored as in `runtime::lock`.
fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<F: Copy + Send + Sync + 'static> OpTable<F> {
    /// Publishes what calls read for the live set of registrations (`op`'s and `global`'s),
    /// building the base table first if it is not built; `live` is the live table when the caller
    /// has already computed it. Returns the base table. Under the global lock, then the op's.
    ///
    /// The live table is published first, then the base table, then the fast masks: a call that
    /// sees the base table also sees the live table published with it (until then every cold
    /// call waits for the lock, in `base`), and a call that sees a non-zero fast mask also sees
    /// the base table (the hot path reads it unchecked on that proof).
    #[cold]
    fn publish(
        &'static self,
        global: &Global,
        op: &RuntimeOp<F>,
        live: Option<Table<F>>,
    ) -> &'static Table<F> {
        let built = self.base.get();
        let fresh = built.is_none().then(|| self.compute(None));
        let base_masks = fresh
            .as_ref()
            .or(built)
            .map_or([0; NUM_COLUMNS], |base| base.masks);
        let is_live = !op.is_empty() || !global.fallbacks.is_empty();
        let live =
            is_live.then(|| Arc::new(live.unwrap_or_else(|| self.compute(Some((op, global))))));
        let mut fast_masks = if is_live || trace_enabled() {
            [0; NUM_COLUMNS]
        } else {
            base_masks
        };
        // Calls carrying a user dtype claimed twice go out of line, where `choose` reports it.
        for column in crate::dtype::columns_kept_cold().iter() {
            fast_masks[column.index()] = 0;
        }
        self.has_live.store(live.is_some(), Ordering::Release);
        *self.live.write().unwrap_or_else(PoisonError::into_inner) = live;
        let base = match fresh {
            Some(base) => self.base.get_or_init(|| base),
            None => built.expect("`fresh` is computed exactly when the base is not built"),
        };
        // After the base table is set: the hot path reads the table unchecked once it loads a
        // non-zero mask (`hot.rs`), so a mask must never be seen before the table it indexes.
        for (fast, mask) in self.fast_masks.iter().zip(fast_masks) {
            fast.store(mask, Ordering::Release);
        }
        base
    }

    /// The base table, built and published on first use.
    #[inline]
    pub(super) fn base(&'static self) -> &'static Table<F> {
        match self.base.get() {
            Some(base) => base,
            None => self.first_use(),
        }
    }

    /// Out of line, so that the locks' guards cost `base`'s callers no stack frame.
    #[cold]
    #[inline(never)]
    fn first_use(&'static self) -> &'static Table<F> {
        self.publish(&runtime::lock(), &locked(&self.runtime), None)
    }

    /// Republishes the op's tables if they are built (an unbuilt op's are published when built,
    /// from the live set then); under the global lock.
    pub(super) fn refresh(&'static self, global: &Global) {
        if self.base.get().is_some() {
            self.publish(global, &locked(&self.runtime), None);
        }
    }

    /// Every kernel registered for the op (linked and at run time), sorted by key.
    pub(super) fn registrations(&self) -> Vec<(KernelKey, KernelMeta)> {
        let op = locked(&self.runtime);
        let mut all: Vec<_> = self
            .kernels
            .iter()
            .map(|r| (r.key(), r.meta()))
            .chain(op.kernels.iter().map(|(_, r)| (r.key(), r.meta())))
            .collect();
        all.sort_by_key(|(key, meta)| (*key, meta.cpu, meta.location, meta.name));
        all
    }

    /// Registers `kernel` for this op at `key` until the returned guard drops. A registration
    /// that conflicts with another at its key (linked or registered) is refused, naming both;
    /// `overrides` replaces the others at the key deliberately.
    ///
    /// The kernel serves the columns in `dtypes` (every column: [`ColumnSet::ALL`]).
    pub fn register(
        &'static self,
        key: KernelKey,
        dtypes: ColumnSet,
        name: &'static str,
        kernel: F,
        overrides: bool,
        caller: &'static CallerLocation<'static>,
    ) -> Result<Registration, DispatchError> {
        if dtypes.is_empty() {
            return Err(DispatchError::kernel(
                self.info.name,
                format!("the kernel `{name}` serves no dtype, so it would never run"),
            ));
        }
        let meta = KernelMeta {
            overrides,
            dtypes,
            ..KernelMeta::new(name, caller_location(caller))
        };
        self.check_registrable(key)?;
        let registration = KernelRegistration::new(key, kernel, meta);
        self.add(meta, |op, id| op.kernels.push((id, registration)))
    }

    /// Registers a CPU variant at `CpuSimd` at run time: installed only where the CPU has every
    /// feature in `cpu`; refused where it never can be, since it would never run.
    ///
    /// # Safety
    ///
    /// Calling `kernel` must be sound on every CPU that has the features in `cpu`.
    #[allow(unsafe_code)] // forwards the caller's contract to `KernelRegistration::with_cpu`
    pub unsafe fn register_variant(
        &'static self,
        name: &'static str,
        kernel: F,
        cpu: CpuFeatures,
        caller: &'static CallerLocation<'static>,
    ) -> Result<Registration, DispatchError> {
        let key = KernelKey::Key(DispatchKey::CpuSimd);
        let policy = CpuPolicy::current();
        if policy.choose(&[cpu]).is_none() {
            return Err(DispatchError::kernel(
                self.info.name,
                format!(
                    "the CPU variant `{name}` (cpu: {cpu}) can never run in this process: {}",
                    policy.verdict(cpu)
                ),
            ));
        }
        let meta = KernelMeta {
            cpu,
            ..KernelMeta::new(name, caller_location(caller))
        };
        // SAFETY: the caller promises `kernel` is sound on every CPU with `cpu`; the table
        // installs it only where the policy admits `cpu`, i.e. where every feature was detected.
        #[allow(unsafe_code)]
        let registration = unsafe { KernelRegistration::with_cpu(key, kernel, meta) };
        self.add(meta, |op, id| op.kernels.push((id, registration)))
    }

    /// Makes this op skip `key` until the returned guard drops.
    pub(super) fn add_fallthrough(
        &'static self,
        key: DispatchKey,
        caller: &'static CallerLocation<'static>,
    ) -> Result<Registration, DispatchError> {
        let meta = KernelMeta::new("fallthrough", caller_location(caller));
        self.check_registrable(key.into())?;
        self.add(meta, |op, id| op.fallthrough.push((id, key, meta)))
    }

    /// The library's own keys take no user registrations.
    fn check_registrable(&self, key: KernelKey) -> Result<(), DispatchError> {
        match key.runtime().filter(|k| k.is_builtin()) {
            Some(key) => Err(builtin_key_error(key)),
            None => Ok(()),
        }
    }

    /// Adds one runtime registration (described by `meta`), checks that it conflicts with no
    /// other (a conflicting one is refused, and nothing changes), and publishes the new table.
    fn add(
        &'static self,
        meta: KernelMeta,
        push: impl FnOnce(&mut RuntimeOp<F>, u64),
    ) -> Result<Registration, DispatchError> {
        let mut global = runtime::lock();
        let id = global.next_id();
        let mut op = locked(&self.runtime);
        push(&mut op, id);
        let table = self.compute(Some((&op, &global)));
        let conflict = table
            .conflicts
            .iter()
            .find(|c| c.first == meta || c.second == meta);
        if let Some(conflict) = conflict {
            op.remove(id);
            return Err(conflict.error(self.info.name));
        }
        self.publish(&global, &op, Some(table));
        Ok(Registration::new(id, self))
    }
}

/// Dropping a [`Registration`] of this op's: the registration is removed and the tables
/// republished.
impl<F: Copy + Send + Sync + 'static> Undo for OpTable<F> {
    fn undo(&'static self, id: u64) {
        let global = runtime::lock();
        let mut op = locked(&self.runtime);
        op.remove(id);
        self.publish(&global, &op, None);
    }

    fn describe(&self) -> &'static str {
        self.info.name
    }
}
