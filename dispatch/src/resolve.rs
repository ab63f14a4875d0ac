//! Computing an op's table from its registrations (DESIGN §3). Runs at first use and again after
//! every runtime (de)registration; never on the call path.
//!
//! **Invariant:** the result depends only on the *set* of registrations: they are sorted by an
//! explicit key (key, location, name) before use, and duplicates are errors, never overrides.

use std::fmt;

use crate::alias::{AliasKey, KernelKey};
use crate::cpu::CpuPolicy;
use crate::device::Device;
use crate::error::{DispatchError, ErrorKind};
use crate::key::{DispatchKey, DispatchKeySet, NUM_KEYS};
use crate::registry::{
    BoxedKernel, FallbackKind, FallbackRegistration, KernelMeta, KernelRegistration,
};

/// What one slot of an op's table resolved to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum SlotOrigin {
    /// A kernel registered for exactly this key.
    Kernel(KernelMeta),
    /// A `CompositeExplicit` kernel (backend keys only).
    CompositeExplicit(KernelMeta),
    /// The op's composite body (or a kernel registered for `CompositeImplicit`).
    Composite,
    /// A kernel registered for the `Autograd` alias.
    AutogradAlias(KernelMeta),
    /// The boxed fallback registered for this key.
    Fallback(KernelMeta),
    /// A boxed fallback is registered for this key, but the op is `#[op(unboxed)]`: calling it is
    /// an error.
    FallbackUnboxed(KernelMeta),
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
            SlotOrigin::CompositeExplicit(meta) => {
                write!(f, "[composite explicit] {} {}", meta.location, meta.name)
            }
            SlotOrigin::Composite => f.write_str("[composite]"),
            SlotOrigin::AutogradAlias(meta) => {
                write!(f, "[autograd alias] {} {}", meta.location, meta.name)
            }
            SlotOrigin::Fallback(meta) => write!(f, "[fallback] {} {}", meta.location, meta.name),
            SlotOrigin::FallbackUnboxed(meta) => write!(
                f,
                "missing (the fallback {} at {} cannot serve an unboxed op)",
                meta.name, meta.location
            ),
            SlotOrigin::Fallthrough => f.write_str("fallthrough"),
            SlotOrigin::Missing => f.write_str("missing"),
        }
    }
}

/// Everything a table is computed from.
pub(crate) struct Registrations<F: 'static> {
    /// The op's kernels: linked, registered at run time, and its body (at `CompositeImplicit`).
    pub kernels: Vec<KernelRegistration<F>>,
    /// Keys this op skips (per-op fallthrough), with provenance.
    pub fallthrough: Vec<(DispatchKey, KernelMeta)>,
    /// Every fallback, linked and registered at run time.
    pub fallbacks: Vec<FallbackRegistration>,
    /// The typed slot that boxes a call for a fallback; `None` for `#[op(unboxed)]`.
    pub via_boxed: Option<F>,
}

/// A slot resolved: the typed kernel (if any) and, for fallbacks, the boxed kernel.
#[derive(Clone, Copy)]
pub(crate) struct Resolved<F> {
    pub kernel: Option<F>,
    pub boxed: Option<BoxedKernel>,
    pub origin: SlotOrigin,
}

/// The resolved table, before it is laid out for the hot path.
pub(crate) struct Resolution<F> {
    pub slots: [Resolved<F>; NUM_KEYS],
    /// What a call with no dispatch keys runs: only composite kernels fill it.
    pub undefined: Option<F>,
}

