//! Per-op dispatch tables: built once from the op's registrations, then read with one indexed load.
//!
//! **Invariant:** a built table depends only on the set of registrations (they are sorted by an
//! explicit key before use) and the process's CPU policy (detected once), never on link order.

use std::fmt;
use std::sync::OnceLock;

use linkme::DistributedSlice;

use crate::cpu::CpuPolicy;
use crate::device::Device;
use crate::error::{DispatchError, ErrorKind, Location};
use crate::key::{DispatchKey, DispatchKeySet, NUM_KEYS};
use crate::local::local_masks;
use crate::registry::{KernelMeta, KernelRegistration, SWITCHYARD_OPS as OPS, fallthrough_keys};

/// What an op is: its name, schema and where it was declared.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// The op's name (`#[op(name = …)]`).
    pub name: &'static str,
    /// The schema generated from the Rust signature, e.g. `mul(x: Tensor, y: Tensor) -> Tensor`.
    pub schema: &'static str,
    /// Where the op was declared.
    pub location: Location,
}

/// What one slot of an op's table resolved to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SlotOrigin {
    /// A kernel registered for exactly this key.
    Kernel(KernelMeta),
    /// The op's own body (its composite kernel).
    Composite,
    /// Skipped: the call continues with the next lower key.
    Fallthrough,
    /// Nothing: a call that lands here is an error.
    Missing,
}

impl fmt::Display for SlotOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SlotOrigin::Kernel(meta) if !meta.cpu.is_empty() => write!(
                f,
                "[kernel] {} {} (cpu: {})",
                meta.location, meta.name, meta.cpu
            ),
            SlotOrigin::Kernel(meta) => write!(f, "[kernel] {} {}", meta.location, meta.name),
            SlotOrigin::Composite => f.write_str("[composite]"),
            SlotOrigin::Fallthrough => f.write_str("fallthrough"),
            SlotOrigin::Missing => f.write_str("missing"),
        }
    }
}

// Slots are indexed by the highest set bit of a `u64`, so 64 entries make the index provably in
// bounds: the hot path has no bounds check.
const SLOTS: usize = 64;

struct Table<F> {
    /// Keys whose slot is not a fallthrough. A table that failed to build has an empty mask, so
    /// every call reaches the cold path, which reports `error`.
    mask: u64,
    slots: [Option<F>; SLOTS],
    origins: [SlotOrigin; NUM_KEYS],
    error: Option<DispatchError>,
}

impl<F: Copy> Table<F> {
    fn empty() -> Self {
        Table {
            mask: 0,
            slots: [None; SLOTS],
            origins: [SlotOrigin::Missing; NUM_KEYS],
            error: None,
        }
    }

    /// A table whose every call reports `error` (its mask is empty, so every call goes cold).
    fn failed(error: DispatchError) -> Self {
        Table {
            error: Some(error),
            ..Table::empty()
        }
    }
}

/// One op's registrations and, once built, its table. The `#[op]` macro declares one per op as a
/// `static`.
pub struct OpTable<F: 'static> {
    info: OpInfo,
    kernels: &'static DistributedSlice<[KernelRegistration<F>]>,
    composite: Option<F>,
    table: OnceLock<Table<F>>,
}

impl<F: 'static> fmt::Debug for OpTable<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpTable")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Each device family is one bit once `CpuNaive` is dropped, because every CPU tensor carries
/// `CpuSimd` too; so "more than one bit left" is "more than one device".
const FAMILY_BITS: u64 = DispatchKeySet::BACKENDS.bits() & !DispatchKeySet::CPU_NAIVE.bits();

/// The slot of the highest key in `masked`, which is not empty. `% SLOTS` is a no-op the compiler
/// can see, so the slot load needs no bounds check.
#[inline(always)]
fn highest_slot(masked: u64) -> usize {
    (63 - masked.leading_zeros()) as usize % SLOTS
}

/// Whether the arguments come from more than one device family.
#[inline(always)]
fn mixes_devices(arg_keys: DispatchKeySet) -> bool {
    let families = arg_keys.bits() & FAMILY_BITS;
    families & families.wrapping_sub(1) != 0
}

/// The call's keys: `(arg_keys ∪ thread included) − thread excluded`.
#[inline(always)]
fn with_local_keys(arg_keys: DispatchKeySet) -> u64 {
    let local = local_masks();
    (arg_keys.bits() | local.included) & local.kept
}

