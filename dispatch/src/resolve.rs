//! Computing an op's table from its registrations, by the precedence rules (ARCHITECTURE.md,
//! "Precedence"). Runs at first use and again after every runtime (de)registration; never on the
//! call path.
//!
//! **Invariant:** the result depends only on the *set* of registrations: they are sorted by an
//! explicit key (key, location, name) before use.
//!
//! **Invariant: conflicts fail locally.** Two registrations for one slot (two kernels at one (op,
//! key, CPU variant), CPU variants of one key from two crates, two overrides, two fallbacks at one
//! key) resolve that slot to [`SlotOrigin::Conflict`]: calls that reach it fail naming both, and
//! every other slot and op resolves as if the conflict were not there. A declared override
//! (`overrides`) replaces the other registrations at its key and is no conflict.

use crate::alias::{AliasKey, KernelKey};
use crate::cpu::CpuPolicy;
use crate::family::family_of;
use crate::key::{DispatchKey, DispatchKeySet, NUM_KEYS};
use crate::origin::{Conflict, KernelMeta, SlotOrigin};
use crate::registry::{BoxedKernel, FallbackKind, FallbackRegistration, KernelRegistration};

/// Everything a table (or one group of its dtype columns) is computed from. The lists shared by
/// every group are borrowed: a table build sorts the fallbacks once, not once per group.
pub(crate) struct Registrations<'a, F: 'static> {
    /// The op's kernels: linked, registered at run time, and its body (at `CompositeImplicit`).
    pub kernels: Vec<KernelRegistration<F>>,
    /// Keys this op skips (per-op fallthrough), with provenance.
    pub fallthrough: &'a [(DispatchKey, KernelMeta)],
    /// Every fallback, linked and registered at run time, by key ([`fallbacks_by_key`]).
    pub fallbacks: &'a FallbacksByKey,
    /// The typed slot that boxes a call for a fallback; `None` for `#[op(unboxed)]`.
    pub via_boxed: Option<F>,
}

/// Per key, its fallback, or the conflict between the first two registered there.
pub(crate) type FallbacksByKey = [Option<Result<FallbackRegistration, Conflict>>; NUM_KEYS];

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
    /// What a call with no dispatch keys runs: only composite kernels fill it (or a conflict
    /// between two of them).
    pub undefined: Result<Option<F>, Conflict>,
    /// Every conflict among this op's own registrations (fallback conflicts are global: see
    /// [`fallback_conflicts`]).
    pub conflicts: Vec<Conflict>,
}

/// What one registered key (runtime or alias) offers, after overrides and CPU variants.
#[derive(Clone, Copy)]
enum Candidate<F> {
    Kernel(F, KernelMeta),
    /// A per-op fallthrough.
    Skip,
    Conflict(Conflict),
}

/// One registration at a key, for the family rules: a kernel, or a per-op fallthrough.
#[derive(Clone, Copy)]
struct Entry<F> {
    key: KernelKey,
    kernel: Option<F>,
    meta: KernelMeta,
}