/// Resolves every slot, or reports the duplicate that makes the op's table ambiguous.
pub(crate) fn resolve<F: Copy>(
    op: &'static str,
    mut regs: Registrations<F>,
) -> Result<Resolution<F>, DispatchError> {
    regs.kernels
        .sort_by_key(|r| (r.key, r.meta.cpu, r.meta.location, r.meta.name));
    check_unique_kernels(op, &regs)?;
    // CPU variants of one key: keep the best the CPU runs, or none (as if none were registered).
    regs.kernels = crate::cpu::installable(&regs.kernels, CpuPolicy::current());
    let fallbacks = fallbacks_by_key(&regs.fallbacks)?;
    let find = |key: KernelKey| regs.kernels.iter().find(|r| r.key == key);
    let explicit = find(AliasKey::CompositeExplicit.into());
    let implicit = find(AliasKey::CompositeImplicit.into());
    let autograd = find(AliasKey::Autograd.into());
    let with_kernel: DispatchKeySet = regs
        .kernels
        .iter()
        .filter_map(|r| r.key.runtime())
        .collect();

    let slot = |key: DispatchKey| -> Resolved<F> {
        let typed = |kernel: &KernelRegistration<F>, origin| Resolved {
            kernel: Some(kernel.kernel),
            boxed: None,
            origin,
        };
        if let Some(kernel) = find(key.into()) {
            return typed(kernel, SlotOrigin::Kernel(kernel.meta));
        }
        if regs.fallthrough.iter().any(|(k, _)| *k == key) {
            return skipped(SlotOrigin::Fallthrough);
        }
        let backend_fill = key.is_backend() && composite_fills(key, with_kernel);
        if let Some(kernel) = explicit.filter(|_| backend_fill) {
            return typed(kernel, SlotOrigin::CompositeExplicit(kernel.meta));
        }
        // Autograd flows through the decomposition only where the backend has no kernel of its
        // own (a `CompositeExplicit` kernel counts as one).
        let autograd_without_backend = !key.autograd_backends().is_empty()
            && !key.autograd_backends().intersects(with_kernel)
            && explicit.is_none();
        if let Some(kernel) = implicit.filter(|_| backend_fill || autograd_without_backend) {
            return typed(kernel, SlotOrigin::Composite);
        }
        if let Some(kernel) = autograd.filter(|_| DispatchKeySet::AUTOGRAD.has(key)) {
            return typed(kernel, SlotOrigin::AutogradAlias(kernel.meta));
        }
        match fallbacks[key.index()] {
            Some(FallbackRegistration {
                kind: FallbackKind::Fallthrough,
                ..
            }) => skipped(SlotOrigin::Fallthrough),
            Some(FallbackRegistration {
                kind: FallbackKind::Boxed(boxed),
                meta,
                ..
            }) => match regs.via_boxed {
                Some(via_boxed) => Resolved {
                    kernel: Some(via_boxed),
                    boxed: Some(boxed),
                    origin: SlotOrigin::Fallback(meta),
                },
                None => skipped(SlotOrigin::FallbackUnboxed(meta)),
            },
            None => skipped(SlotOrigin::Missing),
        }
    };

    let mut slots = [skipped(SlotOrigin::Missing); NUM_KEYS];
    for key in DispatchKey::ALL {
        slots[key.index()] = slot(key);
    }
    Ok(Resolution {
        slots,
        undefined: explicit.or(implicit).map(|r| r.kernel),
    })
}

fn skipped<F>(origin: SlotOrigin) -> Resolved<F> {
    Resolved {
        kernel: None,
        boxed: None,
        origin,
    }
}

/// A composite serves a backend key that has no kernel — unless a lower key of the same device
/// has one. The CPU is one device split into two keys: an op with only a naive kernel must fall
/// through from `CpuSimd` to it rather than have the composite shadow it.
fn composite_fills(key: DispatchKey, with_kernel: DispatchKeySet) -> bool {
    Device::in_keys(key.set()).all(|device| !device.keys().below(key).intersects(with_kernel))
}

/// One kernel per (op, key, CPU variant); a per-op fallthrough counts as the key's registration.
fn check_unique_kernels<F>(op: &'static str, regs: &Registrations<F>) -> Result<(), DispatchError> {
    let mut entries: Vec<(KernelKey, KernelMeta)> = regs
        .kernels
        .iter()
        .map(|r| (r.key, r.meta))
        .chain(
            regs.fallthrough
                .iter()
                .map(|(k, meta)| (KernelKey::Key(*k), *meta)),
        )
        .collect();
    entries.sort_by_key(|(key, meta)| (*key, meta.cpu, meta.location, meta.name));
    match entries
        .windows(2)
        .find(|pair| pair[0].0 == pair[1].0 && pair[0].1.cpu == pair[1].1.cpu)
    {
        Some(pair) => Err(DispatchError::new(ErrorKind::DuplicateKernel {
            op,
            key: pair[0].0,
            first: (pair[0].1.name, pair[0].1.location),
            second: (pair[1].1.name, pair[1].1.location),
        })),
        None => Ok(()),
    }
}

/// The fallback of each key, or the error naming two fallbacks for one key.
pub(crate) fn fallbacks_by_key(
    fallbacks: &[FallbackRegistration],
) -> Result<[Option<FallbackRegistration>; NUM_KEYS], DispatchError> {
    let mut sorted = fallbacks.to_vec();
    sorted.sort_by_key(|f| (f.key, f.meta.location, f.meta.name));
    let mut by_key = [None; NUM_KEYS];
    for pair in sorted.windows(2) {
        if pair[0].key == pair[1].key {
            return Err(DispatchError::new(ErrorKind::DuplicateFallback {
                key: pair[0].key,
                first: (pair[0].meta.name, pair[0].meta.location),
                second: (pair[1].meta.name, pair[1].meta.location),
            }));
        }
    }
    for fallback in sorted {
        by_key[fallback.key.index()] = Some(fallback);
    }
    Ok(by_key)
}