impl<F: Copy + Send + Sync + 'static> OpTable<F> {
    /// A table to be built at first use from `kernels` (the op's linkme slice) and `composite`
    /// (the op's body, if it has one).
    pub const fn new(
        info: OpInfo,
        kernels: &'static DistributedSlice<[KernelRegistration<F>]>,
        composite: Option<F>,
    ) -> Self {
        OpTable {
            info,
            kernels,
            composite,
            table: OnceLock::new(),
        }
    }

    /// The op's name, schema and location.
    pub fn info(&self) -> &OpInfo {
        &self.info
    }

    /// The hot path of every op call: the kernel for a call whose arguments carry `arg_keys`, or
    /// `None` when anything is unusual (table not built yet, devices mixed, no kernel).
    ///
    /// `(arg_keys ∪ included) − excluded`, masked to the op's non-fallthrough keys, highest bit,
    /// one load. It calls nothing, so the generated caller needs no stack frame; on `None` the
    /// caller tail-calls its cold path, which uses [`OpTable::lookup`] to build or explain.
    #[inline(always)]
    pub fn probe(&'static self, arg_keys: DispatchKeySet) -> Option<F> {
        let table = self.table.get()?;
        if mixes_devices(arg_keys) {
            return None;
        }
        let masked = with_local_keys(arg_keys) & table.mask;
        if masked == 0 {
            return None;
        }
        table.slots[highest_slot(masked)]
    }

    /// The kernel for a call whose arguments carry `arg_keys`, building the table on first use,
    /// or the error that explains why there is none. Same result as [`OpTable::probe`] where that
    /// finds a kernel.
    #[inline]
    pub fn lookup(&'static self, arg_keys: DispatchKeySet) -> Result<F, DispatchError> {
        let table = self.table();
        if mixes_devices(arg_keys) {
            return Err(self.device_mismatch(arg_keys));
        }
        self.select(table, with_local_keys(arg_keys), arg_keys)
    }

    /// The kernel for exactly `keys`, ignoring thread-local sets: what a kernel uses to continue
    /// below its own key.
    #[inline(always)]
    pub fn redispatch(&'static self, keys: DispatchKeySet) -> Result<F, DispatchError> {
        self.select(self.table(), keys.bits(), keys)
    }

    #[inline(always)]
    fn select(
        &'static self,
        table: &Table<F>,
        keys: u64,
        arg_keys: DispatchKeySet,
    ) -> Result<F, DispatchError> {
        let masked = keys & table.mask;
        if masked == 0 {
            return Err(self.nothing_selected(keys, arg_keys));
        }
        let index = highest_slot(masked);
        match table.slots[index] {
            Some(kernel) => Ok(kernel),
            None => Err(self.missing(index, keys)),
        }
    }

    #[inline(always)]
    fn table(&'static self) -> &'static Table<F> {
        self.table.get_or_init(|| self.build())
    }

    #[cold]
    #[inline(never)]
    fn device_mismatch(&'static self, arg_keys: DispatchKeySet) -> DispatchError {
        DispatchError::new(ErrorKind::DeviceMismatch {
            op: self.info.name,
            devices: Device::in_keys(arg_keys).collect(),
        })
    }

    #[cold]
    #[inline(never)]
    fn nothing_selected(&'static self, keys: u64, arg_keys: DispatchKeySet) -> DispatchError {
        if let Some(error) = &self.table().error {
            return error.clone();
        }
        let keys = DispatchKeySet::from_bits_retain(keys);
        match keys.highest() {
            // Every key left is a fallthrough: report the highest one.
            Some(key) => self.missing(key.index(), keys.bits()),
            None => DispatchError::new(ErrorKind::NoDispatchKeys {
                op: self.info.name,
                arg_keys,
            }),
        }
    }

    #[cold]
    #[inline(never)]
    fn missing(&'static self, index: usize, keys: u64) -> DispatchError {
        DispatchError::new(ErrorKind::MissingKernel {
            op: self.info.name,
            key: DispatchKey::from_index(index).expect("slot indices come from valid keys"),
            call_keys: DispatchKeySet::from_bits_retain(keys),
            available: self.kernels.iter().map(|r| r.key).collect(),
        })
    }

    fn sorted_registrations(&self) -> Vec<&'static KernelRegistration<F>> {
        let mut registrations: Vec<_> = self.kernels.iter().collect();
        registrations.sort_by_key(|r| (r.key, r.meta.cpu, r.meta.location, r.meta.name));
        registrations
    }

    #[cold]
    fn build(&'static self) -> Table<F> {
        self.check_unique_name()
            .and_then(|()| self.resolve())
            .unwrap_or_else(Table::failed)
    }

    /// Resolves every slot: kernel > composite > fallthrough > missing (DESIGN §3, the parts
    /// this crate implements so far). Among CPU variants of one key, only the one
    /// `crate::cpu::installable` picks counts as "a kernel".
    fn resolve(&self) -> Result<Table<F>, DispatchError> {
        let registrations = self.sorted_registrations();
        if let Some(pair) = registrations
            .windows(2)
            .find(|pair| pair[0].key == pair[1].key && pair[0].meta.cpu == pair[1].meta.cpu)
        {
            return Err(DispatchError::new(ErrorKind::DuplicateKernel {
                op: self.info.name,
                key: pair[0].key,
                first: (pair[0].meta.name, pair[0].meta.location),
                second: (pair[1].meta.name, pair[1].meta.location),
            }));
        }
        // CPU variants of one key: keep the best the CPU runs, or none (as if none registered).
        let registrations = crate::cpu::installable(&registrations, CpuPolicy::current());
        let with_kernel: DispatchKeySet = registrations.iter().map(|r| r.key).collect();
        let fallthrough = fallthrough_keys();
        let mut table = Table::empty();
        for key in DispatchKey::ALL {
            let kernel = registrations.iter().find(|r| r.key == key);
            let (slot, origin) = if let Some(registration) = kernel {
                (
                    Some(registration.kernel),
                    SlotOrigin::Kernel(registration.meta),
                )
            } else if let Some(composite) =
                self.composite.filter(|_| composite_fills(key, with_kernel))
            {
                (Some(composite), SlotOrigin::Composite)
            } else if fallthrough.has(key) {
                (None, SlotOrigin::Fallthrough)
            } else {
                (None, SlotOrigin::Missing)
            };
            if origin != SlotOrigin::Fallthrough {
                table.mask |= key.set().bits();
            }
            table.slots[key.index()] = slot;
            table.origins[key.index()] = origin;
        }
        Ok(table)
    }

    /// Op names identify ops for `find_op` and in every message, so two ops may not share one.
    fn check_unique_name(&self) -> Result<(), DispatchError> {
        let mut same_name: Vec<Location> = OPS
            .iter()
            .filter(|op| op.info().name == self.info.name)
            .map(|op| op.info().location)
            .collect();
        same_name.sort();
        same_name.dedup();
        match same_name.as_slice() {
            [first, second, ..] => Err(DispatchError::new(ErrorKind::DuplicateOp {
                op: self.info.name,
                first: *first,
                second: *second,
            })),
            _ => Ok(()),
        }
    }
}