/// Resolves every slot. Never fails: a conflict makes only its own slots fail.
pub(crate) fn resolve<F: Copy>(regs: Registrations<'_, F>) -> Resolution<F> {
    let mut entries: Vec<Entry<F>> = regs
        .kernels
        .iter()
        .map(|r| Entry {
            key: r.key(),
            kernel: Some(r.kernel()),
            meta: r.meta(),
        })
        .chain(regs.fallthrough.iter().map(|(key, meta)| Entry {
            key: KernelKey::Key(*key),
            kernel: None,
            meta: *meta,
        }))
        .collect();
    entries.sort_by_key(|e| (e.key, e.meta.cpu, e.meta.location, e.meta.name));
    let mut conflicts = Vec::new();
    let candidates: Vec<(KernelKey, Candidate<F>)> = entries
        .chunk_by(|a, b| a.key == b.key)
        .filter_map(|at_key| {
            let candidate = candidate(at_key, CpuPolicy::current())?;
            if let Candidate::Conflict(conflict) = candidate {
                conflicts.push(conflict);
            }
            Some((at_key[0].key, candidate))
        })
        .collect();
    let fallbacks = regs.fallbacks;
    let find = |key: KernelKey| {
        candidates
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, candidate)| *candidate)
    };
    let explicit = find(AliasKey::CompositeExplicit.into());
    let implicit = find(AliasKey::CompositeImplicit.into());
    let autograd = find(AliasKey::Autograd.into());
    let with_kernel: DispatchKeySet = candidates
        .iter()
        .filter(|(_, c)| !matches!(c, Candidate::Skip))
        .filter_map(|(key, _)| key.runtime())
        .collect();

    let slot = |key: DispatchKey| -> Resolved<F> {
        let typed = |candidate: Candidate<F>, origin: fn(KernelMeta) -> SlotOrigin| match candidate
        {
            Candidate::Kernel(kernel, meta) => Resolved {
                kernel: Some(kernel),
                boxed: None,
                origin: origin(meta),
            },
            Candidate::Skip => skipped(SlotOrigin::Fallthrough),
            Candidate::Conflict(conflict) => skipped(SlotOrigin::Conflict(conflict)),
        };
        if let Some(candidate) = find(key.into()) {
            return typed(candidate, SlotOrigin::Kernel);
        }
        let backend_fill = key.is_backend() && composite_fills(key, with_kernel);
        if let Some(candidate) = explicit.filter(|_| backend_fill) {
            return typed(candidate, SlotOrigin::CompositeExplicit);
        }
        // Autograd flows through the decomposition only where the backend has no kernel of its
        // own (a `CompositeExplicit` kernel counts as one).
        let autograd_without_backend = !key.autograd_backends().is_empty()
            && !key.autograd_backends().intersects(with_kernel)
            && explicit.is_none();
        if let Some(candidate) = implicit.filter(|_| backend_fill || autograd_without_backend) {
            return typed(candidate, |_| SlotOrigin::Composite);
        }
        if let Some(candidate) = autograd.filter(|_| DispatchKeySet::AUTOGRAD.has(key)) {
            return typed(candidate, SlotOrigin::AutogradAlias);
        }
        match fallbacks[key.index()] {
            Some(Err(conflict)) => skipped(SlotOrigin::Conflict(conflict)),
            Some(Ok(FallbackRegistration {
                kind: FallbackKind::Fallthrough,
                ..
            })) => skipped(SlotOrigin::Fallthrough),
            Some(Ok(FallbackRegistration {
                kind: FallbackKind::Boxed(boxed),
                meta,
                ..
            })) => match regs.via_boxed {
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
    let undefined = match explicit.or(implicit) {
        Some(Candidate::Kernel(kernel, _)) => Ok(Some(kernel)),
        Some(Candidate::Conflict(conflict)) => Err(conflict),
        Some(Candidate::Skip) | None => Ok(None),
    };
    Resolution {
        slots,
        undefined,
        conflicts,
    }
}

fn skipped<F>(origin: SlotOrigin) -> Resolved<F> {
    Resolved {
        kernel: None,
        boxed: None,
        origin,
    }
}

/// What the registrations at one key (sorted by CPU features, location, name) offer, or `None`
/// when none of them can run on this CPU (then the key behaves as if nothing were registered).
///
/// - Declared overrides, if any, replace every other registration at the key.
/// - The rest form one *family* of CPU variants, which must come from one crate: a kernel from
///   another crate at a key that already has one would either never run or silently win, so it
///   is a conflict until one of them declares `overrides`.
/// - Within the family, one registration per CPU variant.
/// - The best variant the CPU runs is chosen ([`CpuPolicy::choose`]).
fn candidate<F: Copy>(at_key: &[Entry<F>], policy: &CpuPolicy) -> Option<Candidate<F>> {
    let overrides: Vec<Entry<F>> = at_key
        .iter()
        .copied()
        .filter(|e| e.meta.overrides)
        .collect();
    let family = if overrides.is_empty() {
        at_key.to_vec()
    } else {
        overrides
    };
    let conflict = |a: &Entry<F>, b: &Entry<F>| {
        Candidate::Conflict(Conflict {
            key: a.key,
            first: a.meta,
            second: b.meta,
            fallbacks: false,
        })
    };
    if let Some(pair) = family.windows(2).find(|p| p[0].meta.cpu == p[1].meta.cpu) {
        return Some(conflict(&pair[0], &pair[1]));
    }
    let first = &family[0];
    if let Some(stranger) = family
        .iter()
        .find(|e| e.meta.location.crate_name() != first.meta.location.crate_name())
    {
        return Some(conflict(first, stranger));
    }
    let needs: Vec<_> = family.iter().map(|e| e.meta.cpu).collect();
    let chosen = family[policy.choose(&needs)?];
    Some(match chosen.kernel {
        Some(kernel) => Candidate::Kernel(kernel, chosen.meta),
        None => Candidate::Skip,
    })
}

/// A composite serves a backend key that has no kernel — unless a lower key of the same device
/// has one. The CPU is one device split into two keys: an op with only a naive kernel must fall
/// through from `CpuSimd` to it rather than have the composite shadow it.
fn composite_fills(key: DispatchKey, with_kernel: DispatchKeySet) -> bool {
    !family_of(key).below(key).intersects(with_kernel)
}

/// The fallback of each key, or the conflict between two fallbacks at it.
pub(crate) fn fallbacks_by_key(fallbacks: &[FallbackRegistration]) -> FallbacksByKey {
    let mut sorted = fallbacks.to_vec();
    sorted.sort_by_key(|f| (f.key, f.meta.location, f.meta.name));
    let mut by_key = [None; NUM_KEYS];
    for same_key in sorted.chunk_by(|a, b| a.key == b.key) {
        by_key[same_key[0].key.index()] = Some(match same_key {
            [one] => Ok(*one),
            [first, second, ..] => Err(Conflict {
                key: KernelKey::Key(first.key),
                first: first.meta,
                second: second.meta,
                fallbacks: true,
            }),
            [] => continue,
        });
    }
    by_key
}

/// Every conflict between fallbacks: for `dump()` and runtime registration.
pub(crate) fn fallback_conflicts(fallbacks: &[FallbackRegistration]) -> Vec<Conflict> {
    fallbacks_by_key(fallbacks)
        .into_iter()
        .filter_map(|slot| slot?.err())
        .collect()
}