/// The composite body serves a backend key that has no kernel — unless a lower key of the same
/// device has one. The CPU is one device split into two keys: an op with only a naive kernel must
/// fall through from `CpuSimd` to it rather than have the composite shadow it.
fn composite_fills(key: DispatchKey, with_kernel: DispatchKeySet) -> bool {
    key.is_backend()
        && Device::in_keys(key.set())
            .all(|device| !device.keys().below(key).intersects(with_kernel))
}

/// Introspection of an op without its types: what `dump()`, `find_op` and [`crate::OpHandle`]
/// see. Not used on the typed call path.
pub trait ErasedOp: Sync {
    /// Name, schema, location.
    fn info(&self) -> &OpInfo;
    /// Every kernel registered for the op, sorted by key.
    fn registrations(&self) -> Vec<(DispatchKey, KernelMeta)>;
    /// Whether the op has a body (a composite kernel).
    fn has_composite(&self) -> bool;
    /// What each key's slot resolved to (building the table if needed), or the build error.
    fn slots(&'static self) -> Result<Vec<(DispatchKey, SlotOrigin)>, DispatchError>;
}

impl<F: Copy + Send + Sync + 'static> ErasedOp for OpTable<F> {
    fn info(&self) -> &OpInfo {
        &self.info
    }

    fn registrations(&self) -> Vec<(DispatchKey, KernelMeta)> {
        self.sorted_registrations()
            .iter()
            .map(|r| (r.key, r.meta))
            .collect()
    }

    fn has_composite(&self) -> bool {
        self.composite.is_some()
    }

    fn slots(&'static self) -> Result<Vec<(DispatchKey, SlotOrigin)>, DispatchError> {
        let table = self.table();
        match &table.error {
            Some(error) => Err(error.clone()),
            None => Ok(DispatchKey::ALL
                .iter()
                .map(|&k| (k, table.origins[k.index()]))
                .collect()),
        }
    }
}
